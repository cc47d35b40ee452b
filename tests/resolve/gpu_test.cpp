// `gpulock resolve` with the GPU policy (issue 7): drivers and CUDA variants with the exact
// nvidia-* set the chosen torch wheel declares, GPU architectures, explained GPU conflicts, the
// torchtriton lesson under first-index, nightly snapshots, --exclude-newer on indexes with and
// without upload times, and the no-driver cases. Machine detection is kept hermetic (an empty
// GPULOCK_TEST_ROOT and no nvidia-smi on PATH), so the results are the same on a GPU machine.
#include <set>

#include "resolve_support.h"

using namespace resolve_test;

namespace {

struct DriverCase {
  std::string driver;
  std::string gpu_arch;  // --gpu-arch, or empty
  std::string torch, torchvision, torchaudio;
  std::string variant;
  std::string ceiling;
};

std::string family_summary(const std::map<std::string, std::string>& versions) {
  std::string out;
  for (const auto& name : {"torch", "torchvision", "torchaudio", "triton", "pytorch-triton"}) {
    auto it = versions.find(name);
    if (it != versions.end()) out += std::string(name) + "==" + it->second + "\n";
  }
  return out;
}

// The manifest's record of a served file (compact JSON, flat objects): its sha256 and size.
std::pair<std::string, std::string> manifest_hash_and_size(const std::string& url_path) {
  static const std::string manifest = read_file(servers().at("MANIFEST"));
  std::string key = "\"url\":\"" + url_path + "\"";
  auto at = manifest.find(key);
  if (at == std::string::npos) return {};
  // Records are flat objects: find its braces.
  auto begin = manifest.rfind('{', at);
  auto end = manifest.find('}', at);
  std::string rec = manifest.substr(begin, end - begin);
  std::smatch m;
  std::string sha, size;
  if (std::regex_search(rec, m, std::regex("\"sha256\":\"([0-9a-f]{64})\""))) sha = m[1];
  if (std::regex_search(rec, m, std::regex("\"size\":([0-9]+)"))) size = m[1];
  return {sha, size};
}

}  // namespace

TEST_CASE("resolve picks the variant each driver runs and the exact nvidia-* set torch declares",
          "[resolve][gpu][drivers]") {
  // torch torchvision torchaudio --torch-backend auto. Newest public version first, then the
  // highest CUDA variant within the ceiling: there is no torchaudio 2.12/2.13, and 2.11.0 is not
  // pinned to a torch, so it follows torch's variant (cu126/cu130 have it, cu128/cu129 not for
  // torch 2.13).
  DriverCase c = GENERATE(values<DriverCase>({
      {"535.54.03", "", "2.7.1+cu118", "0.22.1+cu118", "2.7.1+cu118", "cu118", "12.2"},
      {"550.54.14", "", "2.7.1+cu118", "0.22.1+cu118", "2.7.1+cu118", "cu118", "12.4"},
      {"560.35.03", "", "2.13.0+cu126", "0.28.0+cu126", "2.11.0+cu126", "cu126", "12.6"},
      {"570.86.10", "", "2.13.0+cu126", "0.28.0+cu126", "2.11.0+cu126", "cu126", "12.8"},
      {"575.51.03", "", "2.13.0+cu126", "0.28.0+cu126", "2.11.0+cu126", "cu126", "12.9"},
      {"580.65.06", "", "2.13.0+cu130", "0.28.0+cu130", "2.11.0+cu130", "cu130", "13.0"},
      {"590.44.01", "", "2.13.0+cu130", "0.28.0+cu130", "2.11.0+cu130", "cu130", "13.1"},
      // A GTX 1080 Ti: recent releases carry 6.x kernels only in cu126 builds.
      {"580.65.06", "sm_61", "2.13.0+cu126", "0.28.0+cu126", "2.11.0+cu126", "cu126", "13.0"},
      // An RTX 5090: 12.0 kernels from cu128 (2.7 - 2.11) and cu130 (12.0+PTX).
      {"570.86.10", "sm_120", "2.11.0+cu128", "0.26.0+cu128", "2.11.0+cu128", "cu128", "12.8"},
      {"580.65.06", "sm_120", "2.13.0+cu130", "0.28.0+cu130", "2.11.0+cu130", "cu130", "13.0"},
      // Two GPUs: every one must be supported.
      {"580.65.06", "sm_61,sm_90", "2.13.0+cu126", "0.28.0+cu126", "2.11.0+cu126", "cu126", "13.0"},
      // (torchaudio 2.11.0 pins no torch, so the newest one of the variant goes with torch 2.7.1.)
      {"580.65.06", "sm_61,sm_120", "2.7.1+cu128", "0.22.1+cu128", "2.11.0+cu128", "cu128", "13.0"},
  }));
  std::string name = "driver-" + c.driver + (c.gpu_arch.empty() ? "" : "-" + c.gpu_arch);
  std::replace(name.begin(), name.end(), ',', '-');
  fs::path dir = fresh_dir(name);
  std::vector<std::string> args = {"torch",           "torchvision", "torchaudio",
                                   "--torch-backend", "auto",        "--driver",
                                   c.driver,          "-o",          "pylock.toml"};
  if (!c.gpu_arch.empty()) args.insert(args.end(), {"--gpu-arch", c.gpu_arch});
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  o.cwd = dir;
  Run r = resolve(args, o);
  INFO(name << "\n" << describe(r));
  REQUIRE(r.status == 0);
  auto versions = lock_versions(dir / "pylock.toml");
  CHECK(versions.at("torch") == c.torch);
  CHECK(versions.at("torchvision") == c.torchvision);
  CHECK(versions.at("torchaudio") == c.torchaudio);

  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->gpu);
  const auto& gpu = *lock.gpulock->gpu;
  CHECK(gpu_text(gpu.driver) == c.driver);
  CHECK(gpu_text(gpu.cuda_ceiling) == c.ceiling);
  CHECK(gpu.variant == c.variant);
  std::vector<std::string> archs;
  std::string rest = c.gpu_arch;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    archs.push_back(rest.substr(0, comma));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  CHECK(gpu_text(gpu.archs) == archs);
  // The torch-family variant indexes the lock used are recorded with their role.
  bool torch_index = false;
  for (const auto& ix : lock.gpulock->indexes) {
    if (ix.role == "torch" && ix.url == servers().torch_index_base() + "/" + c.variant + "/")
      torch_index = true;
  }
  CHECK(torch_index);

  // The exact nvidia-*/cuda-* set: the closure of what the locked torch wheel declares,
  // computed independently from the wheels' METADATA (declared_closure.py).
  std::string declared = declared_closure(dir / "pylock.toml");
  std::string locked;
  for (const auto& [n, v] : versions) {
    if (n.starts_with("nvidia-") || n.starts_with("cuda-")) locked += n + "==" + v + "\n";
  }
  CHECK(locked == declared);
  CHECK(!declared.empty());
  check_golden("gpu_" + name + ".txt",
               family_summary(versions) + "variant " + c.variant + "\n" + declared);
}

TEST_CASE("resolve --explain says why the torch build was chosen (golden)",
          "[resolve][gpu][report]") {
  fs::path dir = fresh_dir("explain-550");
  Options o;
  o.cwd = dir;
  Run r = resolve({"torch", "torchvision", "torchaudio", "--torch-backend", "auto", "--driver",
                   "550.54.14", "-o", "pylock.toml", "--explain", "--report", "report.json"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  check_golden("explain_torch_550.txt", normalize(r.out));
  check_golden("report_torch_550.json", normalize_report(read_file(dir / "report.json")));
  CHECK(normalize(r.err) == no_arch_warning("--driver 550.54.14") +
                                "Resolved 25 packages in N ms; wrote pylock.toml\n"
                                "torch 2.7.1+cu118: the newest torch whose CUDA build your driver "
                                "550.54.14 runs (CUDA 11.8 <= 12.4)\n");
}

TEST_CASE(
    "resolve skips a PyPI torch build whose runtime pin the driver is too old for, and says why",
    "[resolve][gpu][report]") {
  // PyPI builds have no local label: their CUDA is that of the nvidia-cuda-runtime /
  // cuda-toolkit pin. Driver 535 runs CUDA <= 12.2: 2.5.x pins 12.4, so 2.4.1 (12.1) it is.
  fs::path dir = fresh_dir("pypi-torch-535");
  Options o;
  o.cwd = dir;
  Run r = resolve({"torch", "--driver", "535.54.03", "-o", "pylock.toml", "--explain", "--report",
                   "report.json"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto versions = lock_versions(dir / "pylock.toml");
  CHECK(versions.at("torch") == "2.4.1");
  CHECK(versions.at("nvidia-cuda-runtime-cu12") == "12.1.105");
  declared_closure(dir / "pylock.toml");
  std::string out = normalize(r.out);
  CHECK(out.find("  skipped torch 2.13.0: needs CUDA 13.0 and your driver 535.54.03 supports CUDA "
                 "<= 12.2\n") != std::string::npos);
  CHECK(out.find("  skipped 8 more newer candidates (see --report)\n") != std::string::npos);
  check_golden("explain_pypi_torch_535.txt", out);
  std::string report = normalize_report(read_file(dir / "report.json"));
  // Every newer release is listed in the report with a machine-readable kind.
  CHECK(std::regex_search(
      report,
      std::regex(R"("version": "2\.5\.0",\s*"kind": "cuda-too-new",\s*"reason": )"
                 R"("needs CUDA 12\.4 and your driver 535\.54\.03 supports CUDA <= 12\.2")")));
  check_golden("report_pypi_torch_535.json", report);
}

TEST_CASE("resolve explains GPU conflicts", "[resolve][gpu][errors]") {
  Options o;
  o.cwd = fresh_dir("gpu-errors");
  SECTION("torchvision from cu118 with torch from cu121") {
    expect_resolve_error({"torchvision==0.19.0+cu118", "torch==2.4.0+cu121", "--torch-backend",
                          "auto", "--driver", "550.54.14"},
                         o, 1,
                         no_arch_warning("--driver 550.54.14") +
                             "error: no solution: torchvision==0.19.0 is a CUDA 11.8 build and "
                             "torch==2.4.0 is a CUDA 12.1 build\n"
                             "  Because torchvision==0.19.0 is a CUDA 11.8 build and torch==2.4.0 "
                             "is a CUDA 12.1 build, "
                             "torchvision==0.19.0 and torch==2.4.0 are incompatible.\n"
                             "  And because you require both torchvision==0.19.0+cu118 and "
                             "torch==2.4.0+cu121, version solving "
                             "failed.\n");
  }
  SECTION("a CUDA build newer than the driver") {
    // The hint's command is complete (issue 16 item 8), tried before it is given, and does what
    // it says when run.
    std::vector<std::string> args{"torch==2.7.1+cu126", "--torch-backend", "cu126", "--driver",
                                  "550.54.14"};
    Run r = expect_resolve_error(
        args, o, 1,
        no_arch_warning("--driver 550.54.14") +
            "error: no solution: torch==2.7.1 (CUDA 12.6 build) needs CUDA >= 12.6 and your driver "
            "550.54.14 supports "
            "CUDA <= 12.4\n"
            "  Because torch==2.7.1 (CUDA 12.6 build) needs CUDA >= 12.6 and your driver 550.54.14 "
            "supports CUDA <= "
            "12.4, torch==2.7.1 cannot be used.\n"
            "  And because you require torch==2.7.1+cu126, version solving failed.\n"
            "hint: a newer CUDA build needs a driver >= 555.42.02 (run `gpulock probe --machine` "
            "to see yours)\n"
            "hint: or allow minor-version compatibility: `" +
            normalize(hint_command({"torch==2.7.1+cu126", "--torch-backend", "cu126", "--driver",
                                    "550.54.14", "-o", "-"},
                                   o, {"--cuda-compat", "minor"})) +
            "` locks torch 2.7.1+cu126\n");
    Run followed = run_hint(hint_line(r.err, "--cuda-compat minor"), o);
    INFO(describe(followed));
    CHECK(followed.status == 0);
    CHECK(locked_version(followed.out, "torch") == "2.7.1+cu126");
  }
  SECTION("a build without kernels for the GPU") {
    expect_resolve_error(
        {"torch==2.13.0+cu130", "--torch-backend", "auto", "--driver", "580.65.06", "--gpu-arch",
         "sm_61"},
        o, 1,
        "error: no solution: torch==2.13.0 has no kernels for your GPU's sm_61 (its CUDA 13.0 "
        "build carries sm_75, "
        "sm_80, sm_86, sm_90, sm_100, sm_120+PTX)\n"
        "  Because you require torch==2.13.0+cu130 and torch==2.13.0 has no kernels for your GPU's "
        "sm_61 (its "
        "CUDA 13.0 build carries sm_75, sm_80, sm_86, sm_90, sm_100, sm_120+PTX), version solving "
        "failed.\n"
        // No command: with torch==2.13.0+cu130 required, --torch-backend cu126 has no solution
        // either (tried, so not suggested).
        "hint: torch 2.13 has kernels for your GPU's sm_61 only in variant cu126\n");
  }
  SECTION("a build without kernels for the GPU, which newer variants have") {
    expect_resolve_error(
        {"torch==2.13.0+cu126", "--torch-backend", "auto", "--driver", "580.65.06", "--gpu-arch",
         "sm_120"},
        o, 1,
        "error: no solution: torch==2.13.0 has no kernels for your GPU's sm_120 (its CUDA 12.6 "
        "build carries "
        "sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90)\n"
        "  Because you require torch==2.13.0+cu126 and torch==2.13.0 has no kernels for your GPU's "
        "sm_120 (its "
        "CUDA 12.6 build carries sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90), version solving "
        "failed.\n"
        "hint: torch 2.13 has kernels for your GPU's sm_120 only in variants cu129, cu130\n");
  }
  SECTION("a Blackwell GPU on a driver below the builds with its kernels (issue 43)") {
    // sm_120 kernels are in torch 2.13's cu129 and cu130 builds only (shared/data: 2.9+ cu129
    // and cu130 carry 12.0); CUDA 12.9 needs 575.51.03, and R560 cannot drive Blackwell at all.
    Run r = resolve({"torch==2.13.0+cu126", "--torch-backend", "auto", "--driver", "560.35.03",
                     "--gpu-arch", "sm_120", "-o", "-"},
                    o);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.err.find("hint: torch 2.13 has kernels for your GPU's sm_120 only in variants cu129, "
                     "cu130; the lowest, CUDA 12.9, needs a driver >= 575.51.03 (yours is "
                     "560.35.03); Blackwell GPUs (sm_120) need driver branch R570 or later, and "
                     "this driver is R560\n") != std::string::npos);
  }
  SECTION("two GPUs that no build of the release serves together") {
    Run r = resolve({"torch==2.13.0", "--torch-backend", "auto", "--driver", "580.65.06",
                     "--gpu-arch", "sm_61,sm_120", "-o", "-"},
                    o);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.err.find("hint: torch 2.13 has kernels for your GPU's sm_61 only in variant cu126\n") !=
          std::string::npos);
    CHECK(
        r.err.find(
            "hint: torch 2.13 has kernels for your GPU's sm_120 only in variants cu129, cu130\n") !=
        std::string::npos);
  }
  SECTION("a cuDNN pin that the only allowed variant's torch does not match") {
    // nvidia-cudnn-cu12 from the PyPI-like index, which has 9.5.1.17 (cu124's copy has only
    // 9.1.0.70, and under first-index it alone would count).
    expect_resolve_error(
        {"torch", "nvidia-cudnn-cu12==9.5.1.17", "--torch-backend", "cu124", "--driver",
         "550.54.14", "--index", "pypi=" + servers().pypi_url(), "--index-for",
         "nvidia-cudnn-cu12=pypi"},
        o, 1,
        no_arch_warning("--driver 550.54.14") +
            "error: no solution: torch needs nvidia-cudnn-cu12==9.1.0.70, and you require "
            "nvidia-cudnn-cu12==9.5.1.17\n"
            "  Because you require torch and torch depends on nvidia-cudnn-cu12==9.1.0.70, "
            "nvidia-cudnn-cu12==9.1.0.70 "
            "must be used.\n"
            "  And because you require nvidia-cudnn-cu12==9.5.1.17, version solving failed.\n");
  }
}

TEST_CASE("resolve picks the torch build that pins the user's cuDNN", "[resolve][gpu]") {
  // Driver 570 (CUDA 12.8): 2.13.0+cu126 pins cuDNN 9.10.2.21 and cu128 builds 9.7 / 9.10 /
  // 9.19; the newest build pinning 9.5.1.17 is 2.8.0+cu126.
  fs::path dir = fresh_dir("cudnn-pin");
  Options o;
  o.cwd = dir;
  Run r = resolve({"torch", "nvidia-cudnn-cu12==9.5.1.17", "--torch-backend", "auto", "--driver",
                   "570.86.10", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto versions = lock_versions(dir / "pylock.toml");
  CHECK(versions.at("torch") == "2.8.0+cu126");
  CHECK(versions.at("nvidia-cudnn-cu12") == "9.5.1.17");
  declared_closure(dir / "pylock.toml");
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->gpu);
  CHECK(lock.gpulock->gpu->cudnn == "9.5.1.17");
}

TEST_CASE(
    "resolve: a same-named package with a higher version on PyPI does not win under first-index",
    "[resolve][gpu][security]") {
  // pytorch-triton 4.0.0 exists only on the PyPI-like index (the torchtriton incident's shape).
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  fs::path dir = fresh_dir("torchtriton");
  o.cwd = dir;
  Run first = resolve(
      {"pytorch-triton", "--nightly", "latest", "--driver", "580.65.06", "-o", "first.toml"}, o);
  INFO(describe(first));
  REQUIRE(first.status == 0);
  CHECK(lock_versions(dir / "first.toml").at("pytorch-triton") == "3.8.0+git5e6f7a8b");
  auto lock = read_lock(dir / "first.toml");
  CHECK(find_package(lock, "pytorch-triton")->index ==
        servers().torch_index_base() + "/nightly/cu130/");

  Run torch =
      resolve({"torch", "--nightly", "latest", "--driver", "580.65.06", "-o", "torch.toml"}, o);
  INFO(describe(torch));
  REQUIRE(torch.status == 0);
  CHECK(lock_versions(dir / "torch.toml").at("pytorch-triton") == "3.8.0+git5e6f7a8b");

  Run best = resolve({"pytorch-triton", "--nightly", "latest", "--driver", "580.65.06",
                      "--index-strategy", "unsafe-best-match", "-o", "best.toml"},
                     o);
  INFO(describe(best));
  // Issue 41 item 3: unsafe-best-match would merge the PyPI-like index's 4.0.0 into the nightly
  // family; with --nightly it is a usage error.
  CHECK(best.status == 2);
  CHECK_FALSE(fs::exists(dir / "best.toml"));
}

TEST_CASE("resolve --nightly puts the torch family on one build date", "[resolve][gpu][nightly]") {
  fs::path dir = fresh_dir("nightly");
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  o.cwd = dir;

  SECTION("the newest date lacks torchaudio: the latest date every member has") {
    Run r = resolve({"torch", "torchvision", "torchaudio", "--nightly", "2026-08-18", "--driver",
                     "580.65.06", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto versions = lock_versions(dir / "pylock.toml");
    CHECK(family_summary(versions) ==
          "torch==2.15.0.dev20260817+cu130\ntorchvision==0.30.0.dev20260817+cu130\n"
          "torchaudio==2.15.0.dev20260817+cu130\npytorch-triton==3.8.0+git5e6f7a8b\n");
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->snapshot);
    CHECK(lock.gpulock->snapshot->nightly == "2026-08-17");
    // Nightly links carry no hash: each locked nightly wheel was downloaded once for its
    // sha256 and size, which must be those of the served file.
    for (const auto& name : {"torch", "torchvision", "torchaudio", "pytorch-triton"}) {
      const auto* p = find_package(lock, name);
      REQUIRE(p != nullptr);
      REQUIRE(p->wheels);
      REQUIRE(p->wheels->size() == 1);
      const auto& w = p->wheels->front();
      REQUIRE(w.url);
      std::string path = w.url->substr(servers().http_url().size());
      auto [sha, size] = manifest_hash_and_size(path);
      INFO(name << " " << path);
      REQUIRE(!sha.empty());
      CHECK(w.hashes.at("sha256") == sha);
      REQUIRE(w.size);
      CHECK(std::to_string(*w.size) == size);
    }
    declared_closure(dir / "pylock.toml");
  }
  SECTION("an earlier date") {
    Run r = resolve({"torch", "torchvision", "--nightly", "2026-08-16", "--driver", "560.35.03",
                     "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto versions = lock_versions(dir / "pylock.toml");
    CHECK(family_summary(versions) ==
          "torch==2.15.0.dev20260815+cu126\ntorchvision==0.30.0.dev20260815+cu126\n"
          "pytorch-triton==3.8.0+git1a2b3c4d\n");
  }
  SECTION("latest without torchaudio takes the newest date") {
    Run r = resolve({"torch", "--nightly", "latest", "--driver", "none", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(lock_versions(dir / "pylock.toml").at("torch") == "2.15.0.dev20260818+cpu");
  }
  SECTION("a date before every build") {
    expect_resolve_error(
        {"torch", "torchvision", "--nightly", "2026-08-01", "--driver", "580.65.06"}, o, 1,
        no_arch_warning("--driver 580.65.06") +
            "error: no solution: no nightly build date on or before 2026-08-01 has all of torch "
            "and torchvision for "
            "cp311-manylinux_2_28_x86_64\n"
            "hint: try a later --nightly date, or fewer torch-family packages\n");
  }
}

TEST_CASE("resolve --exclude-newer with and without upload times", "[resolve][gpu][snapshot]") {
  fs::path dir = fresh_dir("exclude-newer");
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  o.cwd = dir;

  SECTION("PyPI upload times: torch 2.8.0 (2025-08-06) is newer than the cutoff") {
    Run r = resolve(
        {"torch", "--driver", "590.44.01", "--exclude-newer", "2025-07-01", "-o", "pylock.toml"},
        o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(lock_versions(dir / "pylock.toml").at("torch") == "2.7.1");
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->snapshot);
    REQUIRE(lock.gpulock->snapshot->exclude_newer);
    CHECK(lock.gpulock->snapshot->exclude_newer->date.year == 2025);
    CHECK(lock.gpulock->snapshot->exclude_newer->date.month == 7);
    // Every locked file was published before the cutoff.
    for (const auto& p : lock.packages) {
      for (const auto* f : p.files()) {
        INFO(p.name);
        REQUIRE(f->upload_time);
        CHECK(f->upload_time->date < lock.gpulock->snapshot->exclude_newer->date);
      }
    }
  }
  SECTION("the PyTorch index's data-upload-time on release torch-family files (CPU builds)") {
    // The cpu tree mirrors only pillow 11.3.0, published on 2025-07-01: under first-index for every
    // name torchvision would have no pillow before the cutoff, so pillow comes from PyPI here.
    Options p = o;
    Run r = resolve(
        {"torch", "torchvision", "--torch-backend", "cpu", "--driver", "none", "--exclude-newer",
         "2025-07-01", "--index-for", "pillow=pypi", "-o", "pylock.toml"},
        p);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto versions = lock_versions(dir / "pylock.toml");
    CHECK(versions.at("torch") == "2.7.1+cpu");
    CHECK(versions.at("torchvision") == "0.22.1+cpu");
  }
  SECTION("mirrored files without an upload time are left out, each named in a warning") {
    Run r = resolve({"torch", "--torch-backend", "cu126", "--driver", "560.35.03",
                     "--exclude-newer", "2025-07-01", "-o", "-"},
                    o);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.err.find(
              "warning: triton-3.3.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl "
              "has no "
              "upload time; --exclude-newer leaves it out\n") != std::string::npos);
    CHECK(r.err.find("  And because triton==3.3.1 has no upload time, so --exclude-newer leaves it "
                     "out and you "
                     "require torch, version solving failed.\n") != std::string::npos);
  }
  SECTION("nightlies have no upload time: their .devYYYYMMDD date counts") {
    Run r = resolve({"torch", "torchvision", "--nightly", "latest", "--driver", "none",
                     "--exclude-newer", "2026-08-16", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto versions = lock_versions(dir / "pylock.toml");
    CHECK(family_summary(versions) ==
          "torch==2.15.0.dev20260815+cpu\ntorchvision==0.30.0.dev20260815+cpu\n");
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->snapshot);
    CHECK(lock.gpulock->snapshot->nightly == "2026-08-15");
  }
  // Issue 41 item 3: on the nightly source the build date is the snapshot. pytorch-triton has
  // neither an upload time nor a dated version: the nightly's exact pin admits it, with a
  // warning naming the file; the other pytorch-triton build is not taken.
  SECTION("a CUDA nightly's exact pytorch-triton pin is kept, with a warning naming the file") {
    Run r = resolve({"torch", "--nightly", "2026-08-15", "--driver", "580.65.06", "--exclude-newer",
                     "2026-08-16", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto versions = lock_versions(dir / "pylock.toml");
    CHECK(versions.at("torch") == "2.15.0.dev20260815+cu130");
    CHECK(versions.at("pytorch-triton") == "3.8.0+git1a2b3c4d");
    CHECK(r.err.find("warning: pytorch_triton-3.8.0+git1a2b3c4d-cp311-cp311-linux_x86_64.whl has "
                     "neither an upload time nor a dated version; kept under --exclude-newer "
                     "because the nightly torch 2.15.0.dev20260815+cu130 pins "
                     "pytorch-triton==3.8.0+git1a2b3c4d\n") != std::string::npos);
    CHECK(r.err.find("git5e6f7a8b") == std::string::npos);
    CHECK(r.err.find("leaves it out") == std::string::npos);
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->snapshot);
    CHECK(lock.gpulock->snapshot->nightly == "2026-08-15");
  }
  SECTION("pytorch-triton asked for alone under --exclude-newer: no nightly pins it") {
    Run r = resolve({"pytorch-triton", "--nightly", "2026-08-15", "--driver", "580.65.06",
                     "--exclude-newer", "2026-08-16", "-o", "-"},
                    o);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.err.find("error: no solution: pytorch-triton has no upload time, so --exclude-newer "
                     "leaves it out\n") != std::string::npos);
  }
}

TEST_CASE("resolve without a driver: an error with hints, or CPU builds with --driver none",
          "[resolve][gpu][driver]") {
  Options o;
  o.cwd = fresh_dir("no-driver");
  SECTION("no driver found and no choice made: exit 2") {
    Run r = resolve(
        {"torch", "torchvision", "--torch-backend", "auto", "--driver", "auto", "-o", "-"}, o);
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(normalize(r.err) ==
          "error: no NVIDIA driver was found, so gpulock cannot tell which CUDA build of torch "
          "this machine runs\n"
          "  no NVIDIA driver found\n"
          "hint: lock for another machine: add --driver VERSION with the version `gpulock probe "
          "--machine` prints "
          "there, or --cuda-ceiling X.Y\n"
          "hint: lock CPU builds: `" +
              normalize(hint_command({"torch", "torchvision", "--torch-backend", "auto", "--driver",
                                      "auto", "-o", "-"},
                                     o, {"--driver", "none"})) +
              "` locks torch 2.12.1+cpu\n"
              "hint: see what gpulock detects: gpulock probe --machine\n");
    Run followed = run_hint(hint_line(r.err, "lock CPU builds"), o);
    INFO(describe(followed));
    CHECK(followed.status == 0);
    CHECK(locked_version(followed.out, "torch") == "2.12.1+cpu");
  }
  SECTION("the same without --torch-backend (PyPI builds)") {
    Run r = resolve({"torch", "-o", "-"}, o);
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(r.err.starts_with("error: no NVIDIA driver was found"));
  }
  SECTION("no CUDA-linked package: no driver needed") {
    Run r = resolve({"jinja2", "-o", "-"}, o);
    INFO(describe(r));
    CHECK(r.status == 0);
  }
  SECTION("--driver none with --torch-backend auto: CPU builds") {
    fs::path dir = fresh_dir("driver-none");
    Options cpu = o;
    cpu.cwd = dir;
    Run r = resolve({"torch", "torchvision", "torchaudio", "--torch-backend", "auto", "--driver",
                     "none", "-o", "pylock.toml"},
                    cpu);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto versions = lock_versions(dir / "pylock.toml");
    // Not 2.13.0: it needs setuptools>=77.0.3, and the torch index, which serves setuptools, has
    // only 70.2.0 (first-index for every name, issue 17). The summary names that, and the hint
    // gives the flags that take setuptools from the PyPI-like index instead.
    CHECK(family_summary(versions) ==
          "torch==2.12.1+cpu\ntorchvision==0.27.1+cpu\ntorchaudio==2.11.0+cpu\n");
    CHECK(
        normalize(r.err) ==
        "Resolved 14 packages in N ms; wrote pylock.toml\n"
        "torch 2.12.1+cpu: a CPU build, because --driver none means no GPU; torch 2.13.0+cpu needs "
        "setuptools>=77.0.3, and http://INDEX/whl/cpu/ has only setuptools 70.2.0 (first-index: "
        "setuptools comes "
        "only from there, not from http://INDEX/simple/)\n"
        "hint: to take setuptools from http://INDEX/simple/: `" +
            normalize(hint_command(
                {"torch", "torchvision", "torchaudio", "--torch-backend", "auto", "--driver",
                 "none", "-o", "pylock.toml"},
                cpu,
                {"--index", "other=" + servers().pypi_url(), "--index-for", "setuptools=other"})) +
            "` (or, trusting every index equally, `--index-strategy unsafe-best-match` instead of "
            "those two "
            "flags)\n");
    // Followed, the hint's command takes setuptools from the other index and so torch 2.13.0.
    fs::path followed_dir = fresh_dir("driver-none-followed");
    Options there = cpu;
    there.cwd = followed_dir;
    Run fixed = run_hint(hint_line(r.err, "to take setuptools"), there);
    INFO(describe(fixed));
    CHECK(fixed.status == 0);
    CHECK(fixed.err.find("torch 2.13.0+cpu: a CPU build") != std::string::npos);
    CHECK(lock_versions(followed_dir / "pylock.toml")["torch"] == "2.13.0+cpu");
    for (const auto& [name, version] : versions) {
      INFO(name);
      CHECK(!name.starts_with("nvidia-"));
    }
    CHECK(declared_closure(dir / "pylock.toml").empty());
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->gpu);
    CHECK(gpu_text(lock.gpulock->gpu->driver) == "none");
    CHECK(lock.gpulock->gpu->variant == "cpu");
  }
  SECTION("--driver none without a torch backend: explained failure") {
    Run r = expect_resolve_error(
        {"torch", "--driver", "none"}, o, 1,
        "error: no solution: torch needs CUDA and --driver none means no GPU\n"
        "  Because torch needs CUDA and --driver none means no GPU, torch cannot be used.\n"
        "  And because you require torch, version solving failed.\n"
        "hint: CUDA builds need a GPU: to lock for a GPU machine, add --driver VERSION with the "
        "version `gpulock "
        "probe --machine` prints there\n"
        "hint: for CPU builds: `" +
            normalize(hint_command({"torch", "--driver", "none", "-o", "-"}, o,
                                   {"--torch-backend", "cpu"})) +
            "` locks torch 2.12.1+cpu\n");
    Run followed = run_hint(hint_line(r.err, "for CPU builds"), o);
    INFO(describe(followed));
    CHECK(followed.status == 0);
    CHECK(locked_version(followed.out, "torch") == "2.12.1+cpu");
  }
}

TEST_CASE("resolve: a passed-over build's fix is given only when it makes that build the choice",
          "[resolve][gpu][issue43]") {
  // Issue 43 item 5. torch 2.13.0+cu126 needs setuptools>=77.0.3, which under first-index only
  // the PyPI-like index has; but the cuDNN pin keeps torch at 2.8.0 whatever the setuptools, so
  // taking setuptools from there would not give a newer torch: the fact is said, no command.
  fs::path dir = fresh_dir("cudnn-pin-unconfirmed");
  Options o;
  o.cwd = dir;
  Run r = resolve({"torch", "nvidia-cudnn-cu12==9.5.1.17", "--torch-backend", "auto", "--driver",
                   "570.86.10", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("torch") == "2.8.0+cu126");
  CHECK(normalize(r.err).find("torch 2.13.0+cu126 needs setuptools>=77.0.3, and "
                              "http://INDEX/whl/cu128/ (and 4 more) has only setuptools 70.2.0 "
                              "(first-index: setuptools comes only from there, not from "
                              "http://INDEX/simple/)") != std::string::npos);
  CHECK(hint_line(r.err, "to take setuptools").empty());
}

// `gpulock resolve` options the other end-to-end files do not cover: --index/--index-for pins and
// their place in first-index order, index options inside -r files, --python, --exclude-newer
// timestamps and durations, progress on a terminal (issue 6); --cuda-ceiling, --cuda-compat
// minor, a torch build the arch table does not know, cuDNN >= 9.11 on an old GPU, the GPU facts
// of [tool.gpulock.gpu] and --nightly's required value (issue 7).
#include <chrono>

#include "resolve_support.h"

using namespace resolve_test;

namespace {

const gpulock::lock::Package& package(const gpulock::lock::Lock& lock, const std::string& name) {
  for (const auto& p : lock.packages) {
    if (p.name == name) return p;
  }
  FAIL("no package " << name << " in the lock");
  throw std::logic_error("unreachable");
}

std::vector<std::string> index_records(const gpulock::lock::Lock& lock) {
  std::vector<std::string> out;
  REQUIRE(lock.gpulock);
  for (const auto& ix : lock.gpulock->indexes)
    out.push_back(ix.name + " " + ix.role + " " + normalize(ix.url));
  return out;
}

// Seconds since the epoch of a lock datetime (UTC).
std::int64_t epoch_seconds(const gpulock::lock::TomlDatetime& t) {
  using namespace std::chrono;
  auto days = sys_days(year{t.date.year} / month{t.date.month} / day{t.date.day});
  std::int64_t s = duration_cast<seconds>(days.time_since_epoch()).count();
  s += t.time.hour * 3600 + t.time.minute * 60 + t.time.second;
  if (t.offset_minutes) s -= std::int64_t{*t.offset_minutes} * 60;
  return s;
}

}  // namespace

TEST_CASE(
    "resolve --index-for takes a package only from its named index, first in first-index order",
    "[resolve][indexes]") {
  fs::path dir = fresh_dir("index-for");
  Options o;
  o.cwd = dir;
  const std::string cu124 = servers().torch_index_base() + "/cu124/";

  SECTION("ahead of --index-url") {
    // PyPI has MarkupSafe 3.0.2; the cu124 mirror only 2.1.5.
    Run r = resolve({"jinja2", "--index", "mirror=" + cu124, "--index-for", "markupsafe=mirror",
                     "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto lock = read_lock(dir / "pylock.toml");
    CHECK(package(lock, "markupsafe").version == "2.1.5");
    CHECK(package(lock, "markupsafe").index == cu124);
    CHECK(package(lock, "jinja2").version == "3.1.6");
    CHECK(package(lock, "jinja2").index == servers().pypi_url());
    CHECK(index_records(lock) == std::vector<std::string>{"mirror pinned http://INDEX/whl/cu124/",
                                                          "default default http://INDEX/simple/"});
  }
  SECTION("ahead of the torch-family source") {
    Run r = resolve({"torch", "--torch-backend", "auto", "--driver", "580.65.06", "--index",
                     "pypi=" + servers().pypi_url(), "--index-for", "torch=pypi", "--index-for",
                     "setuptools=pypi", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto lock = read_lock(dir / "pylock.toml");
    // The PyPI build (no local label), not 2.13.0+cu130 from the variant index.
    CHECK(package(lock, "torch").version == "2.13.0");
    CHECK(package(lock, "torch").index == servers().pypi_url());
  }
  SECTION("an --index-for naming no --index is a usage error") {
    expect_resolve_error({"jinja2", "--index-for", "markupsafe=nowhere"}, o, 2,
                         "error: --index-for 'markupsafe=nowhere' names the index 'nowhere', which "
                         "no --index NAME=URL defines\n");
  }
}

TEST_CASE("resolve reads --index-url and --extra-index-url lines of a requirements file",
          "[resolve][inputs]") {
  // torch 2.4.0+cu124 is only on the cu124 index, which the file adds as an extra index; PyPI
  // (the file's --index-url) has torch too, so first-index never looks further.
  fs::path dir = fresh_dir("file-indexes");
  write_file(dir / "reqs.txt", "--index-url " + servers().pypi_url() + "\n--extra-index-url " +
                                   servers().torch_index_base() + "/cu124/\ntorch==2.4.0+cu124\n");
  Options o;
  o.cwd = dir;
  o.index_url = "-";
  Run hinted = expect_resolve_error(
      {"-r", "reqs.txt", "--driver", "550.54.14"}, o, 1,
      no_arch_warning("--driver 550.54.14") +
          "error: no solution: there is no version of torch==2.4.0+cu124\n"
          "  Because you require torch==2.4.0+cu124 and there is no version of torch==2.4.0+cu124, "
          "version solving "
          "failed.\n"
          "hint: torch was also found on http://INDEX/whl/cu124/, but under first-index only "
          "http://INDEX/simple/ is "
          "used for it (protection against dependency confusion); to take torch from "
          "http://INDEX/whl/cu124/: `" +
          normalize(hint_command({"-r", "reqs.txt", "--driver", "550.54.14", "-o", "-"}, o,
                                 {"--index", "other=" + servers().torch_index_base() + "/cu124/",
                                  "--index-for", "torch=other"})) +
          "` (or, trusting every index equally, `--index-strategy unsafe-best-match` instead of "
          "those two flags)\n");
  // The hint's command, followed, locks the cu124 torch.
  Run followed = run_hint(hint_line(hinted.err, "to take torch"), o);
  INFO(describe(followed));
  CHECK(followed.status == 0);
  CHECK(locked_version(followed.out, "torch") == "2.4.0+cu124");

  Run r = resolve({"-r", "reqs.txt", "--driver", "550.54.14", "--index-strategy",
                   "unsafe-best-match", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto lock = read_lock(dir / "pylock.toml");
  CHECK(package(lock, "torch").version == "2.4.0+cu124");
  CHECK(package(lock, "torch").index == servers().torch_index_base() + "/cu124/");
  CHECK(index_records(lock) == std::vector<std::string>{"default default http://INDEX/simple/",
                                                        "extra-1 extra http://INDEX/whl/cu124/"});
}

TEST_CASE("resolve --python asks the interpreter for the target", "[resolve][target]") {
  // The expected target, from the interpreter itself.
  Run py = run({"/usr/bin/python3", "-c",
                "import platform, sys; l = platform.libc_ver()[1].split('.'); "
                "print(f'{sys.version_info[0]}.{sys.version_info[1]} "
                "manylinux_{l[0]}_{l[1]}_{platform.machine()}')"},
               {{"PATH", "/usr/bin:/bin"}});
  REQUIRE(py.status == 0);
  std::string python = py.out.substr(0, py.out.find(' '));
  std::string platform = py.out.substr(py.out.find(' ') + 1);
  platform.pop_back();  // "\n"

  fs::path dir = fresh_dir("python-interpreter");
  Env env = base_env();
  env["PATH"] = "/usr/bin:/bin";
  Run r = run({kExe, "resolve", "jinja2", "--python", "/usr/bin/python3", "--index-url",
               servers().pypi_url(), "--cache-dir", shared_cache().string(), "-o", "pylock.toml"},
              env, dir);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->target);
  CHECK(lock.gpulock->target->python == python);
  CHECK(lock.gpulock->target->platform == platform);
  CHECK(package(lock, "jinja2").version == "3.1.6");

  SECTION("--platform without --python-version is a usage error") {
    Run p = run({kExe, "resolve", "jinja2", "--platform", "manylinux_2_28_x86_64", "-o", "-"}, env,
                dir);
    INFO(describe(p));
    CHECK(p.status == 2);
    CHECK(p.err == "error: --platform needs --python-version\n");
  }
}

TEST_CASE("resolve --exclude-newer takes timestamps and durations", "[resolve][snapshot]") {
  // jinja2 3.1.6 was uploaded at 2025-03-05T16:00:00Z; 3.1.4 in 2024.
  fs::path dir = fresh_dir("exclude-newer-forms");
  Options o;
  o.cwd = dir;
  auto jinja2_with = [&](const std::string& cutoff) {
    fs::remove(dir / "pylock.toml");  // its pins would be preferences
    Run r = resolve({"jinja2", "--exclude-newer", cutoff, "-o", "pylock.toml"}, o);
    INFO(cutoff << "\n" << describe(r));
    REQUIRE(r.status == 0);
    return lock_versions(dir / "pylock.toml").at("jinja2");
  };
  CHECK(jinja2_with("2025-03-05T15:59:59Z") == "3.1.4");
  CHECK(jinja2_with("2025-03-05T16:00:01Z") == "3.1.6");
  CHECK(jinja2_with("2025-03-05T16:59:59+01:00") == "3.1.4");
  CHECK(jinja2_with("2025-03-05") == "3.1.4");

  SECTION("a duration counts back from now, and the lock records the cutoff") {
    auto before = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch());
    CHECK(jinja2_with("1d") == "3.1.6");
    auto after = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch());
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->snapshot);
    REQUIRE(lock.gpulock->snapshot->exclude_newer);
    std::int64_t cutoff = epoch_seconds(*lock.gpulock->snapshot->exclude_newer);
    CHECK(cutoff >= before.count() - 86400);
    CHECK(cutoff <= after.count() - 86400 + 1);
    REQUIRE(lock.gpulock->inputs);
    CHECK(lock.gpulock->inputs->options.at("exclude-newer") == "1d");
  }
  SECTION("a duration reaching back before every upload") {
    expect_resolve_error(
        {"jinja2", "--exclude-newer", "P36500D"}, o, 1,
        "error: no solution: jinja2 was published after the --exclude-newer cutoff\n"
        "  Because you require jinja2 and jinja2 was published after the --exclude-newer cutoff, "
        "version solving "
        "failed.\n");
  }
  SECTION("a value that is none of these") {
    expect_resolve_error({"jinja2", "--exclude-newer", "7x"}, o, 2,
                         "error: invalid --exclude-newer '7x': expected a date (2025-06-01), a "
                         "timestamp (2025-06-01T12:00:00Z) "
                         "or a duration (7d, 12h, P7D)\n");
  }
}

TEST_CASE("resolve shows one progress line on a terminal and nothing but the result when piped",
          "[resolve][progress]") {
  fs::path dir = fresh_dir("progress");
  std::vector<std::string> args = {kExe,
                                   "resolve",
                                   "jinja2",
                                   "fixture-markers[remote]",
                                   "--python-version",
                                   "3.11",
                                   "--platform",
                                   "manylinux_2_28_x86_64",
                                   "--index-url",
                                   servers().pypi_url(),
                                   "--cache-dir",
                                   (dir / "cache").string(),
                                   "-o",
                                   "pylock.toml"};
  std::vector<std::string> tty = {"/usr/bin/python3", (kScriptDir / "with_tty_stderr.py").string()};
  tty.insert(tty.end(), args.begin(), args.end());
  Env env = base_env();
  Run r = run(tty, env, dir);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  // Redrawn in place ("\r", erase line), counting metadata fetched / requested; erased before
  // the result.
  CHECK(std::regex_search(r.err,
                          std::regex("\r\x1b\\[2KResolving  [0-9]+/[1-9][0-9]* metadata fetched, "
                                     "[0-9]+/[1-9][0-9]* pages")));
  CHECK(
      std::regex_search(r.err, std::regex("\r\x1b\\[2KResolved [0-9]+ packages in [0-9]+ ms; wrote "
                                          "pylock.toml\n$")));
  auto last = r.err.rfind("\r\x1b[2K");
  CHECK(r.err.substr(last + 5).starts_with("Resolved "));
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line in all

  // Piped (the same, warm): no control characters, only the result.
  Run piped = run(args, env, dir);
  INFO(describe(piped));
  REQUIRE(piped.status == 0);
  CHECK(std::regex_match(piped.err,
                         std::regex("Resolved [0-9]+ packages in [0-9]+ ms; wrote pylock.toml\n")));
  // -q: nothing at all.
  args.push_back("-q");
  Run quiet = run(args, env, dir);
  CHECK(quiet.status == 0);
  CHECK(quiet.err.empty());
  CHECK(quiet.out.empty());
}

TEST_CASE("resolve --cuda-ceiling stands in for a driver", "[resolve][gpu][driver]") {
  fs::path dir = fresh_dir("cuda-ceiling");
  Options o;
  o.cwd = dir;
  Run r = resolve({"torch", "torchvision", "--torch-backend", "auto", "--cuda-ceiling", "12.4",
                   "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto versions = lock_versions(dir / "pylock.toml");
  CHECK(versions.at("torch") == "2.7.1+cu118");
  CHECK(versions.at("torchvision") == "0.22.1+cu118");
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->gpu);
  const auto& g = *lock.gpulock->gpu;
  CHECK(!g.driver);
  CHECK(gpu_text(g.cuda_ceiling) == "12.4");
  CHECK(g.method == "override");
  CHECK(gpu_text(g.compat) == "strict");
  CHECK(g.variant == "cu118");
  CHECK(gpu_text(g.cuda) == "11.8");
  CHECK(g.cudnn == "9.1.0.70");
  CHECK(gpu_text(g.min_driver) == "520.61.05");
  CHECK(normalize(r.err) ==
        no_arch_warning("--cuda-ceiling 12.4") +
            "Resolved 24 packages in N ms; wrote pylock.toml\n"
            "torch 2.7.1+cu118: the newest torch whose CUDA build your driver runs (CUDA 11.8 <= "
            "12.4)\n");
}

TEST_CASE(
    "resolve --cuda-compat minor allows newer builds of the driver's CUDA major, with a warning",
    "[resolve][gpu][driver]") {
  fs::path dir = fresh_dir("cuda-compat-minor");
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  o.cwd = dir;
  Run r = resolve({"torch", "--torch-backend", "auto", "--driver", "550.54.14", "--cuda-compat",
                   "minor", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  // Driver 550 runs CUDA <= 12.4 strictly; with minor-version compatibility any 12.x build.
  CHECK(lock_versions(dir / "pylock.toml").at("torch") == "2.13.0+cu129");
  declared_closure(dir / "pylock.toml");
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->gpu);
  const auto& g = *lock.gpulock->gpu;
  CHECK(gpu_text(g.driver) == "550.54.14");
  CHECK(gpu_text(g.cuda_ceiling) == "12.4");
  CHECK(g.method == "driver-table");
  CHECK(gpu_text(g.compat) == "minor");
  CHECK(g.variant == "cu129");
  CHECK(gpu_text(g.cuda) == "12.9");
  CHECK(gpu_text(g.min_driver) == "525.60.13");  // CUDA 12.x minor-version compatibility
  REQUIRE(lock.gpulock->inputs);
  CHECK(lock.gpulock->inputs->options.at("cuda-compat") == "minor");
  CHECK(
      normalize(r.err) ==
      no_arch_warning("--driver 550.54.14") +
          "warning: --cuda-compat minor: CUDA builds newer than the driver run through "
          "minor-version "
          "compatibility, "
          "without PTX JIT for newer PTX; kernels not compiled for your GPU will fail to load\n"
          "Resolved 29 packages in N ms; wrote pylock.toml\n"
          "torch 2.13.0+cu129: the newest torch whose CUDA build your driver 550.54.14 runs (CUDA "
          "12.9 on 12.4 through "
          "minor-version compatibility)\n");
}

TEST_CASE("resolve bounds a torch build the arch table does not know by its CUDA, with a warning",
          "[resolve][gpu][archs]") {
  fs::path dir = fresh_dir("arch-unknown");
  Options o;
  o.cwd = dir;
  Run r = resolve({"torch", "--torch-backend", "auto", "--driver", "550.54.14", "--gpu-arch",
                   "sm_86", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("torch") == "2.7.1+cu118");
  CHECK(normalize(r.err) ==
        "warning: no GPU architecture list is known for torch 2.7.1 (CUDA 11.8); assumed: kernels "
        "for what "
        "CUDA 11.8 can build, no PTX\n"
        "Resolved 21 packages in N ms; wrote pylock.toml\n"
        "torch 2.7.1+cu118: the newest torch whose CUDA build your driver 550.54.14 runs (CUDA "
        "11.8 <= 12.4); kernels for sm_86 assumed (no arch list is known for this build; CUDA 11.8 "
        "can "
        "build for sm_86)\n");
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->gpu);
  CHECK(gpu_text(lock.gpulock->gpu->archs) == std::vector<std::string>{"sm_86"});
  CHECK(lock.gpulock->gpu->method == "driver-table");
}

TEST_CASE("resolve: cuDNN 9.11 and newer need sm_75", "[resolve][gpu][archs]") {
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  o.cwd = fresh_dir("cudnn-sm75");
  expect_resolve_error(
      {"torch", "nvidia-cudnn-cu12>=9.11", "--torch-backend", "auto", "--driver", "580.65.06",
       "--gpu-arch", "sm_61"},
      o, 1,
      "warning: no GPU architecture list is known for torch 2.7.1 (CUDA 12.6); assumed: kernels "
      "for what CUDA 12.6 "
      "can build, no PTX\n"
      "warning: no GPU architecture list is known for torch 2.7.1 (CUDA 11.8); assumed: kernels "
      "for what CUDA 11.8 "
      "can build, no PTX\n"
      "error: no solution: nvidia-cudnn-cu12>=9.19.0.56 needs sm_75 or newer and your GPU is "
      "sm_61\n"
      "  Because you require nvidia-cudnn-cu12>=9.11 and nvidia-cudnn-cu12>=9.19.0.56 needs sm_75 "
      "or newer and "
      "your GPU is sm_61, version solving failed.\n"
      // The torch indexes serve nvidia-cudnn-cu12 (first-index for every name, issue 17). Taking
      // it from the PyPI-like index does not help (every cuDNN >= 9.11 there needs sm_75 too):
      // the fact is said, no command (issue 43 item 5: a second solve did not confirm it).
      "hint: nvidia-cudnn-cu12 was also found on http://INDEX/simple/, but under first-index only "
      "http://INDEX/whl/cu129/ (and 4 more) is used for it (protection against dependency "
      "confusion)\n");
}

TEST_CASE("resolve --nightly needs a date or latest", "[resolve][gpu][nightly]") {
  Options o;
  o.cwd = fresh_dir("nightly-value");
  SECTION("no value: the next option is not taken as one") {
    Run r = resolve({"torch", "--driver", "none", "-o", "-", "--nightly"}, o);
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--nightly") != std::string::npos);
  }
  SECTION("an option where the value belongs") {
    Run r = resolve({"torch", "--nightly", "--driver", "none", "-o", "-"}, o);
    INFO(describe(r));
    CHECK(r.status == 2);
    // One parser for the flag (NightlyDate::parse, issue 21), one wording for its errors.
    CHECK(
        r.err ==
        "error: invalid --nightly '--driver': expected a build date YYYY-MM-DD (UTC) or latest\n");
  }
  SECTION("not a date") {
    for (const char* bad : {"2026-8-1", "2026-13-01", "yesterday"}) {
      Run r = resolve({"torch", "--nightly", bad, "--driver", "none", "-o", "-"}, o);
      INFO(bad << "\n" << describe(r));
      CHECK(r.status == 2);
      CHECK(r.err == std::string("error: invalid --nightly '") + bad +
                         "': expected a build date YYYY-MM-DD (UTC) or latest\n");
    }
  }
}

TEST_CASE("resolve reads the dependencies from the METADATA of the best wheel for the target",
          "[resolve][metadata][private]") {
  // One release whose wheels declare different dependencies: the cp311 manylinux wheel (ranked
  // first for a CPython 3.11 target) depends on fixture-versions<2, the py3-none-any wheel (the
  // only one for 3.12) on jinja2.
  gpulock::test::PrivateServers srv;
  srv.regenerate(R"({"releases": [
    {"name": "fixture-perwheel", "version": "1.0", "family": "synthetic", "indexes": ["pypi"],
     "requires_python": ">=3.8", "requires_dist": ["jinja2"],
     "wheels": ["cp311-cp311-manylinux_2_28_x86_64", "py3-none-any"],
     "file_overrides": [{"wheels": ["cp311-cp311-manylinux_2_28_x86_64"], "requires_dist": ["fixture-versions<2"]}],
     "verification": "illustrative"}]})");
  fs::path dir = fresh_dir("metadata-per-wheel");
  Options o;
  o.cwd = dir;
  o.index_url = srv.env().pypi_url();
  o.cache = dir / "cache";

  Run r311 = resolve({"fixture-perwheel", "-o", "py311.toml"}, o);
  INFO(describe(r311));
  REQUIRE(r311.status == 0);
  auto lock311 = read_lock(dir / "py311.toml");
  CHECK(lock_versions(dir / "py311.toml") ==
        std::map<std::string, std::string>{{"fixture-perwheel", "1.0"},
                                           {"fixture-versions", "1.4.2"}});
  REQUIRE(package(lock311, "fixture-perwheel").wheels);
  CHECK(package(lock311, "fixture-perwheel")
            .wheels->front()
            .url->ends_with("fixture_perwheel-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"));

  Options o312 = o;
  o312.python = "3.12";
  Run r312 = resolve({"fixture-perwheel", "-o", "py312.toml"}, o312);
  INFO(describe(r312));
  REQUIRE(r312.status == 0);
  CHECK(lock_versions(dir / "py312.toml") ==
        std::map<std::string, std::string>{
            {"fixture-perwheel", "1.0"}, {"jinja2", "3.1.6"}, {"markupsafe", "3.0.2"}});
}

TEST_CASE("resolve uses the detected driver and GPUs when no --driver is given",
          "[resolve][gpu][driver]") {
  // probe's fake nvidia-smi (tests/probe/fakes) on PATH, in the hermetic empty root: a GTX 1080
  // Ti on driver 550.54.14.
  fs::path dir = fresh_dir("detected-driver");
  Options o;
  o.cwd = dir;
  o.env["PATH"] = (kScriptDir / ".." / "probe" / "fakes" / "bin").lexically_normal().string();
  o.env["FAKE_SMI_OUTPUT"] =
      "550.54.14, NVIDIA GeForce GTX 1080 Ti, 6.1, GPU-00000000-0000-0000-0000-000000000001\\n";
  Run r = resolve({"torch", "torchvision", "--torch-backend", "auto", "-o", "pylock.toml"}, o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto versions = lock_versions(dir / "pylock.toml");
  CHECK(versions.at("torch") == "2.7.1+cu118");
  CHECK(versions.at("torchvision") == "0.22.1+cu118");
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->gpu);
  const auto& g = *lock.gpulock->gpu;
  CHECK(gpu_text(g.driver) == "550.54.14");
  CHECK(gpu_text(g.cuda_ceiling) == "12.4");
  CHECK(g.method == "driver-table");
  CHECK(gpu_text(g.archs) == std::vector<std::string>{"sm_61"});
  CHECK(g.variant == "cu118");
  CHECK(normalize(r.err) ==
        "warning: no GPU architecture list is known for torch 2.7.1 (CUDA 11.8); assumed: kernels "
        "for what "
        "CUDA 11.8 can build, no PTX\n"
        "Resolved 24 packages in N ms; wrote pylock.toml\n"
        "torch 2.7.1+cu118: the newest torch whose CUDA build your driver 550.54.14 runs (CUDA "
        "11.8 <= 12.4); kernels for sm_61 assumed (no arch list is known for this build; CUDA 11.8 "
        "can "
        "build for sm_61)\n");
}

// Issue 41 item 3: --nightly never yields a non-nightly torch-family build; before, with
// unsafe-best-match, stable torch 2.13.0 came from the default index with exit 0.
TEST_CASE("resolve --nightly with --index-strategy unsafe-best-match is a usage error",
          "[resolve][gpu][nightly]") {
  Options o;
  o.cwd = fresh_dir("nightly-unsafe-best-match");
  o.setuptools_from_pypi = true;
  Run r = resolve({"torch", "--nightly", "2026-08-15", "--index-strategy", "unsafe-best-match",
                   "--driver", "580.65.06", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  CHECK(r.status == 2);
  CHECK_FALSE(fs::exists(o.cwd / "pylock.toml"));
  CHECK(r.err.starts_with(
      "error: --nightly cannot be combined with --index-strategy unsafe-best-match: the torch "
      "family comes only from the nightly index, and unsafe-best-match would merge stable builds "
      "from the other indexes\n"));
  CHECK(r.err.find("hint: drop --index-strategy unsafe-best-match") != std::string::npos);
}

TEST_CASE("resolve --nightly allows pre-releases for the torch family only",
          "[resolve][gpu][nightly]") {
  // numpy 2.4.0rc1, sympy 1.15.0rc1 and mpmath 1.4.0a1 exist; only torch takes a .dev build.
  fs::path dir = fresh_dir("nightly-pre");
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  o.cwd = dir;
  // numpy, sympy and mpmath from the PyPI-like index, which has those pre-releases (the nightly
  // torch index mirrors older finals, and first-index would take them from there).
  Run r = resolve({"torch", "numpy", "sympy", "mpmath", "--nightly", "latest", "--driver", "none",
                   "--index-for", "numpy=pypi", "--index-for", "sympy=pypi", "--index-for",
                   "mpmath=pypi", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto versions = lock_versions(dir / "pylock.toml");
  CHECK(versions.at("torch") == "2.15.0.dev20260818+cpu");
  CHECK(versions.at("numpy") == "2.3.3");
  CHECK(versions.at("sympy") == "1.14.0");
  CHECK(versions.at("mpmath") == "1.3.0");
}

TEST_CASE("resolve explains each CUDA runtime the driver is too old for with its own CUDA",
          "[resolve][gpu][errors]") {
  // nvidia-cuda-runtime-cu12 X.Y.z itself needs CUDA X.Y: 12.6.77, 12.8.x and 12.9.79 each need
  // their own, and no sentence may claim one's for all.
  Options o;
  o.cwd = fresh_dir("runtime-too-new");
  Run hinted = expect_resolve_error(
      {"nvidia-cuda-runtime-cu12>=12.5", "--driver", "550.54.14"}, o, 1,
      "error: no solution: nvidia-cuda-runtime-cu12==12.6.77 needs CUDA >= 12.6 and your driver "
      "550.54.14 supports "
      "CUDA <= 12.4\n"
      "  Because nvidia-cuda-runtime-cu12==12.6.77 needs CUDA >= 12.6 and your driver 550.54.14 "
      "supports CUDA <= "
      "12.4, nvidia-cuda-runtime-cu12==12.6.77 cannot be used.\n"
      "  Because nvidia-cuda-runtime-cu12>=12.8.57,<12.9.79 needs CUDA >= 12.8 and your driver "
      "550.54.14 supports "
      "CUDA <= 12.4, nvidia-cuda-runtime-cu12>=12.8.57,<12.9.79 cannot be used.\n"
      "  Thus, nvidia-cuda-runtime-cu12>=12.6.77,<12.9.79 cannot be used.\n"
      "  Because nvidia-cuda-runtime-cu12==12.9.79 needs CUDA >= 12.9 and your driver 550.54.14 "
      "supports CUDA <= "
      "12.4, nvidia-cuda-runtime-cu12==12.9.79 cannot be used.\n"
      "  Thus, nvidia-cuda-runtime-cu12>=12.6.77 cannot be used.\n"
      "  And because you require nvidia-cuda-runtime-cu12>=12.5, version solving failed.\n"
      "hint: a newer CUDA build needs a driver >= 555.42.02 (run `gpulock probe --machine` to see "
      "yours)\n"
      "hint: or allow minor-version compatibility: `" +
          normalize(
              hint_command({"nvidia-cuda-runtime-cu12>=12.5", "--driver", "550.54.14", "-o", "-"},
                           o, {"--cuda-compat", "minor"})) +
          "` locks nvidia-cuda-runtime-cu12 12.9.79\n");
  // Followed, the hint's command locks what it says (issue 16 item 8).
  Run followed = run_hint(hint_line(hinted.err, "--cuda-compat minor"), o);
  INFO(describe(followed));
  CHECK(followed.status == 0);
  CHECK(locked_version(followed.out, "nvidia-cuda-runtime-cu12") == "12.9.79");
  Run ok = resolve({"nvidia-cuda-runtime-cu12", "--driver", "550.54.14", "-o", "-"}, o);
  INFO(describe(ok));
  CHECK(ok.status == 0);
  CHECK(ok.out.find("name = \"nvidia-cuda-runtime-cu12\"\nversion = \"12.4.127\"") !=
        std::string::npos);
}

TEST_CASE("resolve accepts --platform repeated, as pip does: the union of their tags",
          "[resolve][target][issue16]") {
  // pillow 11.3.0's Linux wheels are manylinux_2_28 only: a manylinux_2_17 target cannot use
  // them, and a second --platform manylinux_2_28_x86_64 adds its tags after the first's.
  // (resolve() appends Options::platform after the arguments.)
  fs::path dir = fresh_dir("platform-repeated");
  Options o;
  o.cwd = dir;
  {
    Options only = o;
    only.platform = "manylinux_2_17_x86_64";
    Run one = resolve({"pillow==11.3.0", "-o", "-"}, only);
    INFO(describe(one));
    CHECK(one.status == 1);
  }
  Run two = resolve({"pillow==11.3.0", "--platform", "manylinux_2_17_x86_64", "-o", "-"}, o);
  INFO(describe(two));
  CHECK(two.status == 0);
  CHECK(two.out.find("pillow-11.3.0-cp311-cp311-manylinux_2_28_x86_64.whl") != std::string::npos);
  // The first --platform is the target the lock records.
  CHECK(two.out.find("platform = \"manylinux_2_17_x86_64\"") != std::string::npos);
  expect_resolve_error(
      {"pillow==11.3.0", "--platform", "macosx_11_0_arm64"}, o, 2,
      "error: --platform macosx_11_0_arm64 and --platform manylinux_2_28_x86_64 are different "
      "machines; lock each with its own resolve\n");
}

TEST_CASE("resolve -v names every index page asked for, every cache hit, and the indexes",
          "[resolve][cli][issue16]") {
  fs::path dir = fresh_dir("verbose");
  Options o;
  o.cwd = dir;
  o.cache = dir / "cache";
  auto run_v = [&] {
    std::vector<std::string> argv = {kExe,
                                     "-v",
                                     "resolve",
                                     "jinja2",
                                     "--python-version",
                                     o.python,
                                     "--platform",
                                     o.platform,
                                     "--index-url",
                                     servers().pypi_url(),
                                     "--cache-dir",
                                     o.cache.string(),
                                     "-o",
                                     "-"};
    return run(argv, base_env(), dir);
  };
  Run cold = run_v();
  INFO(describe(cold));
  REQUIRE(cold.status == 0);
  const std::string pypi = servers().pypi_url();
  CHECK(cold.err.find("fetch page " + pypi + "jinja2/ (HTTP 200, ") != std::string::npos);
  CHECK(cold.err.find("fetch page " + pypi + "markupsafe/ (HTTP 200, ") != std::string::npos);
  // With the setting it came from (issue 26).
  CHECK(cold.err.find("index default (default): " + pypi + "  # command line --index-url\n") !=
        std::string::npos);
  Run warm = run_v();
  INFO(describe(warm));
  REQUIRE(warm.status == 0);
  CHECK(warm.err.find("cache page " + pypi + "jinja2/\n") != std::string::npos);
  CHECK(warm.err.find("fetch page") == std::string::npos);
  // Without -v: none of it.
  Run quiet = resolve({"jinja2", "-o", "-"}, o);
  CHECK(quiet.err.find("cache page") == std::string::npos);
}

TEST_CASE("resolve --index-for globs match names as normalized", "[resolve][inputs]") {
  // Issue 21: the glob was compared as typed with normalized names, so `MarkupSafe` or `Markup*`
  // never matched `markupsafe`, and the pin was silently ignored. The cu124 index mirrors only
  // the stale MarkupSafe 2.1.5; the PyPI-like index has 3.0.2.
  Options o;
  o.cwd = fresh_dir("index-for-glob");
  o.index_url = servers().torch_index_base() + "/cu124/";
  for (const std::string glob : {"MarkupSafe", "Markup*", "markup_safe", "markupsafe"}) {
    INFO(glob);
    Run r = resolve({"markupsafe==3.0.2", "--index", "pypi=" + servers().pypi_url(), "--index-for",
                     glob + "=pypi", "-o", "-"},
                    o);
    INFO(describe(r));
    CHECK(r.status == (glob == "markup_safe" ? 1 : 0));
    if (glob != "markup_safe") CHECK(locked_version(r.out, "markupsafe") == "3.0.2");
  }
}

TEST_CASE("resolve: a first-index hint names its command only when a second solve confirms it",
          "[resolve][issue43]") {
  // Issue 43 item 5. torch 2.4's builds pin nvidia-nccl-cu12 2.20.5 or 2.21.5, which no index
  // changes: taking nvidia-nccl-cu12 from the PyPI-like index (or trusting every index equally)
  // still fails, so the hint says what first-index did and gives no command.
  Options o;
  o.cwd = fresh_dir("first-index-unconfirmed");
  Run r = resolve({"torch", "torchaudio<2.5", "nvidia-nccl-cu12>=2.26", "--torch-backend", "auto",
                   "--driver", "570.86.10", "--gpu-arch", "sm_80", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  CHECK(r.status == 1);
  std::string hint = normalize(hint_line(r.err, "nvidia-nccl-cu12 was also found on"));
  CHECK(hint ==
        "hint: nvidia-nccl-cu12 was also found on http://INDEX/simple/, but under first-index only "
        "http://INDEX/whl/cu128/ (and 3 more) is used for it (protection against dependency "
        "confusion)");
  CHECK(r.err.find("--index-for nvidia-nccl-cu12=other") == std::string::npos);
}

// PEP 825 wheel variants end to end (issue 23; shared/data/gpu-stacks.md §7 and scenarios 13-15
// of §9): the real gpulock binary against the wheel-variant fixture indexes
// (fixtures/build_wheel_variants.py), served over HTTP by a private nginx (and as file:// for the
// tampering cases): which label a machine takes, the explanation when none fits, the variant
// markers of the chosen label, `[packages.variants-json]` in the lock, and the installer.

#include <fstream>

#include "stacks_support.h"

using namespace stacks_test;

namespace {

const fs::path kVariantsRoot = WHEEL_VARIANTS_INDEX;

const gpulock::test::ServersEnv& variants_server() {
  static gpulock::test::PrivateServers server(
      gpulock::test::PrivateServerOptions{.root = kVariantsRoot, .copy = false});
  return server.env();
}

std::string index_url(const std::string& layout) {
  return variants_server().http_url() + "/" + layout + "/simple/";
}

// `gpulock resolve torch` for CPython 3.12 on manylinux_2_28_x86_64 against one layout of the
// fixture, on a machine given by flags.
Run resolve_torch(const std::vector<std::string>& index_args,
                  const std::vector<std::string>& machine, const std::string& cache = "vcache") {
  std::vector<std::string> argv = {GPULOCK_EXE,
                                   "resolve",
                                   "torch",
                                   "--python-version",
                                   "3.12",
                                   "--platform",
                                   "manylinux_2_28_x86_64"};
  argv.insert(argv.end(), index_args.begin(), index_args.end());
  argv.insert(argv.end(), machine.begin(), machine.end());
  argv.insert(argv.end(), {"--cache-dir", (kWorkDir / cache).string(), "-q", "-o", "-"});
  fs::create_directories(kWorkDir);
  return gpulock::test::run_process(argv, env(), {.cwd = kWorkDir, .timeout_s = 120});
}

Run resolve_torch(const std::string& layout, const std::vector<std::string>& machine) {
  return resolve_torch({"--index-url", index_url(layout)}, machine);
}

std::string vnormalize(std::string text) {
  return replace_all(text, variants_server().http_url(), "http://INDEX");
}

// The file name of the one wheel a package locks ("" when not locked).
std::string wheel_of(const std::string& lock, const std::string& name) {
  auto at = lock.find("name = \"" + name + "\"\n");
  if (at == std::string::npos) return {};
  auto url = lock.find("url = \"", at);
  if (url == std::string::npos) return {};
  url += 7;
  auto end = lock.find('"', url);
  std::string u = lock.substr(url, end - url);
  return u.substr(u.rfind('/') + 1);
}

const std::vector<std::string> kH100Driver550 = {"--driver", "550.54.14", "--gpu-arch", "sm_90"};
const std::vector<std::string> kH100Driver580 = {"--driver", "580.65.06", "--gpu-arch", "sm_90"};

}  // namespace

TEST_CASE("stacks 13: variant selection under the strict ceiling, end to end",
          "[stacks][variants][scenario]") {
  SECTION("strict: cuda12.6 and cuda12.8 are above CUDA 12.4, and null is not taken silently") {
    Run r = resolve_torch("draft", kH100Driver550);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    const std::string why =
        "torch has no variant that fits this machine (cuda12.6 was built with CUDA 12.6, above "
        "your driver's CUDA 12.4 (strict ceiling; --cuda-compat minor allows it); cuda12.8 was "
        "built with CUDA 12.8, above your driver's CUDA 12.4 (strict ceiling; --cuda-compat "
        "minor allows it); cuda13.0 needs nvidia :: cuda_version_lower_bound :: 13.0, which this "
        "machine does not support); the null variant (no GPU code) is not chosen silently when a "
        "GPU was asked for";
    CHECK(vnormalize(r.err) == "error: no solution: " + why + "\n  Because you require torch and " +
                                   why + ", version solving failed.\n");
  }
  SECTION("minor: cuda12.8 (priority 2 before cuda12.6's 3), recorded with its metadata") {
    Run r = resolve_torch(
        "draft", {"--driver", "550.54.14", "--gpu-arch", "sm_90", "--cuda-compat", "minor"});
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(wheel_of(r.out, "torch") ==
          "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl");
    CHECK(
        r.out.find(
            "variants-json = { \"$schema\" = "
            "\"https://variants-schema.wheelnext.dev/v0.0.3.json\", "
            "default-priorities = { namespace = [\"nvidia\", \"intel\", \"amd\", \"priority\"] }, "
            "static-properties = { priority = { order = [\"1\", \"2\", \"3\"] } }, variants = { "
            "\"cuda12.8\" = { nvidia = { cuda_version_lower_bound = [\"12.0\"], sm_arch = "
            "[\"70_real\", \"75_real\", \"80_real\", \"86_real\", \"90_real\", \"100_real\", "
            "\"120_real\"] }, priority = { order = [\"2\"] } } } }\n") != std::string::npos);
    CHECK(r.out.find("[packages.tool.gpulock]\nvariant = \"cuda12.8\"\nvariant-properties = [\n"
                     "  \"nvidia :: cuda_version_lower_bound :: 12.0\",\n"
                     "  \"nvidia :: sm_arch :: 90_real\",\n"
                     "  \"priority :: order :: 2\",\n]\n") != std::string::npos);
    // Variant markers: the cuda12.8 label's libraries, none of cuda13.0's.
    CHECK(locked(r.out, "nvidia-cudnn-cu12") == "9.10.2.21");
    CHECK(locked(r.out, "nvidia-cublas-cu12") == "12.8.4.1");
    CHECK(locked(r.out, "nvidia-cudnn-cu13").empty());
    CHECK(locked(r.out, "nvidia-nccl-cu13").empty());
    CHECK(r.out.find("variant = \"cu128\"\ncuda = \"12.8\"\ncudnn = \"9.10.2.21\"") !=
          std::string::npos);
  }
  SECTION("driver 580: cuda13.0, and the property marker takes CUDA 13's NCCL") {
    Run r = resolve_torch("draft", kH100Driver580);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(wheel_of(r.out, "torch") ==
          "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl");
    CHECK(locked(r.out, "nvidia-cudnn-cu13") == "9.15.1.9");
    CHECK(locked(r.out, "nvidia-nccl-cu13") == "2.28.9");
    CHECK(locked(r.out, "nvidia-cudnn-cu12").empty());
  }
  SECTION("no GPU: the null variant, explicitly, with no CUDA library") {
    Run r = resolve_torch("draft", {"--driver", "none"});
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(wheel_of(r.out, "torch") == "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-null.whl");
    CHECK(r.out.find("nvidia-") == std::string::npos);
  }
}

TEST_CASE("stacks 14: variants on a mixed H100 + V100 host, end to end",
          "[stacks][variants][scenario]") {
  SECTION("every GPU's arch: cuda12.8 (70_real and 90_real), not cuda13.0 (no 70_real)") {
    Run r = resolve_torch("draft", {"--driver", "580.65.06", "--gpu-arch", "sm_90,sm_70"});
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(wheel_of(r.out, "torch") ==
          "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl");
  }
  SECTION("no variant has kernels for both a Maxwell and a Blackwell GPU: reported") {
    Run r = resolve_torch("draft", {"--driver", "580.65.06", "--gpu-arch", "sm_120,sm_50"});
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(vnormalize(r.err).starts_with(
        "error: no solution: torch has no variant that fits this machine (cuda12.6 needs nvidia :: "
        "sm_arch :: 50_real | 60_real | 70_real | 75_real | 80_real | 86_real | 90_real, which "
        "this machine does not support; cuda12.8 has no kernels for your GPU's sm_50"));
  }
}

TEST_CASE("stacks 15: two variant-metadata dialects, never merged, bad metadata reported",
          "[stacks][variants][scenario]") {
  SECTION("PEP 825's dialect: a label missing from the metadata is never taken") {
    // Driver 575 runs CUDA 12.9: the cuda12.9 wheel would be best, but its label is not in
    // torch-2.10.0-variants.json, so cuda12.8 is taken.
    Run r = resolve_torch("pep825", {"--driver", "575.51.03", "--gpu-arch", "sm_90"});
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(wheel_of(r.out, "torch") ==
          "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl");
    CHECK(r.out.find("variants-json = { \"$schema\" = "
                     "\"https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json\"") !=
          std::string::npos);
  }
  SECTION("two indexes, two dialects: the first index's variants only") {
    Run r =
        resolve_torch({"--index-url", index_url("draft"), "--extra-index-url", index_url("pep825")},
                      kH100Driver580);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(vnormalize(r.out).find("http://INDEX/draft/files/torch-2.10.0-cp312-cp312-manylinux_2_"
                                 "28_x86_64-cuda13.0.whl") != std::string::npos);
    CHECK(r.out.find("\"https://variants-schema.wheelnext.dev/v0.0.3.json\"") != std::string::npos);
    Run best = resolve_torch({"--index-url", index_url("pep825"), "--extra-index-url",
                              index_url("draft"), "--index-strategy", "unsafe-best-match"},
                             kH100Driver580);
    INFO(describe(best));
    REQUIRE(best.status == 0);
    CHECK(vnormalize(best.out).find("http://INDEX/pep825/files/torch-2.10.0-cp312-cp312-"
                                    "manylinux_2_28_x86_64-cuda13.0.whl") != std::string::npos);
    CHECK(best.out.find("/peps/825/v0.1.1.json") != std::string::npos);
    CHECK(best.out.find("/v0.0.3.json") == std::string::npos);
  }
  SECTION("an unknown major is rejected, naming the file") {
    Run r = resolve_torch("badmajor", kH100Driver580);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(vnormalize(r.err).starts_with(
        "error: no solution: torch has unusable variant metadata (unsupported variant metadata "
        "version 2.0.0 (PEP 825 requires rejecting an unknown major))"));
  }
  SECTION("variant wheels without metadata on the page") {
    Run r = resolve_torch("nometa", kH100Driver580);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(vnormalize(r.err).starts_with(
        "error: no solution: torch has variant wheels but its index lists no "
        "torch-2.10.0-variants.json for them (PEP 825)"));
  }
}

TEST_CASE("variants: metadata from the cache, offline, and a tampered file", "[stacks][variants]") {
  fs::path copy = kWorkDir / "variants-copy";
  fs::remove_all(copy);
  fs::create_directories(copy);
  fs::copy(kVariantsRoot / "draft", copy / "draft", fs::copy_options::recursive);
  const std::string url = "file://" + (copy / "draft" / "simple").string() + "/";
  // Over HTTP the page and the metadata are cached: a second run works offline.
  fs::remove_all(kWorkDir / "offline-cache");
  Run first = resolve_torch({"--index-url", index_url("draft")}, kH100Driver580, "offline-cache");
  INFO(describe(first));
  REQUIRE(first.status == 0);
  std::vector<std::string> offline = kH100Driver580;
  offline.push_back("--offline");
  Run second = resolve_torch({"--index-url", index_url("draft")}, offline, "offline-cache");
  INFO(describe(second));
  REQUIRE(second.status == 0);
  CHECK(wheel_of(second.out, "torch") == wheel_of(first.out, "torch"));
  CHECK(second.out.find("variants-json") != std::string::npos);

  // A variants.json that is not the file its page hashed: exit 4, naming it.
  {
    std::ofstream f(copy / "draft" / "files" / "torch-2.10.0-variants.json", std::ios::app);
    f << " ";
  }
  Run tampered = resolve_torch({"--index-url", url}, kH100Driver580);
  INFO(describe(tampered));
  CHECK(tampered.status == 4);
  CHECK(tampered.out.empty());
  CHECK(tampered.err.find("hash mismatch") != std::string::npos);
  CHECK(tampered.err.find("torch-2.10.0-variants.json") != std::string::npos);
}

TEST_CASE("variants: the native installer installs the chosen variant wheel",
          "[stacks][variants]") {
  fs::path dir = kWorkDir / "variant-install";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> argv = {GPULOCK_EXE,
                                   "resolve",
                                   "torch",
                                   "--python-version",
                                   "3.11",
                                   "--platform",
                                   "manylinux_2_28_x86_64",
                                   "--index-url",
                                   index_url("draft"),
                                   "--driver",
                                   "580.65.06",
                                   "--gpu-arch",
                                   "sm_90",
                                   "--cache-dir",
                                   (kWorkDir / "vcache").string(),
                                   "-q",
                                   "-o",
                                   (dir / "pylock.toml").string()};
  Run r = gpulock::test::run_process(argv, env(), {.cwd = dir, .timeout_s = 120});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  Run venv = gpulock::test::run_process(
      {"/usr/bin/python3", "-m", "venv", "--without-pip", (dir / "venv").string()}, env(),
      {.cwd = dir, .timeout_s = 120});
  INFO(describe(venv));
  REQUIRE(venv.status == 0);
  gpulock::test::Env e = env();
  e["GPULOCK_DRIVER"] = "580.65.06";
  Run install =
      gpulock::test::run_process({GPULOCK_EXE, "install", "--lock", (dir / "pylock.toml").string(),
                                  "--python", (dir / "venv" / "bin" / "python").string(),
                                  "--no-probe", "--cache-dir", (kWorkDir / "vcache").string()},
                                 e, {.cwd = dir, .timeout_s = 120});
  INFO(describe(install));
  REQUIRE(install.status == 0);
  Run list = gpulock::test::run_process(
      {(dir / "venv" / "bin" / "python").string(), "-c",
       "import importlib.metadata as m; print(m.version('torch'), m.version('nvidia-cudnn-cu13'))"},
      env(), {.cwd = dir, .timeout_s = 60});
  INFO(describe(list));
  CHECK(list.out == "2.10.0 9.15.1.9\n");
}

// Declared targets (issue 22): one command locks every machine a project declares, each as
// pylock.<name>.toml, written as a set.
#include "resolve_support.h"

using namespace resolve_test;

namespace {

const char* kTargets = R"([targets.cpu]
python-version = "3.11"
platform = "manylinux_2_28_x86_64"
driver = "none"
torch-backend = "cpu"

[targets.cu118]
python-version = "3.11"
platform = "manylinux_2_28_x86_64"
driver = "535.54.03"
gpu-arch = ["sm_80"]
torch-backend = "auto"

[targets.cu130]
python-version = "3.11"
platform = ["manylinux_2_28_x86_64"]
driver = "580.65.06"
gpu-arch = ["sm_90"]
torch-backend = "auto"
)";

// `gpulock resolve torch ARGS` in `dir` against the shared servers: no target flags.
Run resolve_targets(const fs::path& dir, const std::vector<std::string>& args,
                    const fs::path& cache = shared_cache()) {
  std::string index = servers().pypi_url();
  std::vector<std::string> argv = {kExe,
                                   "resolve",
                                   "torch",
                                   "--index-url",
                                   index,
                                   "--index",
                                   "pypi=" + index,
                                   "--index-for",
                                   "setuptools=pypi",
                                   "--torch-index-base",
                                   servers().torch_index_base(),
                                   "--cache-dir",
                                   cache.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, base_env(), dir);
}

// A fresh directory whose gpulock.toml declares kTargets.
fs::path declaring_targets(const std::string& name) {
  fs::path dir = fresh_dir(name);
  write_file(dir / "gpulock.toml", kTargets);
  return dir;
}

std::string version_of(const gpulock::lock::Lock& lock, const std::string& name) {
  for (const auto& p : lock.packages) {
    if (p.name == name) return p.version.value_or("");
  }
  return {};
}

}  // namespace

TEST_CASE("resolve --all-targets writes one lock per declared target", "[resolve][targets]") {
  fs::path dir = declaring_targets("targets");
  Run r = resolve_targets(dir, {"--all-targets"});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(r.err.find("target cu118: ") != std::string::npos);
  CHECK(r.err.find("; wrote " + (dir / "pylock.cu130.toml").string()) != std::string::npos);
  // Each target's own machine decides its build (the same drivers as gpu_test's table).
  auto cpu = lock_at(dir / "pylock.cpu.toml");
  auto cu118 = lock_at(dir / "pylock.cu118.toml");
  auto cu130 = lock_at(dir / "pylock.cu130.toml");
  CHECK(version_of(cpu, "torch").ends_with("+cpu"));
  CHECK(version_of(cu118, "torch") == "2.7.1+cu118");
  CHECK(version_of(cu130, "torch") == "2.13.0+cu130");
  CHECK(version_of(cpu, "nvidia-cudnn-cu12").empty());
  // The lock records its target's name and machine.
  REQUIRE(cu118.gpulock);
  REQUIRE(cu118.gpulock->target);
  CHECK(cu118.gpulock->target->name == std::optional<std::string>("cu118"));
  REQUIRE(cu118.gpulock->gpu);
  CHECK(gpu_text(cu118.gpulock->gpu->driver) == "535.54.03");
  CHECK(gpu_text(cu118.gpulock->gpu->archs) == std::vector<std::string>{"sm_80"});
  CHECK(!fs::exists(dir / "pylock.toml"));
  // Each is a valid PEP 751 lock, checked from outside.
  Run valid = run(
      {"/usr/bin/python3", (gpulock::test::source_dir() / "tests/lock/check_pylock.py").string(),
       (dir / "pylock.cpu.toml").string(), (dir / "pylock.cu118.toml").string(),
       (dir / "pylock.cu130.toml").string()},
      base_env());
  INFO(describe(valid));
  CHECK(valid.status == 0);

  SECTION("--target locks only the targets named") {
    fs::remove(dir / "pylock.cpu.toml");
    fs::remove(dir / "pylock.cu130.toml");
    Run one = resolve_targets(dir, {"--target", "cpu"});
    INFO(describe(one));
    CHECK(one.status == 0);
    CHECK(fs::exists(dir / "pylock.cpu.toml"));
    CHECK(!fs::exists(dir / "pylock.cu130.toml"));
    Run unknown = resolve_targets(dir, {"--target", "rocm"});
    CHECK(unknown.status == 2);
    CHECK(unknown.err == "error: no target 'rocm' in " + (dir / "gpulock.toml").string() + "\n");
  }
  SECTION("a target without a solution leaves every lock as it was") {
    std::map<std::string, std::string> before;
    for (const char* n : {"cpu", "cu118", "cu130"})
      before[n] = read_file(dir / ("pylock." + std::string(n) + ".toml"));
    // Driver 450 runs CUDA 11.0: no torch variant of the index runs there.
    write_file(dir / "gpulock.toml",
               std::string(kTargets) +
                   "\n[targets.old]\npython-version = \"3.11\"\n"
                   "platform = \"manylinux_2_28_x86_64\"\ndriver = \"450.51.05\"\n"
                   "torch-backend = \"auto\"\n");
    Run failed = resolve_targets(dir, {"--all-targets", "--upgrade"});
    INFO(describe(failed));
    CHECK(failed.status == 1);
    CHECK(failed.err.find("error: no solution for target 'old': ") != std::string::npos);
    CHECK(failed.err.find(
              "No lock was changed: every target must solve for the set to be written.\n") !=
          std::string::npos);
    for (const auto& [n, text] : before)
      CHECK(read_file(dir / ("pylock." + std::string(n) + ".toml")) == text);
    CHECK(!fs::exists(dir / "pylock.old.toml"));
  }
  SECTION("machine flags belong to the targets") {
    Run flag = resolve_targets(dir, {"--all-targets", "--driver", "550.54.14"});
    CHECK(flag.status == 2);
    CHECK(flag.err == "error: --driver with --all-targets: each target declares its own machine\n");
  }
}

TEST_CASE("resolve --all-targets takes the cache flags: --cache-dir and --offline",
          "[resolve][targets]") {
  // The flags once stopped at the single-target path: a set of targets used the default cache
  // and went to the network under --offline.
  fs::path dir = declaring_targets("targets-cache");
  fs::path cache = dir / "own-cache";
  Run offline = resolve_targets(dir, {"--all-targets", "--offline"}, cache);
  INFO(describe(offline));
  CHECK(offline.status == 4);
  CHECK(offline.err.find("offline") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "pylock.cpu.toml"));
  Run online = resolve_targets(dir, {"--all-targets"}, cache);
  INFO(describe(online));
  REQUIRE(online.status == 0);
  CHECK(fs::exists(cache / "pages-v4"));
}

TEST_CASE("resolve --all-targets -v shows the index requests, as one resolve does",
          "[resolve][targets]") {
  // The CLI once gave a set of targets no observer: -v printed nothing and a terminal got no
  // progress line.
  fs::path dir = declaring_targets("targets-verbose");
  fs::path cache = dir / "own-cache";
  Run cold = resolve_targets(dir, {"--all-targets", "-v"}, cache);
  INFO(describe(cold));
  REQUIRE(cold.status == 0);
  CHECK(cold.err.find("fetch page " + servers().torch_index_base()) != std::string::npos);
  CHECK(cold.err.find("(HTTP 200, ") != std::string::npos);
  Run warm = resolve_targets(dir, {"--all-targets", "-v"}, cache);
  INFO(describe(warm));
  REQUIRE(warm.status == 0);
  CHECK(warm.err.find("cache page " + servers().torch_index_base()) != std::string::npos);
}

TEST_CASE("declared targets are checked like flags, naming the file, table and key",
          "[resolve][targets]") {
  fs::path dir = fresh_dir("targets-bad");
  struct Case {
    std::string toml;
    std::string error;
  };
  const std::string file = (dir / "pyproject.toml").string();
  for (const auto& c : std::vector<Case>{
           {"[tool.gpulock.targets.cu126]\npython-version = \"3.11\"\nplatform = "
            "\"manylinux_2_28_x86_64\"\n"
            "torch-backend = \"cuda\"\n",
            "error: " + file +
                ": [tool.gpulock.targets.cu126]: torch-backend: invalid --torch-backend 'cuda': "
                "expected auto, cpu or "
                "cuXYZ (e.g. cu124)\n"},
           {"[tool.gpulock.targets.Big]\npython-version = \"3.11\"\nplatform = "
            "\"manylinux_2_28_x86_64\"\n",
            "error: " + file +
                ": [tool.gpulock.targets.Big]: a target's name is made of a-z, 0-9 and '-' (it "
                "names "
                "pylock.<name>.toml)\n"},
           {"[tool.gpulock.targets.cpu]\npython-version = \"3.11\"\nplatform = "
            "\"manylinux_2_28_x86_64\"\n"
            "drivers = \"none\"\n",
            "error: " + file +
                ": [tool.gpulock.targets.cpu]: unknown key 'drivers' (a target takes "
                "python-version, platform, "
                "driver, cuda-ceiling, gpu-arch, torch-backend, cuda-compat)\n"},
           // The machine's keys go through the flags' one parser when the file is read (issue
           // 43), not when the target is resolved.
           {"[tool.gpulock.targets.ampere]\npython-version = \"3.11\"\nplatform = "
            "\"manylinux_2_28_x86_64\"\n"
            "gpu-arch = [\"sm_80\", \"sm_8\"]\n",
            "error: " + file +
                ": [tool.gpulock.targets.ampere]: gpu-arch: invalid GPU architecture 'sm_8': "
                "expected sm_XY like sm_86 or a compute capability like 8.6\n"},
           {"[tool.gpulock.targets.ampere]\npython-version = \"3.11\"\nplatform = "
            "\"manylinux_2_28_x86_64\"\n"
            "cuda-ceiling = \"twelve\"\n",
            "error: " + file +
                ": [tool.gpulock.targets.ampere]: cuda-ceiling: invalid CUDA version 'twelve': "
                "expected major.minor like 12.4\n"},
           // A version through --python-version's parser (its row of the options table): what
           // the flag refuses, a target refuses, with the same words (a free-threaded "3.13t"
           // was once accepted here and locked as 3.13); a specifier admits Pythons.
           {"[tool.gpulock.targets.ft]\npython-version = \"3.13t\"\nplatform = "
            "\"manylinux_2_28_x86_64\"\n",
            "error: " + file +
                ": [tool.gpulock.targets.ft]: python-version: invalid --python-version '3.13t': "
                "expected X.Y\n"},
           {"[tool.gpulock.targets.old]\npython-version = \"<3.8\"\nplatform = "
            "\"manylinux_2_28_x86_64\"\n",
            "error: " + file +
                ": [tool.gpulock.targets.old]: python-version: '<3.8' admits no Python from 3.8 "
                "to 3.15\n"},
       }) {
    write_file(dir / "pyproject.toml", "[project]\nname = \"demo\"\nversion = \"1\"\n\n" + c.toml);
    Run r = resolve_targets(dir, {"--all-targets"});
    INFO(describe(r));
    CHECK(r.status == 3);
    CHECK(r.err == c.error);
  }
}

TEST_CASE("install picks the target lock that fits the machine, and says why",
          "[resolve][targets]") {
  fs::path dir = declaring_targets("targets-install");
  Run locked = resolve_targets(dir, {"--all-targets"});
  INFO(describe(locked));
  REQUIRE(locked.status == 0);
  auto print_target = [&](std::vector<std::string> machine) {
    std::vector<std::string> argv = {kExe, "install", "--print-target", "--python",
                                     "/usr/bin/python3"};
    argv.insert(argv.end(), machine.begin(), machine.end());
    return run(argv, base_env(), dir);
  };
  struct Case {
    std::vector<std::string> machine;
    std::string chosen;
  };
  for (const auto& c : std::vector<Case>{
           {{"--driver", "580.65.06", "--gpu-arch", "sm_90"}, "./pylock.cu130.toml"},
           {{"--driver", "550.54.14", "--gpu-arch", "sm_80"}, "./pylock.cu118.toml"},
           {{"--driver", "none"}, "./pylock.cpu.toml"},
           // A GPU neither CUDA lock was made for (issue 43: the GPUs a lock was made for are a
           // record, not a requirement): the lock whose builds have kernels for it (torch 2.7.1's
           // CUDA 11.8 build, its list assumed from what CUDA 11.8 builds), never one without.
           {{"--driver", "580.65.06", "--gpu-arch", "sm_61"}, "./pylock.cu118.toml"},
       }) {
    Run r = print_target(c.machine);
    INFO(c.machine.at(1) << "\n" << describe(r));
    CHECK(r.status == 0);
    CHECK(r.out.ends_with("install would use " + c.chosen + "\n"));
  }
  Run old = print_target({"--driver", "550.54.14", "--gpu-arch", "sm_80"});
  CHECK(old.out.find("./pylock.cu130.toml (target cu130): driver 550.54.14 supports CUDA <= 12.4, "
                     "this lock needs 13.0\n") != std::string::npos);
  CHECK(old.out.find("./pylock.cpu.toml (target cpu): fits: CPU builds run on any machine\n") !=
        std::string::npos);
  Run sm61 = print_target({"--driver", "580.65.06", "--gpu-arch", "sm_61"});
  CHECK(sm61.out.find("./pylock.cu130.toml (target cu130): torch 2.13.0+cu130 has no kernels for "
                      "this machine's GPU (sm_61): it carries ") != std::string::npos);
  // Without the CPU lock, nothing fits an old driver: exit 1, one line per lock.
  fs::remove(dir / "pylock.cpu.toml");
  Run none = print_target({"--driver", "450.51.05"});
  INFO(describe(none));
  CHECK(none.status == 1);
  CHECK(none.out.ends_with("no lock fits this machine\n"));
  Run install = run({kExe, "install", "--python", "/usr/bin/python3", "--driver", "450.51.05"},
                    base_env(), dir);
  CHECK(install.status == 1);
  CHECK(install.err.starts_with(
      "error: no lock fits this machine\n  ./pylock.cu118.toml: driver 450.51.05 supports "
      "CUDA <= 11.0, this lock needs 11.8\n"));

  // --lock L --print-target (issue 41): L's verdict alone, and nothing is installed, not even
  // the ./.venv an install would make.
  auto lock_verdict = [&](std::vector<std::string> more) {
    std::vector<std::string> argv = {kExe, "install", "--lock", "pylock.cu130.toml",
                                     "--print-target"};
    argv.insert(argv.end(), more.begin(), more.end());
    return run(argv, base_env(), dir);
  };
  Run fits = lock_verdict({"--driver", "580.65.06", "--gpu-arch", "sm_90"});
  INFO(describe(fits));
  CHECK(fits.status == 0);
  CHECK(fits.out.ends_with("install would use pylock.cu130.toml\n"));
  CHECK(fits.out.find("pylock.cu118.toml") == std::string::npos);
  Run too_old = lock_verdict({"--driver", "550.54.14", "--gpu-arch", "sm_80"});
  INFO(describe(too_old));
  CHECK(too_old.status == 1);
  CHECK(too_old.out.find("pylock.cu130.toml (target cu130): driver 550.54.14 supports CUDA <= "
                         "12.4, this lock needs 13.0\n") != std::string::npos);
  CHECK(too_old.out.ends_with("no lock fits this machine\n"));
  Run dry = lock_verdict({"--driver", "580.65.06", "--gpu-arch", "sm_90", "--dry-run", "--json"});
  CHECK(dry.status == 0);
  CHECK(!fs::exists(dir / ".venv"));
  Run twice = lock_verdict({"--target", "cu118"});
  CHECK(twice.status == 2);
}

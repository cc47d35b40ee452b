// Declared targets as a set (issue 22): five machines locked by one command, versions aligned
// across them, a target spanning several Pythons, and each lock read back by packaging 26.3's
// own PEP 751 reader (pylock_reference.py), when the reference directory is configured (issue 42:
// without it, those checks are off and configure names them).
#include <set>

#include "resolve_support.h"

using namespace resolve_test;

namespace {

// pip 26.3 with packaging 26.3 under REFERENCE/pip; empty when not configured.
const fs::path kReferenceDir = RESOLVE_REFERENCE_DIR;

bool have_reference() {
  return !kReferenceDir.empty();
}

// The five machines of the issue: a laptop, the driver-535 and driver-560 node pools, an H100
// box on driver 580 and an aarch64 CPU runner. Python 3.11: the Python `install` finds here.
const char* kFive = R"([targets.cpu]
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

[targets.cu126]
python-version = "3.11"
platform = "manylinux_2_28_x86_64"
driver = "560.35.03"
gpu-arch = ["sm_80"]
torch-backend = "auto"

[targets.cu130]
python-version = "3.11"
platform = "manylinux_2_28_x86_64"
driver = "580.65.06"
gpu-arch = ["sm_90"]
torch-backend = "auto"

[targets.arm]
python-version = "3.11"
platform = "manylinux_2_28_aarch64"
driver = "none"
torch-backend = "cpu"
)";

const std::vector<std::string> kFiveNames = {"arm", "cpu", "cu118", "cu126", "cu130"};

Run resolve_in(const fs::path& dir, std::vector<std::string> args) {
  std::string index = servers().pypi_url();
  std::vector<std::string> argv = {kExe,
                                   "resolve",
                                   "--index-url",
                                   index,
                                   "--index",
                                   "pypi=" + index,
                                   "--index-for",
                                   "setuptools=pypi",
                                   "--torch-index-base",
                                   servers().torch_index_base(),
                                   "--cache-dir",
                                   shared_cache().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, base_env(), dir);
}

// name -> version as locked.
std::map<std::string, std::string> versions(const gpulock::lock::Lock& lock) {
  std::map<std::string, std::string> out;
  for (const auto& p : lock.packages)
    out[p.name] = p.version.value_or("");
  return out;
}

std::string public_of(const std::string& v) {
  return v.substr(0, v.find('+'));
}

// packaging 26.3's reader over `files`, selecting for each machine ("3.11:manylinux_2_28_x86_64").
Run reference(const std::vector<fs::path>& files, const std::vector<std::string>& machines) {
  std::vector<std::string> argv = {
      "/usr/bin/python3", (kScriptDir / "pylock_reference.py").string(), kReferenceDir.string()};
  for (const auto& f : files)
    argv.push_back(f.string());
  for (const auto& m : machines) {
    argv.push_back("--select");
    argv.push_back(m);
  }
  return run(argv, base_env());
}

}  // namespace

TEST_CASE("five targets are locked by one command, with the same versions where they can be",
          "[resolve][targets]") {
  fs::path dir = fresh_dir("targets-five");
  write_file(dir / "gpulock.toml", kFive);
  Run r = resolve_in(dir, {"torch", "numpy", "--all-targets"});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  std::map<std::string, std::map<std::string, std::string>> locked;
  std::vector<fs::path> files;
  for (const auto& n : kFiveNames) {
    files.push_back(dir / ("pylock." + n + ".toml"));
    locked[n] = versions(lock_at(files.back()));
  }
  // Five valid PEP 751 locks, each installable on its own machine by packaging's reader.
  if (have_reference()) {
    Run x86 = reference({files[1], files[2], files[3], files[4]}, {"3.11:manylinux_2_28_x86_64"});
    INFO(describe(x86));
    CHECK(x86.status == 0);
    CHECK(
        x86.out.find(" torch 2.7.1+cu118 torch-2.7.1%2Bcu118-cp311-cp311-manylinux_2_28_x86_64") !=
        std::string::npos);
    Run arm = reference({files[0]}, {"3.11:manylinux_2_28_aarch64"});
    INFO(describe(arm));
    CHECK(arm.status == 0);
    CHECK(arm.out.find("aarch64.whl") != std::string::npos);
  }

  // Every package all five lock, outside the CUDA build's own nvidia-* set, has one public
  // version in all five, except torch's family on cu118, whose driver runs no newer build.
  std::set<std::string> everywhere;
  for (const auto& [name, v] : locked["cpu"]) {
    if (std::all_of(kFiveNames.begin(), kFiveNames.end(),
                    [&](const std::string& n) { return locked[n].contains(name); }))
      everywhere.insert(name);
  }
  CHECK(everywhere.contains("numpy"));
  CHECK(everywhere.contains("filelock"));
  for (const auto& name : everywhere) {
    for (const auto& n : kFiveNames) {
      if (n == "cu118" && name == "torch") continue;
      INFO(name << " in " << n);
      CHECK(public_of(locked[n][name]) == public_of(locked["cpu"][name]));
    }
  }
  const std::string torch = public_of(locked["cpu"]["torch"]);
  CHECK(locked["cu126"]["torch"] == torch + "+cu126");
  CHECK(locked["cu130"]["torch"] == torch + "+cu130");
  CHECK(locked["cu118"]["torch"] == "2.7.1+cu118");
  CHECK(r.err.find("\ntorch " + torch + " everywhere except target 'cu118': torch>=" + torch +
                   "+cu126 needs a newer CUDA than its driver 535.54.03 runs (CUDA <= 12.2)\n") !=
        std::string::npos);

  SECTION("--independent-targets: no alignment, no lines") {
    Run ind = resolve_in(dir, {"torch", "numpy", "--all-targets", "--independent-targets"});
    INFO(describe(ind));
    CHECK(ind.status == 0);
    CHECK(ind.err.find("everywhere except") == std::string::npos);
  }
  SECTION("a failure in one target leaves all five locks as they were") {
    std::map<std::string, std::string> before;
    for (const auto& f : files)
      before[f.string()] = read_file(f);
    write_file(dir / "gpulock.toml", std::string(kFive) +
                                         "\n[targets.old]\npython-version = \"3.11\"\n"
                                         "platform = \"manylinux_2_28_x86_64\"\n"
                                         "driver = \"450.51.05\"\ntorch-backend = \"auto\"\n");
    Run failed = resolve_in(dir, {"torch", "numpy", "filelock<3.13", "--all-targets"});
    INFO(describe(failed));
    CHECK(failed.status == 1);
    CHECK(failed.err.find("No lock was changed") != std::string::npos);
    for (const auto& [f, text] : before)
      CHECK(read_file(f) == text);
  }
  SECTION("check --all-targets checks every lock, and each against its declaration") {
    Run ok = run({kExe, "check", "--all-targets", "--cache-dir", shared_cache().string()},
                 base_env(), dir);
    INFO(describe(ok));
    CHECK(ok.status == 0);
    for (const auto& f : files)
      CHECK(ok.out.find(f.string() + ": no drift\n") != std::string::npos);
    std::string moved = kFive;
    moved.replace(moved.find("580.65.06"), 9, "590.44.01");
    write_file(dir / "gpulock.toml", moved);
    Run drift = run({kExe, "check", "--all-targets", "--inputs"}, base_env(), dir);
    INFO(describe(drift));
    CHECK(drift.status == 1);
    CHECK(drift.err.find("error: " + files[4].string() +
                         ": target 'cu130' declares driver 590.44.01, the lock was made for "
                         "driver 580.65.06\n") != std::string::npos);
    // The re-lock is the command the locks were made with (their indexes and inputs), not a
    // bare `gpulock resolve --all-targets` (issue 43 item 5; hints_run runs it).
    std::string relock = hint_line(drift.err, "re-locks every target as a set");
    INFO(relock);
    CHECK(relock.starts_with("hint: `gpulock resolve --index-url "));
    CHECK(relock.find(" --torch-index-base ") != std::string::npos);
    CHECK(relock.find(" torch numpy --all-targets` re-locks every target as a set") !=
          std::string::npos);
    // On a machine, check takes the lock this machine would install.
    Run here = run({kExe, "check", "--machine", "--python", "/usr/bin/python3", "--driver",
                    "560.35.03", "--gpu-arch", "sm_80"},
                   base_env(), dir);
    INFO(describe(here));
    CHECK(here.status == 0);
    CHECK(
        here.err.starts_with("checking ./pylock.cu126.toml, the lock this machine picks (fits: "
                             "a CUDA 12.6 build, and driver 560.35.03 supports CUDA <= 12.6)\n"));
    CHECK(here.out.find("./pylock.cu126.toml: no drift") != std::string::npos);
  }
  SECTION("diff of two targets' locks: one line per package that swaps its CUDA build") {
    Run d = run({kExe, "diff", files[3].string(), files[4].string()}, base_env(), dir);
    INFO(describe(d));
    CHECK(d.status == 1);
    auto line_of = [&](const std::string& start) {
      auto at = d.out.find("\n" + start);
      return at == std::string::npos ? std::string()
                                     : d.out.substr(at + 1, d.out.find('\n', at + 1) - at - 1);
    };
    CHECK(line_of("nvidia-cudnn-cu12 -> nvidia-cudnn-cu13 ").find(" swapped ") !=
          std::string::npos);
    CHECK(line_of("nvidia-cublas-cu12 -> nvidia-cublas ").find(" swapped ") != std::string::npos);
    const std::string t = line_of("torch ");
    CHECK(t.find(" variant ") != std::string::npos);
    CHECK(t.find(torch + "+cu126") != std::string::npos);
    CHECK(d.out.find("changed: index") == std::string::npos);
    CHECK(d.out.find("\nsame version and files, from each target's own index: ") !=
          std::string::npos);
    CHECK(d.out.find("inputs.options") == std::string::npos);
  }
  SECTION("install --print-target picks each machine's lock and says why") {
    struct Case {
      std::vector<std::string> machine;
      std::string chosen;
    };
    for (const auto& c : std::vector<Case>{
             {{"--driver", "580.65.06", "--gpu-arch", "sm_90"}, "./pylock.cu130.toml"},
             {{"--driver", "560.35.03", "--gpu-arch", "sm_80"}, "./pylock.cu126.toml"},
             {{"--driver", "535.54.03", "--gpu-arch", "sm_80"}, "./pylock.cu118.toml"},
             {{"--driver", "none"}, "./pylock.cpu.toml"},
         }) {
      std::vector<std::string> argv = {kExe, "install", "--print-target", "--python",
                                       "/usr/bin/python3"};
      argv.insert(argv.end(), c.machine.begin(), c.machine.end());
      Run p = run(argv, base_env(), dir);
      INFO(describe(p));
      CHECK(p.status == 0);
      CHECK(p.out.ends_with("install would use " + c.chosen + "\n"));
      // The aarch64 lock never fits this x86_64 Python, and says so.
      CHECK(p.out.find("./pylock.arm.toml (target arm): this lock is for manylinux_2_28_aarch64, "
                       "which this machine's Python") != std::string::npos);
    }
    Run json = run({kExe, "install", "--print-target", "--json", "--python", "/usr/bin/python3",
                    "--driver", "560.35.03", "--gpu-arch", "sm_80"},
                   base_env(), dir);
    INFO(describe(json));
    CHECK(json.status == 0);
    CHECK(json.out.find("\"chosen\": \"./pylock.cu126.toml\"") != std::string::npos);
    CHECK(json.out.find("\"why\": \"driver 560.35.03 supports CUDA <= 12.6, this lock needs "
                        "13.0\"") != std::string::npos);
  }
}

TEST_CASE("a target spanning Python 3.10 to 3.13 is one version set with every Python's wheels",
          "[resolve][targets]") {
  fs::path dir = fresh_dir("targets-span");
  write_file(dir / "gpulock.toml", R"([targets.span]
python-version = ">=3.10,<3.14"
platform = "manylinux_2_28_x86_64"
driver = "none"
torch-backend = "cpu"

[targets.new]
python-version = "3.12"
platform = "manylinux_2_28_x86_64"
driver = "none"
torch-backend = "cpu"
)");
  Run r = resolve_in(dir, {"torch", "networkx", "numpy; python_version < '3.12'", "--index-for",
                           "networkx=pypi", "--index-for", "markupsafe=pypi", "--all-targets"});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto span = lock_at(dir / "pylock.span.toml");
  CHECK(span.requires_python == std::optional<std::string>(">=3.10,<3.14"));
  REQUIRE(span.environments);
  CHECK(span.environments->size() == 4);
  REQUIRE(span.gpulock);
  REQUIRE(span.gpulock->target);
  CHECK(span.gpulock->target->pythons == std::vector<std::string>{"3.10", "3.11", "3.12", "3.13"});
  CHECK(span.gpulock->target->python == "3.10");
  // networkx 3.5 needs Python 3.11: the whole span takes 3.4.2, the 3.12 target the newest.
  CHECK(versions(span)["networkx"] == "3.4.2");
  CHECK(versions(lock_at(dir / "pylock.new.toml"))["networkx"] == "3.5");
  CHECK(r.err.find("\nnetworkx 3.5 everywhere except target 'span': requires-python: "
                   "networkx==3.5 needs Python >= 3.11\n") != std::string::npos);
  // numpy only where the requirement's marker holds: a marker on the package, no cp312 wheel.
  for (const auto& p : span.packages) {
    if (p.name == "numpy") {
      CHECK(p.marker ==
            std::optional<std::string>("python_version == \"3.10\" or python_version == \"3.11\""));
    } else {
      CHECK(!p.marker);
    }
  }
  // packaging's reader picks a wheel of every package for each of the four Pythons.
  if (have_reference()) {
    std::vector<std::string> machines;
    for (const char* py : {"3.10", "3.11", "3.12", "3.13"})
      machines.push_back(std::string(py) + ":manylinux_2_28_x86_64");
    Run ref = reference({dir / "pylock.span.toml"}, machines);
    INFO(describe(ref));
    CHECK(ref.status == 0);
    CHECK(ref.out.find("3.10:manylinux_2_28_x86_64 " + (dir / "pylock.span.toml").string() +
                       " numpy ") != std::string::npos);
    CHECK(ref.out.find("3.12:manylinux_2_28_x86_64 " + (dir / "pylock.span.toml").string() +
                       " numpy ") == std::string::npos);
    for (const char* cp : {"cp310", "cp311", "cp312", "cp313"}) {
      CHECK(ref.out.find(std::string("torch-2.13.0%2Bcpu-") + cp + "-" + cp) != std::string::npos);
      CHECK(ref.out.find(std::string("MarkupSafe-3.0.2-") + cp + "-" + cp) != std::string::npos);
    }
  }

  SECTION("no version set serves every Python: the package that forces a split is named") {
    Run split = resolve_in(dir, {"torch", "numpy!=2.1.*,!=2.2.*", "--index-for", "numpy=pypi",
                                 "--index-for", "markupsafe=pypi", "--target", "span"});
    INFO(describe(split));
    CHECK(split.status == 1);
    CHECK(split.err.find("error: no solution for target 'span': no single version of numpy "
                         "serves every Python and platform of target 'span'\n") !=
          std::string::npos);
    CHECK(split.err.find("Declare one target per Python or platform that needs its own numpy") !=
          std::string::npos);
  }
}

TEST_CASE("a target's machine is its keys alone, never GPULOCK_* variables or this machine",
          "[resolve][targets]") {
  fs::path dir = fresh_dir("targets-env");
  write_file(dir / "gpulock.toml", R"([targets.ceil]
python-version = "3.11"
platform = "manylinux_2_28_x86_64"
cuda-ceiling = "12.6"
gpu-arch = ["sm_80"]
torch-backend = "auto"
)");
  std::string index = servers().pypi_url();
  Env env = base_env();
  env["GPULOCK_DRIVER"] = "535.54.03";
  env["GPULOCK_GPU_ARCH"] = "sm_61";
  Run r = run({kExe, "resolve", "torch", "--index-url", index, "--index", "pypi=" + index,
               "--index-for", "setuptools=pypi", "--torch-index-base", servers().torch_index_base(),
               "--cache-dir", shared_cache().string(), "--all-targets"},
              env, dir);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto lock = lock_at(dir / "pylock.ceil.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->gpu);
  CHECK(!lock.gpulock->gpu->driver);
  CHECK(gpu_text(lock.gpulock->gpu->cuda_ceiling) == "12.6");
  CHECK(gpu_text(lock.gpulock->gpu->archs) == std::vector<std::string>{"sm_80"});
  CHECK(versions(lock)["torch"].ends_with("+cu126"));
}

// Issue 16: never lock the wrong build silently. Each case ran against the 'user-shapes' fixture
// variant (fixtures/variants/user-shapes.json: no /whl/cpu/ tree, no torchaudio 2.7.x on cu118,
// no torchaudio nightlies, torch 2.11.0+cu128 requiring cuda-bindings unversioned) or the main
// fixture index, and wrote a lock that cannot work (or said something untrue) with exit 0 before
// the fix.
#include <sstream>

#include <sys/stat.h>

#include "gpulock/core/version.h"

#include "resolve_support.h"

using namespace resolve_test;

namespace {

// One private nginx serving the variant tree (generated at build time), shared by the cases.
const gpulock::test::ServersEnv& shapes() {
  static gpulock::test::PrivateServers server(
      gpulock::test::PrivateServerOptions{.root = RESOLVE_USER_SHAPES_INDEX, .copy = false});
  return server.env();
}

Options on_shapes(const fs::path& dir) {
  Options o;
  o.cwd = dir;
  o.index_url = shapes().pypi_url();
  o.torch_index_base = shapes().torch_index_base();
  o.cache = dir / "cache";
  return o;
}

std::string shapes_normalize(std::string text) {
  text = replace_all(text, shapes().http_url(), "http://SHAPES");
  return normalize(text);
}

}  // namespace

TEST_CASE("a missing torch variant is an error, never a fallback to the default index",
          "[resolve][issue16]") {
  fs::path dir = fresh_dir("wrong-build-missing-variant");
  Options o = on_shapes(dir);
  SECTION("--torch-backend cu125 (no such variant)") {
    Run r = resolve(
        {"torch", "--torch-backend", "cu125", "--driver", "580.65.06", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    CHECK(r.status == 4);
    CHECK_FALSE(fs::exists(dir / "pylock.toml"));
    std::string err = shapes_normalize(r.err);
    CHECK(err.starts_with(
        "error: http://SHAPES/whl/cu125/torch/: not found: the PyTorch index has no torch for "
        "--torch-backend cu125\n"));
    CHECK(err.find("hint: variants on http://SHAPES/whl/: cu118 (driver >= ") != std::string::npos);
    CHECK(err.find("cu130 (driver >= 580") != std::string::npos);
  }
  SECTION("--torch-backend cpu on an index without a CPU tree") {
    Run r = resolve({"torch", "--torch-backend", "cpu", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    CHECK(r.status == 4);
    std::string err = shapes_normalize(r.err);
    CHECK(err.starts_with(
        "error: http://SHAPES/whl/cpu/torch/: not found: the PyTorch index has no torch for "
        "--torch-backend cpu\n"));
    // The hint lists what exists; it must not send the user back to --torch-backend cpu.
    CHECK(err.find("hint: variants on http://SHAPES/whl/: cu118") != std::string::npos);
    CHECK(err.substr(err.find("hint:")).find("cpu") == std::string::npos);
    CHECK(err.find("hint: variants on http://SHAPES/whl/: cu118") != std::string::npos);
  }
  SECTION("a typo in --torch-index-base") {
    o.torch_index_base = shapes().http_url() + "/whlx";
    Run r = resolve(
        {"torch", "--torch-backend", "auto", "--driver", "550.54.14", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    CHECK(r.status == 4);
    CHECK(
        shapes_normalize(r.err).starts_with("error: http://SHAPES/whlx/: no PyTorch variant index "
                                            "was found here (is --torch-index-base right?)\n"));
    CHECK_FALSE(fs::exists(dir / "pylock.toml"));
  }
  SECTION("--nightly on a driver no nightly variant runs on") {
    Run r = resolve({"torch", "--nightly", "2026-08-17", "--torch-backend", "auto", "--driver",
                     "550.54.14", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    CHECK(r.status == 1);
    std::string err = shapes_normalize(r.err);
    // The deciding fact is the headline (issue 16 item 10).
    CHECK(err.find("error: no solution: no nightly variant of torch on http://SHAPES/whl/nightly/ "
                   "runs on your driver "
                   "550.54.14 (CUDA <= 12.4)\n") != std::string::npos);
    CHECK(std::regex_search(
        err,
        std::regex(
            R"(The index has: cpu, cu126 \(driver >= [0-9.]+\), cu130 \(driver >= [0-9.]+\)\.)")));
    CHECK_FALSE(fs::exists(dir / "pylock.toml"));
  }
  SECTION("a family member the nightly index lacks is not taken from the default index") {
    Run r = resolve({"torch", "torchaudio", "--nightly", "2026-08-17", "--torch-backend", "auto",
                     "--driver", "580.65.06", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(shapes_normalize(r.err).find("error: no solution: there are no nightly torchaudio builds "
                                       "on http://SHAPES/whl/nightly/") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "pylock.toml"));
  }
}

TEST_CASE("every CUDA-bound wheel is held to the driver's ceiling", "[resolve][issue16]") {
  // torch 2.11.0+cu128 (this index) requires cuda-bindings unversioned, cuDNN requires cuBLAS
  // unversioned: on driver 570 (CUDA <= 12.8, strict) neither cuda-bindings 13.x nor cuBLAS 12.9
  // may be locked.
  fs::path dir = fresh_dir("wrong-build-ceiling");
  Options o = on_shapes(dir);
  Run r = resolve(
      {"torch==2.11.*", "--torch-backend", "auto", "--driver", "570.86.10", "-o", "pylock.toml"},
      o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto lock = read_lock(dir / "pylock.toml");
  const auto* torch = find_package(lock, "torch");
  REQUIRE(torch != nullptr);
  CHECK(torch->version == "2.11.0+cu128");
  const auto* bindings = find_package(lock, "cuda-bindings");
  REQUIRE(bindings != nullptr);
  CHECK(bindings->version->starts_with("12."));
  const auto* cublas = find_package(lock, "nvidia-cublas-cu12");
  REQUIRE(cublas != nullptr);
  auto v = gpulock::core::Version::parse(*cublas->version);
  REQUIRE(v.has_value());
  CHECK(v->release_at(0) == 12);
  CHECK(v->release_at(1) <= 8);
  REQUIRE(lock.gpulock->gpu.has_value());
  CHECK(gpu_text(lock.gpulock->gpu->cuda) == "12.8");
}

TEST_CASE("an unknown arch list is bounded by what its CUDA can build", "[resolve][issue16]") {
  fs::path dir = fresh_dir("wrong-build-archs");
  Options o = on_shapes(dir);
  SECTION("no CUDA <= 12.4 build carries Blackwell kernels") {
    Run r = resolve({"torch", "--torch-backend", "auto", "--driver", "550.54.14", "--gpu-arch",
                     "sm_120", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.err.find("sm_120") != std::string::npos);
    CHECK(r.err.find("with kernels for") == std::string::npos);
    CHECK_FALSE(fs::exists(dir / "pylock.toml"));
  }
  SECTION("an assumed list says 'assumed', never 'with kernels for'") {
    // torch 2.7.1+cu118 has no recorded arch list; CUDA 11.8 can build for sm_90.
    Run r = resolve({"torch", "--torch-backend", "auto", "--driver", "550.54.14", "--gpu-arch",
                     "sm_90", "-o", "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(r.err.find("torch 2.7.1+cu118: the newest torch whose CUDA build your driver 550.54.14 "
                     "runs (CUDA 11.8 <= "
                     "12.4); kernels for sm_90 assumed") != std::string::npos);
    CHECK(r.err.find("with kernels for") == std::string::npos);
  }
}

TEST_CASE("an existing lock's pins do not beat a new machine", "[resolve][issue16]") {
  fs::path dir = fresh_dir("wrong-build-pins");
  Options o;
  o.setuptools_from_pypi = true;  // torch 2.13 / nightlies: see Options
  o.cwd = dir;
  Run first = resolve({"torch", "--torch-backend", "auto", "--driver", "580.65.06", "--gpu-arch",
                       "sm_61", "-o", "pylock.toml"},
                      o);
  INFO(describe(first));
  REQUIRE(first.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("torch") == "2.13.0+cu126");
  SECTION("another machine re-decides the CUDA-bound pins") {
    Run again = resolve({"torch", "--torch-backend", "auto", "--driver", "580.65.06", "--gpu-arch",
                         "sm_90", "-o", "pylock.toml", "--explain"},
                        o);
    INFO(describe(again));
    REQUIRE(again.status == 0);
    CHECK(lock_versions(dir / "pylock.toml").at("torch") == "2.13.0+cu130");
  }
  SECTION("the same machine keeps the pin and says what is newer") {
    Run older = resolve({"torch<2.13", "--torch-backend", "auto", "--driver", "580.65.06",
                         "--gpu-arch", "sm_61", "-o", "pylock.toml", "--upgrade"},
                        o);
    INFO(describe(older));
    REQUIRE(older.status == 0);
    std::string pinned = lock_versions(dir / "pylock.toml").at("torch");
    Run again = resolve({"torch", "--torch-backend", "auto", "--driver", "580.65.06", "--gpu-arch",
                         "sm_61", "-o", "pylock.toml", "--explain"},
                        o);
    INFO(describe(again));
    REQUIRE(again.status == 0);
    CHECK(lock_versions(dir / "pylock.toml").at("torch") == pinned);
    CHECK(again.err.find("warning: kept torch " + pinned +
                         " from pylock.toml; 2.13.0+cu126 is newer for this machine "
                         "(--upgrade-package torch)\n") != std::string::npos);
    // --explain still names the candidates the pin was preferred over.
    CHECK(again.out.find("not tried: the existing lock pins " + pinned) != std::string::npos);
  }
}

TEST_CASE("a kept pin is called beaten only when a newer version could be chosen",
          "[resolve][issue43]") {
  // torch==2.7.1 pins triton==3.3.1: on a re-lock neither "torch 2.13.0 is newer" (the user's
  // own ==2.7.1 excludes it) nor "triton 3.7.1 is newer" (torch's pin excludes it) is true, and
  // --upgrade-package would not give either; both were printed (issue 43).
  fs::path dir = fresh_dir("kept-pins-held");
  Options o;
  o.cwd = dir;
  const std::vector<std::string> args = {"torch==2.7.1", "--torch-backend", "auto",  "--driver",
                                         "580.65.06",    "--gpu-arch",      "sm_90", "-o",
                                         "pylock.toml"};
  Run first = resolve(args, o);
  INFO(describe(first));
  REQUIRE(first.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("triton") == "3.3.1");
  Run again = resolve(args, o);
  INFO(describe(again));
  REQUIRE(again.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("triton") == "3.3.1");
  CHECK(again.err.find("warning: kept torch") == std::string::npos);
  CHECK(again.err.find("warning: kept triton") == std::string::npos);
  SECTION("a Pascal GPU: a cu130 torchvision is not newer for it") {
    // CUDA 13.0 builds have no sm_61 kernels: 'kept torchvision 0.27.1+cu126; 0.28.0+cu130 is
    // newer for this machine' was printed on every re-lock (issue 43).
    const std::vector<std::string> pascal = {"torch",    "torchvision", "--torch-backend", "auto",
                                             "--driver", "580.65.06",   "--gpu-arch",      "sm_61",
                                             "-o",       "pascal.toml"};
    Run lock = resolve(pascal, o);
    INFO(describe(lock));
    REQUIRE(lock.status == 0);
    CHECK(lock_versions(dir / "pascal.toml").at("torchvision").ends_with("+cu126"));
    Run relock = resolve(pascal, o);
    INFO(describe(relock));
    REQUIRE(relock.status == 0);
    CHECK(relock.err.find("+cu130 is newer") == std::string::npos);
  }
  SECTION("a newer version whose own requirements the others exclude is not newer") {
    // torchvision 0.28.0 requires torch==2.13.0, which the user's torch<2.13 excludes: nothing
    // requires torchvision with a version, so only a solve with --upgrade-package torchvision
    // shows that it keeps 0.27 (issue 43 item 5: the warning is confirmed by that solve).
    const std::vector<std::string> held = {"torch<2.13", "torchvision", "--torch-backend", "auto",
                                           "--driver",   "580.65.06",   "--gpu-arch",      "sm_90",
                                           "-o",         "held.toml"};
    Run lock = resolve(held, o);
    INFO(describe(lock));
    REQUIRE(lock.status == 0);
    std::string vision = lock_versions(dir / "held.toml").at("torchvision");
    CHECK_FALSE(vision.starts_with("0.28."));
    Run relock = resolve(held, o);
    INFO(describe(relock));
    REQUIRE(relock.status == 0);
    CHECK(lock_versions(dir / "held.toml").at("torchvision") == vision);
    CHECK(relock.err.find("warning: kept torchvision") == std::string::npos);
  }
}

TEST_CASE("resolve -o never destroys files", "[resolve][issue16]") {
  fs::path dir = fresh_dir("wrong-build-output");
  Options o;
  o.cwd = dir;
  SECTION("an output that is one of the inputs") {
    write_file(dir / "requirements.txt", "filelock\n");
    Run r = resolve({"-r", "requirements.txt", "-o", "requirements.txt"}, o);
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(
        r.err.starts_with("error: requirements.txt: -o names one of the inputs; writing the lock "
                          "there would replace it\n"));
    CHECK(read_file(dir / "requirements.txt") == "filelock\n");
  }
  SECTION("an existing file that is not a lock") {
    write_file(dir / "notes.toml", "[notes]\ntext = \"mine\"\n");
    Run r = resolve({"filelock", "-o", "notes.toml"}, o);
    INFO(describe(r));
    CHECK(r.status == 3);
    CHECK(r.err.starts_with(
        "error: notes.toml: exists and is not a lock file; refusing to replace it\n"));
    CHECK(read_file(dir / "notes.toml") == "[notes]\ntext = \"mine\"\n");
    Run forced = resolve({"filelock", "-o", "notes.toml", "--force"}, o);
    INFO(describe(forced));
    CHECK(forced.status == 0);
    CHECK(read_file(dir / "notes.toml").find("lock-version") != std::string::npos);
  }
  SECTION("a device node is written in place, not replaced") {
    Run r = resolve({"filelock", "-o", "/dev/null"}, o);
    INFO(describe(r));
    CHECK(r.status == 0);
    struct stat st {};
    REQUIRE(::stat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  SECTION("--report - writes the report to stdout") {
    Run r = resolve({"filelock", "-o", "pylock.toml", "--report", "-"}, o);
    INFO(describe(r));
    CHECK(r.status == 0);
    CHECK(r.out.find("\"schema\": \"gpulock.resolve-report/2\"") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "-"));
    Run both = resolve({"filelock", "-o", "-", "--report", "-"}, o);
    CHECK(both.status == 2);
  }
}

TEST_CASE("unknown projects and dead indexes are named, not read as 'no versions'",
          "[resolve][issue16]") {
  fs::path dir = fresh_dir("wrong-build-unknown");
  Options o;
  o.cwd = dir;
  SECTION("a project the index does not have, with a close name that exists") {
    Run r = resolve({"Torch_Vision", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    CHECK(r.status == 1);
    std::string err = normalize(r.err);
    CHECK(err.find("error: no solution: 'torch-vision' is not on http://INDEX/simple/\n") !=
          std::string::npos);
    CHECK(err.find("hint: did you mean 'torchvision'?\n") != std::string::npos);
  }
  SECTION("an index URL that answers 404 for every project") {
    o.index_url = servers().http_url() + "/simpel/";
    Run r = resolve({"filelock", "jinja2", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    CHECK(r.status == 4);
    CHECK(normalize(r.err).starts_with(
        "error: http://INDEX/simpel/: none of the projects asked for is here (filelock, "
        "jinja2): is the index URL right?\n"));
    CHECK_FALSE(fs::exists(dir / "pylock.toml"));
  }
}

TEST_CASE("auto mode keeps builds above the ceiling visible to the explanation",
          "[resolve][issue16]") {
  // Before: "there is no version of torch==2.13.0" (auto merged only variants within 12.4).
  fs::path dir = fresh_dir("wrong-build-above-ceiling");
  Options o;
  o.cwd = dir;
  Run r = resolve(
      {"torch==2.13.0", "--torch-backend", "auto", "--driver", "550.54.14", "-o", "pylock.toml"},
      o);
  INFO(describe(r));
  CHECK(r.status == 1);
  CHECK(normalize(r.err) == no_arch_warning("--driver 550.54.14") +
                                "error: no solution: torch>=2.13.0+cu126 needs a newer CUDA than "
                                "your driver 550.54.14 runs (CUDA <= "
                                "12.4)\n"
                                "  Because you require torch==2.13.0 and torch>=2.13.0+cu126 needs "
                                "a newer CUDA than your driver 550.54.14 runs "
                                "(CUDA <= 12.4), version solving failed.\n"
                                "hint: torch's CUDA 12.6 builds need a driver >= 560.28.03 (run "
                                "`gpulock probe --machine` to see yours)\n");
  // Driver 535 (CUDA <= 12.2): every build is above it, but torch 2.13.0 has no CUDA 12.4 build;
  // the hint names the lowest build of the version asked for (issue 43: it said "torch's CUDA
  // 12.4 builds need a driver >= 550.54.14", an older release's).
  Run r535 = resolve({"torch==2.13.0", "--torch-backend", "auto", "--driver", "535.104.05",
                      "--gpu-arch", "sm_86", "-o", "pylock.toml"},
                     o);
  INFO(describe(r535));
  CHECK(r535.status == 1);
  CHECK(r535.err.find("hint: torch's CUDA 12.6 builds need a driver >= 560.28.03 (run "
                      "`gpulock probe --machine` to see yours)\n") != std::string::npos);
  CHECK(r535.err.find("CUDA 12.4 builds") == std::string::npos);
  // --explain on a solvable run names the newer builds and why.
  Run ok = resolve({"torch", "--torch-backend", "auto", "--driver", "550.54.14", "-o",
                    "pylock.toml", "--explain"},
                   o);
  INFO(describe(ok));
  REQUIRE(ok.status == 0);
  CHECK(ok.out.find("skipped torch 2.13.0+cu126: needs CUDA 12.6 and your driver 550.54.14 "
                    "supports CUDA <= 12.4\n") != std::string::npos);
}

TEST_CASE("a hint's command is complete and does what the hint says", "[resolve][issue16]") {
  // Issue 16 item 8: the sm_61 hint `--torch-backend cu126` had no solution (torchaudio); CPU
  // hints were given for an index without CPU builds. Each suggested command is now tried first
  // and given whole; followed, it locks what the hint says.
  fs::path dir = fresh_dir("wrong-build-hints");
  Options o = on_shapes(dir);
  SECTION("a variant with kernels for the GPU") {
    std::vector<std::string> args{"torch",    "torchaudio", "--torch-backend", "cu130",
                                  "--driver", "595.45.04",  "--gpu-arch",      "sm_61",
                                  "-o",       "pylock.toml"};
    Run r = resolve(args, o);
    INFO(describe(r));
    CHECK(r.status == 1);
    std::string hint = hint_line(r.err, "--torch-backend cu126");
    std::string command = hint_command(args, o, {"--torch-backend", "cu126"});
    CHECK(shapes_normalize(hint) ==
          shapes_normalize("hint: `" + command +
                           "` locks torch 2.12.1+cu126, which has kernels for your GPU"));
    Run followed = run_hint(hint, o);
    INFO(describe(followed));
    REQUIRE(followed.status == 0);
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(find_package(lock, "torch") != nullptr);
    CHECK(find_package(lock, "torch")->version == "2.12.1+cu126");
    REQUIRE(find_package(lock, "torchaudio") != nullptr);
    CHECK(find_package(lock, "torchaudio")->version->ends_with("+cu126"));
    CHECK(followed.err.find("with kernels for sm_61") != std::string::npos);
  }
  SECTION("no CPU hint where the index has no CPU builds") {
    Run r = resolve({"torch", "--torch-backend", "auto", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(r.err.find("--driver none") == std::string::npos);
    CHECK(r.err.find("--torch-backend cpu") == std::string::npos);
    CHECK(r.err.find("CPU builds") == std::string::npos);
    Run none =
        resolve({"torch", "--torch-backend", "auto", "--driver", "none", "-o", "pylock.toml"}, o);
    INFO(describe(none));
    CHECK(none.status == 1);
    CHECK(shapes_normalize(none.err).find(
              "error: no solution: there is no CPU variant of torch on http://SHAPES/whl/, "
              "and --driver none means no GPU\n") != std::string::npos);
    CHECK(none.err.find("hint: for CPU builds") == std::string::npos);
  }
}

TEST_CASE("a nightly date is chosen from the variants the driver runs", "[resolve][issue16]") {
  // On this index the newest torch nightly (2026-08-18) is on cu130 only; driver 570 (CUDA <=
  // 12.8) runs cu126 but not cu130. `--nightly latest` must mean the newest date the driver can
  // use (2026-08-17 on cu126), not a date only a variant above the ceiling has (which left no
  // torch at all).
  fs::path dir = fresh_dir("wrong-build-nightly-date");
  Options o = on_shapes(dir);
  o.setuptools_from_pypi = true;  // the nightlies need setuptools>=77.0.3: see Options
  Run r = resolve({"torch", "--nightly", "latest", "--torch-backend", "auto", "--driver",
                   "570.86.10", "--gpu-arch", "sm_90", "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(find_package(lock, "torch") != nullptr);
  CHECK(find_package(lock, "torch")->version == "2.15.0.dev20260817+cu126");
  // With a driver that runs cu130, the newest date is the cu130 one.
  Run newer = resolve({"torch", "--nightly", "latest", "--torch-backend", "auto", "--driver",
                       "580.65.06", "--gpu-arch", "sm_90", "-o", "-"},
                      o);
  INFO(describe(newer));
  REQUIRE(newer.status == 0);
  CHECK(locked_version(newer.out, "torch") == "2.15.0.dev20260818+cu130");
}

TEST_CASE("a failed resolve leads with the deciding fact, and --explain prints the whole proof",
          "[resolve][issue16]") {
  // Issue 16 item 10. torchaudio<2.5 means torch 2.4.x, whose builds pin nvidia-nccl-cu12 2.20.5
  // or 2.21.5 (or use CUDA 11 libraries): the full proof takes 17 lines over four branches.
  fs::path dir = fresh_dir("headline");
  Options o;
  o.cwd = dir;
  std::vector<std::string> args{"torch",
                                "torchaudio<2.5",
                                "nvidia-nccl-cu12>=2.26",
                                "--torch-backend",
                                "auto",
                                "--driver",
                                "570.86.10",
                                "--gpu-arch",
                                "sm_80",
                                "-o",
                                "pylock.toml"};
  Run r = resolve(args, o);
  INFO(describe(r));
  CHECK(r.status == 1);
  std::string err = normalize(r.err);
  CHECK(
      err.starts_with("error: no solution: torchaudio<2.5 needs nvidia-nccl-cu12==2.20.5 or "
                      "nvidia-nccl-cu12==2.21.5 (through torch), "
                      "and you require nvidia-nccl-cu12>=2.26\n"));
  auto proof_lines = [](const std::string& text) {
    std::size_t n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      n += line.starts_with("  ") ? 1 : 0;
    return n;
  };
  CHECK(proof_lines(err) <= 7);  // resolver::kBriefMaxLines and the (*) line
  CHECK(err.find("  (*) follows from 13 more lines of the proof; --explain prints them.\n") !=
        std::string::npos);
  CHECK(err.find("  And because you require both torchaudio<2.5 and nvidia-nccl-cu12>=2.26, "
                 "version solving failed.\n") != std::string::npos);

  args.push_back("--explain");
  Run full = resolve(args, o);
  INFO(describe(full));
  CHECK(full.status == 1);
  CHECK(normalize(full.err).starts_with(
      "error: no solution: torchaudio<2.5 needs nvidia-nccl-cu12==2.20.5"));
  CHECK(proof_lines(full.err) == 17);
  CHECK(full.err.find("(*)") == std::string::npos);

  args.pop_back();
  args.insert(args.end(), {"--report", "-"});
  Run json = resolve(args, o);
  CHECK(json.out.find("\"headline\": \"torchaudio<2.5 needs nvidia-nccl-cu12==2.20.5 or "
                      "nvidia-nccl-cu12==2.21.5 "
                      "(through torch), and you require nvidia-nccl-cu12>=2.26\"") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "pylock.toml"));
}

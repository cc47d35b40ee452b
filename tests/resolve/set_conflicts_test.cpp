// Issue 44 item 3: rules between the wheels of one set, in the solve. Two wheels that write one
// installed path with different bytes (as opencv-python and opencv-python-headless both write
// cv2/), and a cuSPARSE built with CUDA 12.4 beside an older nvJitLink
// (pytorch/pytorch#131312), are avoided when another choice exists, explained when none does,
// and locked with a warning and a record under --allow-incomplete. Byte-identical files (every
// NVIDIA wheel's empty nvidia/__init__.py) are no conflict.
#include <fstream>

#include "gpulock/lock/wheel_files.h"

#include "../index/zip_builder.h"
#include "resolve_support.h"

using namespace resolve_test;

namespace {

// The conflicts the lock records for the one wheel of `package`.
std::vector<std::string> recorded_conflicts(const fs::path& lock, const std::string& package) {
  auto lk = read_lock(lock);
  const auto* p = find_package(lk, package);
  REQUIRE(p != nullptr);
  auto files = gpulock::lock::wheel_files(*p);
  REQUIRE(files.has_value());
  REQUIRE(files->size() == 1);
  return files->begin()->second.conflicts;
}

// A pure-Python wheel `name`-`version` in `dir` holding `files` (path -> bytes).
// `requires_dist`: its Requires-Dist lines.
void write_wheel(const fs::path& dir, const std::string& name, const std::string& version,
                 const std::vector<index_test::ZipEntry>& files,
                 const std::vector<std::string>& requires_dist = {}) {
  const std::string dist = name + "-" + version + ".dist-info";
  std::vector<index_test::ZipEntry> entries = files;
  std::string metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n";
  for (const auto& r : requires_dist)
    metadata += "Requires-Dist: " + r + "\n";
  entries.push_back({dist + "/METADATA", metadata});
  entries.push_back(
      {dist + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"});
  entries.push_back({dist + "/RECORD", ""});
  std::ofstream(dir / (name + "-" + version + "-py3-none-any.whl"), std::ios::binary)
      << index_test::build_zip(entries);
}

}  // namespace

TEST_CASE("two wheels writing one path with different bytes: avoided, explained, or recorded",
          "[resolve][files]") {
  fs::path dir = fresh_dir("overlap-wheels");
  fs::path wheels = dir / "wheels";
  fs::create_directories(wheels);
  // tool-a 1.0 and tool-b 2.0 both write shared/config.py, with different bytes; tool-b 1.0
  // does not; tool-c 1.0 writes the same bytes as tool-a.
  write_wheel(wheels, "tool_a", "1.0", {{"shared/config.py", "A = 1\n"}, {"tool_a.py", ""}});
  write_wheel(wheels, "tool_b", "2.0", {{"shared/config.py", "B = 2\n"}, {"tool_b.py", ""}});
  write_wheel(wheels, "tool_b", "1.0", {{"tool_b.py", "# 1.0\n"}});
  write_wheel(wheels, "tool_c", "1.0", {{"shared/config.py", "A = 1\n"}, {"tool_c.py", ""}});
  Options o;
  o.cwd = dir;
  const std::string f = wheels.string();

  // Avoided: tool-b 2.0 would overwrite tool-a's file, so 1.0 is chosen.
  Run avoided = resolve({"tool-a", "tool-b", "-f", f, "-o", "avoided.toml"}, o);
  INFO(describe(avoided));
  REQUIRE(avoided.status == 0);
  CHECK(lock_versions(dir / "avoided.toml").at("tool-b") == "1.0");
  CHECK(avoided.err.find("warning:") == std::string::npos);

  // Byte-identical at one path: no conflict.
  Run same = resolve({"tool-a", "tool-c", "-f", f, "-o", "same.toml"}, o);
  INFO(describe(same));
  CHECK(same.status == 0);

  // Pinned: no solution, and the explanation names both wheels and the path.
  const std::string both =
      "tool_a-1.0-py3-none-any.whl and tool_b-2.0-py3-none-any.whl both write shared/config.py "
      "with different bytes: whichever is installed last replaces the other's file";
  Run pinned = resolve({"tool-a", "tool-b==2.0", "-f", f, "-o", "pinned.toml"}, o);
  INFO(describe(pinned));
  CHECK(pinned.status == 1);
  CHECK(pinned.err.find("tool-a cannot be used with tool-b==2.0 (" + both + ")") !=
        std::string::npos);
  CHECK(!fs::exists(dir / "pinned.toml"));

  // --allow-incomplete: locked, with a warning, the conflict recorded on both wheels and the
  // option among the lock's inputs.
  Run allowed =
      resolve({"tool-a", "tool-b==2.0", "-f", f, "--allow-incomplete", "-o", "allowed.toml"}, o);
  INFO(describe(allowed));
  REQUIRE(allowed.status == 0);
  const std::string text = "tool-a 1.0 and tool-b 2.0: " + both;
  CHECK(allowed.err.find("warning: " + text +
                         "; locked anyway (--allow-incomplete), and the lock records it\n") !=
        std::string::npos);
  CHECK(recorded_conflicts(dir / "allowed.toml", "tool-a") == std::vector<std::string>{text});
  CHECK(recorded_conflicts(dir / "allowed.toml", "tool-b") == std::vector<std::string>{text});
  std::ifstream in(dir / "allowed.toml");
  std::string lock_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(lock_text.find("allow-incomplete = \"true\"") != std::string::npos);
}

TEST_CASE("NCCL cu12 and cu13 wheels never lock together, and shared empty files are fine",
          "[resolve][gpu][files]") {
  fs::path dir = fresh_dir("nccl-overlap");
  Options o;
  o.cwd = dir;
  // Both install nvidia/nccl/lib/libnccl.so.2 (pytorch/pytorch#186591); the one-CUDA-major rule
  // of the GPU policy refuses the pair before any file list is read, naming both.
  Run r = resolve({"nvidia-nccl-cu12==2.27.3", "nvidia-nccl-cu13==2.28.9", "--driver", "580.65.06",
                   "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  CHECK(r.status == 1);
  CHECK(r.err.find("error: no solution: nvidia-nccl-cu12==2.27.3 uses CUDA 12 libraries and "
                   "nvidia-nccl-cu13==2.28.9 uses CUDA 13 libraries") != std::string::npos);

  // Every NVIDIA wheel ships the same empty nvidia/__init__.py: wheels of two libraries lock
  // together without a word.
  Run other = resolve(
      {"nvidia-nccl-cu12==2.27.3", "nvidia-cublas-cu12", "--driver", "580.65.06", "-o", "ok.toml"},
      o);
  INFO(describe(other));
  CHECK(other.status == 0);
  CHECK(other.err.find("warning:") == std::string::npos);
}

TEST_CASE("an nvJitLink older than the CUDA a cuSPARSE links is avoided or explained",
          "[resolve][gpu][files]") {
  fs::path dir = fresh_dir("nvjitlink-skew");
  Options o;
  o.cwd = dir;
  // nvidia-cusparse-cu12 12.3.1.170 is CUDA 12.4's; with nvJitLink 12.2 pinned, 12.1.0.106 (CUDA
  // 12.1's) is chosen instead.
  Run avoided = resolve({"nvidia-cusparse-cu12", "nvidia-nvjitlink-cu12==12.2.140", "--driver",
                         "580.65.06", "--explain", "-o", "pylock.toml"},
                        o);
  INFO(describe(avoided));
  REQUIRE(avoided.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("nvidia-cusparse-cu12") == "12.1.0.106");
  CHECK(avoided.out.find("  skipped nvidia-cusparse-cu12 12.3.1.170: cannot be used with "
                         "nvidia-nvjitlink-cu12 12.2.140 (its libcusparse.so.12 is built with CUDA "
                         "12.4 and links nvJitLink 12.4's symbols") != std::string::npos);

  const std::string rule =
      "nvidia-cusparse-cu12==12.3.1.170 cannot be used with nvidia-nvjitlink-cu12<12.4.127 (its "
      "libcusparse.so.12 is built with CUDA 12.4 and links nvJitLink 12.4's symbols, so an older "
      "libnvJitLink fails at load with an undefined symbol)";
  Run pinned = resolve({"nvidia-cusparse-cu12==12.3.1.170", "nvidia-nvjitlink-cu12==12.2.140",
                        "--driver", "580.65.06", "-o", "x.toml"},
                       o);
  INFO(describe(pinned));
  CHECK(pinned.status == 1);
  CHECK(pinned.err.find(rule) != std::string::npos);

  Run allowed = resolve({"nvidia-cusparse-cu12==12.3.1.170", "nvidia-nvjitlink-cu12==12.2.140",
                         "--driver", "580.65.06", "--allow-incomplete", "-o", "allowed.toml"},
                        o);
  INFO(describe(allowed));
  REQUIRE(allowed.status == 0);
  CHECK(allowed.err.find("warning: nvidia-cusparse-cu12 12.3.1.170 needs "
                         "nvidia-nvjitlink-cu12>=12.4, and nvidia-nvjitlink-cu12 12.2.140 is "
                         "locked: its libcusparse.so.12") != std::string::npos);
  CHECK(recorded_conflicts(dir / "allowed.toml", "nvidia-cusparse-cu12").size() == 1);
  CHECK(recorded_conflicts(dir / "allowed.toml", "nvidia-nvjitlink-cu12").size() == 1);
}

TEST_CASE(
    "a library torch preloads that its provider's wheel does not ship is avoided or explained",
    "[resolve][gpu][files]") {
  fs::path dir = fresh_dir("preload-gap");
  fs::path wheels = dir / "wheels";
  fs::create_directories(wheels);
  // torch's preload list takes libcusparseLt.so.*[0-9] from nvidia/cusparselt/lib
  // (pytorch/pytorch#144433); nvidia-cusparselt-cu12 0.8.0 here ships no such file, 0.7.1 does.
  write_wheel(wheels, "torch", "2.9.0",
              {{"torch/__init__.py", ""}, {"torch/lib/libtorch_cuda.so", "elf"}},
              {"nvidia-cusparselt-cu12"});
  write_wheel(wheels, "nvidia_cusparselt_cu12", "0.8.0",
              {{"nvidia/__init__.py", ""}, {"nvidia/cusparselt/include/cusparseLt.h", "h"}});
  write_wheel(wheels, "nvidia_cusparselt_cu12", "0.7.1",
              {{"nvidia/__init__.py", ""}, {"nvidia/cusparselt/lib/libcusparseLt.so.0", "elf"}});
  Options o;
  o.cwd = dir;
  // An empty index: every wheel comes from `-f`.
  fs::create_directories(dir / "empty-index");
  o.index_url = "file://" + (dir / "empty-index").string();
  const std::string f = wheels.string();

  Run avoided =
      resolve({"torch", "-f", f, "--driver", "580.65.06", "--explain", "-o", "avoided.toml"}, o);
  INFO(describe(avoided));
  REQUIRE(avoided.status == 0);
  CHECK(lock_versions(dir / "avoided.toml").at("nvidia-cusparselt-cu12") == "0.7.1");
  const std::string reason =
      "nvidia-cusparselt-cu12 0.8.0 ships no libcusparseLt.so.*[0-9], which torch loads from "
      "nvidia/cusparselt/lib, nvidia/cu*/lib or cusparselt/lib when it is imported (its preload "
      "list), and no other wheel of the set ships it: `import torch` raises ValueError";
  CHECK(
      avoided.out.find("  skipped nvidia-cusparselt-cu12 0.8.0: cannot be used with torch 2.9.0 (" +
                       reason + ")") != std::string::npos);
  CHECK(avoided.err.find("ships no") == std::string::npos);

  Run pinned = resolve({"torch", "nvidia-cusparselt-cu12==0.8.0", "-f", f, "--driver", "580.65.06",
                        "-o", "pinned.toml"},
                       o);
  INFO(describe(pinned));
  CHECK(pinned.status == 1);
  // torch has one version here, so the headline names it without one.
  CHECK(pinned.err.find(
            "error: no solution: torch cannot be used with nvidia-cusparselt-cu12==0.8.0 (" +
            reason + ")") != std::string::npos);
  CHECK(!fs::exists(dir / "pinned.toml"));

  Run allowed = resolve({"torch", "nvidia-cusparselt-cu12==0.8.0", "-f", f, "--driver", "580.65.06",
                         "--allow-incomplete", "-o", "allowed.toml"},
                        o);
  INFO(describe(allowed));
  REQUIRE(allowed.status == 0);
  const std::string text = "torch 2.9.0 and nvidia-cusparselt-cu12 0.8.0: " + reason;
  CHECK(allowed.err.find("warning: " + text +
                         "; locked anyway (--allow-incomplete), and the lock records it\n") !=
        std::string::npos);
  CHECK(recorded_conflicts(dir / "allowed.toml", "torch") == std::vector<std::string>{text});
  CHECK(recorded_conflicts(dir / "allowed.toml", "nvidia-cusparselt-cu12") ==
        std::vector<std::string>{text});
}

TEST_CASE("a library JAX's CUDA plugin loads that its provider's wheel does not ship is avoided",
          "[resolve][gpu][files]") {
  fs::path dir = fresh_dir("preload-gap-jax");
  fs::path wheels = dir / "wheels";
  fs::create_directories(wheels);
  // jax-cuda13-plugin loads nvidia/nccl/lib/libnccl.so.2 and swallows a failure
  // (shared/data/wheel-contents.md section 3.2); nvidia-nccl-cu13 2.28.90 here ships none.
  write_wheel(wheels, "jax_cuda13_plugin", "0.8.0",
              {{"jax_cuda13_plugin/__init__.py", ""}, {"jax_cuda13_plugin/_cuda.so", "elf"}},
              {"nvidia-nccl-cu13"});
  write_wheel(wheels, "nvidia_nccl_cu13", "2.28.90",
              {{"nvidia/__init__.py", ""}, {"nvidia/nccl/include/nccl.h", "h"}});
  write_wheel(wheels, "nvidia_nccl_cu13", "2.28.80",
              {{"nvidia/__init__.py", ""}, {"nvidia/nccl/lib/libnccl.so.2", "elf"}});
  Options o;
  o.cwd = dir;
  fs::create_directories(dir / "empty-index");
  o.index_url = "file://" + (dir / "empty-index").string();
  Run r = resolve({"jax-cuda13-plugin", "-f", wheels.string(), "--driver", "580.65.06", "--explain",
                   "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("nvidia-nccl-cu13") == "2.28.80");
  CHECK(r.out.find("  skipped nvidia-nccl-cu13 2.28.90: cannot be used with jax-cuda13-plugin "
                   "0.8.0 (nvidia-nccl-cu13 2.28.90 ships no libnccl.so.2, which "
                   "jax-cuda13-plugin loads from nvidia/nccl/lib when it is imported, ignoring a "
                   "failure, and no other wheel of the set ships it: another copy on the library "
                   "path is loaded, or none)") != std::string::npos);
}

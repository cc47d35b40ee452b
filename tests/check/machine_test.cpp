// The machine layer: this machine (described by GPULOCK_DRIVER, GPULOCK_CUDA_CEILING,
// GPULOCK_GPU_ARCH or the --driver/--cuda-ceiling/--gpu-arch flags) against the lock's GPU facts.
#include "check_support.h"

using namespace check_test;

namespace {

// torch 2.5.1+cu124 resolved for driver 550.54.14 and an sm_90 GPU.
struct CudaLock {
  Workdir w;
  std::string url = gpulock::test::shared_servers().http_url();
  LockScan lock;
  explicit CudaLock(const std::string& name) : w(name) {
    auto r = w.gpulock("resolve torch==2.5.1 --torch-backend cu124 " + fixture_indexes(url) + " " +
                       kTarget + " --driver 550.54.14 --gpu-arch sm_90 -o pylock.toml");
    INFO(r.err);
    REQUIRE(r.status == 0);
    lock = scan_lock(w / "pylock.toml");
    check_lock_independently(w / "pylock.toml");
  }
  std::string gpu_line() const { return std::to_string(lock.table("[tool.gpulock.gpu]")); }
  // The lock's resolve command made one for the machine it runs on, as the hints give it
  // (issue 16 item 8): the detected driver, no --gpu-arch, the newest variant it runs.
  std::string relock_here() const {
    return "gpulock resolve torch==2.5.1 " + fixture_indexes(url) + " " + kTarget +
           " -o pylock.toml --driver auto --torch-backend auto";
  }
};

}  // namespace

TEST_CASE("check machine: the machine the lock was resolved for is clean", "[check][machine]") {
  CudaLock l("machine-clean");
  REQUIRE(l.lock.value("[tool.gpulock.gpu]", "min-driver") == "550.54.14");
  auto r = l.w.gpulock("check --machine", "GPULOCK_DRIVER=550.54.14 GPULOCK_GPU_ARCH=sm_90");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  auto out = lines_of(r.out);
  REQUIRE(out.size() >= 4);
  CHECK(out[2] == "machine: ok");
  CHECK(out[3] ==
        "  driver 550.54.14 (override), CUDA ceiling 12.4, GPU sm_90; the lock needs driver >= "
        "550.54.14, "
        "CUDA 12.4, variant cu124");
  // A newer driver and a GPU of the same major runs it too.
  auto newer = l.w.gpulock("check --machine", "GPULOCK_DRIVER=570.86.10 GPULOCK_GPU_ARCH=sm_89");
  CHECK(newer.status == 0);
}

TEST_CASE("check machine: a driver below the lock's minimum", "[check][machine]") {
  CudaLock l("machine-driver");
  const std::string min = l.lock.value("[tool.gpulock.gpu]", "min-driver");
  auto r = l.w.gpulock("check --machine", "GPULOCK_DRIVER=535.104.05 GPULOCK_GPU_ARCH=sm_90");
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  auto out = lines_of(r.out);
  REQUIRE(out.size() >= 6);
  CHECK(out[2] == "machine: drift (1 error)");
  CHECK(out[4] == "  error: pylock.toml:" + l.gpu_line() +
                      ": this machine's NVIDIA driver 535.104.05 is older than "
                      "the lock's minimum " +
                      min + " (for CUDA 12.4)");
  CHECK(out[5] == "    hint: update the driver to " + min +
                      " or newer, or resolve a lock for this machine (`" + l.relock_here() + "`)");
  // The same machine described by flags instead of the environment.
  auto f = l.w.gpulock("check --machine --driver 535.104.05 --gpu-arch sm_90", "");
  CHECK(f.status == 1);
  CHECK(lines_of(f.out).at(4) == out[4]);
  // Followed on that machine, the hint's command writes a lock the machine runs.
  auto followed = l.w.gpulock(l.relock_here().substr(std::string("gpulock ").size()),
                              "GPULOCK_DRIVER=535.104.05 GPULOCK_GPU_ARCH=sm_90");
  INFO(followed.err);
  CHECK(followed.status == 0);
  CHECK(scan_lock(l.w / "pylock.toml").at("torch").version == "2.5.1+cu121");
  CHECK(l.w.gpulock("check --machine", "GPULOCK_DRIVER=535.104.05 GPULOCK_GPU_ARCH=sm_90").status ==
        0);
}

TEST_CASE("check machine: a CUDA ceiling below the lock's CUDA", "[check][machine]") {
  CudaLock l("machine-ceiling");
  auto r = l.w.gpulock("check --machine",
                       "GPULOCK_DRIVER=560.28.03 GPULOCK_CUDA_CEILING=12.2 GPULOCK_GPU_ARCH=sm_90");
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  CHECK(lines_of(r.out).at(4) ==
        "  error: pylock.toml:" + l.gpu_line() +
            ": this machine's CUDA ceiling is 12.2 (override), but the lock's builds need "
            "CUDA 12.4");
}

TEST_CASE("check machine: a GPU outside the locked torch build's arch list", "[check][machine]") {
  CudaLock l("machine-arch");
  auto r = l.w.gpulock("check --machine", "GPULOCK_DRIVER=550.54.14 GPULOCK_GPU_ARCH=sm_37");
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  auto out = lines_of(r.out);
  REQUIRE(out.size() >= 6);
  const std::string torch_line = std::to_string(l.lock.at("torch").line);
  CHECK(out[4].starts_with("  error: pylock.toml:" + torch_line + ": torch " +
                           l.lock.at("torch").version +
                           " has no kernels for this machine's GPU (sm_37): it carries "));
  CHECK(out[5] == "    hint: resolve the lock again for this GPU (`" + l.relock_here() +
                      "`): it picks a build with kernels for sm_37 when one fits the requirements");
}

TEST_CASE("check machine: no driver here is information, not drift", "[check][machine]") {
  CudaLock l("machine-nodriver");
  auto r = l.w.gpulock("check --machine --strict", "GPULOCK_DRIVER=none");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(lines_of(r.out).at(4) ==
        "  info: pylock.toml:" + l.gpu_line() +
            ": no NVIDIA driver was found here, so the lock's driver minimum (550.54.14) "
            "and GPU architectures were not checked");
}

TEST_CASE("check machine: GitHub annotations and JSON, line by line", "[check][machine]") {
  CudaLock l("machine-github");
  const std::string machine = "GPULOCK_DRIVER=535.104.05 GPULOCK_GPU_ARCH=sm_37";
  auto g = l.w.gpulock("check --machine --format github", machine);
  INFO(g.out << g.err);
  CHECK(g.status == 1);
  auto gl = lines_of(g.out);
  REQUIRE(gl.size() == 3);
  CHECK(gl[0] == "::error file=pylock.toml,line=" + l.gpu_line() +
                     "::this machine's NVIDIA driver 535.104.05 is older than the lock's minimum "
                     "550.54.14 (for CUDA "
                     "12.4)%0Ahint: update the driver to 550.54.14 or newer, or resolve a lock for "
                     "this machine (`" +
                     l.relock_here() + "`)");
  CHECK(gl[1].starts_with(
      "::error file=pylock.toml,line=" + std::to_string(l.lock.at("torch").line) + "::torch " +
      l.lock.at("torch").version + " has no kernels for this machine's GPU (sm_37)"));
  CHECK(gl[2] == "gpulock check pylock.toml (machine): drift found: 2 errors");
  check_golden("machine_drift.github", replace_all(g.out, l.url, "http://INDEX"));

  auto j = l.w.gpulock("check --machine --json", machine);
  CHECK(j.status == 1);
  check_golden("machine_drift.json", replace_all(j.out, l.url, "http://INDEX"));
  auto t = l.w.gpulock("check --machine", machine);
  CHECK(t.status == 1);
  check_golden("machine_drift.txt", replace_all(t.out, l.url, "http://INDEX"));
}

TEST_CASE("check machine: a GPU below the locked cuDNN's lowest supported one",
          "[check][machine]") {
  // torch 2.9.0+cu130 pins nvidia-cudnn-cu13 9.13.0.50; cuDNN 9.11 and newer need sm_75 or newer,
  // and this torch build carries no kernels below sm_75 either: two findings, two lines.
  Workdir w("machine-cudnn");
  const std::string url = gpulock::test::shared_servers().http_url();
  auto r = w.gpulock("resolve torch==2.9.0 --torch-backend cu130 " + fixture_indexes(url) + " " +
                     kTarget + " --driver 580.65.06 --gpu-arch sm_90 -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  check_lock_independently(w / "pylock.toml");
  const LockScan lock = scan_lock(w / "pylock.toml");
  REQUIRE(lock.value("[tool.gpulock.gpu]", "cudnn") == "9.13.0.50");
  const auto& cudnn = lock.at("nvidia-cudnn-cu13");
  const auto& torch = lock.at("torch");

  // sm_75 is the floor of both: clean.
  CHECK(w.gpulock("check --machine", "GPULOCK_DRIVER=580.65.06 GPULOCK_GPU_ARCH=sm_75").status ==
        0);

  const std::string machine = "GPULOCK_DRIVER=580.65.06 GPULOCK_GPU_ARCH=sm_70";
  auto t = w.gpulock("check --machine", machine);
  INFO(t.out << t.err);
  CHECK(t.status == 1);
  auto out = lines_of(t.out);
  REQUIRE(out.size() >= 8);
  CHECK(out[2] == "machine: drift (2 errors)");
  CHECK(out[4].starts_with("  error: pylock.toml:" + std::to_string(torch.line) + ": torch " +
                           torch.version + " has no kernels for this machine's GPU (sm_70)"));
  CHECK(out[6] == "  error: pylock.toml:" + std::to_string(cudnn.line) +
                      ": nvidia-cudnn-cu13 9.13.0.50 does not support this machine's GPU (sm_70): "
                      "it needs compute capability 7.5 or newer");
  CHECK(out[7] ==
        "    hint: use a lock with a cuDNN older than 9.11 (torch builds before cuDNN 9.11) for "
        "this GPU");

  auto g = w.gpulock("check --machine --format github", machine);
  CHECK(g.status == 1);
  auto gl = lines_of(g.out);
  REQUIRE(gl.size() == 3);
  CHECK(gl[1] == "::error file=pylock.toml,line=" + std::to_string(cudnn.line) +
                     "::nvidia-cudnn-cu13 9.13.0.50 does not support this machine's GPU (sm_70): "
                     "it needs compute capability 7.5 or newer%0Ahint: use a lock with a cuDNN "
                     "older than 9.11 (torch builds before cuDNN 9.11) for this GPU");
  auto j = w.gpulock("check --machine --json", machine);
  CHECK(j.out.find("\"kind\": \"gpu-arch-cudnn\",\n      \"severity\": \"error\",\n      "
                   "\"subject\": \"sm_70\"") != std::string::npos);
  CHECK(j.out.find("\"expected\": \">= 7.5\",\n      \"actual\": \"sm_70\"") != std::string::npos);
}

TEST_CASE("check machine: a torch build without a known arch list is compared as assumed",
          "[check][machine]") {
  // Issue 16 item 3: torch 2.13.0+cu132 has no arch list in the data; resolve assumes what CUDA
  // 13.2 can build (sm_75 and newer, SASS only), and check --machine compares the GPUs with that
  // assumption, saying so, instead of not comparing at all.
  Workdir w("machine-assumed");
  const std::string url = gpulock::test::shared_servers().http_url();
  auto r =
      w.gpulock("resolve torch==2.13.0 --torch-backend cu132 " + fixture_indexes(url) +
                pypi_pins(url) + kTarget + " --driver 595.45.04 --gpu-arch sm_90 -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto lock = scan_lock(w / "pylock.toml");
  REQUIRE(lock.at("torch").version == "2.13.0+cu132");
  auto ok = w.gpulock("check --machine", "GPULOCK_DRIVER=595.45.04 GPULOCK_GPU_ARCH=sm_90");
  INFO(ok.out);
  CHECK(ok.status == 0);
  CHECK(ok.out.find("no arch list is known for torch 2.13.0+cu132 (CUDA 13.2): GPUs compared with "
                    "what CUDA 13.2 "
                    "can build, assumed (") != std::string::npos);
  auto old = w.gpulock("check --machine", "GPULOCK_DRIVER=595.45.04 GPULOCK_GPU_ARCH=sm_61");
  INFO(old.out);
  CHECK(old.status == 1);
  CHECK(
      old.out.find(
          "torch 2.13.0+cu132 has no kernels for this machine's GPU (sm_61): it can carry at most "
          "(assumed from its CUDA) sm_75") != std::string::npos);
  // A GPU the lock was not resolved for, whose kernels the build has: a note.
  auto other = w.gpulock("check --machine", "GPULOCK_DRIVER=595.45.04 GPULOCK_GPU_ARCH=sm_120");
  INFO(other.out);
  CHECK(other.status == 0);
  CHECK(other.out.find("GPU sm_120 is not one the lock was resolved for (sm_90); the locked builds "
                       "have kernels for "
                       "it") != std::string::npos);
}

// Issue 44 item 3: a cuDNN wheel locked with a hazard (nvidia-cudnn-cu13 9.20.0.48, pinned: it
// ships no libcudnn_engines_tensor_ir.so.9, which its libcudnn_graph.so.9 loads by name). On a
// machine whose loader finds another release's copy (here through LD_LIBRARY_PATH, as in
// pytorch/pytorch#188892), check --machine names the file, the route and the way out.
TEST_CASE("check machine: the copy a locked hazard would load", "[check][machine]") {
  Workdir w("machine-hazard-copy");
  const std::string url = gpulock::test::shared_servers().http_url();
  auto r = w.gpulock("resolve nvidia-cudnn-cu13==9.20.0.48 " + fixture_indexes(url) + " " +
                     kTarget + " --driver 580.65.06 -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const fs::path system = w / "system-cudnn";
  fs::create_directories(system);
  write_file(system / "libcudnn_engines_tensor_ir.so.9", "a cuDNN 9.23 file, by name\n");
  const auto lock = scan_lock(w / "pylock.toml");
  const std::string line = std::to_string(lock.at("nvidia-cudnn-cu13").line);

  auto found =
      w.gpulock("check --machine", "GPULOCK_DRIVER=580.65.06 LD_LIBRARY_PATH=" + system.string());
  INFO(found.out << found.err);
  CHECK(found.status == 1);
  auto out = lines_of(found.out);
  auto at = std::find_if(out.begin(), out.end(), [](const std::string& l) {
    return l.starts_with("  error: pylock.toml:");
  });
  REQUIRE(at != out.end());
  CHECK(*at ==
        "  error: pylock.toml:" + line +
            ": nvidia-cudnn-cu13 9.20.0.48 "
            "(nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl) ships no "
            "libcudnn_engines_tensor_ir.so.9, which its own libraries load by name (the lock "
            "records it as missing); on this machine the loader takes " +
            (system / "libcudnn_engines_tensor_ir.so.9").string() +
            " through the LD_LIBRARY_PATH entry " + system.string() +
            " instead: a copy from another release, loaded beside this one's libraries "
            "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH at the first convolution)");
  REQUIRE(at + 1 != out.end());
  CHECK(*(at + 1) == "    hint: remove " + system.string() +
                         " from LD_LIBRARY_PATH, or lock a release whose wheel ships "
                         "libcudnn_engines_tensor_ir.so.9");

  // The entry without the file: the loader finds nothing there.
  auto empty = w.gpulock("check --machine",
                         "GPULOCK_DRIVER=580.65.06 LD_LIBRARY_PATH=" + (w / "none").string());
  INFO(empty.out << empty.err);
  CHECK(empty.out.find("through the LD_LIBRARY_PATH entry") == std::string::npos);
}

// Issue 44 item 2: a companion the set lacks (cuDNN dlopens libnvrtc; nvidia-cudnn-cu13 does not
// require NVRTC), recorded as missing by resolve. A copy the machine's loader finds is a note
// naming it (the lock does not pin it); none is a drift, since the load then fails.
TEST_CASE("check machine: a companion library the locked set lacks", "[check][machine]") {
  Workdir w("machine-companion");
  const std::string url = gpulock::test::shared_servers().http_url();
  auto r = w.gpulock("resolve nvidia-cudnn-cu13==9.19.0.56 " + fixture_indexes(url) + " " +
                     kTarget + " --driver 580.65.06 -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const fs::path system = w / "system-cuda";
  fs::create_directories(system);
  write_file(system / "libnvrtc.so.13", "an NVRTC 13 file, by name\n");
  const auto lock = scan_lock(w / "pylock.toml");
  const std::string what =
      "nvidia-cudnn-cu13 9.19.0.56 "
      "(nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl) loads libnvrtc.so.13 by "
      "name, and no locked wheel ships it (the lock records it as missing)";

  auto found =
      w.gpulock("check --machine", "GPULOCK_DRIVER=580.65.06 LD_LIBRARY_PATH=" + system.string());
  INFO(found.out << found.err);
  CHECK(found.status == 0);
  CHECK(found.out.find(what + "; on this machine the loader takes " +
                       (system / "libnvrtc.so.13").string() +
                       " through the LD_LIBRARY_PATH entry " + system.string() +
                       ": a copy the lock does not pin") != std::string::npos);

  // Without it on LD_LIBRARY_PATH, what this host's loader has decides: its ld.so cache or system
  // directories may hold a copy (a CUDA toolkit registered with ldconfig), which is then named;
  // else the drift says the load fails.
  auto host = w.gpulock("check --machine", "GPULOCK_DRIVER=580.65.06 LD_LIBRARY_PATH=");
  INFO(host.out << host.err);
  const std::string missing =
      ": " + what +
      "; this machine has no copy on LD_LIBRARY_PATH, in the ld.so cache or in the system "
      "directories, so its load fails when nvidia-cudnn-cu13's libraries need it";
  if (host.out.find("; on this machine the loader takes ") != std::string::npos) {
    CHECK(host.status == 0);
    CHECK(host.out.find(missing) == std::string::npos);
  } else {
    CHECK(host.status == 1);
    CHECK(
        host.out.find("  error: pylock.toml:" + std::to_string(lock.at("nvidia-cudnn-cu13").line) +
                      missing) != std::string::npos);
    CHECK(host.out.find("hint: lock a set that holds the wheel shipping libnvrtc.so.13, or "
                        "install a copy") != std::string::npos);
  }
}

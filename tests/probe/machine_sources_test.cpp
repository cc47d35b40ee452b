// The text sources of machine detection (kernel module files, nvidia-smi, library file names),
// and the overrides. (The child processes that keep a hanging or crashing driver away are
// tested in tests/sys/process_test.cpp.)
#include "machine_sources.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "gpulock/probe/machine.h"

using namespace gpulock::probe;
using namespace gpulock::probe::detail;

TEST_CASE("the kernel module version files", "[probe][sources]") {
  CHECK(parse_sysfs_version("550.54.14\n")->to_string() == "550.54.14");
  CHECK_FALSE(parse_sysfs_version(""));
  CHECK_FALSE(parse_sysfs_version("garbage\n"));
  CHECK(parse_procfs_version(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 "
            "01:44:30 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
            ->to_string() == "550.54.14");
  CHECK(parse_procfs_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  "
                             "Release Build  (dvs-builder@U16-I3-B13-4-3)  Thu Jan 23 2025\n")
            ->to_string() == "570.86.15");
  CHECK(parse_procfs_version(
            "NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19\n")
            ->to_string() == "535.104.05");
  CHECK_FALSE(parse_procfs_version("GCC version: 12.2.0\n"));
  CHECK_FALSE(parse_procfs_version("NVRM version: unknown\n"));
  // Issue 45 item 5: fleet's reader; a Jetson shows its L4T release, not a driver version.
  CHECK_FALSE(
      parse_procfs_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  "
                           "35.3.1  Release Build  (buildbrain@mobile-u64)\n"));
  CHECK(parse_procfs_version("NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.120\n")
            ->to_string() == "550.120");
}

TEST_CASE("the driver version in a library's file name", "[probe][sources]") {
  CHECK(version_from_library_file("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14")->to_string() ==
        "550.54.14");
  CHECK(version_from_library_file("libnvidia-ml.so.570.26")->to_string() == "570.26");
  CHECK_FALSE(version_from_library_file("/usr/lib/libcuda.so.1"));
  CHECK_FALSE(version_from_library_file("/usr/local/cuda/lib64/stubs/libcuda.so"));
  CHECK_FALSE(version_from_library_file("/x/libcuda.so.1.2.3.4.5"));
}

TEST_CASE("nvidia-smi CSV: one GPU per line", "[probe][sources]") {
  auto one = parse_nvidia_smi("550.54.14, NVIDIA H100 80GB HBM3, 9.0, GPU-5b4e1c2a\n", true);
  REQUIRE(one);
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].driver.to_string() == "550.54.14");
  CHECK((*one)[0].name == "NVIDIA H100 80GB HBM3");
  CHECK((*one)[0].compute_capability->to_string() == "sm_90");
  CHECK((*one)[0].uuid == "GPU-5b4e1c2a");

  auto two = parse_nvidia_smi(
      "\n570.26, NVIDIA GeForce GTX 1080 Ti, 6.1, GPU-a\n570.26, Odd, Name, 8.6, GPU-b\n", true);
  REQUIRE(two);
  REQUIRE(two->size() == 2);
  CHECK((*two)[1].name == "Odd, Name");  // a comma in a name survives
  CHECK((*two)[1].compute_capability->dotted() == "8.6");

  auto na = parse_nvidia_smi("550.54.14, Some GPU, [N/A], [N/A]\n", true);
  REQUIRE(na);
  CHECK_FALSE((*na)[0].compute_capability);
  CHECK((*na)[0].uuid.empty());

  auto old = parse_nvidia_smi("470.82.01, Tesla K80, GPU-k\n", false);
  REQUIRE(old);
  CHECK((*old)[0].name == "Tesla K80");
  CHECK_FALSE((*old)[0].compute_capability);

  CHECK(parse_nvidia_smi("", true)->empty());
  for (std::string_view bad : {"hello world\n", "550.54.14, H100\n", "abc, H100, 9.0, GPU-x\n",
                               "550.54.14, H100, nine, GPU-x\n", "550.54.14, , 9.0, GPU-x\n"}) {
    INFO(bad);
    auto r = parse_nvidia_smi(bad, true);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("unexpected nvidia-smi output") != std::string::npos);
  }
}

namespace {

std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

}  // namespace

TEST_CASE("overrides: flags beat the environment, empty means unset", "[probe][overrides]") {
  g_env = {{"GPULOCK_DRIVER", "550.54.14"},
           {"GPULOCK_CUDA_CEILING", ""},
           {"GPULOCK_GPU_ARCH", "sm_90, sm_61,sm_90"}};
  auto o = read_overrides({}, fake_getenv);
  REQUIRE(o);
  CHECK(o->driver->to_string() == "550.54.14");
  CHECK(o->driver_origin == "GPULOCK_DRIVER");
  CHECK_FALSE(o->cuda_ceiling);  // empty = unset
  REQUIRE(o->gpu_archs);
  CHECK(o->gpu_archs->size() == 2);  // sorted, distinct
  CHECK((*o->gpu_archs)[0].to_string() == "sm_61");

  auto f = read_overrides({"570.26", "12.8", ""}, fake_getenv);
  REQUIRE(f);
  CHECK(f->driver->to_string() == "570.26");
  CHECK(f->driver_origin == "--driver");
  CHECK(f->cuda_ceiling_origin == "--cuda-ceiling");
  CHECK(f->gpu_arch_origin == "GPULOCK_GPU_ARCH");

  auto none = read_overrides({"none", "", ""}, fake_getenv);
  REQUIRE(none);
  CHECK(none->no_driver);
  CHECK_FALSE(none->driver);

  // --driver auto means "detect", even with the variable set.
  auto automatic = read_overrides({"auto", "", ""}, fake_getenv);
  REQUIRE(automatic);
  CHECK_FALSE(automatic->driver);
  CHECK_FALSE(automatic->no_driver);

  g_env = {{"GPULOCK_DRIVER", "latest"}};
  auto bad = read_overrides({}, fake_getenv);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == gpulock::core::ErrorCode::Usage);
  CHECK(bad.error().message.find("GPULOCK_DRIVER") != std::string::npos);
  g_env = {};
  auto bad_arch = read_overrides({"", "", "sm_90,,sm_80"}, fake_getenv);
  REQUIRE_FALSE(bad_arch);
  CHECK(bad_arch.error().message.find("--gpu-arch") != std::string::npos);
  auto bad_ceiling = read_overrides({"", "twelve", ""}, fake_getenv);
  REQUIRE_FALSE(bad_ceiling);
  CHECK(bad_ceiling.error().message.find("--cuda-ceiling") != std::string::npos);

  g_env = {{"GPULOCK_TEST_ROOT", "/tmp/x"}, {"GPULOCK_PROBE_TIMEOUT_MS", "250"}};
  auto opts = detect_options_from_env({}, fake_getenv);
  REQUIRE(opts);
  CHECK(opts->root == "/tmp/x");
  CHECK(opts->hermetic);
  CHECK(opts->timeout == std::chrono::milliseconds(250));
  g_env = {{"GPULOCK_PROBE_TIMEOUT_MS", "soon"}};
  CHECK_FALSE(detect_options_from_env({}, fake_getenv));
  g_env = {};
  auto defaults = detect_options_from_env({}, fake_getenv);
  REQUIRE(defaults);
  CHECK(defaults->root == "/");
  CHECK_FALSE(defaults->hermetic);
}

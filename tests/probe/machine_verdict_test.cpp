// The verdict of machine detection as a pure function of the evidence (machine_verdict.h): no
// fake root, library or program, just the facts the steps would have found.
#include "machine_verdict.h"

#include <string>

#include <catch2/catch.hpp>

using namespace gpulock::probe;
namespace gpu = gpulock::gpu;
using detail::Evidence;

namespace {

gpu::DriverVersion driver(std::string_view text) {
  return gpu::DriverVersion::parse(text).value();
}
gpu::CudaVersion cuda(std::string_view text) {
  return gpu::CudaVersion::parse(text).value();
}
gpu::ComputeCapability cc(std::string_view text) {
  return gpu::ComputeCapability::parse(text).value();
}

// A machine whose libraries answered: driver 550.54.14, ceiling 12.4, one A100.
MachineInfo one_gpu() {
  MachineInfo m;
  m.driver = Detected<gpu::DriverVersion>{driver("550.54.14"), Method::Nvml,
                                          "nvmlSystemGetDriverVersion", "550.54.14"};
  m.cuda_ceiling =
      Detected<gpu::CudaVersion>{cuda("12.4"), Method::Libcuda, "cuDriverGetVersion", "12040"};
  GpuInfo g;
  g.name = "NVIDIA A100-SXM4-80GB";
  g.compute_capability = cc("sm_80");
  m.gpus.push_back(g);
  m.gpu_archs =
      Detected<std::vector<gpu::ComputeCapability>>{{cc("sm_80")}, Method::Nvml, "nvml", ""};
  return m;
}

MachineInfo decided(const Evidence& ev, MachineInfo m) {
  detail::decide(ev, m);
  return m;
}

}  // namespace

TEST_CASE("verdict: GPUs that CUDA can use", "[probe][verdict]") {
  Evidence ev;
  ev.cuda_ok = true;
  ev.gpu_nodes = true;
  auto m = decided(ev, one_gpu());
  CHECK(m.status == MachineStatus::Gpu);
  CHECK(m.verdict ==
        "NVIDIA driver 550.54.14, CUDA ceiling 12.4; 1 GPU: NVIDIA A100-SXM4-80GB (sm_80)");
  CHECK(m.hints.empty());
  CHECK_FALSE(m.wsl);

  MachineInfo two = one_gpu();
  two.gpus.push_back(two.gpus.front());
  two.gpu_archs->value = {cc("sm_80"), cc("sm_90")};
  ev.wsl = true;
  auto mixed = decided(ev, two);
  CHECK(mixed.verdict ==
        "NVIDIA driver 550.54.14, CUDA ceiling 12.4; 2 GPUs with different "
        "architectures (sm_80, sm_90): a build must support every one (WSL 2: "
        "the Windows host's driver)");
  CHECK(mixed.wsl);
}

TEST_CASE("verdict: a driver updated but not reloaded wins over everything", "[probe][verdict]") {
  Evidence ev;
  ev.cuda_ok = true;
  ev.user_space_version = "550.54.14";
  ev.mismatch = {"NVML: driver/library version mismatch",
                 "libcuda: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"};
  MachineInfo m = one_gpu();
  m.kernel_module = Detected<gpu::DriverVersion>{driver("535.104.05"), Method::Sysfs,
                                                 "/sys/module/nvidia/version", "535.104.05"};
  auto out = decided(ev, m);
  CHECK(out.status == MachineStatus::DriverMismatch);
  CHECK(out.verdict ==
        "the NVIDIA driver was updated but not reloaded: user-space libraries "
        "550.54.14, loaded kernel module 535.104.05");
  CHECK(out.warnings == std::vector<std::string>{"libcuda: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
                                                 "NVML: driver/library version mismatch"});
  REQUIRE(out.hints.size() == 1);
  CHECK(out.hints[0].starts_with("reboot or reload the nvidia module"));
}

TEST_CASE("verdict: GPUs hidden from CUDA by the environment", "[probe][verdict]") {
  Evidence ev;
  ev.cuda_hidden_by_env = true;  // and libcuda saw none
  ev.gpu_nodes = true;
  ev.no_device = {"CUDA_VISIBLE_DEVICES='' hides every GPU"};
  auto m = decided(ev, one_gpu());
  CHECK(m.status == MachineStatus::NoDevice);
  CHECK(m.verdict ==
        "NVIDIA driver 550.54.14 is present but no GPU is visible here: "
        "CUDA_VISIBLE_DEVICES='' hides every GPU");
  CHECK(m.hints ==
        std::vector<std::string>{"unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use"});
}

TEST_CASE("verdict: a kernel module without device nodes is a container without the GPU",
          "[probe][verdict]") {
  MachineInfo m;
  m.kernel_module = Detected<gpu::DriverVersion>{driver("550.54.14"), Method::Procfs,
                                                 "/proc/driver/nvidia/version", "550.54.14"};
  auto out = decided(Evidence{}, m);
  CHECK(out.status == MachineStatus::NoDevice);
  CHECK(out.verdict ==
        "an NVIDIA driver is present but no GPU is visible here: the kernel module "
        "is loaded but there are no /dev/nvidia* device nodes");
  REQUIRE(out.hints.size() == 1);
  CHECK(out.hints[0].starts_with("in a container, start it with GPU access"));
  // Under WSL 2 there are no /dev/nvidia* nodes by design.
  Evidence wsl;
  wsl.wsl = true;
  CHECK(decided(wsl, m).status == MachineStatus::NoDriver);
}

TEST_CASE("verdict: no permission, module not loaded, driver only, no driver", "[probe][verdict]") {
  MachineInfo with_driver;
  with_driver.driver = Detected<gpu::DriverVersion>{driver("550.54.14"), Method::Sysfs,
                                                    "/sys/module/nvidia/version", "550.54.14"};
  Evidence denied;
  denied.no_permission = {"/dev/nvidia0: Permission denied"};
  denied.denied_nodes = {"/dev/nvidia0"};
  auto np = decided(denied, with_driver);
  CHECK(np.status == MachineStatus::NoPermission);
  CHECK(np.verdict ==
        "NVIDIA driver 550.54.14 is installed but this user may not use the GPU: "
        "/dev/nvidia0: Permission denied");
  CHECK(np.hints.front().starts_with("ask an administrator for access to /dev/nvidia0"));

  Evidence unloaded;
  unloaded.module_not_loaded = {"NVML: driver not loaded"};
  CHECK(decided(unloaded, MachineInfo{}).status == MachineStatus::ModuleNotLoaded);

  auto only = decided(Evidence{}, with_driver);
  CHECK(only.status == MachineStatus::DriverOnly);
  CHECK(only.verdict ==
        "NVIDIA driver 550.54.14 found (/sys/module/nvidia/version), but nothing "
        "could list the GPUs: NVML, libcuda and nvidia-smi did not answer");

  Evidence stub;
  stub.stub_path = "/usr/local/cuda/lib64/stubs/libcuda.so";
  auto none = decided(stub, MachineInfo{});
  CHECK(none.status == MachineStatus::NoDriver);
  CHECK(none.verdict ==
        "no NVIDIA driver found: only the CUDA toolkit's stub libcuda "
        "(/usr/local/cuda/lib64/stubs/libcuda.so)");
  CHECK(decided(Evidence{}, MachineInfo{}).verdict == "no NVIDIA driver found");
}

TEST_CASE("verdict: a ceiling given by override is named when there is no GPU",
          "[probe][verdict]") {
  MachineInfo m;
  m.cuda_ceiling =
      Detected<gpu::CudaVersion>{cuda("12.8"), Method::Override, "--cuda-ceiling", "12.8"};
  auto out = decided(Evidence{}, m);
  CHECK(out.status == MachineStatus::NoDriver);
  CHECK(out.verdict == "no NVIDIA driver found; CUDA ceiling 12.8 given by --cuda-ceiling");
}

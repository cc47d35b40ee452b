// The machine flags, declared once (machine_flags.h).
#include "machine_flags.h"

namespace gpulock::cli {

namespace {

struct Help {
  const char* driver;
  const char* ceiling;
  const char* archs;
};

Help help_of(MachineRole role) {
  switch (role) {
    case MachineRole::Target:
      return {"NVIDIA driver: auto (detect), none (no GPU), or a version like 550.54.14",
              "The newest CUDA the target driver runs, e.g. 12.4",
              "The target GPUs' architectures, e.g. sm_61,sm_90"};
    case MachineRole::Describe:
      return {"Describe this machine: driver version, or none",
              "Describe this machine: CUDA ceiling, e.g. 12.4",
              "Describe this machine: GPU architectures, e.g. sm_90"};
    case MachineRole::Assume:
      break;
  }
  return {
      "Assume this driver instead of detecting: VERSION, 'none' (no GPU) or 'auto' "
      "(env GPULOCK_DRIVER)",
      "Assume this CUDA ceiling X.Y (env GPULOCK_CUDA_CEILING)",
      "Assume these GPU architectures, sm_XY[,sm_XY...] (env GPULOCK_GPU_ARCH)"};
}

}  // namespace

void add_machine_flags(CLI::App& sub, gpu::MachineFlags& into, MachineRole role) {
  const Help help = help_of(role);
  auto* driver = sub.add_option("--driver", into.driver, help.driver);
  if (role == MachineRole::Target) driver->type_name("TEXT")->default_str("auto");
  sub.add_option("--cuda-ceiling", into.cuda_ceiling, help.ceiling);
  sub.add_option("--gpu-arch", into.gpu_arch, help.archs);
}

}  // namespace gpulock::cli

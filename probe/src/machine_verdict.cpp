// The verdict of machine detection: a pure function of what the steps found (machine_detector.h).
#include "machine_verdict.h"

#include <fmt/format.h>

namespace gpulock::probe::detail {
namespace {

std::string driver_phrase(const MachineInfo& m) {
  if (!m.driver) return "an NVIDIA driver";
  return fmt::format("NVIDIA driver {}", m.driver->value.to_string());
}

}  // namespace

std::string plural(std::size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

std::string archs_text(const std::vector<gpu::ComputeCapability>& archs) {
  std::vector<std::string> names;
  for (const auto& a : archs)
    names.push_back(a.to_string());
  return join(names, ", ");
}

void decide(const Evidence& ev, MachineInfo& m) {
  bool cuda_sees_none = ev.cuda_hidden_by_env && !ev.cuda_ok;
  if (!ev.mismatch.empty()) {
    m.status = MachineStatus::DriverMismatch;
    std::string versions =
        (m.kernel_module && !ev.user_space_version.empty())
            ? fmt::format(": user-space libraries {}, loaded kernel module {}",
                          ev.user_space_version, m.kernel_module->value.to_string())
            : fmt::format(": {}", ev.mismatch.front());
    m.verdict = fmt::format("the NVIDIA driver was updated but not reloaded{}", versions);
    for (std::size_t i = 1; i < ev.mismatch.size(); ++i)
      m.warnings.push_back(ev.mismatch[i]);
    if (m.kernel_module && !ev.user_space_version.empty())
      m.warnings.push_back(ev.mismatch.front());
    m.hints.push_back(
        "reboot or reload the nvidia module (stop GPU processes, then "
        "'sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia')");
  } else if (!m.gpus.empty() && !cuda_sees_none) {
    m.status = MachineStatus::Gpu;
    std::string ceiling = m.cuda_ceiling
                              ? fmt::format(", CUDA ceiling {}", m.cuda_ceiling->value.to_string())
                              : std::string(", CUDA ceiling unknown");
    std::string gpus;
    if (m.gpu_archs && m.gpu_archs->value.size() > 1) {
      gpus = fmt::format("{} with different architectures ({}): a build must support every one",
                         plural(m.gpus.size(), "GPU"), archs_text(m.gpu_archs->value));
    } else if (m.gpus.size() == 1) {
      gpus =
          fmt::format("1 GPU: {}{}", m.gpus.front().name.empty() ? "unnamed" : m.gpus.front().name,
                      m.gpu_archs ? fmt::format(" ({})", archs_text(m.gpu_archs->value)) : "");
    } else {
      gpus = fmt::format("{}{}", plural(m.gpus.size(), "GPU"),
                         m.gpu_archs ? fmt::format(" ({})", archs_text(m.gpu_archs->value)) : "");
    }
    m.verdict = fmt::format("{}{}; {}{}", driver_phrase(m), ceiling, gpus,
                            ev.wsl ? " (WSL 2: the Windows host's driver)" : "");
  } else if (!ev.no_permission.empty()) {
    m.status = MachineStatus::NoPermission;
    m.verdict = fmt::format("{} is installed but this user may not use the GPU: {}",
                            driver_phrase(m), ev.no_permission.front());
    std::string node = ev.denied_nodes.empty() ? "/dev/nvidia0" : ev.denied_nodes.front();
    m.hints.push_back(
        fmt::format("ask an administrator for access to {} (often membership of the group "
                    "that owns it, e.g. 'video')",
                    node));
  } else if (!ev.module_not_loaded.empty()) {
    m.status = MachineStatus::ModuleNotLoaded;
    m.verdict = fmt::format(
        "NVIDIA user-space driver libraries are installed but the nvidia kernel module is "
        "not loaded: {}",
        ev.module_not_loaded.front());
    m.hints.push_back(
        "load it ('sudo modprobe nvidia') or reboot; 'sudo dmesg | grep -i nvidia' shows why it "
        "did not load (Secure Boot, a kernel update without a rebuilt module)");
  } else if (!ev.no_device.empty() || (m.kernel_module && !ev.gpu_nodes && !ev.wsl)) {
    m.status = MachineStatus::NoDevice;
    std::string reason = !ev.no_device.empty()
                             ? ev.no_device.front()
                             : "the kernel module is loaded but there are no /dev/nvidia* "
                               "device nodes";
    m.verdict =
        fmt::format("{} is present but no GPU is visible here: {}", driver_phrase(m), reason);
    if (ev.cuda_hidden_by_env) {
      m.hints.push_back("unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use");
    } else if (m.kernel_module && !ev.gpu_nodes) {
      m.hints.push_back(
          "in a container, start it with GPU access (e.g. 'docker run --gpus all' with the "
          "NVIDIA Container Toolkit)");
    } else {
      m.hints.push_back(
          "check that this machine, VM or container was given the GPU, and 'sudo dmesg | grep "
          "-i nvidia' for errors");
    }
  } else if (m.driver) {
    m.status = MachineStatus::DriverOnly;
    m.verdict = fmt::format(
        "{} found ({}), but nothing could list the GPUs: NVML, libcuda and nvidia-smi "
        "did not answer",
        driver_phrase(m), m.driver->source);
    m.hints.push_back("pass --gpu-arch sm_XY (or GPULOCK_GPU_ARCH) to give the GPU architectures");
  } else {
    m.status = MachineStatus::NoDriver;
    m.verdict =
        !ev.stub_path.empty()
            ? fmt::format("no NVIDIA driver found: only the CUDA toolkit's stub libcuda ({})",
                          ev.stub_path)
            : "no NVIDIA driver found";
    m.hints.push_back(
        "to resolve for another machine pass --driver VERSION (e.g. --driver 550.54.14), "
        "or --driver none for CPU-only builds");
  }
  if (m.status != MachineStatus::Gpu && m.cuda_ceiling &&
      m.cuda_ceiling->method == Method::Override) {
    m.verdict += fmt::format("; CUDA ceiling {} given by {}", m.cuda_ceiling->value.to_string(),
                             m.cuda_ceiling->source);
  }
  m.wsl = ev.wsl;
}

}  // namespace gpulock::probe::detail

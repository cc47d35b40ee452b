// Machine detection (machine.h): runs the steps and combines their answers into values (each
// with its method) and warnings: the evidence. The verdict is a pure function of it
// (machine_verdict.cpp). This file has the names of machine.h's enums, detect_machine, the order
// of the steps, and the detector's plumbing (paths under the test root, steps, warnings); each
// step has a file of its own (machine_detector.h lists them).
#include "gpulock/probe/machine.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "machine_detector.h"

namespace gpulock::probe {

std::string_view method_name(Method method) noexcept {
  switch (method) {
    case Method::Override:
      return "override";
    case Method::Nvml:
      return "nvml";
    case Method::Libcuda:
      return "libcuda";
    case Method::Sysfs:
      return "sysfs";
    case Method::Procfs:
      return "procfs";
    case Method::NvidiaSmi:
      return "nvidia-smi";
    case Method::DriverTable:
      return "driver-table";
  }
  return "unknown";
}

std::string_view step_outcome_name(StepOutcome outcome) noexcept {
  switch (outcome) {
    case StepOutcome::Ok:
      return "ok";
    case StepOutcome::NotFound:
      return "not-found";
    case StepOutcome::Failed:
      return "failed";
    case StepOutcome::TimedOut:
      return "timeout";
    case StepOutcome::Crashed:
      return "crashed";
    case StepOutcome::Skipped:
      return "skipped";
  }
  return "unknown";
}

std::string_view machine_status_name(MachineStatus status) noexcept {
  switch (status) {
    case MachineStatus::Gpu:
      return "gpu";
    case MachineStatus::DriverOnly:
      return "driver-only";
    case MachineStatus::NoDevice:
      return "no-device";
    case MachineStatus::NoPermission:
      return "no-permission";
    case MachineStatus::DriverMismatch:
      return "driver-mismatch";
    case MachineStatus::ModuleNotLoaded:
      return "module-not-loaded";
    case MachineStatus::NoDriver:
      return "no-driver";
    case MachineStatus::Override:
      return "override";
    case MachineStatus::NoGpuOverride:
      return "no-gpu";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// Detection

namespace detail {

std::string format_seconds(std::chrono::milliseconds ms) {
  auto count = ms.count();
  if (count % 1000 == 0) return fmt::format("{} s", count / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(count) / 1000.0);
}

void Detector::run() {
  if (record_overrides()) return;  // a driver override describes another machine
  run_libraries();
  read_kernel_module();
  scan_devices();
  run_nvidia_smi_if_needed();
  combine();
  detail::decide(ev_, m_);
}

// ----- paths under the (test) root -----
std::string Detector::under_root(std::string_view path) const {
  if (o_.root.empty() || o_.root == "/") return std::string(path);
  std::string r = o_.root;
  while (r.size() > 1 && r.back() == '/')
    r.pop_back();
  return r + std::string(path);
}

// A path as shown in reports: without the test root.
std::string Detector::shown(std::string_view path) const {
  std::string root = o_.root;
  while (root.size() > 1 && root.back() == '/')
    root.pop_back();
  if (root.size() > 1 && path.starts_with(root) &&
      (path.size() == root.size() || path[root.size()] == '/')) {
    return std::string(path.substr(root.size()));
  }
  return std::string(path);
}

bool Detector::exists(std::string_view path) const {
  struct stat st {};
  return ::stat(under_root(path).c_str(), &st) == 0;
}

FileRead Detector::read_file(std::string_view path, std::string& content,
                             std::string& error) const {
  std::string full = under_root(path);
  std::ifstream in(full, std::ios::binary);
  if (!in) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR || !exists(path)) return FileRead::Missing;
    error = std::strerror(e);
    return FileRead::Unreadable;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  content = ss.str().substr(0, 1 << 16);
  return FileRead::Ok;
}

void Detector::step(std::string name, StepOutcome outcome, std::string detail) {
  m_.steps.push_back({std::move(name), outcome, std::move(detail)});
}

void Detector::warn(std::string text) {
  m_.warnings.push_back(std::move(text));
}

}  // namespace detail

MachineInfo detect_machine(const DetectOptions& options) {
  MachineInfo info;
  detail::Detector(options, info).run();
  return info;
}

gpu::Machine fit_machine(const MachineInfo& info) {
  gpu::Machine m;
  struct utsname u {};
  if (::uname(&u) == 0) {
    std::string cpu = u.machine;
    m.platform = gpu::Platform{"linux", cpu == "arm64" ? std::string("aarch64") : cpu};
  }
  m.no_gpu = info.status == MachineStatus::NoGpuOverride;
  if (info.driver) m.driver = info.driver->value;
  if (info.cuda_ceiling) {
    m.ceiling = info.cuda_ceiling->value;
    m.ceiling_method = std::string(method_name(info.cuda_ceiling->method));
  }
  if (info.gpu_archs) m.archs = info.gpu_archs->value;
  return m;
}

}  // namespace gpulock::probe

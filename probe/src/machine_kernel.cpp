// Step 4 of machine detection (machine_detector.h): the kernel module's version in sysfs and
// procfs, the GPUs it knows, and the /dev/nvidia* device nodes.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "machine_detector.h"

namespace gpulock::probe::detail {

// ----- 4. the kernel module and the device nodes -----
void Detector::read_kernel_module() {
  std::string content;
  std::string error;
  switch (read_file("/sys/module/nvidia/version", content, error)) {
    case FileRead::Ok:
      sysfs_ = detail::parse_sysfs_version(content);
      if (sysfs_) {
        step("sysfs", StepOutcome::Ok,
             fmt::format("/sys/module/nvidia/version: {}", sysfs_->to_string()));
      } else {
        step("sysfs", StepOutcome::Failed,
             fmt::format("/sys/module/nvidia/version: unexpected content {}",
                         core::quote_for_message(detail::first_line(content), 60)));
      }
      break;
    case FileRead::Missing:
      step("sysfs", StepOutcome::NotFound,
           "/sys/module/nvidia/version: no nvidia kernel module loaded");
      break;
    case FileRead::Unreadable:
      step("sysfs", StepOutcome::Failed, fmt::format("/sys/module/nvidia/version: {}", error));
      break;
  }
  content.clear();
  switch (read_file("/proc/driver/nvidia/version", content, error)) {
    case FileRead::Ok: {
      procfs_ = detail::parse_procfs_version(content);
      proc_gpus_ = count_proc_gpus();
      std::string gpus = proc_gpus_ > 0 ? fmt::format("; {} in /proc/driver/nvidia/gpus",
                                                      plural(proc_gpus_, "GPU"))
                                        : std::string();
      if (procfs_) {
        step("procfs", StepOutcome::Ok,
             fmt::format("/proc/driver/nvidia/version: {}{}", procfs_->to_string(), gpus));
      } else {
        step("procfs", StepOutcome::Failed,
             fmt::format("/proc/driver/nvidia/version: unexpected content {}",
                         core::quote_for_message(detail::first_line(content), 60)));
      }
      break;
    }
    case FileRead::Missing:
      step("procfs", StepOutcome::NotFound, "/proc/driver/nvidia/version: not present");
      break;
    case FileRead::Unreadable:
      step("procfs", StepOutcome::Failed, fmt::format("/proc/driver/nvidia/version: {}", error));
      break;
  }
  if (sysfs_ && procfs_ && *sysfs_ != *procfs_) {
    warn(fmt::format("/sys/module/nvidia/version says {} but /proc/driver/nvidia/version says {}",
                     sysfs_->to_string(), procfs_->to_string()));
  }
  if (sysfs_) {
    m_.kernel_module = Detected<gpu::DriverVersion>{
        *sysfs_, Method::Sysfs, "/sys/module/nvidia/version", sysfs_->to_string()};
  } else if (procfs_) {
    m_.kernel_module = Detected<gpu::DriverVersion>{
        *procfs_, Method::Procfs, "/proc/driver/nvidia/version", procfs_->to_string()};
  }
}

std::size_t Detector::count_proc_gpus() const {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it(under_root("/proc/driver/nvidia/gpus"), ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code dir_ec;
    if (it->is_directory(dir_ec)) ++n;
  }
  return n;
}

void Detector::scan_devices() {
  std::vector<std::string> nodes;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(under_root("/dev"), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    bool gpu_node =
        name.size() > 6 && name.starts_with("nvidia") &&
        std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (gpu_node) ev_.gpu_nodes = true;
    if (gpu_node || name == "nvidiactl") nodes.push_back(name);
  }
  std::sort(nodes.begin(), nodes.end());
  bool dxg = exists("/dev/dxg");
  if (nodes.empty()) {
    if (dxg && wsl_libcuda_) {
      ev_.wsl = true;
      step("devices", StepOutcome::Ok, "/dev/dxg: WSL 2 GPU paravirtualization");
    } else {
      step("devices", StepOutcome::NotFound, "no /dev/nvidia* device nodes");
    }
    return;
  }
  std::vector<std::string> ok;
  std::vector<std::string> denied;
  for (const auto& n : nodes) {
    std::string path = "/dev/" + n;
    (::access(under_root(path).c_str(), R_OK | W_OK) == 0 ? ok : denied).push_back(path);
  }
  if (denied.empty()) {
    step("devices", StepOutcome::Ok, fmt::format("{}: accessible", join(ok, ", ")));
    return;
  }
  ev_.denied_nodes = denied;
  step("devices", StepOutcome::Failed,
       fmt::format("not accessible to this user (uid {}): {}", ::getuid(), join(denied, ", ")));
  if (ok.empty() || std::none_of(ok.begin(), ok.end(),
                                 [](const std::string& p) { return p != "/dev/nvidiactl"; })) {
    ev_.no_permission.push_back(fmt::format("this user cannot open {}", join(denied, ", ")));
  } else {
    warn(fmt::format("this user cannot open {}", join(denied, ", ")));
  }
}

}  // namespace gpulock::probe::detail

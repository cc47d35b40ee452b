// Steps 2 and 3 of machine detection (machine_detector.h): NVML and libcuda, each loaded in a
// child process (driver_libs.h), and what their answers say.
#include <cstdlib>

#include <fmt/format.h>

#include "machine_detector.h"

namespace gpulock::probe::detail {

using sys::ChildResult;

// ----- 2. and 3. NVML and libcuda, in two children at once -----
void Detector::run_libraries() {
  std::vector<std::string> nvml_names{o_.nvml_library};
  std::vector<std::string> cuda_names{o_.cuda_library};
  // WSL 2 puts the host driver's libraries here; conda and rattler look here too.
  wsl_libcuda_ = exists("/usr/lib/wsl/lib/libcuda.so.1");
  if (exists("/usr/lib/wsl/lib/libnvidia-ml.so.1")) {
    nvml_names.push_back(under_root("/usr/lib/wsl/lib/libnvidia-ml.so.1"));
  }
  if (wsl_libcuda_) cuda_names.push_back(under_root("/usr/lib/wsl/lib/libcuda.so.1"));

  auto nvml_child = detail::start_nvml_child(nvml_names, o_.hermetic);
  auto cuda_child = detail::start_cuda_child(cuda_names, o_.hermetic);
  std::vector<sys::ChildProcess*> running;
  if (nvml_child) running.push_back(&*nvml_child);
  if (cuda_child) running.push_back(&*cuda_child);
  auto results = sys::wait_all(running, o_.timeout);
  std::size_t next = 0;
  if (nvml_child) {
    nvml_ = detail::parse_lib_report(std::move(results[next++]));
  } else {
    step("nvml", StepOutcome::Failed, nvml_child.error().message);
  }
  if (cuda_child) {
    cuda_ = detail::parse_lib_report(std::move(results[next++]));
  } else {
    step("libcuda", StepOutcome::Failed, cuda_child.error().message);
  }
  if (nvml_) record_nvml();
  if (cuda_) record_cuda();
}

// The child's end, if it was abnormal: a step outcome and its detail.
std::optional<std::pair<StepOutcome, std::string>> Detector::abnormal_end(
    const LibReport& r, std::string_view library) const {
  std::string where = !r.pending_call.empty() ? fmt::format(" in {}", r.pending_call)
                      : r.loaded              ? std::string()
                                              : fmt::format(" while loading {}", library);
  std::string who = r.loaded ? shown(r.path) : std::string(library);
  switch (r.child.end) {
    case ChildResult::End::TimedOut:
      return std::pair{StepOutcome::TimedOut, fmt::format("{}: no answer within {}{}; stopped", who,
                                                          format_seconds(o_.timeout), where)};
    case ChildResult::End::Signaled:
      return std::pair{StepOutcome::Crashed, fmt::format("{}: crashed ({}){}", who,
                                                         sys::signal_name(r.child.code), where)};
    case ChildResult::End::Exited:
      if (r.child.code != 0) {
        return std::pair{StepOutcome::Failed, fmt::format("{}: the process exited with status {}{}",
                                                          who, r.child.code, where)};
      }
      return std::nullopt;
  }
  return std::nullopt;
}

void Detector::record_nvml() {
  const LibReport& r = *nvml_;
  if (auto bad = abnormal_end(r, o_.nvml_library)) {
    step("nvml", bad->first, bad->second);
    warn(fmt::format("NVML {}: {}", bad->first == StepOutcome::TimedOut ? "hung" : "failed",
                     bad->second));
    return;
  }
  if (!r.loaded) {
    step("nvml", StepOutcome::NotFound, join(r.dl_errors, "; "));
    return;
  }
  std::string path = shown(r.path);
  if (!r.missing_symbol.empty() && !r.rc("nvmlInit_v2")) {
    step("nvml", StepOutcome::Failed, fmt::format("{}: has no {}", path, r.missing_symbol));
    return;
  }
  int init = r.rc("nvmlInit_v2").value_or(-1);
  if (init != 0) {
    step("nvml", StepOutcome::Failed,
         fmt::format("{}: nvmlInit_v2 returned {}", path, detail::nvml_error_name(init)));
    if (init == detail::kNvmlErrorLibRmVersionMismatch) {
      ev_.mismatch.push_back(
          "nvmlInit_v2 returned NVML_ERROR_LIB_RM_VERSION_MISMATCH (the driver "
          "libraries and the kernel module differ)");
    } else if (init == detail::kNvmlErrorDriverNotLoaded) {
      ev_.module_not_loaded.push_back("nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED");
    } else if (init == detail::kNvmlErrorNoPermission) {
      ev_.no_permission.push_back("nvmlInit_v2 returned NVML_ERROR_NO_PERMISSION");
    }
    return;
  }
  nvml_ok_ = true;
  std::vector<std::string> parts;
  if (!r.driver_version.empty()) parts.push_back(fmt::format("driver {}", r.driver_version));
  if (r.cuda_version) {
    auto c = gpu::CudaVersion::from_driver_api(*r.cuda_version);
    parts.push_back(c ? fmt::format("CUDA {}", c->to_string())
                      : fmt::format("implausible CUDA version {}", *r.cuda_version));
  } else if (auto rc = r.rc("nvmlSystemGetCudaDriverVersion_v2"); rc && *rc != 0) {
    parts.push_back(fmt::format("no CUDA version ({})", detail::nvml_error_name(*rc)));
  }
  if (r.count) {
    parts.push_back(plural(*r.count, "GPU"));
    if (*r.count == 0) ev_.no_device.push_back("NVML sees no GPU");
  } else if (auto rc = r.rc("nvmlDeviceGetCount_v2"); rc && *rc != 0) {
    parts.push_back(fmt::format("no GPU count ({})", detail::nvml_error_name(*rc)));
    if (*rc == detail::kNvmlErrorNoPermission) {
      ev_.no_permission.push_back("nvmlDeviceGetCount_v2 returned NVML_ERROR_NO_PERMISSION");
    }
  }
  for (const auto& [fn, rc] : r.calls) {
    if (rc != 0 && fn.find('(') != std::string::npos) {
      warn(fmt::format("NVML: {} returned {}", fn, detail::nvml_error_name(rc)));
    }
  }
  step("nvml", StepOutcome::Ok, fmt::format("{}: {}", path, join(parts, ", ")));
}

void Detector::record_cuda() {
  const LibReport& r = *cuda_;
  if (auto bad = abnormal_end(r, o_.cuda_library)) {
    step("libcuda", bad->first, bad->second);
    warn(fmt::format("libcuda {}: {}", bad->first == StepOutcome::TimedOut ? "hung" : "failed",
                     bad->second));
    return;
  }
  if (!r.loaded) {
    step("libcuda", StepOutcome::NotFound, join(r.dl_errors, "; "));
    return;
  }
  std::string path = shown(r.path);
  if (r.path.starts_with(under_root("/usr/lib/wsl/"))) ev_.wsl = true;
  if (!r.missing_symbol.empty() && !r.rc("cuInit")) {
    step("libcuda", StepOutcome::Failed, fmt::format("{}: has no {}", path, r.missing_symbol));
    return;
  }
  int init = r.rc("cuInit").value_or(-1);
  if (init == detail::kCudaErrorStubLibrary) {
    ev_.stub_path = path;
    step("libcuda", StepOutcome::NotFound,
         fmt::format("stub libcuda, no driver: {} returned CUDA_ERROR_STUB_LIBRARY (34)", path));
    return;
  }
  std::vector<std::string> parts;
  if (r.cuda_version) {
    auto c = gpu::CudaVersion::from_driver_api(*r.cuda_version);
    parts.push_back(c ? fmt::format("CUDA {}", c->to_string())
                      : fmt::format("implausible CUDA version {}", *r.cuda_version));
  }
  if (init != 0) {
    std::string text = fmt::format("{}: cuInit returned {}", path, detail::cuda_error_name(init));
    if (!parts.empty()) text += fmt::format("; cuDriverGetVersion: {}", parts.front());
    step("libcuda", StepOutcome::Failed, text);
    if (init == detail::kCudaErrorNoDevice) {
      const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
      if (cvd != nullptr) {
        ev_.cuda_hidden_by_env = true;
        ev_.no_device.push_back(
            fmt::format("CUDA sees no device: CUDA_VISIBLE_DEVICES is set to "
                        "'{}'",
                        cvd));
      } else {
        ev_.no_device.push_back("cuInit returned CUDA_ERROR_NO_DEVICE");
      }
    } else if (init == detail::kCudaErrorSystemDriverMismatch) {
      ev_.mismatch.push_back(
          "cuInit returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (the kernel driver "
          "and the CUDA driver library differ)");
    }
    cuda_init_failed_ = true;
    return;
  }
  ev_.cuda_ok = true;
  if (r.count) parts.push_back(plural(*r.count, "GPU"));
  step("libcuda", StepOutcome::Ok, fmt::format("{}: {}", path, join(parts, ", ")));
}

}  // namespace gpulock::probe::detail

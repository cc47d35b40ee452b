// Machine detection (machine.h): runs the steps and combines their answers into values (each
// with its method) and warnings: the evidence. The verdict is a pure function of it
// (machine_verdict.cpp).
#include "gpulock/probe/machine.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/text.h"
#include "gpulock/sys/process.h"

#include "driver_libs.h"
#include "machine_sources.h"
#include "machine_verdict.h"

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
// Overrides

namespace {

struct Picked {
  std::string text;
  std::string origin;
};

std::optional<Picked> pick(const std::string& flag_text, std::string_view flag,
                           const char* env_name, EnvLookup env) {
  if (!flag_text.empty()) return Picked{flag_text, std::string(flag)};
  if (auto v = sys::env_value(env_name, env)) return Picked{std::string(*v), env_name};
  return std::nullopt;
}

std::unexpected<core::Error> usage(const Picked& p, const core::Error& e) {
  core::Error out = e;
  out.code = core::ErrorCode::Usage;
  out.message = fmt::format("invalid value for {}: {}", p.origin, e.message);
  out.column = 0;
  return std::unexpected<core::Error>(std::move(out));
}

}  // namespace

core::Result<Overrides> read_overrides(const OverrideFlags& flags, EnvLookup env) {
  Overrides o;
  // `--driver auto` asks for detection, whatever GPULOCK_DRIVER says.
  auto driver_pick =
      flags.driver == "auto" ? std::nullopt : pick(flags.driver, "--driver", "GPULOCK_DRIVER", env);
  if (auto p = driver_pick) {
    std::string text(core::trim(p->text, " \t"));
    if (text != "auto") {
      o.driver_origin = p->origin;
      o.driver_raw = p->text;
      if (text == "none") {
        o.no_driver = true;
      } else {
        auto v = DriverVersion::parse(text);
        if (!v) {
          auto e = usage(*p, v.error());
          e.error().hints.push_back("give a driver version like 550.54.14, or 'none' for no GPU");
          return e;
        }
        o.driver = *v;
      }
    }
  }
  if (auto p = pick(flags.cuda_ceiling, "--cuda-ceiling", "GPULOCK_CUDA_CEILING", env)) {
    auto v = CudaVersion::parse(core::trim(p->text, " \t"));
    if (!v) return usage(*p, v.error());
    o.cuda_ceiling = *v;
    o.cuda_ceiling_origin = p->origin;
    o.cuda_ceiling_raw = p->text;
  }
  if (auto p = pick(flags.gpu_arch, "--gpu-arch", "GPULOCK_GPU_ARCH", env)) {
    std::vector<ComputeCapability> archs;
    std::string_view rest = p->text;
    for (;;) {
      std::size_t comma = rest.find(',');
      std::string item(core::trim(rest.substr(0, comma), " \t"));
      auto cc = ComputeCapability::parse(item);
      if (!cc) return usage(*p, cc.error());
      archs.push_back(*cc);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    std::sort(archs.begin(), archs.end());
    archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
    o.gpu_archs = std::move(archs);
    o.gpu_arch_origin = p->origin;
    o.gpu_arch_raw = p->text;
  }
  return o;
}

core::Result<std::optional<std::chrono::milliseconds>> probe_timeout_from_env(EnvLookup env) {
  auto ms = sys::env_integer("GPULOCK_PROBE_TIMEOUT_MS", 1, 600000, "milliseconds, 1-600000", env);
  if (!ms) return std::unexpected(ms.error());
  if (!*ms) return std::optional<std::chrono::milliseconds>();
  return std::optional<std::chrono::milliseconds>(std::chrono::milliseconds(**ms));
}

core::Result<DetectOptions> detect_options_from_env(const OverrideFlags& flags, EnvLookup env) {
  auto overrides = read_overrides(flags, env);
  if (!overrides) return std::unexpected(overrides.error());
  DetectOptions o;
  o.overrides = std::move(*overrides);
  if (auto root = sys::env_value("GPULOCK_TEST_ROOT", env)) {
    o.root = std::string(*root);
    o.hermetic = true;
  }
  auto timeout = probe_timeout_from_env(env);
  if (!timeout) return std::unexpected(timeout.error());
  if (*timeout) o.timeout = **timeout;
  return o;
}

// ---------------------------------------------------------------------------------------------
// Detection

namespace {

using detail::archs_text;
using detail::join;
using detail::LibReport;
using detail::plural;
using sys::ChildResult;

std::string format_seconds(std::chrono::milliseconds ms) {
  auto count = ms.count();
  if (count % 1000 == 0) return fmt::format("{} s", count / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(count) / 1000.0);
}

// One line of a program's output for a message: control characters replaced, cut at `max`.
std::string clip(std::string_view line, std::size_t max) {
  std::string out;
  for (char c : line.substr(0, max))
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (line.size() > max) out += "...";
  return out;
}

enum class FileRead { Ok, Missing, Unreadable };

// The state of the nvidia-smi step.
struct SmiState {
  bool ran = false;
  bool found = false;
  std::vector<detail::SmiGpu> gpus;
};

class Detector {
 public:
  Detector(const DetectOptions& options, MachineInfo& info) : o_(options), m_(info) {}

  void run() {
    if (record_overrides()) return;  // a driver override describes another machine
    run_libraries();
    read_kernel_module();
    scan_devices();
    run_nvidia_smi_if_needed();
    combine();
    detail::decide(ev_, m_);
  }

 private:
  // ----- paths under the (test) root -----
  std::string under_root(std::string_view path) const {
    if (o_.root.empty() || o_.root == "/") return std::string(path);
    std::string r = o_.root;
    while (r.size() > 1 && r.back() == '/')
      r.pop_back();
    return r + std::string(path);
  }
  // A path as shown in reports: without the test root.
  std::string shown(std::string_view path) const {
    std::string root = o_.root;
    while (root.size() > 1 && root.back() == '/')
      root.pop_back();
    if (root.size() > 1 && path.starts_with(root) &&
        (path.size() == root.size() || path[root.size()] == '/')) {
      return std::string(path.substr(root.size()));
    }
    return std::string(path);
  }
  bool exists(std::string_view path) const {
    struct stat st {};
    return ::stat(under_root(path).c_str(), &st) == 0;
  }
  FileRead read_file(std::string_view path, std::string& content, std::string& error) const {
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

  void step(std::string name, StepOutcome outcome, std::string detail) {
    m_.steps.push_back({std::move(name), outcome, std::move(detail)});
  }
  void warn(std::string text) { m_.warnings.push_back(std::move(text)); }

  // ----- 1. overrides -----
  bool record_overrides() {
    const Overrides& ov = o_.overrides;
    std::vector<std::string> given;
    if (ov.no_driver) given.push_back(fmt::format("no GPU ({}=none)", ov.driver_origin));
    if (ov.driver)
      given.push_back(fmt::format("driver {} ({})", ov.driver->to_string(), ov.driver_origin));
    if (ov.cuda_ceiling) {
      given.push_back(fmt::format("CUDA ceiling {} ({})", ov.cuda_ceiling->to_string(),
                                  ov.cuda_ceiling_origin));
    }
    if (ov.gpu_archs) {
      given.push_back(
          fmt::format("GPU archs {} ({})", archs_text(*ov.gpu_archs), ov.gpu_arch_origin));
    }
    if (given.empty()) {
      step("overrides", StepOutcome::NotFound,
           "none given (GPULOCK_DRIVER, GPULOCK_CUDA_CEILING, GPULOCK_GPU_ARCH unset)");
    } else {
      step("overrides", StepOutcome::Ok, join(given, "; "));
    }
    if (ov.cuda_ceiling) {
      m_.cuda_ceiling = Detected<CudaVersion>{*ov.cuda_ceiling, Method::Override,
                                              ov.cuda_ceiling_origin, ov.cuda_ceiling_raw};
    }
    if (ov.gpu_archs) {
      m_.gpu_archs = Detected<std::vector<ComputeCapability>>{*ov.gpu_archs, Method::Override,
                                                              ov.gpu_arch_origin, ov.gpu_arch_raw};
    }
    if (!ov.no_driver && !ov.driver) return false;

    std::string why = fmt::format("not run: the driver is given by {}", ov.driver_origin);
    for (const char* name : {"nvml", "libcuda", "sysfs", "procfs", "devices", "nvidia-smi"}) {
      step(name, StepOutcome::Skipped, why);
    }
    if (ov.no_driver) {
      m_.status = MachineStatus::NoGpuOverride;
      m_.verdict = fmt::format(
          "no GPU: {} says this machine has no NVIDIA driver; only CPU builds "
          "qualify",
          ov.driver_origin == "--driver" ? "--driver none" : ov.driver_origin + "=none");
      if (ov.cuda_ceiling || ov.gpu_archs) {
        warn(fmt::format("{} and {} are ignored: there is no GPU",
                         ov.cuda_ceiling ? ov.cuda_ceiling_origin : ov.gpu_arch_origin,
                         ov.driver_origin));
        m_.cuda_ceiling.reset();
        m_.gpu_archs.reset();
      }
      return true;
    }
    m_.driver =
        Detected<DriverVersion>{*ov.driver, Method::Override, ov.driver_origin, ov.driver_raw};
    if (!m_.cuda_ceiling) set_ceiling_from_table();
    m_.status = MachineStatus::Override;
    std::string ceiling =
        m_.cuda_ceiling
            ? fmt::format("CUDA ceiling {} ({})", m_.cuda_ceiling->value.to_string(),
                          m_.cuda_ceiling->method == Method::Override ? m_.cuda_ceiling->source
                                                                      : "NVIDIA's driver table")
            : "no CUDA ceiling (the driver is older than every CUDA in NVIDIA's table)";
    std::string archs = m_.gpu_archs
                            ? fmt::format("GPU archs {} ({})", archs_text(m_.gpu_archs->value),
                                          m_.gpu_archs->source)
                            : "GPU archs not given";
    m_.verdict =
        fmt::format("another machine described: driver {} ({}), {}, {}; nothing was detected",
                    ov.driver->to_string(), ov.driver_origin, ceiling, archs);
    if (!m_.gpu_archs) {
      m_.hints.push_back(
          "pass --gpu-arch sm_XY (or GPULOCK_GPU_ARCH) so that builds are checked "
          "against the target GPUs");
    }
    return true;
  }

  void set_ceiling_from_table() {
    if (!m_.driver) return;
    auto c = cuda_ceiling_for_driver(m_.driver->value);
    if (!c) return;
    const auto& d = m_.driver->value;
    if (d.parts().size() == 1) {
      warn(fmt::format("driver {} is a branch number: read as the R{} branch, whose drivers run CUDA <= {}", d.to_string(),
                       d.branch(), c->to_string()));
    } else if (auto newest = newest_driver_in_table(); newest && newest->branch() < d.branch()) {
      warn(fmt::format("driver {} is newer than gpulock's driver table (up to {}): its CUDA ceiling is assumed to be {}",
                       d.to_string(), newest->to_string(), c->to_string()));
    }
    m_.cuda_ceiling = Detected<CudaVersion>{
        *c, Method::DriverTable,
        fmt::format("NVIDIA's table (driver {} from {})", m_.driver->value.to_string(),
                    m_.driver->method == Method::Override
                        ? m_.driver->source
                        : std::string(method_name(m_.driver->method))),
        m_.driver->value.to_string()};
  }

  // ----- 2. and 3. NVML and libcuda, in two children at once -----
  void run_libraries() {
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
  std::optional<std::pair<StepOutcome, std::string>> abnormal_end(const LibReport& r,
                                                                  std::string_view library) const {
    std::string where = !r.pending_call.empty() ? fmt::format(" in {}", r.pending_call)
                        : r.loaded              ? std::string()
                                                : fmt::format(" while loading {}", library);
    std::string who = r.loaded ? shown(r.path) : std::string(library);
    switch (r.child.end) {
      case ChildResult::End::TimedOut:
        return std::pair{StepOutcome::TimedOut,
                         fmt::format("{}: no answer within {}{}; stopped", who,
                                     format_seconds(o_.timeout), where)};
      case ChildResult::End::Signaled:
        return std::pair{StepOutcome::Crashed, fmt::format("{}: crashed ({}){}", who,
                                                           sys::signal_name(r.child.code), where)};
      case ChildResult::End::Exited:
        if (r.child.code != 0) {
          return std::pair{
              StepOutcome::Failed,
              fmt::format("{}: the process exited with status {}{}", who, r.child.code, where)};
        }
        return std::nullopt;
    }
    return std::nullopt;
  }

  void record_nvml() {
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
      auto c = CudaVersion::from_driver_api(*r.cuda_version);
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

  void record_cuda() {
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
      auto c = CudaVersion::from_driver_api(*r.cuda_version);
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

  // ----- 4. the kernel module and the device nodes -----
  void read_kernel_module() {
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
      m_.kernel_module = Detected<DriverVersion>{*sysfs_, Method::Sysfs,
                                                 "/sys/module/nvidia/version", sysfs_->to_string()};
    } else if (procfs_) {
      m_.kernel_module = Detected<DriverVersion>{
          *procfs_, Method::Procfs, "/proc/driver/nvidia/version", procfs_->to_string()};
    }
  }

  std::size_t count_proc_gpus() const {
    std::error_code ec;
    std::size_t n = 0;
    for (std::filesystem::directory_iterator it(under_root("/proc/driver/nvidia/gpus"), ec), end;
         !ec && it != end; it.increment(ec)) {
      std::error_code dir_ec;
      if (it->is_directory(dir_ec)) ++n;
    }
    return n;
  }

  void scan_devices() {
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

  // ----- 5. nvidia-smi, when the steps above left something unknown -----
  void run_nvidia_smi_if_needed() {
    bool have_gpus = (nvml_ok_ && !nvml_->gpus.empty()) || (ev_.cuda_ok && !cuda_->gpus.empty());
    bool have_driver = (nvml_ok_ && !nvml_->driver_version.empty()) || sysfs_ || procfs_;
    if (have_gpus && have_driver) {
      step("nvidia-smi", StepOutcome::Skipped,
           fmt::format("not needed: {} listed the GPUs and the driver version is known",
                       nvml_ok_ && !nvml_->gpus.empty() ? "NVML" : "libcuda"));
      return;
    }
    auto path = sys::find_on_path(o_.nvidia_smi);
    if (!path) {
      step("nvidia-smi", StepOutcome::NotFound, fmt::format("{}: not on PATH", o_.nvidia_smi));
      return;
    }
    smi_.ran = true;
    bool with_cc = true;
    auto result = run_smi(*path, with_cc);
    if (!result) {
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: {}", *path, result.error().message));
      return;
    }
    std::string text = result->out + result->err;
    if (result->end == ChildResult::End::Exited && result->code != 0 &&
        text.find("is not a valid field") != std::string::npos) {
      // Drivers before 510 have no compute_cap field.
      with_cc = false;
      result = run_smi(*path, with_cc);
      if (!result) {
        step("nvidia-smi", StepOutcome::Failed,
             fmt::format("{}: {}", *path, result.error().message));
        return;
      }
      text = result->out + result->err;
    }
    classify_smi(*path, *result, with_cc);
  }

  core::Result<sys::ChildResult> run_smi(const std::string& path, bool with_cc) {
    std::string query = with_cc ? "--query-gpu=driver_version,name,compute_cap,uuid"
                                : "--query-gpu=driver_version,name,uuid";
    auto child = sys::ChildProcess::spawn(path, {"nvidia-smi", query, "--format=csv,noheader"});
    if (!child) return std::unexpected(child.error());
    auto results = sys::wait_all({&*child}, o_.timeout);
    return std::move(results.front());
  }

  void classify_smi(const std::string& path, const sys::ChildResult& r, bool with_cc) {
    std::string text = r.out + r.err;
    std::string line = detail::first_line(text);
    if (r.end == ChildResult::End::TimedOut) {
      step("nvidia-smi", StepOutcome::TimedOut,
           fmt::format("{}: no answer within {}; stopped", path, format_seconds(o_.timeout)));
      warn(fmt::format("nvidia-smi hung: no answer within {}", format_seconds(o_.timeout)));
      return;
    }
    if (r.end == ChildResult::End::Signaled) {
      step("nvidia-smi", StepOutcome::Crashed,
           fmt::format("{}: crashed ({})", path, sys::signal_name(r.code)));
      return;
    }
    std::string status = r.code == 0 ? std::string() : fmt::format("exit status {}: ", r.code);
    std::string shown_line = clip(line, 100);
    if (text.find("No devices were found") != std::string::npos) {
      ev_.no_device.push_back("nvidia-smi: No devices were found");
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: {}{}", path, status, shown_line));
      return;
    }
    if (text.find("version mismatch") != std::string::npos) {
      ev_.mismatch.push_back(fmt::format("nvidia-smi: {}", line));
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: {}{}", path, status, shown_line));
      return;
    }
    if (text.find("couldn't communicate with the NVIDIA driver") != std::string::npos) {
      ev_.module_not_loaded.push_back("nvidia-smi cannot communicate with the NVIDIA driver");
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: {}{}", path, status, shown_line));
      return;
    }
    if (text.find("Insufficient Permissions") != std::string::npos) {
      ev_.no_permission.push_back("nvidia-smi: Insufficient Permissions");
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: {}{}", path, status, shown_line));
      return;
    }
    if (r.code != 0) {
      step(
          "nvidia-smi", StepOutcome::Failed,
          fmt::format("{}: exit status {}{}", path, r.code, line.empty() ? "" : ": " + shown_line));
      return;
    }
    auto gpus = detail::parse_nvidia_smi(r.out, with_cc);
    if (!gpus) {
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: {}", path, gpus.error().message));
      return;
    }
    if (gpus->empty()) {
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: no output", path));
      return;
    }
    smi_.found = true;
    smi_.gpus = std::move(*gpus);
    step("nvidia-smi", StepOutcome::Ok,
         fmt::format("{}: driver {}, {}{}", path, smi_.gpus.front().driver.to_string(),
                     plural(smi_.gpus.size(), "GPU"),
                     with_cc ? "" : " (no compute_cap field: driver < 510)"));
  }

  // ----- combining -----
  static std::optional<ComputeCapability> cc_of(const detail::LibGpu& g) {
    if (g.cc_major <= 0 || g.cc_minor < 0) return std::nullopt;
    return ComputeCapability{static_cast<std::uint32_t>(g.cc_major),
                             static_cast<std::uint32_t>(g.cc_minor)};
  }

  std::vector<GpuInfo> gpus_from(const LibReport& r, Method method) const {
    std::vector<GpuInfo> out;
    for (const auto& g : r.gpus) {
      out.push_back(GpuInfo{g.index, g.name, g.uuid, cc_of(g), g.memory_bytes, method});
    }
    return out;
  }

  void combine() {
    // Driver version.
    if (nvml_ok_ && !nvml_->driver_version.empty()) {
      if (auto v = DriverVersion::parse(nvml_->driver_version)) {
        m_.driver = Detected<DriverVersion>{*v, Method::Nvml, "nvmlSystemGetDriverVersion",
                                            nvml_->driver_version};
      } else {
        warn(fmt::format("NVML gave an unreadable driver version {}",
                         core::quote_for_message(nvml_->driver_version)));
      }
    }
    if (!m_.driver && m_.kernel_module) m_.driver = m_.kernel_module;
    if (!m_.driver && smi_.found) {
      const auto& v = smi_.gpus.front().driver;
      m_.driver = Detected<DriverVersion>{v, Method::NvidiaSmi,
                                          "nvidia-smi --query-gpu=driver_version", v.to_string()};
    }
    std::optional<DriverVersion> cuda_file = cuda_ && cuda_->loaded && ev_.stub_path.empty()
                                                 ? detail::version_from_library_file(cuda_->path)
                                                 : std::nullopt;
    if (!m_.driver && cuda_file && (ev_.cuda_ok || cuda_init_failed_)) {
      m_.driver = Detected<DriverVersion>{*cuda_file, Method::Libcuda,
                                          fmt::format("file name of {}", shown(cuda_->path)),
                                          cuda_->path.substr(cuda_->path.rfind('/') + 1)};
    }

    // Driver updated but not reloaded: user space and kernel module differ.
    if (m_.kernel_module) {
      const DriverVersion& kernel = m_.kernel_module->value;
      if (m_.driver && m_.driver->method == Method::Nvml && m_.driver->value != kernel) {
        ev_.mismatch.push_back(
            fmt::format("NVML reports driver {} but the loaded kernel module is {}",
                        m_.driver->value.to_string(), kernel.to_string()));
        ev_.user_space_version = m_.driver->value.to_string();
      }
      if (nvml_ && nvml_->loaded) {
        if (auto v = detail::version_from_library_file(nvml_->path); v && *v != kernel) {
          ev_.mismatch.push_back(fmt::format("{} is version {} but the loaded kernel module is {}",
                                             shown(nvml_->path), v->to_string(),
                                             kernel.to_string()));
          ev_.user_space_version = v->to_string();
        }
      }
      if (cuda_file && *cuda_file != kernel) {
        if (cuda_->path.find("/compat/") != std::string::npos) {
          warn(fmt::format(
              "libcuda {} is a CUDA forward-compatibility package ({}) on kernel module {}",
              cuda_file->to_string(), shown(cuda_->path), kernel.to_string()));
        } else {
          ev_.mismatch.push_back(fmt::format("{} is version {} but the loaded kernel module is {}",
                                             shown(cuda_->path), cuda_file->to_string(),
                                             kernel.to_string()));
          ev_.user_space_version = cuda_file->to_string();
        }
      }
    }
    // Without a kernel module, libcuda failing to initialize means the module is missing.
    if (!m_.kernel_module && !ev_.wsl && cuda_init_failed_ && !ev_.cuda_hidden_by_env &&
        ev_.mismatch.empty()) {
      ev_.module_not_loaded.push_back(
          "libcuda loads but cuInit fails and no nvidia kernel module is loaded");
    }

    // GPUs: NVML (no CUDA context needed), else libcuda, else nvidia-smi.
    if (nvml_ok_ && !nvml_->gpus.empty()) {
      m_.gpus = gpus_from(*nvml_, Method::Nvml);
    } else if (ev_.cuda_ok && !cuda_->gpus.empty()) {
      m_.gpus = gpus_from(*cuda_, Method::Libcuda);
    } else if (smi_.found) {
      std::uint32_t i = 0;
      for (const auto& g : smi_.gpus) {
        m_.gpus.push_back(
            GpuInfo{i++, g.name, g.uuid, g.compute_capability, std::nullopt, Method::NvidiaSmi});
      }
    }
    compare_nvml_and_cuda();

    // Ceiling: libcuda (what the CUDA runtime accepts), else NVML, else the table.
    if (!m_.cuda_ceiling) {
      std::optional<CudaVersion> from_cuda;
      if (cuda_ &&
          (ev_.cuda_ok || ev_.cuda_hidden_by_env ||
           cuda_->rc("cuInit") == detail::kCudaErrorNoDevice) &&
          cuda_->cuda_version) {
        from_cuda = CudaVersion::from_driver_api(*cuda_->cuda_version);
      }
      std::optional<CudaVersion> from_nvml;
      if (nvml_ok_ && nvml_->cuda_version)
        from_nvml = CudaVersion::from_driver_api(*nvml_->cuda_version);
      if (from_cuda && ev_.mismatch.empty()) {
        m_.cuda_ceiling = Detected<CudaVersion>{*from_cuda, Method::Libcuda, "cuDriverGetVersion",
                                                std::to_string(*cuda_->cuda_version)};
      } else if (from_nvml) {
        m_.cuda_ceiling =
            Detected<CudaVersion>{*from_nvml, Method::Nvml, "nvmlSystemGetCudaDriverVersion_v2",
                                  std::to_string(*nvml_->cuda_version)};
      } else {
        set_ceiling_from_table();
      }
    } else if (m_.driver) {
      // Overridden: still say what the machine would have given.
      if (auto c = cuda_ceiling_for_driver(m_.driver->value); c && *c != m_.cuda_ceiling->value) {
        warn(fmt::format("CUDA ceiling {} from {} replaces the detected driver's {}",
                         m_.cuda_ceiling->value.to_string(), m_.cuda_ceiling->source,
                         c->to_string()));
      }
    }

    // Architectures every build must support.
    if (m_.gpu_archs && !m_.gpus.empty()) {
      std::vector<ComputeCapability> detected;
      for (const auto& g : m_.gpus) {
        if (g.compute_capability) detected.push_back(*g.compute_capability);
      }
      std::sort(detected.begin(), detected.end());
      detected.erase(std::unique(detected.begin(), detected.end()), detected.end());
      if (!detected.empty() && detected != m_.gpu_archs->value) {
        warn(fmt::format("GPU archs {} from {} replace the detected {}",
                         archs_text(m_.gpu_archs->value), m_.gpu_archs->source,
                         archs_text(detected)));
      }
    }
    if (!m_.gpu_archs && !m_.gpus.empty()) {
      std::vector<ComputeCapability> archs;
      for (const auto& g : m_.gpus) {
        if (g.compute_capability) {
          archs.push_back(*g.compute_capability);
        } else {
          warn(
              fmt::format("the compute capability of GPU {} ({}) is unknown; pass --gpu-arch sm_XY",
                          g.index, g.name.empty() ? "unnamed" : g.name));
        }
      }
      std::sort(archs.begin(), archs.end());
      archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
      if (!archs.empty()) {
        Method method = m_.gpus.front().method;
        m_.gpu_archs =
            Detected<std::vector<ComputeCapability>>{archs, method, "every GPU", archs_text(archs)};
      }
    }

    // One side present without the other.
    bool nvml_missing = nvml_ && !nvml_->loaded && nvml_->child.end == ChildResult::End::Exited;
    bool cuda_missing = cuda_ && !cuda_->loaded && cuda_->child.end == ChildResult::End::Exited;
    if (nvml_ok_ && (cuda_missing || !ev_.stub_path.empty())) {
      if (!ev_.stub_path.empty()) {
        warn(fmt::format(
            "libcuda.so.1 resolves to the CUDA toolkit's stub ({}) although a driver is "
            "installed: CUDA programs such as torch will fail; remove its directory from "
            "LD_LIBRARY_PATH",
            ev_.stub_path));
      } else {
        warn(
            "NVML works but libcuda.so.1 was not found: CUDA programs such as torch will not find "
            "the "
            "driver; install the driver's CUDA library (libcuda, e.g. libnvidia-compute or "
            "nvidia-driver-cuda)");
      }
    }
    if (ev_.cuda_ok && nvml_missing) {
      warn(
          "libcuda works but libnvidia-ml.so.1 (NVML) was not found: GPU names and architectures "
          "come from libcuda; nvidia-smi will not work");
    }
    if (!m_.gpus.empty() && m_.gpus.size() < proc_gpus_) {
      warn(fmt::format("the kernel module knows {} but only {} visible here",
                       plural(proc_gpus_, "GPU"), plural(m_.gpus.size(), "GPU is")));
    }
  }

  void compare_nvml_and_cuda() {
    if (!nvml_ok_ || !ev_.cuda_ok) return;
    const LibReport& n = *nvml_;
    const LibReport& c = *cuda_;
    if (n.cuda_version && c.cuda_version && *n.cuda_version != *c.cuda_version) {
      auto nv = CudaVersion::from_driver_api(*n.cuda_version);
      auto cv = CudaVersion::from_driver_api(*c.cuda_version);
      if (nv && cv) {
        warn(
            fmt::format("NVML and libcuda disagree on the CUDA version: NVML {}, libcuda {} (the "
                        "ceiling is libcuda's, which counts a forward-compatibility package)",
                        nv->to_string(), cv->to_string()));
      }
    }
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    if (n.gpus.size() != c.gpus.size()) {
      if (cvd != nullptr) {
        warn(fmt::format("CUDA_VISIBLE_DEVICES='{}' shows CUDA {} of the {} NVML lists", cvd,
                         plural(c.gpus.size(), "GPU"), n.gpus.size()));
      } else {
        warn(fmt::format("NVML and libcuda disagree on the number of GPUs: NVML {}, libcuda {}",
                         n.gpus.size(), c.gpus.size()));
      }
      return;
    }
    // The same GPUs, matched by UUID where both have one, else by sorted capability.
    std::vector<std::string> diffs;
    for (const auto& cg : c.gpus) {
      for (const auto& ng : n.gpus) {
        if (cg.uuid.empty() || cg.uuid != ng.uuid) continue;
        if (cc_of(cg) != cc_of(ng)) {
          diffs.push_back(fmt::format("{}: NVML {}, libcuda {}", ng.uuid,
                                      cc_of(ng) ? cc_of(ng)->to_string() : "unknown",
                                      cc_of(cg) ? cc_of(cg)->to_string() : "unknown"));
        }
      }
    }
    auto sorted_ccs = [](const LibReport& r) {
      std::vector<std::string> v;
      for (const auto& g : r.gpus)
        v.push_back(cc_of(g) ? cc_of(g)->to_string() : "unknown");
      std::sort(v.begin(), v.end());
      return v;
    };
    if (diffs.empty() && sorted_ccs(n) != sorted_ccs(c)) {
      diffs.push_back(
          fmt::format("NVML {}, libcuda {}", join(sorted_ccs(n), ", "), join(sorted_ccs(c), ", ")));
    }
    if (!diffs.empty()) {
      warn(
          fmt::format("NVML and libcuda disagree on the GPU architectures: {}", join(diffs, "; ")));
    }
  }

  const DetectOptions& o_;
  MachineInfo& m_;
  std::optional<LibReport> nvml_;
  std::optional<LibReport> cuda_;
  bool nvml_ok_ = false;
  bool cuda_init_failed_ = false;
  bool wsl_libcuda_ = false;
  std::optional<DriverVersion> sysfs_;
  std::optional<DriverVersion> procfs_;
  std::size_t proc_gpus_ = 0;
  SmiState smi_;
  detail::Evidence ev_;  // what decide() reads besides m_
};

}  // namespace

MachineInfo detect_machine(const DetectOptions& options) {
  MachineInfo info;
  Detector(options, info).run();
  return info;
}

}  // namespace gpulock::probe

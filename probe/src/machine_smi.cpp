// Step 5 of machine detection (machine_detector.h): nvidia-smi, run with a timeout when the
// steps before it left the driver version or the GPU list unknown, and what its output says.
#include <fmt/format.h>

#include "machine_detector.h"

namespace gpulock::probe::detail {
namespace {

// One line of a program's output for a message: control characters replaced, cut at `max`.
std::string clip(std::string_view line, std::size_t max) {
  std::string out;
  for (char c : line.substr(0, max))
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (line.size() > max) out += "...";
  return out;
}

}  // namespace

using sys::ChildResult;

// ----- 5. nvidia-smi, when the steps above left something unknown -----
void Detector::run_nvidia_smi_if_needed() {
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
      step("nvidia-smi", StepOutcome::Failed, fmt::format("{}: {}", *path, result.error().message));
      return;
    }
    text = result->out + result->err;
  }
  classify_smi(*path, *result, with_cc);
}

core::Result<sys::ChildResult> Detector::run_smi(const std::string& path, bool with_cc) {
  std::string query = with_cc ? "--query-gpu=driver_version,name,compute_cap,uuid"
                              : "--query-gpu=driver_version,name,uuid";
  auto child = sys::ChildProcess::spawn(path, {"nvidia-smi", query, "--format=csv,noheader"});
  if (!child) return std::unexpected(child.error());
  auto results = sys::wait_all({&*child}, o_.timeout);
  return std::move(results.front());
}

void Detector::classify_smi(const std::string& path, const sys::ChildResult& r, bool with_cc) {
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
    step("nvidia-smi", StepOutcome::Failed,
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

}  // namespace gpulock::probe::detail

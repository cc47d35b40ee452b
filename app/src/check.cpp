// `gpulock check`: which layers run, the lock, and the parts shared by the layers.
#include "gpulock/app/check.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <sys/utsname.h>

#include "gpulock/app/machine.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/paths.h"

#include "check_internal.h"

namespace gpulock::app {
namespace fs = std::filesystem;

std::string_view check_layer_name(CheckLayer layer) noexcept {
  switch (layer) {
    case CheckLayer::Inputs:
      return "inputs";
    case CheckLayer::Env:
      return "env";
    case CheckLayer::Machine:
      return "machine";
    case CheckLayer::Index:
      return "index";
  }
  return "inputs";
}

std::string_view drift_severity_name(DriftSeverity severity) noexcept {
  switch (severity) {
    case DriftSeverity::Error:
      return "error";
    case DriftSeverity::Warning:
      return "warning";
    case DriftSeverity::Info:
      return "info";
  }
  return "error";
}

bool CheckResult::drift_found() const noexcept {
  return count(DriftSeverity::Error) > 0;
}

std::size_t CheckResult::count(DriftSeverity severity) const noexcept {
  return static_cast<std::size_t>(std::count_if(
      drifts.begin(), drifts.end(), [&](const Drift& d) { return d.severity == severity; }));
}

const LayerResult& CheckResult::layer(CheckLayer which) const {
  return layers.at(static_cast<std::size_t>(which));
}

namespace check_detail {

Drift make_drift(CheckLayer layer, std::string kind, std::string subject, std::string message,
                 std::size_t line) {
  Drift d;
  d.layer = layer;
  d.kind = std::move(kind);
  d.subject = std::move(subject);
  d.message = std::move(message);
  d.line = line;
  return d;
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

const lock::GpulockInputs* recorded_inputs(const lock::Lock& lock) {
  return lock.gpulock && lock.gpulock->inputs ? &*lock.gpulock->inputs : nullptr;
}

const lock::GpulockGpu* recorded_gpu(const lock::Lock& lock) {
  return lock.gpulock && lock.gpulock->gpu ? &*lock.gpulock->gpu : nullptr;
}

std::string target_machine(const lock::Lock& lock) {
  if (lock.gpulock && lock.gpulock->target) {
    const auto& platform = lock.gpulock->target->platform;
    if (platform.ends_with("aarch64")) return "aarch64";
    if (platform.ends_with("x86_64")) return "x86_64";
  }
  struct utsname u {};
  if (::uname(&u) == 0) return u.machine;
  return "x86_64";
}

std::optional<core::Environment> target_environment(const lock::Lock& lock) {
  if (!lock.gpulock || !lock.gpulock->target || lock.gpulock->target->python.empty()) {
    return std::nullopt;
  }
  return core::Environment::linux_cpython(lock.gpulock->target->python, target_machine(lock));
}

}  // namespace check_detail

core::Result<CheckResult> check(const CheckRequest& request) {
  using namespace check_detail;
  auto lock_file = lock::read_lock_file(request.lock);
  if (!lock_file) return std::unexpected(lock_file.error());

  CheckResult result;
  result.lock_path = request.lock;
  result.lock_command = lock_file->lock.command;
  result.strict = request.strict;
  for (const auto& w : lock_file->warnings)
    result.warnings.push_back(w.to_string());
  for (auto layer : {CheckLayer::Inputs, CheckLayer::Env, CheckLayer::Machine, CheckLayer::Index}) {
    result.layers.push_back(LayerResult{layer, false, {}, {}});
  }

  // Which layers: the ones asked for, else the offline defaults.
  const bool any = request.inputs || request.env || request.machine || request.index;
  const char* venv = std::getenv("VIRTUAL_ENV");
  const bool venv_active = venv != nullptr && *venv != '\0';
  const bool run_inputs = any ? request.inputs : true;
  std::error_code venv_ec;
  const bool dot_venv = fs::exists(fs::path(".venv") / "bin" / "python", venv_ec);
  const bool run_env = any ? request.env : (!request.python.empty() || venv_active || dot_venv);
  const bool run_machine = any ? request.machine : true;
  const bool run_index = request.index;

  Context ctx{request, lock_file->lock, sys::absolute_path(request.lock).parent_path(),
              request.lock};
  auto& layers = result.layers;
  std::vector<Drift>& drifts = result.drifts;

  if (run_inputs) {
    auto s = check_inputs(ctx, layers[0], drifts);
    if (!s) return std::unexpected(s.error());
  } else {
    layers[0].summary = "not checked (--inputs checks them)";
  }

  std::optional<probe::MachineInfo> machine;
  if (run_env) {
    auto m = check_env(ctx, layers[1], drifts);
    if (!m) return std::unexpected(m.error());
    machine = std::move(*m);
  } else {
    layers[1].summary = any ? "not checked (--env checks an environment)"
                            : "not checked (no --python, no active virtualenv, no ./.venv)";
  }

  if (run_machine) {
    if (!machine) {
      auto m = probe_machine(request.machine_flags);
      if (!m) return std::unexpected(m.error());
      machine = std::move(*m);
    }
    check_machine(ctx, *machine, layers[2], drifts);
  } else {
    layers[2].summary = "not checked (--machine checks this machine)";
  }

  if (run_index) {
    auto s = check_index(ctx, layers[3], drifts);
    if (!s) return std::unexpected(s.error());
  } else {
    layers[3].summary = "not checked (--index checks the indexes, over the network)";
  }

  if (request.strict) {
    for (auto& d : drifts) {
      if (d.severity == DriftSeverity::Warning) d.severity = DriftSeverity::Error;
    }
  }
  // Layer order; within a layer, the order found.
  std::stable_sort(drifts.begin(), drifts.end(), [](const Drift& a, const Drift& b) {
    return static_cast<int>(a.layer) < static_cast<int>(b.layer);
  });
  return result;
}

}  // namespace gpulock::app

#pragma once
// Shared between the layers of `gpulock check` (check*.cpp); not a public header.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/app/check.h"
#include "gpulock/core/environment.h"
#include "gpulock/lock/lock.h"
#include "gpulock/probe/environment.h"
#include "gpulock/probe/machine.h"

namespace gpulock::app::check_detail {

struct Context {
  const CheckRequest& request;
  const lock::Lock& lock;
  std::filesystem::path lock_dir;  // absolute; input paths are relative to it
  std::string lock_path;           // as given
};

// A drift of `layer` (severity Error unless changed by the caller).
Drift make_drift(CheckLayer layer, std::string kind, std::string subject, std::string message,
                 std::size_t line = 0);

// The first 12 hex digits of a digest, as messages show it.
inline std::string short_sha(std::string_view hex) {
  return std::string(hex.substr(0, 12));
}

// "2 input files" / "1 input file".
std::string plural(std::size_t n, std::string_view one, std::string_view many);

// The lock's `[tool.gpulock]` parts, or null.
const lock::GpulockInputs* recorded_inputs(const lock::Lock& lock);
const lock::GpulockGpu* recorded_gpu(const lock::Lock& lock);

// Marker values for the lock's target (`[tool.gpulock.target]`), nullopt when it has none.
std::optional<core::Environment> target_environment(const lock::Lock& lock);

// "x86_64" or "aarch64" for the lock's target platform (the host's when unknown).
std::string target_machine(const lock::Lock& lock);

// The layers. Each fills `layer` and appends to `drifts`.
core::Status check_inputs(const Context& ctx, LayerResult& layer, std::vector<Drift>& drifts);

// User-level settings (issue 41 item 2, check_settings.cpp): a variable or user-level file that
// supplied a locked file and differs now (error), one present now that would be asked before
// the index a locked file came from (warning). Errors: the configuration does not load.
core::Status compare_user_settings(const Context& ctx, const lock::GpulockInputs& rec,
                                   std::vector<Drift>& drifts);
// Returns the machine the environment probe detected (reused by the machine layer).
core::Result<probe::MachineInfo> check_env(const Context& ctx, LayerResult& layer,
                                           std::vector<Drift>& drifts);
void check_machine(const Context& ctx, const probe::MachineInfo& machine, LayerResult& layer,
                   std::vector<Drift>& drifts);
core::Status check_index(const Context& ctx, LayerResult& layer, std::vector<Drift>& drifts);

}  // namespace gpulock::app::check_detail

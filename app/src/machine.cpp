#include "gpulock/app/machine.h"

namespace gpulock::app {

core::Result<probe::MachineInfo> probe_machine(const MachineRequest& request) {
  auto options = probe::detect_options_from_env(request);
  if (!options) return std::unexpected(options.error());
  return probe::detect_machine(*options);
}

}  // namespace gpulock::app

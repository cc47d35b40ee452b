#include "gpulock/core/target.h"

#include <fmt/format.h>

namespace gpulock::core {

std::string Target::environment_marker() const {
  return fmt::format(
      "python_version == \"{}\" and sys_platform == \"{}\" and platform_machine == \"{}\"",
      python_version, environment.sys_platform, environment.platform_machine);
}

}  // namespace gpulock::core

#include "gpulock/app/version.h"

namespace gpulock::app {

std::string_view version() noexcept {
  return GPULOCK_VERSION;
}

}  // namespace gpulock::app

#include "gpulock/sys/paths.h"

#include <system_error>

namespace gpulock::sys {

std::filesystem::path absolute_path(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path out = std::filesystem::absolute(p, ec);
  return ec ? p : out;
}

}  // namespace gpulock::sys

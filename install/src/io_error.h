#pragma once
// The Io error of a failed file-system call, for the install module (internal header):
// "WHAT: REASON" with the path as the error's place.

#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "gpulock/core/error.h"

namespace gpulock::install::detail {

/// From an errno value.
inline core::Error io_error(std::string_view what, const std::filesystem::path& path, int err) {
  return core::make_error(core::ErrorCode::Io, fmt::format("{}: {}", what, std::strerror(err)),
                          path.string());
}

/// From a std::filesystem error code.
inline core::Error io_error(std::string_view what, const std::filesystem::path& path,
                            const std::error_code& ec) {
  return core::make_error(core::ErrorCode::Io, fmt::format("{}: {}", what, ec.message()),
                          path.string());
}

}  // namespace gpulock::install::detail

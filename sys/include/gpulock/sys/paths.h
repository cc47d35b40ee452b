#pragma once
/// @file
/// Paths without exceptions: std::filesystem is used through its error_code overloads only, so a
/// permission problem is an error value, never a filesystem_error (an "internal error", exit 70).

#include <filesystem>

namespace gpulock::sys {

/// `p` made absolute against the current directory; `p` itself when that cannot be read.
[[nodiscard]] std::filesystem::path absolute_path(const std::filesystem::path& p);

}  // namespace gpulock::sys

#pragma once
/// @file
/// gpulock's own version, as `gpulock --version` prints it and `created-by` records it.

#include <string_view>

namespace gpulock::app {

/// "0.1.0".
[[nodiscard]] std::string_view version() noexcept;

}  // namespace gpulock::app

#pragma once
/// @file
/// Project names: PEP 508 §Names validity and PEP 503 normalization.

#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::core {

/// True if `name` is a valid project name: `^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$`,
/// case-insensitively (PEP 508 §Names).
[[nodiscard]] bool is_valid_name(std::string_view name) noexcept;

/// PEP 503 normalization: runs of `-`, `_`, `.` become one `-`, lowercase.
/// Does not validate; `normalize_name("Foo__Bar.baz") == "foo-bar-baz"`.
[[nodiscard]] std::string normalize_name(std::string_view name);

/// Validates, then normalizes. Errors: InvalidName (column of the first bad character).
[[nodiscard]] Result<std::string> parse_name(std::string_view name);

/// PEP 685 extra-name normalization (same rule as PEP 503 names).
[[nodiscard]] inline std::string normalize_extra(std::string_view extra) {
  return normalize_name(extra);
}

}  // namespace gpulock::core

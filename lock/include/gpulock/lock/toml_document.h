#pragma once
/// @file
/// Any TOML document as generic values (toml_value.h), for TOML inputs other than locks:
/// `pyproject.toml` for `gpulock resolve --project`. toml++ stays inside lock/.

#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/lock/toml_value.h"

namespace gpulock::lock {

/// Parses TOML 1.0 text. `where` names it in errors. Errors: InvalidInput with `where`, `line`
/// and `column` of the syntax error.
[[nodiscard]] core::Result<TomlTable> parse_toml_document(std::string_view text,
                                                          std::string_view where);

}  // namespace gpulock::lock

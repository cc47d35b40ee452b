#pragma once
/// @file
/// Environment variables, read one way everywhere: through an injectable lookup (std::getenv in
/// production, a fake in tests); an empty value counts as unset (DESIGN.md §Commands); a value
/// gpulock cannot use is an error naming the variable (Usage, exit 2), never silently ignored.

#include <cstdint>
#include <optional>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::sys {

/// Reads environment variables; `std::getenv` in production, a fake in tests.
using EnvLookup = const char* (*)(const char* name);

/// `name`'s value through `env` (std::getenv when null); nullopt when unset or empty.
[[nodiscard]] std::optional<std::string_view> env_value(const char* name, EnvLookup env = nullptr);

/// The error for a variable whose value cannot be used: Usage,
/// "invalid value for NAME: 'VALUE' (expected EXPECTED)".
[[nodiscard]] core::Error invalid_env(std::string_view name, std::string_view value,
                                      std::string_view expected);

/// A whole decimal number from `min` to `max`; nullopt when unset. Errors: invalid_env, with
/// `expected` describing the value ("milliseconds, 1-600000").
[[nodiscard]] core::Result<std::optional<std::int64_t>> env_integer(const char* name,
                                                                    std::int64_t min,
                                                                    std::int64_t max,
                                                                    std::string_view expected,
                                                                    EnvLookup env = nullptr);

}  // namespace gpulock::sys

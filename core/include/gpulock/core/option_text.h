#pragma once
/// @file
/// What the parsers of option values share (app's resolve_options.cpp, catalog's options.cpp):
/// their error and a digit test. Pure.

#include <expected>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::core {

/// The error of a value an option's parser refuses: Usage, "invalid --FLAG 'TEXT': expected
/// EXPECTED" (`flag` without its dashes; the text quoted by quote_for_message).
[[nodiscard]] std::unexpected<Error> invalid_option(std::string_view flag, std::string_view text,
                                                    std::string_view expected);

/// Not empty, and ASCII digits only.
[[nodiscard]] bool all_digits(std::string_view s) noexcept;

}  // namespace gpulock::core

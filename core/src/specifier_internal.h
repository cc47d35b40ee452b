#pragma once
// Internal: the SPECIFIER token of packaging's requirement tokenizer (core/src only).

#include <cstddef>
#include <optional>
#include <string_view>

#include "gpulock/core/specifier.h"

namespace gpulock::core::detail {

/// packaging's `Specifier._operator_regex_str + _version_regex_str` matched (unanchored) at
/// s[pos]: an operator, optional whitespace, and the longest operand that operator admits.
/// Returns the position after the match, or npos when nothing matches (also when a number in
/// it is above 2^64-1, which then fails later in SpecifierSet::parse with a precise error).
std::size_t match_specifier_token(std::string_view s, std::size_t pos);

/// Specifier::parse without building an error message (marker evaluation tries
/// `Specifier(op + value)` for every comparison, and most are not specifiers).
std::optional<Specifier> try_parse_specifier(std::string_view text);

}  // namespace gpulock::core::detail

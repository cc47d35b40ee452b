#pragma once
/// @file
/// Small ASCII text helpers shared by every module (parsers of headers, pages, files and
/// environment values). Byte-wise and locale-free: only ASCII letters fold, only the given
/// bytes trim.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::core {

/// The ASCII whitespace of C's isspace in the "C" locale: space, \t, \n, \v, \f, \r.
inline constexpr std::string_view kAsciiSpace = " \t\n\v\f\r";

/// `c` with A-Z mapped to a-z; every other byte unchanged.
[[nodiscard]] constexpr char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// Equal ignoring ASCII case ("Content-Type" and "content-type"); other bytes compare exactly.
[[nodiscard]] bool iequals(std::string_view a, std::string_view b) noexcept;
/// Levenshtein distance (insertions, deletions, substitutions of bytes): did-you-mean
/// suggestions for commands and configuration keys.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// `s` without leading bytes found in `chars`.
[[nodiscard]] std::string_view trim_left(std::string_view s,
                                         std::string_view chars = kAsciiSpace) noexcept;
/// `s` without trailing bytes found in `chars`.
[[nodiscard]] std::string_view trim_right(std::string_view s,
                                          std::string_view chars = kAsciiSpace) noexcept;
/// `s` without leading and trailing bytes found in `chars` (ASCII whitespace by default).
[[nodiscard]] std::string_view trim(std::string_view s,
                                    std::string_view chars = kAsciiSpace) noexcept;

/// `s` without trailing slashes: "https://x/simple//" -> "https://x/simple"; "/" -> "".
[[nodiscard]] std::string_view trim_slash(std::string_view s) noexcept;

/// The words of `line`, separated by runs of spaces and tabs (the row form of gpulock's data
/// tables): "a  b\tc" -> {"a", "b", "c"}.
[[nodiscard]] std::vector<std::string_view> words(std::string_view line);

/// The non-empty items of a comma-separated list (a data table's SOURCES column): "a,,b" ->
/// {"a", "b"}.
[[nodiscard]] std::vector<std::string> comma_items(std::string_view text);

/// One row of a data table: its 1-based line number, its text without the `#` comment, and the
/// words of that text.
struct TableRow {
  std::size_t line = 0;
  std::string_view text;
  std::vector<std::string_view> words;
};

/// The rows of a data table's `text` (gpu/data/*.txt): every line with a word once its `#`
/// comment is cut; blank and comment-only lines are skipped.
[[nodiscard]] std::vector<TableRow> table_rows(std::string_view text);

/// Appends the code point `cp` (at most U+10FFFF) as UTF-8. Surrogates are encoded like any
/// code point; a caller that must not write them replaces them first.
void append_utf8(std::string& out, std::uint32_t cp);

/// Length of the valid UTF-8 sequence starting at s[i] (its code point in `cp`), or 0 when it
/// is not valid: a stray or truncated byte, an overlong form, a surrogate, or a code point
/// above U+10FFFF.
[[nodiscard]] std::size_t utf8_sequence(std::string_view s, std::size_t i,
                                        std::uint32_t& cp) noexcept;

}  // namespace gpulock::core

#pragma once
// Small text helpers shared by the PEP 440/508 parsers in core/src (internal header).
//
// packaging matches with Python regular expressions on `str`, so `\s` and str.strip() mean
// Python's Unicode whitespace (str.isspace()): besides ASCII space, \t\n\v\f\r that is
// U+001C..U+001F, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and
// U+3000. gpulock works on UTF-8 bytes and recognizes exactly those code points.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpulock/core/text.h"

namespace gpulock::core::detail {

inline bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
inline bool is_alpha(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool is_alnum(char c) noexcept {
  return is_digit(c) || is_alpha(c);
}
inline char to_lower(char c) noexcept {
  return ascii_lower(c);
}
inline std::uint8_t byte_at(std::string_view s, std::size_t i) noexcept {
  return static_cast<std::uint8_t>(s[i]);
}

/// Python's `\w` approximated on bytes: ASCII letters, digits and '_', and every non-ASCII byte
/// (most non-ASCII code points in real input are letters). Used for `\b` tests.
inline bool is_word_byte(std::uint8_t b) noexcept {
  return b >= 0x80 || b == '_' || is_alnum(static_cast<char>(b));
}

/// Is there a regex word boundary (`\b`) between s[i-1] and s[i]?
inline bool word_boundary(std::string_view s, std::size_t i) noexcept {
  bool before = i > 0 && is_word_byte(byte_at(s, i - 1));
  bool after = i < s.size() && is_word_byte(byte_at(s, i));
  return before != after;
}

/// Byte length of the Python-whitespace character starting at s[i], 0 if there is none.
inline std::size_t py_space_at(std::string_view s, std::size_t i) noexcept {
  if (i >= s.size()) return 0;
  std::uint8_t b = byte_at(s, i);
  if ((b >= 0x09 && b <= 0x0d) || (b >= 0x1c && b <= 0x20)) return 1;
  if (b == 0xc2 && i + 1 < s.size()) {
    std::uint8_t c = byte_at(s, i + 1);
    return (c == 0x85 || c == 0xa0) ? 2 : 0;
  }
  if (i + 2 >= s.size()) return 0;
  std::uint8_t c = byte_at(s, i + 1);
  std::uint8_t d = byte_at(s, i + 2);
  if (b == 0xe1) return (c == 0x9a && d == 0x80) ? 3 : 0;
  if (b == 0xe2) {
    if (c == 0x80 && ((d >= 0x80 && d <= 0x8a) || d == 0xa8 || d == 0xa9 || d == 0xaf)) return 3;
    if (c == 0x81 && d == 0x9f) return 3;
    return 0;
  }
  if (b == 0xe3) return (c == 0x80 && d == 0x80) ? 3 : 0;
  return 0;
}

/// Byte length of the Python-whitespace character that ends just before s[end], 0 if none.
inline std::size_t py_space_before(std::string_view s, std::size_t end) noexcept {
  for (std::size_t len = 1; len <= 3 && len <= end; ++len) {
    if (py_space_at(s, end - len) == len) return len;
  }
  return 0;
}

/// First position at or after `i` that is not Python whitespace.
inline std::size_t skip_py_space(std::string_view s, std::size_t i) noexcept {
  while (std::size_t n = py_space_at(s, i))
    i += n;
  return i;
}

/// End of `s` with trailing Python whitespace removed (never below `begin`).
inline std::size_t rstrip_py_space(std::string_view s, std::size_t begin,
                                   std::size_t end) noexcept {
  while (end > begin) {
    std::size_t n = py_space_before(s, end);
    if (n == 0 || end - n < begin) break;
    end -= n;
  }
  return end;
}

/// Position after the run of [ \t] at `i` (packaging's tokenizer WS rule).
inline std::size_t skip_ws(std::string_view s, std::size_t i) noexcept {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
    ++i;
  return i;
}

/// Case-insensitive (ASCII) test that `word` (lowercase) occurs at s[i].
inline bool starts_with_nocase(std::string_view s, std::size_t i, std::string_view word) noexcept {
  if (i > s.size() || s.size() - i < word.size()) return false;
  for (std::size_t k = 0; k < word.size(); ++k) {
    if (to_lower(s[i + k]) != word[k]) return false;
  }
  return true;
}

/// Decimal digits -> uint64; nullopt on overflow. `digits` must be non-empty ASCII digits.
inline std::optional<std::uint64_t> parse_u64(std::string_view digits) noexcept {
  std::uint64_t v = 0;
  for (char c : digits) {
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

inline void append_u64(std::string& out, std::uint64_t v) {
  char buf[24];
  std::size_t n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0)
    out.push_back(buf[--n]);
}

}  // namespace gpulock::core::detail

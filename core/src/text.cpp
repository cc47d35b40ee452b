#include "gpulock/core/text.h"

namespace gpulock::core {

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

std::string_view trim_left(std::string_view s, std::string_view chars) noexcept {
  std::size_t b = s.find_first_not_of(chars);
  return b == std::string_view::npos ? std::string_view() : s.substr(b);
}

std::string_view trim_right(std::string_view s, std::string_view chars) noexcept {
  std::size_t e = s.find_last_not_of(chars);
  return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}

std::string_view trim(std::string_view s, std::string_view chars) noexcept {
  return trim_right(trim_left(s, chars), chars);
}

std::string_view trim_slash(std::string_view s) noexcept {
  return trim_right(s, "/");
}

}  // namespace gpulock::core

#include "gpulock/core/name.h"

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "text_util.h"

namespace gpulock::core {
namespace {

using detail::is_alnum;

bool is_separator(char c) noexcept {
  return c == '-' || c == '_' || c == '.';
}

// Index of the first character that makes `name` invalid, or npos.
std::size_t first_invalid(std::string_view name) noexcept {
  if (name.empty()) return 0;
  if (!is_alnum(name.front())) return 0;
  for (std::size_t i = 1; i < name.size(); ++i) {
    if (!is_alnum(name[i]) && !is_separator(name[i])) return i;
  }
  if (!is_alnum(name.back())) return name.size() - 1;
  return std::string_view::npos;
}

}  // namespace

bool is_valid_name(std::string_view name) noexcept {
  return first_invalid(name) == std::string_view::npos;
}

std::string normalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool in_separator = false;
  for (char c : name) {
    if (is_separator(c)) {
      if (!in_separator) out.push_back('-');
      in_separator = true;
    } else {
      out.push_back(ascii_lower(c));
      in_separator = false;
    }
  }
  return out;
}

Result<std::string> parse_name(std::string_view name) {
  std::size_t bad = first_invalid(name);
  if (bad != std::string_view::npos) {
    if (name.empty()) return fail(ErrorCode::InvalidName, "empty project name", 1);
    return fail(ErrorCode::InvalidName,
                fmt::format("invalid project name {}: unexpected character at position {}",
                            quote_for_message(name), bad + 1),
                bad + 1);
  }
  return normalize_name(name);
}

}  // namespace gpulock::core

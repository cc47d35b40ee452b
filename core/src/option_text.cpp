// What the parsers of option values share (option_text.h).

#include "gpulock/core/option_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpulock::core {

std::unexpected<Error> invalid_option(std::string_view flag, std::string_view text,
                                      std::string_view expected) {
  return fail(ErrorCode::Usage,
              fmt::format("invalid --{} {}: expected {}", flag, quote_for_message(text), expected));
}

bool all_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace gpulock::core

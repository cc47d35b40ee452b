#pragma once
// UTF-8 for the writer's string escaping and the header comment (the codec is core/text.h).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpulock/core/text.h"

namespace gpulock::lock::detail {

using core::append_utf8;
using core::utf8_sequence;

/// `text` with every invalid UTF-8 byte replaced by U+FFFD and every control character
/// (including DEL) by a space: safe inside a TOML comment.
inline std::string comment_safe(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(text, i, cp);
    if (len == 0) {
      append_utf8(out, 0xFFFD);
      ++i;
    } else if (cp < 0x20 || cp == 0x7F) {
      out += ' ';
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace gpulock::lock::detail

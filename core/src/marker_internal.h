#pragma once
// Internal: marker parsing inside a larger text (core/src only).

#include <cstddef>
#include <string_view>

#include "gpulock/core/marker.h"

namespace gpulock::core {

struct MarkerAccess {
  /// packaging's _parse_marker at text[pos] (no end-of-input check): a marker and the [ \t]*
  /// after it. On success `pos` is the position after them. Errors quote the whole `text` and
  /// carry columns relative to it.
  static Result<Marker> parse_at(std::string_view text, std::size_t& pos);
};

}  // namespace gpulock::core

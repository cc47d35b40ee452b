#pragma once
// The PEP 503 HTML page stream's bytes held between feeds (for tests: a stream keeps only
// the unfinished token at the end of what it was fed, never the page).

#include <cstddef>

#include "page_stream.h"

namespace gpulock::index::detail {

struct HeldBytes {
  std::size_t unread = 0;    // the bytes fed and not read yet (an unfinished token)
  std::size_t capacity = 0;  // the memory held for them
};

/// `stream` must come from html_page_stream().
[[nodiscard]] HeldBytes html_stream_held(const PageStream& stream) noexcept;

}  // namespace gpulock::index::detail

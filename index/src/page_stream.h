#pragma once
// A project page parsed as its bytes arrive (issue 46 item 4): the transport hands each chunk of
// a response body to the stream, which keeps only what it has not read yet (an unfinished file
// object or tag), so a huge page is never held whole and costs no fresh memory in proportion to
// its size beyond the records it keeps.
//
// Feeding a page in any chunking gives exactly what feeding it in one piece gives (the records,
// the warnings, the error with its line); parse_json_page and parse_html_page are a stream fed
// once. The tests hold both to that.

#include <cstdint>
#include <memory>
#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/index/page.h"
#include "gpulock/index/parse.h"

namespace gpulock::index::detail {

class PageStream {
 public:
  virtual ~PageStream() = default;
  /// The page's next bytes. A page already known to be invalid still takes the rest (an error
  /// that whole-page reading reports first may come later, as a NUL byte in HTML does).
  virtual void feed(std::string_view bytes) = 0;
  /// The page's size when it is known before its bytes (a Content-Length, a file's size): room
  /// for its files is reserved at once. Only a hint: more or fewer bytes may come.
  virtual void expect(std::uint64_t bytes) = 0;
  /// After the last feed: the page, or the error reading it whole would give.
  virtual core::Result<ProjectPage> finish() = 0;
};

/// PEP 691 JSON (json_page.cpp) and PEP 503 HTML (html_page.cpp). `page_url` resolves relative
/// links and names the page in errors; `filter` as for parse_json_page.
[[nodiscard]] std::unique_ptr<PageStream> json_page_stream(std::string_view page_url,
                                                           const PageFilter& filter);
[[nodiscard]] std::unique_ptr<PageStream> html_page_stream(std::string_view page_url,
                                                           const PageFilter& filter);

}  // namespace gpulock::index::detail

// PEP 503 HTML project pages (index/parse.h parse_html_page). The first byte selects the filter
// (project or find-links, quiet drops); the rest is the page. Properties: page_checks.h, and the
// page read in pieces is the page read whole.
#include "page_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  auto filter = gpulock::fuzz::filter_for(data[0]);
  std::string_view html = gpulock::fuzz::as_text(data + 1, size - 1);
  auto page = gpulock::index::parse_html_page(html, "https://example.org/simple/demo/", filter);
  if (page) gpulock::fuzz::check_page(*page, filter);
  auto stream =
      gpulock::index::detail::html_page_stream("https://example.org/simple/demo/", filter);
  gpulock::fuzz::check_pieces(*stream, html, page);
  return 0;
}

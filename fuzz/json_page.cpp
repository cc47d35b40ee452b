// PEP 691 JSON project pages (index/parse.h parse_json_page, simdjson On-Demand), and the
// PEP 700 timestamps they carry. The first byte selects the filter; the rest is the page.
// Properties: page_checks.h; the page read in pieces is the page read whole; a timestamp that
// parses prints and parses back to the same instant.
#include "page_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  auto filter = gpulock::fuzz::filter_for(data[0]);
  std::string_view json = gpulock::fuzz::as_text(data + 1, size - 1);
  auto page = gpulock::index::parse_json_page(json, "https://example.org/simple/demo/", filter);
  if (page) gpulock::fuzz::check_page(*page, filter);
  auto stream =
      gpulock::index::detail::json_page_stream("https://example.org/simple/demo/", filter);
  gpulock::fuzz::check_pieces(*stream, json, page);
  if (auto t = gpulock::index::parse_timestamp(json)) {
    std::string text = gpulock::index::format_timestamp(*t);
    FUZZ_CHECK(gpulock::index::parse_timestamp(text) == t, fmt::format("'{}' -> '{}'", json, text));
  }
  return 0;
}

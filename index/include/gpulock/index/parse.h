#pragma once
/// @file
/// Project page parsers, usable without a client (benchmarks, tests, file:// trees).
/// Both fill a ProjectPage in one pass; file URLs are resolved against `page_url`.
/// Errors (IndexFormat) carry the page URL (redacted) and the 1-based line; JSON errors also
/// name the field path (`files[12].size`).

#include <string>
#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/index/page.h"

namespace gpulock::index {

/// What to keep from a page.
struct PageFilter {
  /// PEP 503 normalized project name: files of other projects are dropped (with a warning on
  /// project pages). Empty: keep every distribution file (find-links pages).
  std::string project;
  /// Find-links pages list all sorts of links: drop unparseable ones silently.
  bool quiet_drops = false;
};

/// PEP 691 JSON project page (API 1.0 to 1.4; major > 1 is an error, a higher minor a warning).
/// Parsed with simdjson On-Demand, each file object as it comes (index/src/page_stream.h: the
/// client reads a huge page this way as it arrives; here it is fed in one piece).
[[nodiscard]] core::Result<ProjectPage> parse_json_page(std::string_view json,
                                                        std::string_view page_url,
                                                        const PageFilter& filter = {});

/// PEP 503 HTML project page with the PEP 592/629/658/714 attributes, PyTorch's
/// `data-upload-time`, `<base href>`, HTML entities and `#algo=hex` fragments.
[[nodiscard]] core::Result<ProjectPage> parse_html_page(std::string_view html,
                                                        std::string_view page_url,
                                                        const PageFilter& filter = {});

/// Which parser a response's Content-Type selects.
enum class PageFormat { Json, Html, Unknown };
/// `application/vnd.pypi.simple.v1+json` -> Json; `application/vnd.pypi.simple.v1+html` and
/// `text/html` -> Html (parameters such as `; charset=utf-8` ignored, case-insensitive).
[[nodiscard]] PageFormat page_format_for_content_type(std::string_view content_type) noexcept;

/// The Accept header gpulock sends for project pages (PEP 691 §Content negotiation).
inline constexpr std::string_view kSimpleAccept =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01";

}  // namespace gpulock::index

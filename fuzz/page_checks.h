#pragma once
// Properties every parsed project page has, whichever parser produced it (html_page.cpp,
// json_page.cpp): each file is exactly one of wheel/sdist with its project name and version, of
// the filtered project when there is a filter, with lowercase hashes and an absolute URL without
// a fragment; upload times print and parse back.
#include <fmt/format.h>

#include "gpulock/index/page.h"
#include "gpulock/index/parse.h"

#include "fuzz_check.h"

namespace gpulock::fuzz {

/// The filter a harness input's first byte selects (the rest is the page).
inline index::PageFilter filter_for(std::uint8_t selector) {
  index::PageFilter filter;
  if (selector & 1) filter.project = "demo";
  filter.quiet_drops = (selector & 2) != 0;
  return filter;
}

inline bool is_lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '-')) return false;
  }
  return true;
}

inline void check_page(const index::ProjectPage& page, const index::PageFilter& filter) {
  for (const index::DistFile& f : page.files) {
    FUZZ_CHECK(f.is_wheel() != f.is_sdist(), fmt::format("file '{}'", f.filename()));
    FUZZ_CHECK(!filter.project.empty() ? f.project() == filter.project : true,
               fmt::format("file '{}' of project '{}' kept on a page for '{}'", f.filename(),
                           f.project(), filter.project));
    FUZZ_CHECK(f.url().find('#') == std::string_view::npos,
               fmt::format("url '{}' keeps a fragment", f.url()));
    for (const index::Hash& h : f.hashes()) {
      FUZZ_CHECK(is_lower_hex(h.algorithm) && is_lower_hex(h.hex),
                 fmt::format("hash '{}:{}' of '{}'", h.algorithm, h.hex, f.filename()));
    }
    if (f.upload_time()) {
      std::string text = index::format_timestamp(*f.upload_time());
      auto back = index::parse_timestamp(text);
      FUZZ_CHECK(back == f.upload_time(),
                 fmt::format("upload time {} prints as '{}'", *f.upload_time(), text));
    }
  }
}

}  // namespace gpulock::fuzz

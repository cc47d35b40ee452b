#pragma once
// Properties every parsed project page has, whichever parser produced it (html_page.cpp,
// json_page.cpp): each file is exactly one of wheel/sdist with its project name and version, of
// the filtered project when there is a filter, with lowercase hashes and an absolute URL without
// a fragment; upload times print and parse back.
#include <algorithm>

#include <fmt/format.h>

#include "gpulock/index/page.h"
#include "gpulock/index/parse.h"

#include "fuzz_check.h"
#include "page_stream.h"

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

/// A page read by `stream` in pieces whose sizes come from the page's own bytes (1 to 64):
/// exactly what reading it whole gave (page_stream.h's promise), the same files or the same error
/// on the same line.
inline void check_pieces(index::detail::PageStream& stream, std::string_view text,
                         const core::Result<index::ProjectPage>& whole) {
  std::size_t at = 0;
  for (std::size_t i = 0; at < text.size(); ++i) {
    const std::size_t n = std::min<std::size_t>(
        1 + static_cast<unsigned char>(text[(i * 7) % text.size()]) % 64, text.size() - at);
    stream.feed(text.substr(at, n));
    at += n;
  }
  auto pieces = stream.finish();
  FUZZ_CHECK(pieces.has_value() == whole.has_value(), "read in pieces, the page reads otherwise");
  if (!whole) {
    FUZZ_CHECK(
        pieces.error().message == whole.error().message &&
            pieces.error().line == whole.error().line,
        fmt::format("in pieces: '{}' (line {}), whole: '{}' (line {})", pieces.error().message,
                    pieces.error().line, whole.error().message, whole.error().line));
    return;
  }
  FUZZ_CHECK(pieces->files.size() == whole->files.size(), "read in pieces, other files");
  for (std::size_t i = 0; i < whole->files.size(); ++i) {
    const auto& a = pieces->files[i];
    const auto& b = whole->files[i];
    FUZZ_CHECK(a.filename() == b.filename() && a.url() == b.url() &&
                   a.requires_python() == b.requires_python() && a.hashes() == b.hashes() &&
                   a.yanked_reason() == b.yanked_reason() && a.size() == b.size() &&
                   a.upload_time() == b.upload_time(),
               fmt::format("read in pieces, file {} differs", i));
  }
  FUZZ_CHECK(pieces->warnings == whole->warnings, "read in pieces, other warnings");
}

}  // namespace gpulock::fuzz

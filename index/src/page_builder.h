#pragma once
// Shared by the HTML and JSON parsers: turns a filename into a wheel/sdist DistFile, filters
// by project and collects the warnings for dropped files (one warning per kind, not per file).

#include <string>
#include <string_view>

#include "gpulock/index/page.h"
#include "gpulock/index/parse.h"

namespace gpulock::index::detail {

class FileClassifier {
 public:
  explicit FileClassifier(const PageFilter& filter) : filter_(filter) {}

  /// Parses `file.filename` into file.wheel / file.sdist; false when the file must be dropped.
  bool accept(DistFile& file);
  /// Adds the collected warnings to the page.
  void finish(ProjectPage& page) const;

 private:
  const PageFilter& filter_;
  std::size_t unparseable_ = 0;
  std::string first_unparseable_;
  std::string first_unparseable_reason_;
  std::size_t other_project_ = 0;
  std::string first_other_project_;
};

/// `algo=hex` (a PEP 503 fragment or a `data-core-metadata` value) -> Hash, both lowercase.
bool parse_hash_pair(std::string_view text, Hash& out);

/// ASCII lowercase in place.
void ascii_lower(std::string& s) noexcept;

/// 1-based line of `offset` in `text`.
std::size_t line_of(std::string_view text, std::size_t offset) noexcept;

}  // namespace gpulock::index::detail

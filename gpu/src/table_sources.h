#pragma once
// The `source KEY WHERE...` rows of gpu's data tables (cudnn_files.txt, library_rules.txt) and
// the check that every key a fact row names has one (internal header).

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/error.h"
#include "gpulock/core/text.h"

namespace gpulock::gpu::detail {

class TableSources {
 public:
  /// Keeps `row` when it is a `source KEY WHERE...` row (KEY -> the rest of the line).
  static bool take(const core::TableRow& row,
                   std::vector<std::pair<std::string, std::string>>& into) {
    const auto& w = row.words;
    if (w[0] != "source" || w.size() < 3) return false;
    const auto* end = w.back().data() + w.back().size();
    into.emplace_back(std::string(w[1]), std::string(w[2].data(), end));
    return true;
  }
  /// The keys a fact row on `line` names (its comma-separated SOURCES word), to be checked.
  std::vector<std::string> use(std::size_t line, std::string_view word) {
    auto keys = core::comma_items(word);
    for (const auto& key : keys)
      used_.emplace_back(line, key);
    return keys;
  }
  /// InvalidInput "FILE line N: source KEY has no `source` row" for the first key without one.
  core::Status check(std::string_view file,
                     const std::vector<std::pair<std::string, std::string>>& sources) const {
    for (const auto& use : used_) {
      const std::string& key = use.second;
      bool defined = std::any_of(sources.begin(), sources.end(),
                                 [&](const auto& s) { return s.first == key; });
      if (!defined) {
        return core::fail(
            core::ErrorCode::InvalidInput,
            fmt::format("{} line {}: source {} has no `source` row", file, use.first, key));
      }
    }
    return {};
  }

 private:
  std::vector<std::pair<std::size_t, std::string>> used_;  // line, key
};

}  // namespace gpulock::gpu::detail

#include "gpulock/index/index_spec.h"

#include <fmt/format.h>

#include "gpulock/core/name.h"

namespace gpulock::index {
namespace {

// "A=B" with both sides non-empty; the split is at the first '='.
bool split_pair(std::string_view text, std::string_view& left, std::string_view& right) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) return false;
  left = text.substr(0, eq);
  right = text.substr(eq + 1);
  return true;
}

}  // namespace

core::Result<NamedIndex> NamedIndex::parse(std::string_view text) {
  std::string_view name, url;
  if (!split_pair(text, name, url)) {
    return core::fail(core::ErrorCode::Usage, fmt::format("invalid --index {}: expected NAME=URL",
                                                          core::quote_for_message(text)));
  }
  return NamedIndex{std::string(name), std::string(url)};
}

core::Result<IndexPin> IndexPin::parse(std::string_view text) {
  std::string_view glob, index;
  if (!split_pair(text, glob, index)) {
    return core::fail(
        core::ErrorCode::Usage,
        fmt::format("invalid --index-for {}: expected GLOB=NAME", core::quote_for_message(text)));
  }
  return IndexPin{core::normalize_name(glob), std::string(index)};
}

}  // namespace gpulock::index

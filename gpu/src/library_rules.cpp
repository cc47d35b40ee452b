// Rules between library families (library_rules.h): gpu/data/library_rules.txt, compiled in and
// parsed once, and the conflict rules it gives a candidate (issue 44 item 2). Pure.
#include "gpulock/gpu/library_rules.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "gpulock/core/specifier.h"
#include "gpulock/core/text.h"

#include "table_sources.h"

namespace gpulock::gpu {

core::Result<LibraryRules> LibraryRules::parse(std::string_view text) {
  LibraryRules out;
  detail::TableSources sources;
  for (const auto& table_row : core::table_rows(text)) {
    const std::size_t line_no = table_row.line;
    const auto& w = table_row.words;
    auto bad = [&](std::string_view why) {
      return core::fail(core::ErrorCode::InvalidInput,
                        fmt::format("library_rules.txt line {}: {}", line_no, why));
    };
    if (sources.take(table_row, out.sources)) continue;
    if (w[0] != "links" || w.size() != 7) {
      return bad("expected `links PACKAGE FROM CUDA NEEDS LIBRARY SOURCES` or `source KEY WHERE`");
    }
    Link link;
    link.package = std::string(w[1]);
    auto from = core::Version::parse(w[2]);
    if (!from) return bad(fmt::format("FROM: {}", from.error().message));
    link.from = std::move(*from);
    auto cuda = core::Version::parse(w[3]);
    if (!cuda || cuda->release().size() != 2) return bad("CUDA: expected MAJOR.MINOR");
    link.cuda = std::string(w[3]);
    link.needs = std::string(w[4]);
    link.library = std::string(w[5]);
    link.sources = sources.use(line_no, w[6]);
    out.links.push_back(std::move(link));
  }
  if (auto checked = sources.check("library_rules.txt", out.sources); !checked)
    return std::unexpected(checked.error());
  return out;
}

const LibraryRules& library_rules() {
  static const LibraryRules kRules = [] {
    auto parsed = LibraryRules::parse(library_rules_text());
    // The compiled-in text is part of the build; the unit tests parse it.
    if (!parsed) std::abort();
    return std::move(*parsed);
  }();
  return kRules;
}

std::vector<resolver::Conflict> library_conflicts(std::string_view package,
                                                  const core::Version& version) {
  std::vector<resolver::Conflict> out;
  const LibraryRules& rules = library_rules();
  const LibraryRules::Link* best = nullptr;
  for (const auto& link : rules.links) {
    if (link.package != package || version < link.from) continue;
    if (best == nullptr || best->from < link.from) best = &link;
  }
  if (best == nullptr) return out;
  auto floor = core::SpecifierSet::parse(">=" + best->cuda);
  if (!floor) return out;
  resolver::Conflict d;
  d.name = best->needs;
  d.allowed = std::move(*floor);
  // The row's sources stay in the table (library_rules.txt): the words say what fails.
  // FROM is the first version built with that CUDA: a later version may be built with a later
  // one, so only the floor is claimed for it.
  d.reason = version == best->from
                 ? fmt::format(
                       "its {} is built with CUDA {} and links nvJitLink {}'s symbols, so an "
                       "older libnvJitLink fails at load with an undefined symbol",
                       best->library, best->cuda, best->cuda)
                 : fmt::format(
                       "its {} is built with CUDA {} or later and links that CUDA's nvJitLink "
                       "symbols, so a libnvJitLink older than {} fails at load with an undefined "
                       "symbol",
                       best->library, best->cuda, best->cuda);
  out.push_back(std::move(d));
  return out;
}

}  // namespace gpulock::gpu

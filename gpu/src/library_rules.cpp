// Rules between library families (library_rules.h): gpu/data/library_rules.txt, compiled in and
// parsed once, and the conflict rules it gives a candidate (issue 44 item 2). Pure.
#include "gpulock/gpu/library_rules.h"

#include <fnmatch.h>

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
    if (w[0] == "preloads" && w.size() == 8) {
      Preload row;
      row.loader = std::string(w[1]);
      row.when = std::string(w[2]);
      row.dirs = core::comma_items(w[3]);
      row.file = std::string(w[4]);
      row.providers = core::comma_items(w[5]);
      if (w[6] != "raises" && w[6] != "ignored") return bad("ON_MISSING is raises or ignored");
      row.raises = w[6] == "raises";
      row.sources = sources.use(line_no, w[7]);
      out.preloads.push_back(std::move(row));
      continue;
    }
    if (w[0] == "needs" && w.size() == 6) {
      Need row;
      row.loader = std::string(w[1]);
      row.when = std::string(w[2]);
      row.file = std::string(w[3]);
      row.providers = core::comma_items(w[4]);
      row.sources = sources.use(line_no, w[5]);
      out.needs.push_back(std::move(row));
      continue;
    }
    if (w[0] != "links" || w.size() != 7) {
      return bad(
          "expected `links PACKAGE FROM CUDA NEEDS LIBRARY SOURCES`, `preloads LOADER WHEN DIRS "
          "FILE PROVIDERS ON_MISSING SOURCES`, `needs LOADER WHEN FILE PROVIDERS SOURCES` or "
          "`source KEY WHERE`");
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

namespace {

bool glob_matches(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), FNM_PATHNAME) == 0;
}

std::string_view file_name(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Whether the file name `name` matches `glob` (its literal prefix is compared first: a set
// holds a few hundred libraries, torch's wheel 12,000 members, and the table dozens of rows).
bool name_matches(const std::string& glob, std::string_view name) {
  const std::string_view prefix = std::string_view(glob).substr(0, glob.find_first_of("*?["));
  return name.starts_with(prefix) && glob_matches(glob, std::string(name));
}

// Whether `path`'s file name is the row's file.
bool named_like(const LibraryRules::Preload& row, std::string_view path) {
  return name_matches(row.file, file_name(path));
}

// Whether `wheel` installs the row's file in one of its directories.
bool ships_in_dirs(const LibraryRules::Preload& row, const SetWheel& wheel) {
  for (const auto& path : wheel.shared_libraries) {
    if (!named_like(row, path)) continue;
    for (const auto& dir : row.dirs) {
      if (glob_matches(dir + "/" + row.file, path)) return true;
    }
  }
  return false;
}

// Whether `wheel` ships a file of the row's name anywhere (a loader bundling its own copy).
bool ships_anywhere(const LibraryRules::Preload& row, const SetWheel& wheel) {
  return std::any_of(wheel.shared_libraries.begin(), wheel.shared_libraries.end(),
                     [&](const std::string& path) { return named_like(row, path); });
}

// "a", "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return out;
}

}  // namespace

bool is_preload_loader(std::string_view package) {
  const auto& rules = library_rules();
  auto named = [&](const auto& row) { return row.loader == package; };
  return std::any_of(rules.preloads.begin(), rules.preloads.end(), named) ||
         std::any_of(rules.needs.begin(), rules.needs.end(), named);
}

bool preload_marker(std::string_view loader, std::string_view member) {
  // Called for each of a loader's members (torch has about 12,000): the distinct (LOADER, WHEN)
  // pairs are gathered once.
  static const auto kMarkers = [] {
    std::vector<std::pair<std::string, std::string>> out;
    auto add = [&](const auto& row) {
      std::pair<std::string, std::string> marker{row.loader, row.when};
      if (std::find(out.begin(), out.end(), marker) == out.end()) out.push_back(std::move(marker));
    };
    for (const auto& row : library_rules().preloads)
      add(row);
    for (const auto& row : library_rules().needs)
      add(row);
    return out;
  }();
  const std::string_view name = file_name(member);
  return std::any_of(kMarkers.begin(), kMarkers.end(), [&](const auto& marker) {
    return marker.first == loader && name_matches(marker.second, name);
  });
}

std::vector<PreloadGap> preload_gaps(std::span<const SetWheel> set) {
  std::vector<PreloadGap> out;
  auto index_of = [&](std::string_view name) {
    auto it =
        std::find_if(set.begin(), set.end(), [&](const SetWheel& w) { return w.name == name; });
    return static_cast<std::size_t>(it - set.begin());
  };
  for (const auto& row : library_rules().preloads) {
    const std::size_t loader = index_of(row.loader);
    if (loader == set.size() || !set[loader].loads || ships_anywhere(row, set[loader])) continue;
    std::vector<std::size_t> providers;
    for (const auto& name : row.providers) {
      if (auto i = index_of(name); i != set.size()) providers.push_back(i);
    }
    if (providers.empty()) continue;
    if (std::any_of(set.begin(), set.end(),
                    [&](const SetWheel& w) { return ships_in_dirs(row, w); }))
      continue;
    const std::string effect =
        row.raises ? fmt::format("`import {}` raises ValueError", row.loader)
                   : std::string("another copy on the library path is loaded, or none");
    const std::string loads =
        row.raises ? fmt::format("{} loads from {} when it is imported (its preload list)",
                                 row.loader, or_list(row.dirs))
                   : fmt::format("{} loads from {} when it is imported, ignoring a failure",
                                 row.loader, or_list(row.dirs));
    for (std::size_t p : providers) {
      out.push_back({&row, loader, p,
                     fmt::format("{} {} ships no {}, which {}, and no other wheel of the set "
                                 "ships it: {}",
                                 set[p].name, set[p].version, row.file, loads, effect)});
    }
  }
  return out;
}

std::vector<CompanionGap> companion_gaps(std::span<const SetWheel> set) {
  std::vector<CompanionGap> out;
  auto in_set = [&](const std::string& name) {
    return std::any_of(set.begin(), set.end(), [&](const SetWheel& w) { return w.name == name; });
  };
  for (const auto& row : library_rules().needs) {
    auto loader = std::find_if(set.begin(), set.end(),
                               [&](const SetWheel& w) { return w.name == row.loader && w.loads; });
    if (loader == set.end()) continue;
    if (std::any_of(row.providers.begin(), row.providers.end(), in_set)) continue;
    bool shipped = std::any_of(set.begin(), set.end(), [&](const SetWheel& w) {
      return std::any_of(w.shared_libraries.begin(), w.shared_libraries.end(),
                         [&](const std::string& path) { return file_name(path) == row.file; });
    });
    if (shipped) continue;
    out.push_back({&row, static_cast<std::size_t>(loader - set.begin()),
                   fmt::format("loads {} by name (its libraries dlopen it when they need it), and "
                               "the set has no {} and no other wheel shipping it: the machine's "
                               "copy is loaded, or the load fails",
                               row.file, or_list(row.providers))});
  }
  return out;
}

}  // namespace gpulock::gpu

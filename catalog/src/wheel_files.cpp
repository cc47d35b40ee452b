// The chosen wheels' file lists, judged after a solve (issue 44 item 3; after_solve.h):
// a cuDNN wheel's own hazards (gpu::wheel_hazards) and the rules between wheels of one set
// (two wheels writing one path, gpu::library_conflicts' nvJitLink floors).

#include <algorithm>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "gpulock/catalog/after_solve.h"
#include "gpulock/gpu/library_rules.h"

#include "catalog_impl.h"

namespace gpulock::catalog {
namespace {

template <class Entry>
struct ChosenOf {
  std::string_view name;
  Entry* entry = nullptr;
};
using Chosen = ChosenOf<VersionEntry>;

// The solution's wheels, in its order (entries as const as the catalog given).
template <class Impl>
auto chosen_wheels(Impl& impl, const resolver::Solution& solution) {
  using Entry = std::conditional_t<std::is_const_v<Impl>, const VersionEntry, VersionEntry>;
  std::vector<ChosenOf<Entry>> out;
  for (const auto& chosen : solution.packages) {
    if (chosen.is_virtual) continue;
    auto it = impl.packages.find(chosen.name);
    if (it == impl.packages.end() || chosen.candidate_index >= it->second.entries.size()) continue;
    Entry& e = it->second.entries[chosen.candidate_index];
    if (e.file == nullptr || !e.file->filename().ends_with(".whl")) continue;
    out.push_back({chosen.name, &e});
  }
  return out;
}

// Reads the lists not read before, in one batch; returns how many new hazards they hold.
std::size_t read_lists(Catalog::Impl& impl, const std::vector<Chosen>& chosen) {
  std::vector<const Chosen*> unread;
  std::vector<index::WheelRef> refs;
  for (const auto& c : chosen) {
    if (c.entry->hazards_read) continue;
    unread.push_back(&c);
    refs.push_back(wheel_ref_of(*c.entry->file));
  }
  if (refs.empty()) return 0;
  auto lists = impl.pages.wheel_members(refs);
  std::size_t hazards = 0;
  for (std::size_t i = 0; i < unread.size() && i < lists.size(); ++i) {
    VersionEntry& e = *unread[i]->entry;
    e.hazards_read = true;
    if (!lists[i]) continue;
    e.hazards = gpu::wheel_hazards(unread[i]->name, e.version, lists[i]->shared_libraries);
    if (!e.hazards.empty()) ++hazards;
    // Once per list: torch's has about 12,000 members.
    const std::string_view name = unread[i]->name;
    const auto& members = lists[i]->members;
    e.loads = gpu::is_preload_loader(name) &&
              std::any_of(members.begin(), members.end(), [&](const index::WheelMember& m) {
                return gpu::preload_marker(name, m.path);
              });
    e.members = std::make_shared<const index::WheelMembers>(std::move(*lists[i]));
  }
  return hazards;
}

// Where a member lands, as a key two wheels can share: the site path the installer writes
// (index::site_path_of_member), or for another `.data` scheme its own tree (":scripts/x"; no
// site path starts with ':').
std::string install_key(std::string_view member) {
  std::string site = index::site_path_of_member(member);
  if (!site.empty()) return site;
  return ":" + std::string(member.substr(member.find('/') + 1));
}

// Two chosen wheels (indices into the chosen list, a < b) that write the same paths with
// different bytes: the paths, sorted.
using Overlaps = std::map<std::pair<std::size_t, std::size_t>, std::vector<std::string>>;

template <class C>
Overlaps overlaps(const std::vector<C>& chosen) {
  Overlaps out;
  std::unordered_map<std::string, std::pair<std::size_t, const index::WheelMember*>> seen;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (!chosen[i].entry->members) continue;
    for (const auto& m : chosen[i].entry->members->members) {
      auto [it, fresh] = seen.try_emplace(install_key(m.path), i, &m);
      if (fresh || it->second.first == i) continue;
      const index::WheelMember& first = *it->second.second;
      // Byte-identical by size and CRC-32 (the empty nvidia/__init__.py of every NVIDIA wheel).
      if (first.size == m.size && first.crc32 == m.crc32) continue;
      out[{it->second.first, i}].push_back(it->first);
    }
  }
  for (auto& [pair, paths] : out)
    std::sort(paths.begin(), paths.end());
  return out;
}

// The set as gpu::preload_gaps sees it, with the text its views point into.
struct SetView {
  std::vector<std::vector<std::string>> libs;
  std::vector<std::string> versions;
  std::vector<gpu::SetWheel> wheels;
};

// The set of `solution`, or nullopt when a chosen package's file list is unknown (an sdist, a
// list that could not be read): "no wheel of the set ships it" is then not known.
template <class C>
std::optional<SetView> set_view(const resolver::Solution& solution, const std::vector<C>& chosen) {
  std::size_t real = 0;
  for (const auto& p : solution.packages)
    real += p.is_virtual ? 0 : 1;
  if (chosen.size() != real) return std::nullopt;
  SetView view;
  for (const auto& c : chosen) {
    if (!c.entry->members) return std::nullopt;
    auto& paths = view.libs.emplace_back();
    for (const auto& member : c.entry->members->shared_libraries) {
      std::string site = index::site_path_of_member(member);
      if (!site.empty()) paths.push_back(std::move(site));
    }
    view.versions.push_back(c.entry->version.to_string());
  }
  for (std::size_t i = 0; i < chosen.size(); ++i)
    view.wheels.push_back({chosen[i].name, view.versions[i], view.libs[i], chosen[i].entry->loads});
  return view;
}

// A rule on `holder`'s candidate against `other`'s chosen version, for the next solve; false when
// it holds that rule already.
bool learn_conflict(const Chosen& holder, const Chosen& other, std::string reason) {
  auto allowed = core::SpecifierSet::parse("!=" + other.entry->version.to_string());
  if (!allowed) return false;
  auto& rules = holder.entry->conflicts;
  bool known = std::any_of(rules.begin(), rules.end(), [&](const resolver::Conflict& c) {
    return c.name == other.name && c.reason == reason;
  });
  if (known) return false;
  rules.push_back({std::string(other.name), std::move(*allowed), std::move(reason)});
  return true;
}

// "A 1.0 and B 2.0: REASON", a set conflict's words.
template <class C>
std::string pair_text(const C& a, const C& b, const std::string& reason) {
  return fmt::format("{} {} and {} {}: {}", a.name, a.entry->version.to_string(), b.name,
                     b.entry->version.to_string(), reason);
}

// "A.whl and B.whl both write PATH (and 2 more paths) with different bytes: whichever is
// installed last replaces the other's file".
template <class C>
std::string overlap_reason(const C& a, const C& b, const std::vector<std::string>& paths) {
  const std::string& path = paths.front();
  return fmt::format(
      "{} and {} both write {}{} with different bytes: whichever is installed last replaces the "
      "other's file",
      a.entry->file->filename(), b.entry->file->filename(),
      path.starts_with(':') ? path.substr(1) : path,
      paths.size() > 1 ? fmt::format(" (and {} more paths)", paths.size() - 1) : "");
}

}  // namespace

std::size_t judge_wheel_files(Catalog& cat, const resolver::Solution& solution) {
  Catalog::Impl& impl = cat.impl();
  auto chosen = chosen_wheels(impl, solution);
  std::size_t found = read_lists(impl, chosen);
  if (impl.config.allow_incomplete) return found;
  for (const auto& [pair, paths] : overlaps(chosen)) {
    const Chosen& a = chosen[pair.first];
    const Chosen& b = chosen[pair.second];
    if (learn_conflict(a, b, overlap_reason(a, b, paths))) ++found;
  }
  // A loader's file no wheel of the set ships (gpu::preload_gaps): a rule between the loader
  // and the provider whose wheel lacks it.
  auto set = set_view(solution, chosen);
  if (!set) return found;
  for (auto& gap : gpu::preload_gaps(set->wheels)) {
    if (learn_conflict(chosen[gap.loader], chosen[gap.provider], std::move(gap.reason))) ++found;
  }
  return found;
}

std::vector<SetConflict> set_conflicts(const Catalog& cat, const resolver::Solution& solution) {
  auto chosen = chosen_wheels(cat.impl(), solution);
  std::vector<SetConflict> out;
  for (const auto& [pair, paths] : overlaps(chosen)) {
    const auto& a = chosen[pair.first];
    const auto& b = chosen[pair.second];
    out.push_back(
        {std::string(a.name), std::string(b.name), pair_text(a, b, overlap_reason(a, b, paths))});
  }
  if (auto set = set_view(solution, chosen)) {
    for (const auto& gap : gpu::preload_gaps(set->wheels)) {
      const auto& loader = chosen[gap.loader];
      const auto& provider = chosen[gap.provider];
      out.push_back({std::string(loader.name), std::string(provider.name),
                     pair_text(loader, provider, gap.reason)});
    }
  }
  for (const auto& c : chosen) {
    for (const auto& rule : gpu::library_conflicts(c.name, c.entry->version)) {
      const resolver::ChosenPackage* needs = solution.find(rule.name);
      if (needs == nullptr || rule.allowed.contains(needs->version)) continue;
      out.push_back({std::string(c.name), rule.name,
                     fmt::format("{} {} needs {}{}, and {} {} is locked: {}", c.name,
                                 c.entry->version.to_string(), rule.name,
                                 resolver::specifier_text(rule.allowed), rule.name,
                                 needs->version.to_string(), rule.reason)});
    }
  }
  return out;
}

std::vector<CompanionGap> companion_gaps(const Catalog& cat, const resolver::Solution& solution) {
  auto chosen = chosen_wheels(cat.impl(), solution);
  std::vector<CompanionGap> out;
  auto set = set_view(solution, chosen);
  if (!set) return out;
  for (const auto& gap : gpu::companion_gaps(set->wheels)) {
    const auto& c = chosen[gap.loader];
    out.push_back({std::string(c.name), gap.row->file,
                   fmt::format("{} {} ({}) {}", c.name, c.entry->version.to_string(),
                               c.entry->file->filename(), gap.reason)});
  }
  return out;
}

}  // namespace gpulock::catalog

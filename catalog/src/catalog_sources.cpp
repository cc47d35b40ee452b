// Catalog: which sources a name comes from (first-index for every name, the torch family
// from its own source, direct references from their URL), their pages and METADATA.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/catalog/catalog.h"
#include "gpulock/core/command_line.h"
#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"

#include "catalog_impl.h"

namespace gpulock::catalog {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

namespace {

using FileRefs = std::vector<std::pair<const index::DistFile*, const SourceSpec*>>;
using OmittedRefs = std::vector<std::pair<const index::OmittedVersion*, const SourceSpec*>>;

// Keeps a page that lists anything in `state` and adds its files and omitted versions to the
// candidates; false when it lists nothing (not found, or empty). The solver's load and the
// speculation build their candidates alike.
bool take_page(const index::ProjectPagePtr& page, const SourceSpec* s, PackageState& state,
               FileRefs& files, OmittedRefs& omitted) {
  if (!page->found || (page->files.empty() && page->omitted.empty())) return false;
  state.pages.push_back(page);
  state.sources.push_back(s);
  for (const auto& f : page->files)
    files.emplace_back(&f, s);
  for (const auto& o : page->omitted)
    omitted.emplace_back(&o, s);
  return true;
}

}  // namespace

auto Catalog::Impl::torch_sources_serving(std::string_view name, bool* unsure) const
    -> std::vector<const SourceSpec*> {
  std::vector<const SourceSpec*> out;
  for (const auto& s : config.torch) {
    if (s.above_ceiling) continue;
    auto list = pages.fetch_project_list(s.source);
    if (list && *list && !(*list)->serves(name)) continue;
    if (unsure != nullptr && !(list && *list)) *unsure = true;
    out.push_back(&s);
  }
  return out;
}

auto Catalog::Impl::groups_for(std::string_view name, bool* torch_unsure) const
    -> std::vector<std::vector<const SourceSpec*>> {
  std::vector<std::vector<const SourceSpec*>> groups;
  std::vector<const SourceSpec*> pinned;
  for (const auto& [glob, spec] : config.pinned) {
    if (glob_match(glob, name)) pinned.push_back(&spec);
  }
  if (!pinned.empty()) {
    groups.push_back(std::move(pinned));
    return groups;  // a pin is exclusive: nothing else is consulted
  }
  if ((config.torch_requested || !config.torch.empty()) && gpu::is_torch_family(name)) {
    // The torch family never falls back past the torch source the user asked for.
    std::vector<const SourceSpec*> torch;
    for (const auto& s : config.torch)
      torch.push_back(&s);
    if (!torch.empty()) groups.push_back(std::move(torch));
    // --index-strategy unsafe-best-match merges every source: the user asked for that.
    if (config.strategy == IndexStrategy::FirstIndex) return groups;
  } else if (!config.torch.empty()) {
    auto torch = torch_sources_serving(name, torch_unsure);
    if (!torch.empty()) groups.push_back(std::move(torch));
  }
  for (const auto& s : config.general)
    groups.push_back({&s});
  return groups;
}

auto Catalog::Impl::requires_python_ok(const index::DistFile& file) -> bool {
  if (file.requires_python().empty()) return true;
  auto it = requires_python_cache.find(file.requires_python());
  if (it == requires_python_cache.end()) {
    auto parsed = core::SpecifierSet::parse(file.requires_python());
    if (!parsed) {
      warn(fmt::format("ignoring the invalid Requires-Python {} of {}",
                       core::quote_for_message(file.requires_python()), file.filename()));
    }
    it = requires_python_cache
             .emplace(std::string(file.requires_python()),
                      parsed ? std::optional<core::SpecifierSet>(*parsed) : std::nullopt)
             .first;
  }
  if (!it->second) return true;
  return it->second->contains(config.target.python_full, true);
}

auto Catalog::Impl::publish_time(const index::DistFile& file) const -> std::optional<std::int64_t> {
  if (auto t = file.upload_time()) return t;
  if (auto it = borrowed_upload_time.find(&file); it != borrowed_upload_time.end())
    return it->second;
  if (auto date = nightly_date_of(file.version())) return date_micros(*date);
  return std::nullopt;
}

auto Catalog::Impl::load_direct(std::string_view name, const std::string& given,
                                PackageState& state) -> core::Status {
  std::string url(index::strip_fragment(given));
  std::string fragment = given.size() > url.size() ? given.substr(url.size() + 1) : std::string();
  const std::string shown = index::redact_url(url);
  auto page = std::make_shared<index::ProjectPage>();
  page->found = true;
  page->name = std::string(name);
  page->url = shown;
  index::DistFile f;
  const std::string filename = index::percent_decode(index::url_basename(url));
  f.set_text(filename, url);
  auto wheel = core::WheelFilename::parse(filename);
  if (!wheel) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("{} @ ... is not a wheel: gpulock locks direct references to wheels only",
                    name),
        shown);
  }
  if (wheel->name != name) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("the direct reference for {} names a wheel of {}", name, wheel->name), shown);
  }
  f.set_wheel(*wheel);
  if (fragment.starts_with("sha256=")) {
    std::string hex = fragment.substr(7);
    std::transform(hex.begin(), hex.end(), hex.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return core::fail_at(core::ErrorCode::InvalidInput,
                           "the #sha256= fragment is not 64 hex digits", shown);
    }
    f.add_hash("sha256", hex);
  } else {
    auto digest = pages.fetch_file_digest(url);
    if (!digest) return std::unexpected(digest.error());
    f.add_hash("sha256", digest->sha256);
    f.set_size(digest->size);
  }
  page->files.push_back(std::move(f));
  SourceSpec& src = direct_sources.emplace_back();
  src.source = index::IndexSource::find_links(shown, "direct");
  src.type = {Direct{std::string(page->files.back().sha256())}, Role::Pinned};
  index::ProjectPagePtr ptr = page;
  state.pages.push_back(ptr);
  state.sources.push_back(&src);
  std::vector<std::pair<const index::DistFile*, const SourceSpec*>> files{
      {&ptr->files.front(), &src}};
  build_entries(name, state, files, {});
  return {};
}

auto Catalog::Impl::load(std::string_view name, PackageState& state) -> core::Status {
  if (auto d = config.direct.find(name); d != config.direct.end())
    return load_direct(name, d->second, state);
  bool torch_unsure = false;
  auto groups = groups_for(name, &torch_unsure);
  // Start every page of the first groups at once; first-index usually needs only the first.
  // A torch source asked per name may lack it: its answer comes in the same wave as the next
  // source's page.
  std::size_t prefetch_groups = config.strategy == IndexStrategy::UnsafeBestMatch ? groups.size()
                                : torch_unsure                                    ? 2
                                                                                  : 1;
  for (std::size_t g = 0; g < groups.size() && g < prefetch_groups; ++g) {
    for (const auto* s : groups[g])
      pages.prefetch_project(s->source, name);
  }
  FileRefs files;
  OmittedRefs omitted;
  bool found_any = false;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (found_any && config.strategy == IndexStrategy::FirstIndex) {
      for (const auto* s : groups[g])
        state.skipped.push_back(s);
      continue;
    }
    bool group_found = false;
    for (const auto* s : groups[g])
      pages.prefetch_project(s->source, name);
    for (const auto* s : groups[g]) {
      auto page = pages.fetch_project(s->source, name);
      if (!page) return std::unexpected(page.error());
      if (take_page(*page, s, state, files, omitted)) group_found = true;
    }
    found_any = found_any || group_found;
  }
  if (config.exclude_newer) {
    auto borrowed = borrow_upload_times(name, groups, files);
    if (!borrowed) return borrowed;
  }
  build_entries(name, state, files, omitted);
  return {};
}

auto Catalog::Impl::borrow_upload_times(
    std::string_view name, const std::vector<std::vector<const SourceSpec*>>& groups,
    const std::vector<std::pair<const index::DistFile*, const SourceSpec*>>& files)
    -> core::Status {
  if (gpu::is_torch_family(name) || groups.size() < 2 || groups.front().empty() ||
      groups.front().front()->type.role != Role::Family) {
    return {};
  }
  bool missing = std::any_of(files.begin(), files.end(), [](const auto& f) {
    return f.second->type.role == Role::Family && !f.first->upload_time();
  });
  if (!missing) return {};
  auto key = [](const index::DistFile& f) {
    return f.sha256().empty() ? "name " + std::string(f.filename())
                              : "sha256 " + std::string(f.sha256());
  };
  std::unordered_map<std::string, std::int64_t> by_hash;
  for (std::size_t g = 1; g < groups.size(); ++g) {
    for (const auto* s : groups[g]) {
      auto page = pages.fetch_project(s->source, name);
      if (!page) return std::unexpected(page.error());
      for (const auto& f : (*page)->files) {
        auto when = f.upload_time();
        if (!when) continue;
        by_hash.emplace("name " + std::string(f.filename()), *when);
        if (!f.sha256().empty()) by_hash.emplace("sha256 " + std::string(f.sha256()), *when);
      }
    }
  }
  for (const auto& [f, s] : files) {
    if (s->type.role != Role::Family || f->upload_time()) continue;
    if (auto it = by_hash.find(key(*f)); it != by_hash.end()) borrowed_upload_time[f] = it->second;
  }
  return {};
}

auto Catalog::Impl::prefetch_pages(std::string_view name) -> void {
  auto groups = groups_for(name);
  if (groups.empty()) return;
  std::size_t n = config.strategy == IndexStrategy::UnsafeBestMatch ? groups.size() : 1;
  for (std::size_t g = 0; g < n; ++g) {
    for (const auto* s : groups[g])
      pages.prefetch_project(s->source, name);
  }
}

auto Catalog::Impl::seed_from_preferences() -> void {
  // Which source serves a name outside the torch family is known only once the torch roots are
  // read: those names' pages wait for speculate, which starts them when the roots are in.
  bool roots_first = std::any_of(config.torch.begin(), config.torch.end(),
                                 [](const SourceSpec& s) { return !s.above_ceiling; });
  for (const auto& entry : config.preferences) {
    const std::string& name = entry.first;
    if (speculative >= kMaxSpeculative) break;
    if (config.direct.contains(name) || !wanted.try_emplace(name).second) continue;
    if (roots_first && !gpu::is_torch_family(name)) continue;
    ++speculative;
    prefetch_pages(name);
  }
}

auto Catalog::Impl::chain_speculation() -> void {
  if (speculating) return;
  speculating = true;
  chain_dependencies();
  speculating = false;
}

auto Catalog::Impl::chain_dependencies() -> void {
  for (std::size_t i = 0; i < speculated.size();) {
    const index::DistFile* file = speculated[i];
    if (!pages.metadata_done(*file)) {
      ++i;
      continue;
    }
    speculated.erase(speculated.begin() + static_cast<std::ptrdiff_t>(i));
    std::string problem;
    auto md = read_metadata(*file, problem);
    if (!md || *md == nullptr) continue;  // the solver's own read reports it
    for (const auto& req : (*md)->requires_dist) {
      if (!req.url.empty() ||
          !(req.marker.empty() || req.marker.matches(config.target.environment, ""))) {
        continue;
      }
      std::string name = core::normalize_name(req.name);
      if (packages.contains(name)) continue;
      auto& specs = wanted[name];
      bool first = specs.empty();
      specs.push_back(req.specifier);
      if (first && speculative < kMaxSpeculative) {
        ++speculative;
        prefetch_pages(name);
      }
    }
  }
}

auto Catalog::Impl::speculate() -> void {
  if (speculating) return;
  speculating = true;
  chain_dependencies();
  for (const auto& entry : wanted) {
    const std::string& name = entry.first;
    if (speculative >= kMaxSpeculative) break;
    if (packages.contains(name) || speculated_names.contains(name) || config.direct.contains(name))
      continue;
    if (speculate_name(name)) speculated_names.insert(name);
  }
  speculating = false;
}

auto Catalog::Impl::speculate_name(std::string_view name) -> bool {
  for (const auto& s : config.torch) {
    if (!s.above_ceiling && !pages.project_list_done(s.source)) return false;
  }
  auto groups = groups_for(name);
  PackageState state;
  FileRefs files;
  OmittedRefs omitted;
  for (const auto& group : groups) {
    bool group_found = false;
    for (const auto* s : group) {
      pages.prefetch_project(s->source, name);
      if (!pages.project_done(s->source, name)) return false;
    }
    for (const auto* s : group) {
      auto page = pages.fetch_project(s->source, name);
      if (!page) return true;  // the solver's own fetch reports it
      if (take_page(*page, s, state, files, omitted)) group_found = true;
    }
    if (group_found && config.strategy == IndexStrategy::FirstIndex) break;
  }
  // Built aside: no warning of it is kept (the solver's own load gives them, in its order).
  auto saved_warnings = warnings;
  auto saved_warned = warned;
  auto saved_requires_python = requires_python_cache;
  build_entries(name, state, files, omitted);
  warnings = std::move(saved_warnings);
  warned = std::move(saved_warned);
  requires_python_cache = std::move(saved_requires_python);
  ++speculative;
  prefetch_first(name, state);
  speculative_pages.insert(speculative_pages.end(), state.pages.begin(), state.pages.end());
  return true;
}

auto Catalog::Impl::prefetch_first(std::string_view name, const PackageState& state) -> void {
  auto specs = wanted.find(name);
  // The solver takes a yanked release only when nothing else fits (PEP 592), a pre-release only
  // when no final release does.
  auto fits = [&](const VersionEntry& e, bool final_only, bool unyanked_only) {
    if (e.file == nullptr || e.unavailable || (final_only && e.version.is_prerelease()) ||
        (unyanked_only && e.yanked)) {
      return false;
    }
    if (specs == wanted.end()) return true;
    return std::all_of(specs->second.begin(), specs->second.end(),
                       [&](const core::SpecifierSet& s) { return s.contains(e.version, true); });
  };
  for (auto [final_only, unyanked_only] : {std::pair{true, true}, std::pair{false, true},
                                           std::pair{true, false}, std::pair{false, false}}) {
    for (const auto& e : state.entries) {
      if (fits(e, final_only, unyanked_only)) {
        pages.prefetch_metadata(*e.file);
        // Without a .metadata file (PEP 658) the METADATA is read from the wheel's tail, and
        // its member list with it.
        if (e.file->core_metadata() && e.file->filename().ends_with(".whl"))
          pages.prefetch_wheel_members(wheel_ref_of(*e.file));
        speculated.push_back(e.file);
        return;
      }
    }
  }
}

auto Catalog::Impl::read_metadata(const index::DistFile& file, std::string& problem)
    -> core::Result<const core::CoreMetadata*> {
  auto& slot = metadata[&file];
  if (slot.metadata) return &*slot.metadata;
  auto text = pages.fetch_metadata(file);
  if (!text) {
    auto code = text.error().code;
    // A file that is not what its page says (HashMismatch) is an error (exit 4), never a
    // candidate quietly dropped.
    if (code == core::ErrorCode::InvalidMetadata || code == core::ErrorCode::InvalidInput) {
      problem = text.error().where.empty()
                    ? text.error().message
                    : fmt::format("{} ({})", text.error().message, text.error().where);
      return nullptr;
    }
    return std::unexpected(text.error());
  }
  // The wait hook may have read it while this fetch waited (chain_speculation).
  if (slot.metadata) return &*slot.metadata;
  auto parsed = core::CoreMetadata::parse(*text);
  if (!parsed) {
    // Named by its wheel: the explanation names only the package.
    problem = fmt::format("{}: {}", file.filename(), parsed.error().to_string());
    return nullptr;
  }
  slot.metadata = std::move(*parsed);
  return &*slot.metadata;
}
}  // namespace gpulock::catalog

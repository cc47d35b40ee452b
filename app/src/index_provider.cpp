#include "gpulock/app/index_provider.h"

#include "gpulock/index/interrupt.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/app/command_line.h"
#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"
#include "gpulock/index/url.h"

namespace gpulock::app {

bool glob_match(std::string_view pattern, std::string_view name) {
  // Iterative wildcard match with one backtrack point (no recursion).
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

constexpr std::string_view kPython = "__python";
constexpr std::string_view kCuda = "__cuda";
constexpr std::string_view kCudaVariant = "__cuda_variant";
constexpr std::string_view kCudaMajor = "__cuda_major";

core::Version make_version(std::uint64_t major, std::uint64_t minor) {
  std::uint64_t parts[2] = {major, minor};
  return core::Version::from_release(parts);
}

// The build date of a nightly (`2.15.0.dev20260817+cu130` -> "20260817"), or "".
std::string nightly_date_of(const core::Version& v) {
  if (!v.dev()) return {};
  std::uint64_t d = *v.dev();
  if (d < 20000101 || d > 29991231) return {};
  return fmt::format("{}", d);
}

// Midnight UTC of a YYYYMMDD date, in microseconds since the epoch.
std::optional<std::int64_t> date_micros(std::string_view yyyymmdd) {
  if (yyyymmdd.size() != 8) return std::nullopt;
  return index::parse_timestamp(fmt::format("{}-{}-{}T00:00:00Z", yyyymmdd.substr(0, 4), yyyymmdd.substr(4, 2),
                                            yyyymmdd.substr(6, 2)));
}

// "needs Python >=3.12" -> ">= 3.12" spacing for the explanation.
std::string spaced_specifier(std::string_view spec) {
  std::string out;
  std::size_t i = 0;
  while (i < spec.size()) {
    std::size_t j = i;
    while (j < spec.size() && std::string_view("<>=!~").find(spec[j]) != std::string_view::npos) ++j;
    std::size_t end = spec.find(',', j);
    std::string_view op = spec.substr(i, j - i);
    std::string_view operand = spec.substr(j, end == std::string_view::npos ? std::string_view::npos : end - j);
    if (!out.empty()) out += ", ";
    out += op.empty() ? std::string(operand) : fmt::format("{} {}", op, operand);
    if (end == std::string_view::npos) break;
    i = end + 1;
    while (i < spec.size() && spec[i] == ' ') ++i;
  }
  return out;
}

struct VersionEntry {
  core::Version version;
  const index::DistFile* file = nullptr;  // the wheel the target would install
  const SourceSpec* source = nullptr;
  bool yanked = false;
  std::optional<UnavailableReason> unavailable;
  BuildLabel build;
  // What dependencies() learned, for skipped_before().
  bool dependencies_read = false;
  std::optional<CudaVersion> needs_cuda;
  std::optional<UnavailableReason> dependencies_unavailable;
  std::vector<resolver::Dependency> requirements;  // its Requires-Dist for the target (no virtuals)
  bool archs_assumed = false;  // torch: no arch list known, bounded by its CUDA's archs
};

struct PackageState {
  std::vector<index::ProjectPagePtr> pages;  // keeps the DistFiles alive
  std::vector<VersionEntry> entries;         // preference order
  std::vector<const SourceSpec*> sources;    // where the candidates came from
  std::vector<const SourceSpec*> skipped;    // lower-priority sources first-index did not use
  bool any_wheel_for_target = false;
  bool only_sdists = false;
  bool only_other_platforms = false;
  std::size_t pin_from = 0;  // an existing lock's pin was moved to the front from here
};

struct MetadataState {
  std::optional<core::CoreMetadata> metadata;
};

}  // namespace

struct IndexProvider::Impl {
  index::IndexClient& client;
  ProviderConfig config;
  core::TagRanker ranker;
  std::map<std::string, PackageState, std::less<>> packages;
  std::unordered_map<const index::DistFile*, MetadataState> metadata;
  std::map<std::string, std::optional<core::SpecifierSet>, std::less<>> requires_python_cache;
  mutable std::vector<std::string> warnings;
  mutable std::set<std::string, std::less<>> warned;
  // --exclude-newer: upload times of torch-source mirror files that give none, from the same file
  // (same sha256) on a later index.
  std::unordered_map<const index::DistFile*, std::int64_t> borrowed_upload_time;
  std::deque<SourceSpec> direct_sources;  // stable addresses: entries point at them
  std::atomic<bool> cancelled{false};
  // package_hints explained the CUDA ceiling (the resolve workflow then tries the fixes).
  mutable bool cuda_hinted = false;
  // Pages of skipped lower-priority sources, fetched by fetch_hint_pages before the explanation
  // is rendered: name -> (source, page) for each page found.
  std::map<std::string, std::vector<std::pair<const SourceSpec*, index::ProjectPagePtr>>, std::less<>> hint_pages;

  // Whether package_hints compares `name`'s skipped sources (the torch family comes from its own
  // source by design; any other name the torch source serves is first-index's doing, issue 17).
  bool hints_skipped_sources(std::string_view name, const PackageState& state) const {
    bool family_from_torch_source =
        is_torch_family(name) && !state.sources.empty() && state.sources.front()->role == "torch";
    return !state.skipped.empty() && !state.sources.empty() && !family_from_torch_source;
  }

  Impl(index::IndexClient& c, ProviderConfig cfg)
      : client(c), config(std::move(cfg)), ranker(config.target.supported) {}

  void warn(std::string message) const {
    if (warned.insert(message).second) warnings.push_back(std::move(message));
  }

  // The command that takes `name` from `other` instead of the source first-index chose: this
  // run's, with the flags added.
  std::string first_index_fix(std::string_view name, std::string_view other) const {
    std::vector<FlagEdit> edits{{"--index", fmt::format("other={}", other), FlagEdit::Op::Add},
                                {"--index-for", fmt::format("{}=other", name), FlagEdit::Op::Add}};
    return fmt::format("to take {} from {}: `{}` (or, trusting every index equally, `--index-strategy "
                       "unsafe-best-match` instead of those two flags)",
                       name, other, command_with(config.command_line, edits));
  }

  // Per GPU arch a candidate of `state` lacked kernels for: the release and the CUDA builds of
  // it that have them (the first such candidate tried, in preference order, speaks for its
  // release).
  struct ArchFix {
    ComputeCapability arch;
    std::string release;
    std::vector<CudaVersion> builds;
  };
  std::vector<ArchFix> arch_fixes(std::string_view name, const PackageState& state) const {
    std::vector<ArchFix> out;
    std::set<std::string, std::less<>> seen;
    for (const auto& e : state.entries) {
      const auto& u = e.dependencies_unavailable;
      if (!u || u->kind != UnavailableKind::GpuArchMissing) continue;
      auto field = std::find_if(u->fields.begin(), u->fields.end(), [](const auto& f) { return f.first == "arch"; });
      if (field == u->fields.end()) continue;
      auto arch = ComputeCapability::parse(field->second);
      if (!arch || !seen.insert(field->second).second) continue;
      out.push_back({*arch, fmt::format("{} {}.{}", name, e.version.release_at(0), e.version.release_at(1)),
                     torch_cuda_builds_running_on(e.version, *arch, config.target.environment.platform_machine)});
    }
    return out;
  }

  // "<source>" or "<source> and N more" (redacted).
  static std::string sources_text(const std::vector<const SourceSpec*>& sources) {
    if (sources.empty()) return "no index";
    std::string first = index::redact_url(sources.front()->source.url);
    return sources.size() == 1 ? first : fmt::format("{} (and {} more)", first, sources.size() - 1);
  }

  // Why a candidate whose dependencies were read lost, when one of its requirements alone says
  // it (issue 16 item 7): no usable version of a dependency satisfies it on the sources that
  // dependency comes from (first-index: a stale mirror on the torch source), or the solution
  // chose a version of the dependency outside it. Reads nothing from the network.
  std::optional<std::string> conflict_reason(const VersionEntry& e, const resolver::Solution* solution,
                                             std::string* hint = nullptr) const {
    for (const auto& d : e.requirements) {
      auto pit = packages.find(d.name);
      if (pit == packages.end()) continue;
      const PackageState& dep = pit->second;
      std::vector<std::string> usable;
      bool satisfied = false;
      for (const auto& c : dep.entries) {
        if (c.file == nullptr || c.unavailable) continue;
        if (d.specifier.contains(c.version, true)) {
          satisfied = true;
          break;
        }
        if (usable.size() < 3) usable.push_back(c.version.to_string());
      }
      if (!satisfied && !dep.sources.empty()) {
        std::string has = usable.empty() ? fmt::format("no usable version of {}", d.name)
                                         : fmt::format("only {} {}", d.name, fmt::join(usable, ", "));
        std::string reason = fmt::format("needs {}, and {} has {}", d.to_string(), sources_text(dep.sources), has);
        if (!dep.skipped.empty() && config.strategy == IndexStrategy::FirstIndex) {
          std::string other = index::redact_url(dep.skipped.front()->source.url);
          reason += fmt::format(" (first-index: {} comes only from there, not from {})", d.name, other);
          if (hint != nullptr) *hint = first_index_fix(d.name, other);
        }
        return reason;
      }
      if (solution == nullptr) continue;
      const auto* chosen = solution->find(d.name);
      if (chosen != nullptr && !d.specifier.contains(chosen->version, true)) {
        return fmt::format("needs {}, and {} {} was chosen", d.to_string(), d.name, chosen->version.to_string());
      }
    }
    return std::nullopt;
  }

  // First-index for every name (issue 17): a name the torch source serves comes only from
  // there, whether or not gpulock has heard of it (torchtriton in 2022; numpy, which
  // download.pytorch.org mirrors). Which names a torch variant serves is learned from its root
  // listing (fetch_project_list: small, fetched once per run and cached); a variant whose root
  // cannot be read is asked per name, in the same wave as the next source's page. Variants above
  // the driver's ceiling are there only to explain the torch family's newer builds: they serve
  // no other name.
  void prefetch_torch_listings() const {
    for (const auto& s : config.torch) {
      if (!s.above_ceiling) client.prefetch_project_list(s.source);
    }
  }

  // The torch sources that may serve `name`, a name outside the torch family. `unsure`: some of
  // them are there because their root could not be read, so the name may be missing.
  std::vector<const SourceSpec*> torch_sources_serving(std::string_view name, bool* unsure) const {
    std::vector<const SourceSpec*> out;
    for (const auto& s : config.torch) {
      if (s.above_ceiling) continue;
      auto list = client.fetch_project_list(s.source);
      if (list && *list && !(*list)->serves(name)) continue;
      if (unsure != nullptr && !(list && *list)) *unsure = true;
      out.push_back(&s);
    }
    return out;
  }

  // The source groups for a package, in priority order; each group is searched as one source.
  std::vector<std::vector<const SourceSpec*>> groups_for(std::string_view name, bool* torch_unsure = nullptr) const {
    std::vector<std::vector<const SourceSpec*>> groups;
    std::vector<const SourceSpec*> pinned;
    for (const auto& [glob, spec] : config.pinned) {
      if (glob_match(glob, name)) pinned.push_back(&spec);
    }
    if (!pinned.empty()) {
      groups.push_back(std::move(pinned));
      return groups;  // a pin is exclusive: nothing else is consulted
    }
    if ((config.torch_requested || !config.torch.empty()) && is_torch_family(name)) {
      // The torch family never falls back past the torch source the user asked for.
      std::vector<const SourceSpec*> torch;
      for (const auto& s : config.torch) torch.push_back(&s);
      if (!torch.empty()) groups.push_back(std::move(torch));
      // --index-strategy unsafe-best-match merges every source: the user asked for that.
      if (config.strategy == IndexStrategy::FirstIndex) return groups;
    } else if (!config.torch.empty()) {
      auto torch = torch_sources_serving(name, torch_unsure);
      if (!torch.empty()) groups.push_back(std::move(torch));
    }
    for (const auto& s : config.general) groups.push_back({&s});
    return groups;
  }

  bool requires_python_ok(const index::DistFile& file) {
    if (file.requires_python().empty()) return true;
    auto it = requires_python_cache.find(file.requires_python());
    if (it == requires_python_cache.end()) {
      auto parsed = core::SpecifierSet::parse(file.requires_python());
      if (!parsed) {
        warn(fmt::format("ignoring the invalid Requires-Python {} of {}", core::quote_for_message(file.requires_python()),
                         file.filename()));
      }
      it = requires_python_cache
               .emplace(std::string(file.requires_python()), parsed ? std::optional<core::SpecifierSet>(*parsed) : std::nullopt)
               .first;
    }
    if (!it->second) return true;
    return it->second->contains(config.target.python_full, true);
  }

  // When the file was published, for --exclude-newer: its upload time, else the date of a
  // nightly version; nullopt when neither is known.
  std::optional<std::int64_t> publish_time(const index::DistFile& file) const {
    if (auto t = file.upload_time()) return t;
    if (auto it = borrowed_upload_time.find(&file); it != borrowed_upload_time.end()) return it->second;
    auto date = nightly_date_of(file.version());
    if (!date.empty()) return date_micros(date);
    return std::nullopt;
  }

  std::string target_tag_text() const {
    return fmt::format("{}-{}", config.target.tags.interpreter_tag(), config.target.platform);
  }

  // A direct reference's one wheel: from its URL only, its sha256 from the URL's fragment or,
  // when it has none, from downloading it once (streamed, cached by URL). Errors name the URL.
  core::Status load_direct(std::string_view name, const std::string& given, PackageState& state) {
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
      return core::fail_at(core::ErrorCode::InvalidInput,
                           fmt::format("{} @ ... is not a wheel: gpulock locks direct references to wheels only",
                                       name),
                           shown);
    }
    if (wheel->name != name) {
      return core::fail_at(core::ErrorCode::InvalidInput,
                           fmt::format("the direct reference for {} names a wheel of {}", name, wheel->name), shown);
    }
    f.set_wheel(*wheel);
    if (fragment.starts_with("sha256=")) {
      std::string hex = fragment.substr(7);
      std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
        return core::fail_at(core::ErrorCode::InvalidInput, "the #sha256= fragment is not 64 hex digits", shown);
      }
      f.add_hash("sha256", hex);
    } else {
      auto digest = client.fetch_file_digest(url);
      if (!digest) return std::unexpected(digest.error());
      f.add_hash("sha256", digest->sha256);
      f.set_size(digest->size);
    }
    page->files.push_back(std::move(f));
    SourceSpec& src = direct_sources.emplace_back();
    src.source = index::IndexSource::find_links(shown, "direct");
    src.role = "direct";
    index::ProjectPagePtr ptr = page;
    state.pages.push_back(ptr);
    state.sources.push_back(&src);
    std::vector<std::pair<const index::DistFile*, const SourceSpec*>> files{{&ptr->files.front(), &src}};
    build_entries(name, state, files, {});
    return {};
  }

  core::Status load(std::string_view name, PackageState& state) {
    if (auto d = config.direct.find(name); d != config.direct.end()) return load_direct(name, d->second, state);
    bool torch_unsure = false;
    auto groups = groups_for(name, &torch_unsure);
    // Start every page of the first groups at once; first-index usually needs only the first.
    // A torch source asked per name may lack it: its answer comes in the same wave as the next
    // source's page.
    std::size_t prefetch_groups = config.strategy == IndexStrategy::UnsafeBestMatch ? groups.size()
                                  : torch_unsure                                    ? 2
                                                                                    : 1;
    for (std::size_t g = 0; g < groups.size() && g < prefetch_groups; ++g) {
      for (const auto* s : groups[g]) client.prefetch_project(s->source, name);
    }
    std::vector<std::pair<const index::DistFile*, const SourceSpec*>> files;
    std::vector<std::pair<const index::OmittedVersion*, const SourceSpec*>> omitted;
    bool found_any = false;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (found_any && config.strategy == IndexStrategy::FirstIndex) {
        for (const auto* s : groups[g]) state.skipped.push_back(s);
        continue;
      }
      bool group_found = false;
      for (const auto* s : groups[g]) client.prefetch_project(s->source, name);
      for (const auto* s : groups[g]) {
        auto page = client.fetch_project(s->source, name);
        if (!page) return std::unexpected(page.error());
        if (!(*page)->found || ((*page)->files.empty() && (*page)->omitted.empty())) continue;
        group_found = true;
        state.pages.push_back(*page);
        state.sources.push_back(s);
        for (const auto& f : (*page)->files) files.emplace_back(&f, s);
        for (const auto& o : (*page)->omitted) omitted.emplace_back(&o, s);
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

  // The torch source's copies of ordinary packages (filelock, numpy, ...) carry no upload time on
  // download.pytorch.org, so --exclude-newer would leave every one out, and first-index would
  // allow no other copy. A copy is the same file as the one on the next index (the same sha256;
  // when the torch source gives no hash, as on its nightly tree, the same file name, which PyPI
  // never reuses), so it takes that file's upload time. Only the date is borrowed: the candidates
  // and the files installed stay the torch source's.
  core::Status borrow_upload_times(std::string_view name, const std::vector<std::vector<const SourceSpec*>>& groups,
                                   const std::vector<std::pair<const index::DistFile*, const SourceSpec*>>& files) {
    if (is_torch_family(name) || groups.size() < 2 || groups.front().empty() ||
        groups.front().front()->role != "torch") {
      return {};
    }
    bool missing = std::any_of(files.begin(), files.end(),
                               [](const auto& f) { return f.second->role == "torch" && !f.first->upload_time(); });
    if (!missing) return {};
    auto key = [](const index::DistFile& f) {
      return f.sha256().empty() ? "name " + std::string(f.filename()) : "sha256 " + std::string(f.sha256());
    };
    std::unordered_map<std::string, std::int64_t> by_hash;
    for (std::size_t g = 1; g < groups.size(); ++g) {
      for (const auto* s : groups[g]) {
        auto page = client.fetch_project(s->source, name);
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
      if (s->role != "torch" || f->upload_time()) continue;
      if (auto it = by_hash.find(key(*f)); it != by_hash.end()) borrowed_upload_time[f] = it->second;
    }
    return {};
  }

  // `omitted`: versions of the files the client's keep_wheel filter left out of the pages (wheels
  // for other targets, sdists); they count exactly as such files would below.
  void build_entries(std::string_view name, PackageState& state,
                     const std::vector<std::pair<const index::DistFile*, const SourceSpec*>>& files,
                     const std::vector<std::pair<const index::OmittedVersion*, const SourceSpec*>>& omitted) {
    struct Acc {
      VersionEntry entry;
      std::optional<std::size_t> best_rank;
      bool has_wheel = false, has_sdist = false, tag_ok = false, excluded_newer = false, undated = false;
      bool above_ceiling = false;  // from a torch variant above the driver's ceiling
      std::string requires_python_fail;
      std::string other_date;
    };
    std::vector<Acc> accs;
    std::unordered_map<core::Version, std::size_t, core::VersionHash> by_version;
    bool nightly_filter = config.nightly_date.has_value() && is_torch_family(name);
    // The version's accumulator, or null for a nightly of another date than the chosen one.
    auto acc_for = [&](const core::Version& v, const SourceSpec* source) -> Acc* {
      auto [it, inserted] = by_version.emplace(v, accs.size());
      if (inserted) {
        Acc a;
        a.entry.version = v;
        a.entry.build = classify_build(v);
        accs.push_back(std::move(a));
      }
      Acc& acc = accs[it->second];
      if (nightly_filter && source->nightly) {
        auto date = nightly_date_of(v);
        if (!date.empty() && date != *config.nightly_date) {
          acc.other_date = date;
          return nullptr;
        }
      }
      return &acc;
    };
    for (const auto& [o, source] : omitted) {
      Acc* acc = acc_for(o->version, source);
      if (acc == nullptr) continue;
      acc->has_sdist = acc->has_sdist || o->sdists;
      acc->has_wheel = acc->has_wheel || o->wheels;
    }
    for (const auto& [file, source] : files) {
      Acc* acc_ptr = acc_for(file->version(), source);
      if (acc_ptr == nullptr) continue;
      Acc& acc = *acc_ptr;
      if (file->is_sdist()) {
        acc.has_sdist = true;
        continue;
      }
      acc.has_wheel = true;
      auto rank = ranker.rank(file->tags());
      if (!rank) continue;
      acc.tag_ok = true;
      if (config.exclude_newer) {
        auto when = publish_time(*file);
        if (!when) {
          acc.undated = true;
          warn(fmt::format("{} has no upload time; --exclude-newer leaves it out", file->filename()));
          continue;
        }
        if (*when > *config.exclude_newer) {
          acc.excluded_newer = true;
          continue;
        }
      }
      if (!requires_python_ok(*file)) {
        acc.requires_python_fail = file->requires_python();
        continue;
      }
      if (source->above_ceiling) {
        acc.above_ceiling = true;
        continue;
      }
      // Best: a file that is not yanked, then the best tag rank.
      bool better = acc.entry.file == nullptr || (acc.entry.yanked && !file->yanked()) ||
                    (acc.entry.yanked == file->yanked() && *rank < *acc.best_rank);
      if (better) {
        acc.entry.file = file;
        acc.entry.source = source;
        acc.entry.yanked = file->yanked();
        acc.best_rank = rank;
      }
    }

    bool any_available = false, any_wheel = false, any_sdist = false, any_tag_ok = false;
    for (auto& acc : accs) {
      if (!acc.other_date.empty() && !acc.has_wheel && !acc.has_sdist) {
        acc.entry.version = core::Version();  // dropped below: a nightly of another date
        continue;
      }
      any_wheel = any_wheel || acc.has_wheel;
      any_sdist = any_sdist || acc.has_sdist;
      any_tag_ok = any_tag_ok || acc.tag_ok;
      if (acc.entry.file != nullptr) {
        any_available = true;
        continue;
      }
      UnavailableReason r;
      if (acc.above_ceiling) {
        // One wording for every such build, so that the explanation states it once for a range.
        r.kind = UnavailableKind::CudaTooNew;
        std::string who = config.gpu.driver ? fmt::format("your driver {}", config.gpu.driver->to_string()) : "your driver";
        r.message = config.gpu.compat == probe::CudaCompat::Minor
                        ? fmt::format("needs a newer CUDA than {} runs (CUDA {}.x)", who, config.gpu.ceiling->major)
                        : fmt::format("needs a newer CUDA than {} runs (CUDA <= {})", who, config.gpu.ceiling->to_string());
        if (acc.entry.build.cuda) r.fields = {{"cuda", acc.entry.build.cuda->to_string()}};
      } else if (acc.excluded_newer || (acc.undated && !acc.tag_ok)) {
        r.kind = UnavailableKind::ExcludedNewer;
        r.message = "was published after the --exclude-newer cutoff";
      } else if (acc.undated) {
        r.kind = UnavailableKind::ExcludedNewer;
        r.message = "has no upload time, so --exclude-newer leaves it out";
      } else if (!acc.requires_python_fail.empty()) {
        r.kind = UnavailableKind::RequiresPython;
        r.message = fmt::format("needs Python {}", spaced_specifier(acc.requires_python_fail));
        r.fields = {{"requires-python", acc.requires_python_fail}};
      } else if (acc.has_wheel) {
        r.kind = UnavailableKind::OtherPlatforms;
        r.message = fmt::format("has no wheel for {} (wheels exist only for other platforms or Pythons)",
                                target_tag_text());
      } else {
        r.kind = UnavailableKind::OnlySdist;
        r.message = "has only a source distribution (gpulock locks wheels; building sdists is out of scope)";
      }
      acc.entry.unavailable = r;
    }
    state.any_wheel_for_target = any_available;
    state.only_sdists = !any_available && any_sdist && !any_wheel;
    state.only_other_platforms = !any_available && any_wheel && !any_tag_ok;

    std::vector<VersionEntry> entries;
    entries.reserve(accs.size());
    for (auto& acc : accs) {
      if (!acc.other_date.empty() && !acc.has_wheel && !acc.has_sdist) continue;
      entries.push_back(std::move(acc.entry));
    }
    bool torch_order = !config.torch.empty() && is_torch_family(name);
    std::stable_sort(entries.begin(), entries.end(), [&](const VersionEntry& a, const VersionEntry& b) {
      if (torch_order) {
        // Newest public version first, then the highest CUDA variant (never PEP 440 label order).
        auto pa = a.version.public_version(), pb = b.version.public_version();
        if (pa != pb) return pa > pb;
        auto rank_of = [](const BuildLabel& l) {
          if (l.kind == BuildKind::Cuda && l.cuda) return static_cast<std::int64_t>(l.cuda->major * 100 + l.cuda->minor);
          if (l.kind == BuildKind::Unlabeled) return std::int64_t{-1};
          if (l.kind == BuildKind::Cpu) return std::int64_t{-2};
          return std::int64_t{-3};
        };
        auto ra = rank_of(a.build), rb = rank_of(b.build);
        if (ra != rb) return ra > rb;
      }
      return a.version > b.version;
    });
    if (auto pref = config.preferences.find(name); pref != config.preferences.end()) {
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const VersionEntry& e) { return e.version == pref->second; });
      if (it != entries.end()) {
        state.pin_from = static_cast<std::size_t>(it - entries.begin());
        std::rotate(entries.begin(), it, it + 1);
      }
    }
    state.entries = std::move(entries);
  }

  // Prefetch the METADATA of the candidate most likely to be chosen.
  void prefetch_first(const PackageState& state) {
    for (const auto& e : state.entries) {
      if (e.file != nullptr && !e.unavailable) {
        client.prefetch_metadata(*e.file);
        return;
      }
    }
  }

  core::Result<const core::CoreMetadata*> read_metadata(const index::DistFile& file, std::string& problem) {
    auto& slot = metadata[&file];
    if (slot.metadata) return &*slot.metadata;
    auto text = client.fetch_metadata(file);
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
    auto parsed = core::CoreMetadata::parse(*text);
    if (!parsed) {
      problem = parsed.error().to_string();
      return nullptr;
    }
    slot.metadata = std::move(*parsed);
    return &*slot.metadata;
  }

  std::optional<resolver::PackageCandidates> virtual_candidates(std::string_view name) const {
    resolver::PackageCandidates out;
    out.priority = 100;
    if (name == kPython) {
      out.candidates.push_back({config.target.python_full, false, std::nullopt});
      return out;
    }
    if (name == kCuda) {
      if (!config.gpu.no_gpu && config.gpu.ceiling) {
        out.candidates.push_back({make_version(config.gpu.ceiling->major, config.gpu.ceiling->minor), false, std::nullopt});
      }
      return out;
    }
    if (name == kCudaVariant) {
      // Every CUDA a variant label can name (9.0 to 13.9), and 0 for CPU builds.
      for (std::uint64_t major = 13; major >= 9; --major) {
        for (std::uint64_t minor = 10; minor-- > 0;) out.candidates.push_back({make_version(major, minor), false, std::nullopt});
      }
      out.candidates.push_back({make_version(0, 0), false, std::nullopt});
      return out;
    }
    if (name == kCudaMajor) {
      for (std::uint64_t major = 13; major >= 9; --major) {
        std::uint64_t parts[1] = {major};
        out.candidates.push_back({core::Version::from_release(parts), false, std::nullopt});
      }
      return out;
    }
    return std::nullopt;
  }

  // What CUDA a candidate needs: its +cuXYZ label, the CUDA of its runtime pins (PyPI torch),
  // else its own name and version (nvidia-*, cuda-toolkit, cuda-bindings).
  static std::optional<CudaNeed> cuda_need(std::string_view package, const VersionEntry& entry,
                                           std::span<const core::Requirement> requires_dist) {
    if (entry.build.cuda) return CudaNeed{*entry.build.cuda, true};
    if (entry.build.kind == BuildKind::Unlabeled) {
      if (auto from_pins = cuda_from_dependencies(requires_dist)) return CudaNeed{*from_pins, true};
    }
    return cuda_need_of_package(package, entry.version);
  }

  std::string ceiling_text() const {
    if (config.gpu.no_gpu) return "--driver none means no GPU";
    if (!config.gpu.ceiling) return "no NVIDIA driver was found";
    std::string who = config.gpu.driver ? fmt::format("your driver {}", config.gpu.driver->to_string()) : "your driver";
    if (config.gpu.compat == probe::CudaCompat::Minor) {
      return fmt::format("{} supports CUDA {}.x (minor-version compatibility)", who, config.gpu.ceiling->major);
    }
    return fmt::format("{} supports CUDA <= {}", who, config.gpu.ceiling->to_string());
  }
};

IndexProvider::IndexProvider(index::IndexClient& client, ProviderConfig config)
    : impl_(std::make_unique<Impl>(client, std::move(config))) {
  impl_->prefetch_torch_listings();
}

IndexProvider::~IndexProvider() = default;

core::Result<resolver::PackageCandidates> IndexProvider::candidates(std::string_view package) {
  if (package.starts_with("__")) {
    auto v = impl_->virtual_candidates(package);
    if (v) return *v;
    return resolver::PackageCandidates{};
  }
  auto [it, inserted] = impl_->packages.try_emplace(std::string(package));
  PackageState& state = it->second;
  if (inserted) {
    auto status = impl_->load(package, state);
    if (!status) {
      impl_->packages.erase(it);
      return std::unexpected(status.error());
    }
  }
  impl_->prefetch_first(state);

  resolver::PackageCandidates out;
  out.candidates.reserve(state.entries.size());
  const auto& gpu = impl_->config.gpu;
  for (const auto& e : state.entries) {
    resolver::Candidate c{e.version, e.yanked, e.unavailable};
    // cuDNN 9.11 and newer dropped Maxwell, Pascal and Volta (torch refuses it below sm_75).
    if (!c.unavailable && package.starts_with("nvidia-cudnn-") && !gpu.archs.empty()) {
      if (auto floor = cudnn_min_capability(e.version)) {
        for (const auto& arch : gpu.archs) {
          if (arch < *floor) {
            c.unavailable = UnavailableReason{UnavailableKind::GpuArchMissing,
                                              fmt::format("needs {} or newer and your GPU is {}", floor->to_string(),
                                                          arch.to_string()),
                                              {{"arch", arch.to_string()}}};
            break;
          }
        }
      }
    }
    out.candidates.push_back(std::move(c));
  }
  if (impl_->config.nightly_date && is_torch_family(package)) {
    out.prerelease = resolver::PrereleasePolicy::Allow;
  }
  if (is_torch_family(package)) out.priority = 10;
  return out;
}

core::Result<resolver::Dependencies> IndexProvider::dependencies(std::string_view package, std::size_t index,
                                                                 const core::Version& version,
                                                                 std::string_view extra) {
  resolver::Dependencies out;
  if (package == kCudaVariant && version.release_at(0) != 0) {
    // A CUDA X.Y variant uses CUDA X libraries: it meets `nvidia-*-cuNN` pins through `__cuda_major`.
    out.dependencies.push_back(
        {std::string(kCudaMajor), {}, *core::SpecifierSet::parse(fmt::format("=={}", version.release_at(0)))});
    return out;
  }
  if (package.starts_with("__")) return out;
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end() || index >= it->second.entries.size()) {
    return core::fail(core::ErrorCode::Internal, fmt::format("dependencies of unknown candidate {} {}", package, version.to_string()));
  }
  VersionEntry& entry = it->second.entries[index];
  if (entry.file == nullptr) {
    out.unavailable = entry.unavailable;
    return out;
  }
  // Remember what was learned about the package itself (not an extra's proxy).
  auto learned = [&]() -> resolver::Dependencies& {
    if (extra.empty()) {
      entry.dependencies_read = true;
      entry.dependencies_unavailable = out.unavailable;
    }
    return out;
  };
  std::string problem;
  auto md = impl_->read_metadata(*entry.file, problem);
  if (!md) return std::unexpected(md.error());
  if (*md == nullptr) {
    out.unavailable = UnavailableReason{UnavailableKind::MetadataError,
                                        fmt::format("has unusable metadata ({})", problem), {}};
    return learned();
  }
  const core::CoreMetadata& meta = **md;
  const auto& env = impl_->config.target.environment;
  std::vector<core::Requirement> included;
  for (const auto& req : meta.requires_dist) {
    bool take = extra.empty() ? (req.marker.empty() || req.marker.matches(env, ""))
                              : (req.marker.mentions_extra() && req.marker.matches(env, extra));
    if (!take) continue;
    if (!req.url.empty()) {
      out.unavailable = UnavailableReason{UnavailableKind::MetadataError,
                                          fmt::format("depends on a direct URL ({} @ {}), which gpulock does not lock",
                                                      req.name, index::redact_url(req.url)),
                                          {}};
      return learned();
    }
    resolver::Dependency d;
    d.name = core::normalize_name(req.name);
    for (const auto& x : req.extras) d.extras.push_back(core::normalize_extra(x));
    d.specifier = req.specifier;
    out.dependencies.push_back(std::move(d));
    included.push_back(req);
  }
  if (!extra.empty()) return out;
  entry.requirements = out.dependencies;

  // Requires-Python from METADATA when the index did not say (the index's attribute was
  // already applied to the candidate).
  if (entry.file->requires_python().empty() && meta.requires_python && !meta.requires_python->empty()) {
    out.dependencies.push_back({std::string(kPython), {}, *meta.requires_python});
  }

  // GPU policy (DESIGN.md §GPU model).
  const auto& gpu = impl_->config.gpu;
  auto need = Impl::cuda_need(package, entry, included);
  std::optional<CudaVersion> cuda;
  if (need) cuda = need->cuda;
  entry.needs_cuda = cuda;
  if (is_cuda_linked(package)) {
    if (entry.build.kind == BuildKind::Cuda && entry.build.cuda) {
      auto spec = core::SpecifierSet::parse("==" + entry.build.cuda->to_string());
      out.dependencies.push_back({std::string(kCudaVariant), {}, *spec});
    } else if (entry.build.kind == BuildKind::Cpu) {
      out.dependencies.push_back({std::string(kCudaVariant), {}, *core::SpecifierSet::parse("==0")});
    }
  }
  // One CUDA major's libraries per environment: `nvidia-*-cuNN` wheels name their major, and so
  // do CUDA builds of the torch family (through `__cuda_variant`), so a cu118 torch next to a
  // user's nvidia-cudnn-cu12 pin (two runtimes the loader would mix) is a conflict, not a
  // silent lock.
  // (CUDA builds reach `__cuda_major` through their `__cuda_variant`, see above.)
  if (package.starts_with("nvidia-") && need) {
    out.dependencies.push_back(
        {std::string(kCudaMajor), {}, *core::SpecifierSet::parse(fmt::format("=={}", need->cuda.major))});
  }
  if (cuda) {
    // Without a GPU (or a known ceiling) every CUDA build fails alike ("needs CUDA"): one
    // specifier for all lets the solver state that once for a whole range of versions. Where
    // only the major is known (cuda-bindings 13.x, nvidia-cufft), the major is the bound.
    std::string floor = gpu.no_gpu || !gpu.ceiling                                  ? std::string(">=0")
                        : gpu.compat == probe::CudaCompat::Minor || !need->minor_exact ? fmt::format(">={}.0", cuda->major)
                                                                                      : ">=" + cuda->to_string();
    out.dependencies.push_back({std::string(kCuda), {}, *core::SpecifierSet::parse(floor)});
  }
  // Kernels for every GPU: the arch list of this torch build (by release and CUDA).
  if (package == "torch" && cuda && !gpu.archs.empty() && !gpu.no_gpu) {
    // An unknown list is bounded by what its CUDA can build: SASS for those archs, no PTX.
    auto list = torch_arch_list(version, *cuda, impl_->config.target.environment.platform_machine);
    if (!list) {
      list = archs_cuda_can_build(*cuda);
      impl_->warn(fmt::format("no GPU architecture list is known for torch {} (CUDA {}); assumed: kernels for what CUDA {} "
                              "can build, no PTX",
                              version.public_version().to_string(), cuda->to_string(), cuda->to_string()));
    }
    entry.archs_assumed = list->assumed;
    for (const auto& arch : gpu.archs) {
      if (!arch_list_runs_on(*list, arch)) {
        std::string why = list->assumed
                              ? fmt::format("has no kernels for your GPU's {} (no arch list is known for it, and CUDA {} "
                                            "cannot build for {})",
                                            arch.to_string(), cuda->to_string(), arch.to_string())
                              : fmt::format("has no kernels for your GPU's {} (its CUDA {} build carries {})",
                                            arch.to_string(), cuda->to_string(), describe_arch_list(*list));
        out.unavailable = UnavailableReason{UnavailableKind::GpuArchMissing, std::move(why),
                                            {{"arch", arch.to_string()}, {"cuda", cuda->to_string()}}};
        return learned();
      }
    }
  }
  return learned();
}

bool IndexProvider::should_cancel() {
  // index::interrupted(): SIGINT/SIGTERM (the CLI) stop a long solve too.
  return impl_->cancelled.load() || index::interrupted();
}

void IndexProvider::cancel() {
  impl_->cancelled = true;
  impl_->client.cancel();
}

void IndexProvider::on_version_chosen(std::string_view, const core::Version&,
                                      std::span<const resolver::Dependency> dependencies) {
  // Start every dependency's first-priority pages at once: a cold resolve is then bounded by
  // the depth of the graph, not its size.
  for (const auto& d : dependencies) {
    if (d.name.starts_with("__") || impl_->packages.contains(d.name)) continue;
    auto groups = impl_->groups_for(d.name);
    if (groups.empty()) continue;
    std::size_t n = impl_->config.strategy == IndexStrategy::UnsafeBestMatch ? groups.size() : 1;
    for (std::size_t g = 0; g < n; ++g) {
      for (const auto* s : groups[g]) impl_->client.prefetch_project(s->source, d.name);
    }
  }
}

std::optional<std::string> IndexProvider::describe_term(const resolver::Term& term, std::string_view text) const {
  const auto& name = term.package().name;
  std::string set = term.set_text();
  if (name == kPython) return set.empty() ? "Python" : fmt::format("Python {}", spaced_specifier(set));
  if (name == kCuda) return set.empty() ? "CUDA" : fmt::format("CUDA {}", spaced_specifier(set));
  if (name == kCudaVariant) {
    auto versions = term.versions.versions();
    if (versions.size() == 1) {
      if (versions[0].release_at(0) == 0) return std::string("the CPU variant");
      return fmt::format("the CUDA {}.{} variant", versions[0].release_at(0), versions[0].release_at(1));
    }
    return std::string("one CUDA variant");
  }
  if (name == kCudaMajor) {
    auto versions = term.versions.versions();
    if (versions.size() == 1) return fmt::format("CUDA {} libraries", versions[0].release_at(0));
    return std::string("one CUDA major version");
  }
  // A single labeled torch-family build reads as its public version: "torch==2.7.1".
  auto versions = term.versions.versions();
  if (versions.size() == 1 && versions[0].has_local() && is_torch_family(name) && term.positive) {
    auto label = classify_build(versions[0]);
    if (label.kind == BuildKind::Cuda || label.kind == BuildKind::Cpu) {
      return fmt::format("{}=={}", term.package().display_name(), versions[0].public_version().to_string());
    }
  }
  // Several labeled builds: when the set is exactly "every build of these variants", name the
  // variants ("torch (CUDA 11.8 builds)"); PEP 440 ranges over local labels read badly.
  if (versions.size() > 1 && !term.versions.full() && is_torch_family(name) && term.positive &&
      term.package().versions) {
    auto label_key = [](const core::Version& v) {
      auto l = classify_build(v);
      if (l.kind == BuildKind::Cuda && l.cuda) return fmt::format("CUDA {}", l.cuda->to_string());
      if (l.kind == BuildKind::Cpu) return std::string("CPU");
      return std::string();
    };
    std::map<std::string, std::size_t> in_set, in_all;
    for (const auto& v : versions) ++in_set[label_key(v)];
    for (const auto& v : *term.package().versions) {
      auto key = label_key(v);
      if (in_set.contains(key)) ++in_all[key];
    }
    bool whole_variants = !in_set.contains("") && in_set == in_all;
    if (whole_variants) {
      std::string labels;
      for (const auto& [key, n] : in_set) labels += (labels.empty() ? "" : ", ") + key;
      return fmt::format("{} ({} builds)", term.package().display_name(), labels);
    }
  }
  (void)text;
  return std::nullopt;
}

std::optional<std::string> IndexProvider::describe_dependency(const resolver::Term& depender,
                                                              const resolver::Term& dependency,
                                                              std::string_view depender_text,
                                                              std::string_view dependency_text) const {
  const auto& dep = dependency.package().name;
  if (dep != kCuda && dep != kCudaVariant && dep != kCudaMajor) return std::nullopt;
  std::string who(depender_text);
  auto versions = depender.versions.versions();
  if (versions.size() == 1) {
    auto label = classify_build(versions[0]);
    if (label.kind == BuildKind::Cuda && label.cuda) {
      who = fmt::format("{}=={} (CUDA {} build)", depender.package().display_name(),
                        versions[0].public_version().to_string(), label.cuda->to_string());
    } else if (label.kind == BuildKind::Cpu) {
      who = fmt::format("{}=={} (CPU build)", depender.package().display_name(), versions[0].public_version().to_string());
    }
  }
  if (dep == kCuda) {
    // Without a GPU (or a known ceiling) the version a build needs is beside the point.
    if (impl_->config.gpu.no_gpu || !impl_->config.gpu.ceiling) return fmt::format("{} needs CUDA", who);
    return fmt::format("{} needs {}", who, dependency_text);
  }
  auto variants = dependency.versions.versions();
  if (dep == kCudaMajor) {
    // "nvidia-cudnn-cu12==9.5.1.17 uses CUDA 12 libraries".
    if (variants.size() == 1) return fmt::format("{} uses CUDA {} libraries", who, variants[0].release_at(0));
    return fmt::format("{} needs {}", depender_text, dependency_text);
  }
  // `__cuda_variant`: "torchvision==0.19.0 is a CUDA 11.8 build".
  if (variants.size() == 1) {
    if (variants[0].release_at(0) == 0) return fmt::format("{} is a CPU build", depender_text);
    return fmt::format("{} is a CUDA {}.{} build", depender_text, variants[0].release_at(0), variants[0].release_at(1));
  }
  return fmt::format("{} needs {}", depender_text, dependency_text);
}

std::optional<std::string> IndexProvider::describe_no_versions(const resolver::Term& term, std::string_view) const {
  const auto& name = term.package().name;
  if (name == kCuda) return impl_->ceiling_text();
  if (name == kPython) {
    return fmt::format("the target is Python {}", impl_->config.target.python_full.to_string());
  }
  return std::nullopt;
}

std::vector<std::string> IndexProvider::package_hints(const resolver::PackageInfo& package) const {
  std::vector<std::string> hints;
  if (package.is_virtual || package.is_root) {
    if (package.name == kCuda) impl_->cuda_hinted = true;
    if (package.name == kCuda && impl_->config.gpu.ceiling && impl_->config.gpu.compat == probe::CudaCompat::Strict &&
        !impl_->config.gpu.no_gpu) {
      auto next = probe::min_driver_for_cuda({impl_->config.gpu.ceiling->major, impl_->config.gpu.ceiling->minor + 1},
                                             probe::CudaCompat::Strict);
      if (next) {
        hints.push_back(fmt::format("a newer CUDA build needs a driver >= {} (run `gpulock probe --machine` to see "
                                    "yours)",
                                    next->to_string()));
      }
    }
    if (package.name == kCuda && impl_->config.gpu.no_gpu) {
      hints.push_back("CUDA builds need a GPU: to lock for a GPU machine, add --driver VERSION with the version "
                      "`gpulock probe --machine` prints there");
    }
    return hints;
  }
  auto it = impl_->packages.find(package.name);
  if (it == impl_->packages.end()) return hints;
  const PackageState& state = it->second;
  // No "pre-releases exist" hint here: under if-necessary a pre-release is chosen whenever no
  // final release remains, and the reporter itself explains pre-releases that
  // --prerelease disallow excluded. (A hint from this list alone misled: `x>9` with only
  // unrelated pre-releases, or nightly torch, where pre-releases are allowed already.)
  // First-index ignored lower-priority sources: say so when one of them has versions the used
  // source lacks. Only pages fetch_hint_pages fetched are read: no I/O here.
  if (auto pages = impl_->hint_pages.find(package.name);
      pages != impl_->hint_pages.end() && impl_->hints_skipped_sources(package.name, state)) {
    std::unordered_map<core::Version, bool, core::VersionHash> known;
    for (const auto& e : state.entries) known.emplace(e.version, true);
    for (const auto& [s, page] : pages->second) {
      bool has_other = std::any_of(page->files.begin(), page->files.end(),
                                   [&](const index::DistFile& f) { return !known.contains(f.version()); }) ||
                       std::any_of(page->omitted.begin(), page->omitted.end(),
                                   [&](const index::OmittedVersion& o) { return !known.contains(o.version); });
      if (has_other) {
        std::string other = index::redact_url(s->source.url);
        hints.push_back(fmt::format("{} was also found on {}, but under first-index only {} is used for it (protection "
                                    "against dependency confusion); {}",
                                    package.name, other, Impl::sources_text(state.sources),
                                    impl_->first_index_fix(package.name, other)));
        break;
      }
    }
  }
  // A build without kernels for a GPU: which CUDA builds of that release have them. The command
  // that asks for one is suggested by the resolve workflow once it has tried it.
  for (const auto& fix : impl_->arch_fixes(package.name, state)) {
    if (fix.builds.empty()) {
      hints.push_back(fmt::format("no CUDA build of {} has kernels for your GPU's {}; an older release may",
                                  fix.release, fix.arch.to_string()));
    } else {
      std::string variants;
      for (const auto& b : fix.builds) variants += (variants.empty() ? "" : ", ") + variant_name(b);
      hints.push_back(fmt::format("{} has kernels for your GPU's {} only in variant{} {}", fix.release,
                                  fix.arch.to_string(), fix.builds.size() == 1 ? "" : "s", variants));
    }
  }
  if (state.only_sdists) {
    hints.push_back(fmt::format("{} has only source distributions on the index; gpulock does not build sdists",
                                package.name));
  } else if (state.only_other_platforms) {
    hints.push_back(fmt::format("{} has wheels only for other platforms or Pythons than {}", package.name,
                                impl_->target_tag_text()));
  }
  return hints;
}

IndexProvider::Selection IndexProvider::selection(std::string_view package, std::size_t candidate_index) const {
  Selection s;
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end() || candidate_index >= it->second.entries.size()) return s;
  const auto& e = it->second.entries[candidate_index];
  s.file = e.file;
  s.source = e.source;
  s.build = e.build;
  std::span<const core::Requirement> requires_dist;
  if (e.file != nullptr) {
    auto m = impl_->metadata.find(e.file);
    if (m != impl_->metadata.end() && m->second.metadata) requires_dist = m->second.metadata->requires_dist;
  }
  if (auto need = Impl::cuda_need(package, e, requires_dist)) {
    s.cuda = need->cuda;
    s.cuda_minor_exact = need->minor_exact;
  }
  s.archs_assumed = e.archs_assumed;
  return s;
}

const core::CoreMetadata* IndexProvider::metadata(std::string_view package, std::size_t candidate_index) const {
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end() || candidate_index >= it->second.entries.size()) return nullptr;
  const auto* file = it->second.entries[candidate_index].file;
  if (file == nullptr) return nullptr;
  auto m = impl_->metadata.find(file);
  if (m == impl_->metadata.end() || !m->second.metadata) return nullptr;
  return &*m->second.metadata;
}

std::vector<IndexProvider::Skipped> IndexProvider::skipped_before(std::string_view package, std::size_t chosen_index,
                                                                  const resolver::Solution* solution) const {
  std::vector<Skipped> out;
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end()) return out;
  const auto& entries = it->second.entries;
  const auto& gpu = impl_->config.gpu;
  bool chosen_pre = chosen_index < entries.size() && entries[chosen_index].version.is_prerelease();
  if (chosen_index == 0 && it->second.pin_from > 0) {
    // The existing lock's pin was tried first: the candidates it was preferred over.
    for (std::size_t i = 1; i <= it->second.pin_from && i < entries.size(); ++i) {
      out.push_back({entries[i].version, "kept-pin",
                     fmt::format("not tried: the existing lock pins {} (--upgrade-package {})",
                                 entries[0].version.to_string(), package),
                     {}});
    }
    return out;
  }
  for (std::size_t i = 0; i < chosen_index && i < entries.size(); ++i) {
    const VersionEntry& e = entries[i];
    Skipped s{e.version, {}, {}, {}};
    auto from = [&](const UnavailableReason& r) {
      s.kind = std::string(resolver::unavailable_kind_name(r.kind));
      s.reason = r.message.empty() ? "cannot be used" : r.message;
    };
    if (e.unavailable && e.unavailable->kind == UnavailableKind::CudaTooNew && e.build.cuda) {
      s.kind = std::string(resolver::unavailable_kind_name(UnavailableKind::CudaTooNew));
      s.reason = fmt::format("needs CUDA {} and {}", e.build.cuda->to_string(), impl_->ceiling_text());
    } else if (e.unavailable) {
      from(*e.unavailable);
    } else if (e.dependencies_unavailable) {
      from(*e.dependencies_unavailable);
    } else if (e.needs_cuda && (gpu.no_gpu || !gpu.ceiling ||
                                !probe::ceiling_allows(*gpu.ceiling, *e.needs_cuda, gpu.compat))) {
      s.kind = std::string(resolver::unavailable_kind_name(UnavailableKind::CudaTooNew));
      s.reason = fmt::format("needs CUDA {} and {}", e.needs_cuda->to_string(), impl_->ceiling_text());
    } else if (e.dependencies_read) {
      // Tried (so neither yanked-and-unpinned nor a pre-release held it back): a conflict,
      // named when one requirement alone explains it.
      s.kind = "conflict";
      s.reason = impl_->conflict_reason(e, solution, &s.hint).value_or("conflicts with the other requirements");
    } else if (e.yanked) {
      s.kind = std::string(resolver::unavailable_kind_name(UnavailableKind::Yanked));
      s.reason = "is yanked (used only when pinned with ==)";
    } else if (e.version.is_prerelease() && !chosen_pre) {
      s.kind = "prerelease";
      s.reason = "is a pre-release (allow with --pre)";
    } else {
      s.kind = "excluded";
      s.reason = "is excluded by the requirements";
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> IndexProvider::warnings() const { return impl_->warnings; }

std::optional<std::string> IndexProvider::cuda_too_new_hint(std::string_view package) const {
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end()) return std::nullopt;
  // Builds above the driver's ceiling (--torch-backend auto): what driver the lowest one needs.
  std::optional<CudaVersion> lowest;
  for (const auto& e : it->second.entries) {
    if (e.unavailable && e.unavailable->kind == UnavailableKind::CudaTooNew && e.build.cuda &&
        (!lowest || *e.build.cuda < *lowest)) {
      lowest = e.build.cuda;
    }
  }
  if (!lowest) return std::nullopt;
  auto md = probe::min_driver_for_cuda(*lowest, impl_->config.gpu.compat);
  if (!md) return std::nullopt;
  return fmt::format("{}'s CUDA {} builds need a driver >= {} (run `gpulock probe --machine` to see yours)", package,
                     lowest->to_string(), md->to_string());
}

bool IndexProvider::cuda_hinted() const { return impl_->cuda_hinted; }

void IndexProvider::fetch_hint_pages(const resolver::DerivationTree& tree) {
  std::set<std::string, std::less<>> names;
  for (const auto& node : tree.nodes) {
    for (const auto& t : node.terms) {
      const auto& p = t.package();
      if (!p.is_root && !p.is_virtual) names.insert(p.name);
    }
  }
  // Every page asked at once, then collected.
  std::vector<std::pair<std::string, const SourceSpec*>> wanted;
  for (const auto& name : names) {
    auto it = impl_->packages.find(name);
    if (it == impl_->packages.end() || !impl_->hints_skipped_sources(name, it->second)) continue;
    for (const auto* s : it->second.skipped) {
      impl_->client.prefetch_project(s->source, name);
      wanted.emplace_back(name, s);
    }
  }
  for (const auto& [name, s] : wanted) {
    auto page = impl_->client.fetch_project(s->source, name);
    if (!page) {
      impl_->warn(fmt::format("could not compare {} on {} for a hint: {}", name, index::redact_url(s->source.url),
                              page.error().to_string()));
      continue;
    }
    if ((*page)->found) impl_->hint_pages[name].emplace_back(s, *page);
  }
}

std::vector<std::string> IndexProvider::arch_fix_backends() const {
  std::vector<std::string> out;
  for (const auto& [name, state] : impl_->packages) {
    for (const auto& fix : impl_->arch_fixes(name, state)) {
      std::string backend = fix.builds.size() == 1 ? variant_name(fix.builds.front()) : std::string("auto");
      if (!fix.builds.empty() && std::find(out.begin(), out.end(), backend) == out.end()) out.push_back(backend);
    }
  }
  return out;
}

std::vector<std::string> IndexProvider::projects_not_found() const {
  std::vector<std::string> out;
  for (const auto& [name, state] : impl_->packages) {
    if (state.sources.empty()) out.push_back(name);
  }
  return out;
}

bool IndexProvider::any_project_found() const {
  return std::any_of(impl_->packages.begin(), impl_->packages.end(),
                     [](const auto& p) { return !p.second.sources.empty(); });
}

std::vector<const SourceSpec*> IndexProvider::sources_for(std::string_view name) const {
  std::vector<const SourceSpec*> out;
  for (const auto& g : impl_->groups_for(name)) out.insert(out.end(), g.begin(), g.end());
  return out;
}

std::vector<std::string> IndexProvider::kept_pins_beaten(const resolver::Solution& solution,
                                                         std::string_view lock_name) const {
  std::vector<std::string> out;
  const auto& gpu = impl_->config.gpu;
  for (const auto& chosen : solution.packages) {
    if (chosen.is_virtual || chosen.candidate_index != 0) continue;
    auto it = impl_->packages.find(chosen.name);
    if (it == impl_->packages.end() || it->second.pin_from == 0) continue;
    const auto& entries = it->second.entries;
    if (!is_torch_family(chosen.name) && entries[0].build.kind != BuildKind::Cuda) continue;
    for (std::size_t i = 1; i <= it->second.pin_from && i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (e.file == nullptr || e.unavailable || e.yanked || e.version.is_prerelease() != entries[0].version.is_prerelease()) {
        continue;
      }
      if (e.build.cuda && (gpu.no_gpu || !gpu.ceiling || !probe::ceiling_allows(*gpu.ceiling, *e.build.cuda, gpu.compat))) {
        continue;
      }
      if (chosen.name == "torch" && e.build.cuda && !gpu.archs.empty()) {
        auto list = torch_arch_list(e.version, *e.build.cuda, impl_->config.target.environment.platform_machine);
        if (!list) list = archs_cuda_can_build(*e.build.cuda);
        bool runs = std::all_of(gpu.archs.begin(), gpu.archs.end(),
                                [&](const ComputeCapability& a) { return arch_list_runs_on(*list, a); });
        if (!runs) continue;
      }
      out.push_back(fmt::format("kept {} {} from {}; {} is newer for this machine (--upgrade-package {})", chosen.name,
                                entries[0].version.to_string(), lock_name, e.version.to_string(), chosen.name));
      break;
    }
  }
  return out;
}

}  // namespace gpulock::app

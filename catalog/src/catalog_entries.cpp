// Catalog: the candidates of a package in preference order, each with the wheel the target
// installs, and why the others cannot be used.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <map>
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

// What build_entries learns of one version from its files; `entry` is the version's slot in the
// package's entries, built in place.
struct VersionAcc {
  explicit VersionAcc(VersionEntry& e) : entry(e) {}
  VersionEntry& entry;
  std::shared_ptr<VariantChoice> variants;
  std::optional<std::size_t> best_rank;
  bool has_wheel = false, has_sdist = false, tag_ok = false, excluded_newer = false,
       undated = false;

  bool above_ceiling = false;  // from a torch variant above the driver's ceiling
  std::string requires_python_fail;
  std::optional<NightlyDate> other_date;
};

// Why a version without a usable wheel cannot be used.
UnavailableReason unavailable_reason(const VersionAcc& acc, const gpu::GpuPolicy& gpu,
                                     const std::string& target_tag) {
  UnavailableReason r;
  if (acc.above_ceiling) {
    r = gpu.above_ceiling(acc.entry.build);
  } else if (acc.excluded_newer || (acc.undated && !acc.tag_ok)) {
    r.kind = UnavailableKind::ExcludedNewer;
    r.message = "was published after the --exclude-newer cutoff";
  } else if (acc.undated) {
    r.kind = UnavailableKind::ExcludedNewer;
    r.message = "has no upload time, so --exclude-newer leaves it out";
  } else if (!acc.requires_python_fail.empty()) {
    r.kind = UnavailableKind::RequiresPython;
    r.message = fmt::format("needs Python {}", core::spaced_specifier(acc.requires_python_fail));
    r.fields = {{"requires-python", acc.requires_python_fail}};
  } else if (acc.has_wheel) {
    r.kind = UnavailableKind::OtherPlatforms;
    r.message = fmt::format(
        "has no wheel for {} (wheels exist only for other platforms or Pythons)", target_tag);
  } else {
    r.kind = UnavailableKind::OnlySdist;
    r.message =
        "has only a source distribution (gpulock locks wheels; building sdists is out of scope)";
  }
  return r;
}

// Each release with variant wheels: its plain wheel, its variant metadata file, and the wheel
// that stands for it until its label is settled.
void attach_variant_files(std::string_view name, const PackageState& state,
                          std::vector<VersionAcc>& accs) {
  // The variant metadata files of each source's pages, by version.
  std::map<std::pair<const SourceSpec*, core::Version>, const index::DistFile*> variants_files;
  for (std::size_t i = 0; i < state.pages.size() && i < state.sources.size(); ++i) {
    for (const auto& f : state.pages[i]->variants_files) {
      auto parsed = index::variants_json_name(f.filename());
      if (parsed && parsed->project == name)
        variants_files.emplace(std::pair{state.sources[i], parsed->version}, &f);
    }
  }
  for (auto& acc : accs) {
    if (!acc.variants) continue;
    auto& v = *acc.variants;
    v.plain = acc.entry.file;
    v.plain_source = acc.entry.source;
    if (auto it = variants_files.find({v.source, acc.entry.version}); it != variants_files.end())
      v.metadata_file = it->second;
    // Until the label is settled, the first label's wheel stands for the release.
    acc.entry.file = v.by_label.begin()->second.first;
    acc.entry.source = v.source;
    acc.entry.yanked = acc.entry.file->yanked();
    acc.entry.variants = acc.variants;
  }
}

// Why each version without a usable wheel cannot be used, and what the package offers at all.
void settle_availability(std::string_view name, PackageState& state, std::vector<VersionAcc>& accs,
                         const gpu::GpuPolicy& gpu, const std::string& target_tag) {
  bool any_available = false, any_wheel = false, any_sdist = false, any_tag_ok = false;
  for (auto& acc : accs) {
    if (acc.other_date && !acc.has_wheel && !acc.has_sdist) {
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
    acc.entry.unavailable = unavailable_reason(acc, gpu, target_tag);
    // A 0.0.x placeholder sdist (nvidia-cuda-runtime-cu13): never chosen, and named as one.
    if (auto real = gpu::placeholder_real_name(name, acc.entry.version);
        real && acc.entry.unavailable->kind == UnavailableKind::OnlySdist) {
      acc.entry.unavailable->message =
          fmt::format("is a placeholder (an empty sdist); the CUDA 13 package is {}", *real);
      state.placeholder_for = *real;
    }
  }
  state.any_wheel_for_target = any_available;
  state.only_sdists = !any_available && any_sdist && !any_wheel;
  state.only_other_platforms = !any_available && any_wheel && !any_tag_ok;
}

// Preference order: the torch family newest public version first, then the highest CUDA variant
// (never PEP 440 label order); an existing lock's pin moved to the front.
void order_entries(std::string_view name, const ProviderConfig& config,
                   std::vector<VersionEntry>& entries, PackageState& state) {
  bool torch_order = !config.torch.empty() && gpu::is_torch_family(name);
  // The versions are distinct and the order ends on them: a total order, so std::sort gives
  // stable_sort's result without its buffer (a copy of every entry: 7,700 of a huge page).
  std::sort(entries.begin(), entries.end(), [&](const VersionEntry& a, const VersionEntry& b) {
    if (torch_order) {
      // Newest public version first, then the highest CUDA variant (never PEP 440
      // label order).
      auto pa = a.version.public_version(), pb = b.version.public_version();
      if (pa != pb) return pa > pb;
      auto rank_of = [](const gpu::BuildLabel& l) {
        if (l.kind == gpu::BuildKind::Cuda && l.cuda)
          return static_cast<std::int64_t>(l.cuda->major * 100 + l.cuda->minor);
        if (l.kind == gpu::BuildKind::Unlabeled) return std::int64_t{-1};
        if (l.kind == gpu::BuildKind::Cpu) return std::int64_t{-2};
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
}

}  // namespace

auto Catalog::Impl::build_entries(
    std::string_view name, PackageState& state,
    const std::vector<std::pair<const index::DistFile*, const SourceSpec*>>& files,
    const std::vector<std::pair<const index::OmittedVersion*, const SourceSpec*>>& omitted)
    -> void {
  using Acc = VersionAcc;
  // The distinct versions first, in the order they are met: the entries are then made once, in
  // place, and never moved (a huge page's 7,700 versions grown by doubling and then copied into
  // the package's list held three lists of 480-byte entries at once).
  std::unordered_map<core::Version, std::size_t, core::VersionHash> by_version;
  by_version.reserve(omitted.size() + files.size());
  for (const auto& [o, source] : omitted)
    by_version.try_emplace(o->version, by_version.size());
  for (const auto& [file, source] : files)
    by_version.try_emplace(file->version(), by_version.size());
  std::vector<VersionEntry> entries(by_version.size());
  for (const auto& [version, i] : by_version) {
    entries[i].version = version;
    entries[i].build = gpu::classify_build(version);
  }
  std::vector<Acc> accs;
  accs.reserve(entries.size());
  for (auto& e : entries)
    accs.emplace_back(e);
  bool nightly_filter = config.nightly_date.has_value() && gpu::is_torch_family(name);
  // The version's accumulator, or null for a nightly of another date than the chosen one.
  auto acc_for = [&](const core::Version& v, const SourceSpec* source) -> Acc* {
    Acc& acc = accs[by_version.find(v)->second];
    if (nightly_filter && source->nightly()) {
      auto date = nightly_date_of(v);
      if (date && *date != *config.nightly_date) {
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
    bool pin_only = false;
    if (file->is_sdist()) {
      acc.has_sdist = true;
      continue;
    }
    acc.has_wheel = true;
    auto rank = ranker.rank(file->tags());
    if (!rank) continue;
    acc.tag_ok = true;
    if (config.exclude_newer && on_nightly_snapshot(*file, *source)) {
      // On the nightly source the build date is the snapshot (issue 41 item 3).
      auto built = nightly_date_of(file->version());
      if (built && built->build_tag() > config.nightly_date->build_tag()) {
        acc.excluded_newer = true;
        continue;
      }
      if (!built) pin_only = true;
    } else if (config.exclude_newer) {
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
    // PEP 825: a variant wheel competes only with its label's other wheels; the label is
    // chosen later (settle_variant).
    if (std::string label = index::variant_label_of(file->filename()); !label.empty()) {
      if (!acc.variants) {
        acc.variants = std::make_shared<VariantChoice>();
        acc.variants->source = source;
      }
      if (acc.variants->source != source) continue;
      auto& slot = acc.variants->by_label[label];
      if (slot.first == nullptr || *rank < slot.second) slot = {file, *rank};
      continue;
    }
    // Best: a file that is not yanked, then the best tag rank.
    bool better = acc.entry.file == nullptr || (acc.entry.yanked && !file->yanked()) ||
                  (acc.entry.yanked == file->yanked() && *rank < *acc.best_rank);
    if (better) {
      acc.entry.file = file;
      acc.entry.source = source;
      acc.entry.yanked = file->yanked();
      acc.entry.needs_pin = pin_only;
      acc.best_rank = rank;
    }
  }

  attach_variant_files(name, state, accs);
  settle_availability(name, state, accs, gpu, target_tag_text());

  std::size_t kept = 0;
  for (std::size_t i = 0; i < accs.size(); ++i) {
    if (accs[i].other_date && !accs[i].has_wheel && !accs[i].has_sdist) continue;
    if (kept != i) entries[kept] = std::move(entries[i]);
    ++kept;
  }
  accs.clear();  // their entries moved
  entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(kept), entries.end());
  order_entries(name, config, entries, state);
  state.entries = std::move(entries);
}

}  // namespace gpulock::catalog

#include "gpulock/lock/diff.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/version.h"

#include "gpu_text.h"

namespace gpulock::lock {
namespace {

std::string marker_key(const std::optional<std::string>& marker) {
  if (!marker) return {};
  auto m = core::Marker::parse(*marker);
  return m ? m->to_string() : *marker;
}

// <0, 0, >0: PEP 440 order when both parse, text order otherwise.
int compare_versions(const std::string& a, const std::string& b) {
  auto va = core::Version::parse(a);
  auto vb = core::Version::parse(b);
  if (va && vb) {
    auto c = *va <=> *vb;
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  return a.compare(b);
}

std::string join(const std::vector<std::string>& items) {
  if (items.empty()) return "(none)";
  return fmt::format("{}", fmt::join(items, ", "));
}

std::optional<std::string> join(const std::optional<std::vector<std::string>>& items) {
  if (!items) return std::nullopt;
  return join(*items);
}

std::string source_text(const Package& p) {
  if (p.vcs) {
    return fmt::format("vcs {} {} {}", p.vcs->type, p.vcs->url.value_or(p.vcs->path.value_or("")),
                       p.vcs->commit_id);
  }
  if (p.directory) return "directory " + p.directory->path;
  if (p.archive) return "archive";
  return "distributions";
}

// True if the two hash tables disagree: a common algorithm with different digests, or (no
// algorithm in common) different tables.
bool hashes_differ(const Hashes& a, const Hashes& b) {
  bool common = false;
  for (const auto& [algo, digest] : a) {
    auto it = b.find(algo);
    if (it == b.end()) continue;
    common = true;
    if (it->second != digest) return true;
  }
  return !common && a != b;
}

bool file_details_differ(const FileEntry& a, const FileEntry& b) {
  return a.url != b.url || a.path != b.path || a.size != b.size || a.upload_time != b.upload_time ||
         a.subdirectory != b.subdirectory;
}

std::optional<PackageChange> compare_packages(const Package& o, const Package& n) {
  PackageChange c;
  c.name = n.name;
  c.old_version = o.version;
  c.new_version = n.version;
  c.old_marker = o.marker;
  c.new_marker = n.marker;
  if (o.version && n.version && *o.version != *n.version) {
    const int cmp = compare_versions(*o.version, *n.version);
    if (cmp != 0) {
      c.kind = cmp < 0 ? PackageChangeKind::Upgraded : PackageChangeKind::Downgraded;
      return c;
    }
  }
  if (o.version != n.version && (!o.version || !n.version)) c.fields.emplace_back("version");
  if (marker_key(o.marker) != marker_key(n.marker)) c.fields.emplace_back("marker");
  if (o.requires_python != n.requires_python) c.fields.emplace_back("requires-python");
  if (o.index != n.index) c.fields.emplace_back("index");
  if (source_text(o) != source_text(n) || o.vcs != n.vcs || o.directory != n.directory) {
    c.fields.emplace_back("source");
  }
  if (o.dependencies != n.dependencies) c.fields.emplace_back("dependencies");
  if (o.attestation_identities != n.attestation_identities) {
    c.fields.emplace_back("attestation-identities");
  }

  std::map<std::string, const FileEntry*> old_files;
  std::map<std::string, const FileEntry*> new_files;
  for (const FileEntry* f : o.files())
    old_files.emplace(f->filename(), f);
  for (const FileEntry* f : n.files())
    new_files.emplace(f->filename(), f);
  bool details = false;
  for (const auto& [name, f] : old_files) {
    auto it = new_files.find(name);
    if (it == new_files.end()) {
      c.files_removed.push_back(name);
      continue;
    }
    if (hashes_differ(f->hashes, it->second->hashes)) {
      c.rehashed.push_back(RehashedFile{name, f->hashes, it->second->hashes});
    }
    details |= file_details_differ(*f, *it->second);
  }
  for (const auto& [name, f] : new_files) {
    if (!old_files.contains(name)) c.files_added.push_back(name);
  }
  if (details) c.fields.emplace_back("file-details");
  if (o.tool != n.tool) c.fields.emplace_back("tool");

  if (!c.rehashed.empty()) {
    c.kind = PackageChangeKind::Rehashed;
  } else if (!c.fields.empty() || !c.files_added.empty() || !c.files_removed.empty()) {
    c.kind = PackageChangeKind::Changed;
  } else {
    return std::nullopt;
  }
  return c;
}

PackageChange added_or_removed(const Package& p, bool added) {
  PackageChange c;
  c.kind = added ? PackageChangeKind::Added : PackageChangeKind::Removed;
  c.name = p.name;
  (added ? c.new_version : c.old_version) = p.version;
  (added ? c.new_marker : c.old_marker) = p.marker;
  return c;
}

class Facts {
 public:
  void add(std::string key, std::optional<std::string> o, std::optional<std::string> n) {
    if (o == n) return;
    FactChange f;
    f.key = std::move(key);
    f.old_value = std::move(o);
    f.new_value = std::move(n);
    facts_.push_back(std::move(f));
  }
  /// A list fact: compared and shown as its entries joined, the entries kept for one line each.
  void add_list(std::string key, const std::optional<std::vector<std::string>>& o,
                const std::optional<std::vector<std::string>>& n) {
    auto old_text = join(o), new_text = join(n);
    if (old_text == new_text) return;
    FactChange f;
    f.key = std::move(key);
    f.old_value = std::move(old_text);
    f.new_value = std::move(new_text);
    f.old_items = o.value_or(std::vector<std::string>{});
    f.new_items = n.value_or(std::vector<std::string>{});
    f.is_list = true;
    facts_.push_back(std::move(f));
  }
  std::vector<FactChange> take() { return std::move(facts_); }

 private:
  std::vector<FactChange> facts_;
};

template <class T, class F>
auto field(const std::optional<T>& table, F get) -> std::optional<decltype(get(*table))> {
  if (!table) return std::nullopt;
  return get(*table);
}

std::vector<std::string> index_items(const std::vector<IndexRecord>& indexes) {
  std::vector<std::string> items;
  for (const auto& i : indexes)
    items.push_back(fmt::format("{}={} ({})", i.name, i.url, i.role));
  return items;
}

// The changes among the entries of one package name: entries paired by marker (or the one left
// on each side), compared, the others added or removed; in a stable order.
std::vector<PackageChange> name_changes(std::vector<const Package*>& olds,
                                        std::vector<const Package*>& news) {
  std::vector<std::pair<const Package*, const Package*>> pairs;
  // Same marker first.
  for (auto oi = olds.begin(); oi != olds.end();) {
    auto ni = std::find_if(news.begin(), news.end(), [&](const Package* n) {
      return marker_key((*oi)->marker) == marker_key(n->marker);
    });
    if (ni == news.end()) {
      ++oi;
      continue;
    }
    pairs.emplace_back(*oi, *ni);
    news.erase(ni);
    oi = olds.erase(oi);
  }
  // One left on each side: the same package under a new marker.
  if (olds.size() == 1 && news.size() == 1) {
    pairs.emplace_back(olds.front(), news.front());
    olds.clear();
    news.clear();
  }
  std::vector<PackageChange> changes;
  for (const auto& [o, n] : pairs) {
    if (auto c = compare_packages(*o, *n)) changes.push_back(std::move(*c));
  }
  for (const Package* o : olds)
    changes.push_back(added_or_removed(*o, false));
  for (const Package* n : news)
    changes.push_back(added_or_removed(*n, true));
  // Stable order inside one name: by the version and marker the entry has now (or had).
  std::stable_sort(changes.begin(), changes.end(),
                   [](const PackageChange& a, const PackageChange& b) {
                     auto va = a.new_version ? a.new_version : a.old_version;
                     auto vb = b.new_version ? b.new_version : b.old_version;
                     if (va && vb && *va != *vb) return compare_versions(*va, *vb) < 0;
                     auto ma = a.new_marker ? a.new_marker : a.old_marker;
                     auto mb = b.new_marker ? b.new_marker : b.old_marker;
                     return ma < mb;
                   });
  return changes;
}

}  // namespace

std::string_view to_string(PackageChangeKind kind) noexcept {
  switch (kind) {
    case PackageChangeKind::Added:
      return "added";
    case PackageChangeKind::Removed:
      return "removed";
    case PackageChangeKind::Upgraded:
      return "upgraded";
    case PackageChangeKind::Downgraded:
      return "downgraded";
    case PackageChangeKind::Rehashed:
      return "rehashed";
    case PackageChangeKind::Changed:
      return "changed";
  }
  return "changed";
}

LockDiff diff_locks(const Lock& old_input, const Lock& new_input) {
  Lock old_lock = old_input;
  Lock new_lock = new_input;
  canonicalize(old_lock);
  canonicalize(new_lock);

  LockDiff diff;
  std::map<std::string, std::pair<std::vector<const Package*>, std::vector<const Package*>>>
      by_name;
  for (const auto& p : old_lock.packages)
    by_name[core::normalize_name(p.name)].first.push_back(&p);
  for (const auto& p : new_lock.packages)
    by_name[core::normalize_name(p.name)].second.push_back(&p);

  for (auto& [name, sides] : by_name) {
    auto& [olds, news] = sides;
    for (auto& c : name_changes(olds, news))
      diff.packages.push_back(std::move(c));
  }

  Facts f;
  const Lock& o = old_lock;
  const Lock& n = new_lock;
  f.add("lock-version", o.lock_version, n.lock_version);
  f.add("requires-python", o.requires_python, n.requires_python);
  f.add_list("environments", o.environments, n.environments);
  f.add_list("extras", o.extras, n.extras);
  f.add_list("dependency-groups", o.dependency_groups, n.dependency_groups);
  f.add_list("default-groups", o.default_groups, n.default_groups);

  const std::optional<GpulockTool>& og = o.gpulock;
  const std::optional<GpulockTool>& ng = n.gpulock;
  auto target = [](const std::optional<GpulockTool>& g) {
    return g ? g->target : std::optional<GpulockTarget>{};
  };
  auto gpu = [](const std::optional<GpulockTool>& g) {
    return g ? g->gpu : std::optional<GpulockGpu>{};
  };
  auto snapshot = [](const std::optional<GpulockTool>& g) {
    return g ? g->snapshot : std::optional<GpulockSnapshot>{};
  };
  auto inputs = [](const std::optional<GpulockTool>& g) {
    return g ? g->inputs : std::optional<GpulockInputs>{};
  };
  f.add("target.python", field(target(og), [](auto& t) { return t.python; }),
        field(target(ng), [](auto& t) { return t.python; }));
  f.add("target.platform", field(target(og), [](auto& t) { return t.platform; }),
        field(target(ng), [](auto& t) { return t.platform; }));

  const auto og_gpu = gpu(og);
  const auto ng_gpu = gpu(ng);
  // Each field as the text the lock holds (gpu_text.h).
  auto gpu_field = [&](const char* key, auto member) {
    f.add(fmt::format("gpu.{}", key),
          og_gpu ? gpu_text((*og_gpu).*member) : std::optional<std::string>{},
          ng_gpu ? gpu_text((*ng_gpu).*member) : std::optional<std::string>{});
  };
  gpu_field("driver", &GpulockGpu::driver);
  gpu_field("cuda-ceiling", &GpulockGpu::cuda_ceiling);
  gpu_field("method", &GpulockGpu::method);
  gpu_field("compat", &GpulockGpu::compat);
  f.add_list("gpu.archs", field(og_gpu, [](auto& g) { return gpu_text(g.archs); }),
             field(ng_gpu, [](auto& g) { return gpu_text(g.archs); }));
  gpu_field("variant", &GpulockGpu::variant);
  gpu_field("cuda", &GpulockGpu::cuda);
  gpu_field("cudnn", &GpulockGpu::cudnn);
  gpu_field("min-driver", &GpulockGpu::min_driver);

  const auto os = snapshot(og);
  const auto ns = snapshot(ng);
  auto exclude_newer = [](const std::optional<GpulockSnapshot>& s) -> std::optional<std::string> {
    if (!s || !s->exclude_newer) return std::nullopt;
    return to_toml_text(s->exclude_newer->to_utc());
  };
  f.add("snapshot.exclude-newer", exclude_newer(os), exclude_newer(ns));
  f.add("snapshot.nightly", os ? os->nightly : std::nullopt, ns ? ns->nightly : std::nullopt);

  f.add_list("indexes", og ? std::optional(index_items(og->indexes)) : std::nullopt,
             ng ? std::optional(index_items(ng->indexes)) : std::nullopt);

  const auto oi = inputs(og);
  const auto ni = inputs(ng);
  f.add_list("inputs.requirements", field(oi, [](auto& i) { return i.requirements; }),
             field(ni, [](auto& i) { return i.requirements; }));
  auto files_items = [](const GpulockInputs& i) {
    std::vector<std::string> items;
    for (const auto& x : i.files)
      items.push_back(fmt::format("{} ({}) {}", x.path, x.kind, x.sha256));
    return items;
  };
  f.add_list("inputs.files", field(oi, files_items), field(ni, files_items));
  f.add_list("inputs.extras", field(oi, [](auto& i) { return i.extras; }),
             field(ni, [](auto& i) { return i.extras; }));
  f.add_list("inputs.groups", field(oi, [](auto& i) { return i.groups; }),
             field(ni, [](auto& i) { return i.groups; }));
  auto options_items = [](const GpulockInputs& i) {
    std::vector<std::string> items;
    for (const auto& [k, v] : i.options)
      items.push_back(k + "=" + v);
    return items;
  };
  f.add_list("inputs.options", field(oi, options_items), field(ni, options_items));
  f.add("inputs.sha256", field(oi, [](auto& i) { return i.sha256; }),
        field(ni, [](auto& i) { return i.sha256; }));
  diff.facts = f.take();
  return diff;
}

}  // namespace gpulock::lock

// The native installer (install/installer.h, install/sync_plan.h): an exact sync. plan: the
// environment's scheme, its lock, an interrupted sync finished, what changes; apply: the fetch
// into the cache (every hash checked before anything changes), removals, installs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/tags.h"
#include "gpulock/core/version.h"
#include "gpulock/index/url.h"
#include "gpulock/install/env_lock.h"
#include "gpulock/install/installer.h"
#include "gpulock/install/interpreter.h"
#include "gpulock/install/record.h"
#include "gpulock/install/wheel_cache.h"
#include "gpulock/install/wheel_install.h"
#include "gpulock/lock/export.h"
#include "gpulock/lock/wheel_files.h"
#include "gpulock/probe/environment.h"
#include "gpulock/sys/paths.h"

#include "installers.h"
#include "parallel.h"

namespace gpulock::install {
namespace fs = std::filesystem;
namespace {

using core::ErrorCode;

bool same_version(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto va = core::Version::parse(a);
  auto vb = core::Version::parse(b);
  return va && vb && *va == *vb;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

InstallScheme scheme_of(const Interpreter& in) {
  InstallScheme s;
  auto path = [&](const char* key, const fs::path& fallback) {
    auto it = in.paths.find(key);
    return it == in.paths.end() ? fallback : it->second;
  };
  s.prefix = in.prefix;
  s.purelib = path("purelib", in.site_packages.front());
  s.platlib = path("platlib", s.purelib);
  s.scripts = path("scripts", in.prefix / "bin");
  s.data = path("data", in.prefix);
  s.python_xy = in.markers.python_version;
  s.headers = in.prefix / "include" / "site" / ("python" + s.python_xy);
  s.python = in.executable;
  return s;
}

// The names the lock's inputs ask for (REQUESTED); empty: every package counts as asked for.
std::set<std::string> lock_roots(const lock::Lock& lk) {
  std::set<std::string> out;
  if (!lk.gpulock || !lk.gpulock->inputs) return out;
  for (const auto& text : lk.gpulock->inputs->requirements) {
    if (auto r = core::Requirement::parse(text)) out.insert(core::normalize_name(r->name));
  }
  return out;
}

struct PlanInputs {
  const lock::Lock& lock;
  const fs::path lock_dir;
  const probe::PythonEnvironment& env;
  const core::Environment& markers;
  std::optional<std::vector<core::Tag>> tags;
  const Options& options;
};

// The locked package's file: URL, sha256, size, name.
core::Status locked_file(const PlanInputs& in, const lock::Package& p, SyncItem& item) {
  lock::ExportOptions options;
  options.target_tags = in.tags;
  auto file = lock::direct_url_file(p, options);
  if (!file) return std::unexpected(file.error());
  if (*file == nullptr || (!(*file)->url && !(*file)->path)) {
    return core::fail_at(ErrorCode::InvalidLockfile,
                         fmt::format("package '{}' has no wheel for this environment", p.name),
                         in.options.lock_path);
  }
  const lock::FileEntry& f = **file;
  item.filename = f.filename();
  if (!core::is_wheel_filename(item.filename)) {
    return std::unexpected(
        core::make_error(ErrorCode::InvalidLockfile,
                         fmt::format("package '{}': {} is not a wheel; the native installer "
                                     "installs wheels only",
                                     p.name, item.filename),
                         in.options.lock_path)
            .with_hint("build it into a wheel, or install with --installer pip"));
  }
  if (f.url) {
    item.url = *f.url;
  } else if (f.path) {
    fs::path path = *f.path;
    if (path.is_relative()) path = in.lock_dir / path;
    item.url = index::path_to_file_url(sys::absolute_path(path).string());
  }
  auto sha = f.hashes.find("sha256");
  if (sha == f.hashes.end()) {
    return core::fail_at(
        ErrorCode::InvalidLockfile,
        fmt::format("package '{}': {} has no sha256 in the lock", p.name, item.filename),
        in.options.lock_path);
  }
  item.sha256 = sha->second;
  if (auto records = lock::wheel_files(p); records) {
    if (auto rec = records->find(item.filename); rec != records->end())
      item.members_sha256 = rec->second.members_sha256;
  }
  item.wheel_size = f.size;
  item.size = f.size.value_or(0);
  if (!p.index && f.url) {
    item.direct_url_json = fmt::format(
        "{{\"archive_info\": {{\"hash\": {}, \"hashes\": {{\"sha256\": {}}}}}, \"url\": {}}}",
        json_string("sha256=" + item.sha256), json_string(item.sha256), json_string(*f.url));
  }
  return {};
}

// A file of an installed distribution that another tool installed (no kStatFile) that
// differs from its RECORD; "" when none.
std::string record_problem(const probe::InstalledDistribution& d) {
  const fs::path prefix = record::prefix_of_site(d.site_packages);
  auto rows = record::read(d.dist_info);
  if (!rows) return "a file differs from its RECORD (it has no RECORD)";
  for (const auto& row : *rows) {
    if (row.path.empty() || row.hash.empty()) continue;
    std::string problem = record::verify_file(prefix, d.site_packages, row);
    if (!problem.empty())
      return fmt::format("a file differs from its RECORD ({}: {})", row.path, problem);
  }
  return {};
}

std::uint64_t installed_bytes(const probe::InstalledDistribution& d) {
  std::uint64_t total = 0;
  for (const auto& row : record::read(d.dist_info).value_or(std::vector<record::Row>{})) {
    if (!row.size.empty()) total += std::strtoull(row.size.c_str(), nullptr, 10);
  }
  return total;
}

using detail::parallel_for;

// For each of `dists` (installed, at the locked version): the first file that changed since
// gpulock installed it (its size and mtime then, record.h's kStatFile), or, for a distribution
// another tool installed, that differs from its RECORD; "" when none. The stats run in slices
// of rows, so that a torch-sized distribution does not leave the other threads idle.
std::vector<std::string> changed_files(
    const std::vector<const probe::InstalledDistribution*>& dists) {
  constexpr std::size_t kThreads = 4;
  constexpr std::size_t kSlice = 1024;
  std::vector<std::optional<std::vector<record::StatRow>>> stats(dists.size());
  std::vector<std::string> problems(dists.size());
  parallel_for(dists.size(), kThreads, [&](std::size_t k) {
    stats[k] = record::read_stats(dists[k]->dist_info);
    if (!stats[k]) problems[k] = record_problem(*dists[k]);
  });
  struct Slice {
    std::size_t dist, begin, end;
  };
  std::vector<Slice> slices;
  for (std::size_t k = 0; k < dists.size(); ++k) {
    const std::size_t n = stats[k] ? stats[k]->size() : 0;
    for (std::size_t b = 0; b < n; b += kSlice)
      slices.push_back({k, b, std::min(n, b + kSlice)});
  }
  std::vector<std::string> found(slices.size());
  parallel_for(slices.size(), kThreads, [&](std::size_t i) {
    const Slice& sl = slices[i];
    const auto& d = *dists[sl.dist];
    record::StatChecker checker(record::prefix_of_site(d.site_packages), d.site_packages);
    for (std::size_t r = sl.begin; r < sl.end; ++r) {
      const auto& row = (*stats[sl.dist])[r];
      std::string problem = checker.check(row);
      if (problem.empty()) continue;
      found[i] = fmt::format("a file changed since it was installed ({}: {})", row.path, problem);
      return;
    }
  });
  // The first changed file in each distribution's row order.
  for (std::size_t i = 0; i < slices.size(); ++i) {
    auto& problem = problems[slices[i].dist];
    if (problem.empty()) problem = std::move(found[i]);
  }
  return problems;
}

core::Result<SyncPlan> make_plan(const PlanInputs& in) {
  SyncPlan plan;
  const auto roots = lock_roots(in.lock);
  std::set<std::string> locked;
  std::vector<const lock::Package*> package_of;  // the lock's package of plan.items[i]
  for (const auto& p : in.lock.packages) {
    if (p.marker) {
      auto m = core::Marker::parse(*p.marker);
      if (m && !m->matches(in.markers)) continue;
    }
    locked.insert(p.name);
    SyncItem item;
    item.name = p.name;
    item.version = p.version.value_or("");
    item.requested = roots.empty() || roots.contains(p.name);
    if (auto s = locked_file(in, p, item); !s) return std::unexpected(s.error());
    if (const auto* got = in.env.find(p.name)) {
      item.installed_version = got->version;
      item.dist_info = got->dist_info;
      if (!same_version(got->version, item.version)) {
        item.action = SyncAction::Replace;
        item.reason = fmt::format("{} -> {}", got->version, item.version);
      } else {
        item.action = SyncAction::Unchanged;
      }
    }
    plan.items.push_back(std::move(item));
    package_of.push_back(&p);
  }
  // Packages already at the locked version: their files against RECORD, in parallel.
  std::vector<std::size_t> same;
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    if (plan.items[i].action == SyncAction::Unchanged) same.push_back(i);
  }
  std::vector<const probe::InstalledDistribution*> dists;
  for (std::size_t i : same)
    dists.push_back(in.env.find(plan.items[i].name));
  auto problems = changed_files(dists);
  for (std::size_t k = 0; k < same.size(); ++k) {
    if (!problems[k].empty()) continue;
    // A shared library the lock recorded for this wheel (issue 44) that is not there: a RECORD
    // another tool rewrote, or no RECORD at all, would not say so. Not a change of the cached
    // files (a removal does not reach them through a hard link): the entry is used again.
    auto& item = plan.items[same[k]];
    auto missing = record::missing_locked_libraries(*package_of[same[k]], item.filename,
                                                    dists[k]->site_packages);
    if (missing.empty()) continue;
    item.action = SyncAction::Replace;
    item.reason = fmt::format(
        "a shared library the lock records is missing ({}{})", missing.front(),
        missing.size() > 1 ? fmt::format(" and {} more", missing.size() - 1) : std::string());
  }
  for (std::size_t k = 0; k < same.size(); ++k) {
    if (problems[k].empty()) continue;
    auto& item = plan.items[same[k]];
    item.action = SyncAction::Replace;
    item.tampered = true;
    item.reason = problems[k];
  }
  std::set<std::string> seen;
  for (const auto& d : in.env.distributions) {
    if (d.name.empty() || locked.contains(d.name) || !seen.insert(d.name).second) continue;
    SyncItem item;
    item.name = d.name;
    item.installed_version = d.version;
    item.dist_info = d.dist_info;
    item.size = installed_bytes(d);
    item.action = SyncAction::Remove;
    if (in.options.system) {
      item.action = SyncAction::Keep;
      item.reason = "--system: nothing is removed from a system Python";
    } else if (in.options.no_remove) {
      item.action = SyncAction::Keep;
      item.reason = "--no-remove";
    } else if (is_tool_package(d.name) && !in.options.exact) {
      item.action = SyncAction::Keep;
      item.reason = "a tool package (--exact removes it)";
    }
    plan.items.push_back(std::move(item));
  }
  return plan;
}

// Every wheel to install, in the cache and verified. Stops at the first error.
core::Result<std::vector<fs::path>> fetch_all(const Options& options, SyncPlan& plan,
                                              const Observer& observer, Applied& result,
                                              std::vector<std::shared_ptr<void>>& holds) {
  std::vector<SyncItem*> jobs;
  std::uint64_t expected = 0;
  for (auto& item : plan.items) {
    if (item.action == SyncAction::Install || item.action == SyncAction::Replace) {
      jobs.push_back(&item);
      expected += item.size;
    }
  }
  std::vector<fs::path> dirs(jobs.size());
  if (jobs.empty()) return dirs;
  index::IndexClient client(options.client);
  const fs::path root = wheel_cache_root(options.client.cache_dir);
  std::mutex mu;
  std::optional<core::Error> error;
  std::size_t done = 0;
  std::uint64_t bytes = 0;
  parallel_for(jobs.size(), std::max(1u, options.jobs), [&](std::size_t i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (error) return;
    }
    SyncItem& item = *jobs[i];
    // A file modified through a hard link is modified in the cache too: fetch it again.
    if (item.tampered) discard_cached_wheel(root, item.sha256);
    CachedWheelRequest cr;
    cr.url = item.url;
    cr.sha256 = item.sha256;
    cr.size = item.wheel_size;
    cr.filename = item.filename;
    cr.members_sha256 = item.members_sha256;
    std::uint64_t last = 0;
    cr.on_bytes = [&](std::uint64_t received) {
      std::lock_guard<std::mutex> lock(mu);
      bytes += received - last;
      last = received;
      if (observer.progress) observer.progress(done, jobs.size(), bytes, expected);
    };
    auto got = cached_wheel(client, root, cr);
    std::lock_guard<std::mutex> lock(mu);
    if (!got) {
      if (!error) error = got.error();
      client.cancel();
      return;
    }
    dirs[i] = got->dir;
    holds.push_back(got->hold);
    if (!got->stale.empty()) {
      result.warnings.push_back(
          fmt::format("the cache's unpacked {} did not match its manifest ({}): unpacked again",
                      item.filename, got->stale));
    }
    ++done;
    if (got->hit) ++result.cache_hits;
    if (got->downloaded) {
      ++result.downloaded;
      result.downloaded_bytes += got->bytes;
    }
    if (observer.progress) observer.progress(done, jobs.size(), bytes, expected);
  });
  if (error) return std::unexpected(*error);
  return dirs;
}

// Removals, then installs, through one journal: a failure anywhere puts back every file that
// was set aside and removes every file written, so the environment is as it was; the files set
// aside are deleted only once the last wheel is in.
core::Status apply_plan(const Options& install_options, SyncPlan& plan,
                        const std::vector<fs::path>& dirs, const InstallScheme& scheme,
                        Applied& result) {
  // A no-op sync: nothing set aside or written, so no journal, and no owners of the files that
  // stay (reading every RECORD of a torch-sized environment was most of a no-op's time).
  const bool changes = std::any_of(plan.items.begin(), plan.items.end(), [](const SyncItem& i) {
    return i.action == SyncAction::Install || i.action == SyncAction::Replace ||
           i.action == SyncAction::Remove;
  });
  if (!changes) return {};
  InstallJournal journal({scheme.prefix, scheme.purelib},
                         sync_registry(install_options.client.cache_dir));
  // The files of the distributions that stay: a wheel may not overwrite them with other bytes,
  // and a removal keeps those it shares with one of them.
  FileOwners owners;
  for (const auto& item : plan.items) {
    if (item.action != SyncAction::Unchanged && item.action != SyncAction::Keep) continue;
    const fs::path site = item.dist_info.parent_path();
    for (const auto& row : record::read(item.dist_info).value_or(std::vector<record::Row>{})) {
      if (row.path.empty()) continue;
      owners.emplace((site / row.path).lexically_normal().string(), item.name);
    }
  }
  auto undo = [&](core::Error error) -> core::Status {
    auto lost = journal.rollback();
    if (lost.empty())
      return std::unexpected(std::move(error).with_hint("the environment was not changed"));
    return std::unexpected(std::move(error).with_hint(
        fmt::format("the environment could not be put back as it was: {} not restored",
                    fmt::join(lost, ", "))));
  };
  for (auto& item : plan.items) {
    if (item.action != SyncAction::Replace && item.action != SyncAction::Remove) continue;
    std::error_code ec;
    if (!fs::exists(item.dist_info / "RECORD", ec) && item.action == SyncAction::Replace) {
      // Files stay; the new wheel's overwrite them.
      if (auto s = journal.set_aside(item.dist_info); !s) return undo(s.error());
      continue;
    }
    auto removed = remove_distribution(item.dist_info, scheme, &journal, &owners);
    if (!removed)
      return undo(removed.error().with_context(
          fmt::format("while removing {} {}", item.name, item.installed_version)));
  }
  std::size_t k = 0;
  std::size_t linked = 0;
  for (auto& item : plan.items) {
    if (item.action != SyncAction::Install && item.action != SyncAction::Replace) continue;
    const fs::path& dir = dirs[k++];
    auto wheel = core::WheelFilename::parse_with_variant(item.filename);
    if (!wheel) return undo(wheel.error());
    WheelInstallOptions options;
    options.link_mode = install_options.link_mode;
    options.requested = item.requested;
    options.direct_url_json = item.direct_url_json;
    options.journal = &journal;
    options.owners = &owners;
    auto installed = install_unpacked_wheel(dir, *wheel, scheme, options);
    if (!installed)
      return undo(
          installed.error().with_context(fmt::format("while installing {}", item.filename)));
    linked += installed->linked;
  }
  journal.commit();
  result.linked_files += linked;
  return {};
}

// A sync killed half way (issue 25) left its stash and journal in the environment: before
// anything else, its rollback is finished (a dry run only says so), in one line.
core::Status finish_interrupted_syncs(const Options& options, const InstallScheme& scheme,
                                      Plan& result) {
  for (const auto& stash : find_interrupted_syncs({scheme.prefix, scheme.purelib})) {
    if (options.dry_run) {
      result.warnings.push_back(fmt::format(
          "an interrupted gpulock install left {}; the next install rolls it back first",
          stash.string()));
      continue;
    }
    const fs::path registry = sync_registry(options.client.cache_dir);
    auto undone = roll_back_interrupted(
        stash, registry,
        {scheme.purelib, scheme.platlib, scheme.scripts, scheme.headers, scheme.data});
    if (undone.foreign) {
      result.warnings.push_back(fmt::format(
          "{} was not written by gpulock with this cache (no record of it in {}): left as it "
          "is, not replayed; remove it if nobody is installing with another cache",
          stash.string(), registry.string()));
      continue;
    }
    if (undone.live) {
      result.warnings.push_back(fmt::format(
          "{} belongs to a gpulock run that is still going; left as it is", stash.string()));
      continue;
    }
    for (const auto& path : undone.skipped) {
      result.warnings.push_back(fmt::format(
          "the interrupted install's journal names {}, outside the environment or behind a "
          "symbolic link: not followed",
          path));
    }
    if (!undone.lost.empty()) {
      return core::fail(ErrorCode::Io,
                        fmt::format("an interrupted gpulock install could not be rolled back: "
                                    "{} not restored (they are in {})",
                                    fmt::join(undone.lost, ", "), stash.string()));
    }
    if (!undone.journal) continue;  // a finished sync's stash, deleted
    result.warnings.push_back(
        fmt::format("an interrupted gpulock install was rolled back first: {} put back, {} "
                    "removed in {}",
                    undone.restored == 1 ? "1 file" : fmt::format("{} files", undone.restored),
                    undone.removed == 1 ? "1 file" : fmt::format("{} files", undone.removed),
                    stash.parent_path().string()));
  }
  return {};
}

// The tags the lock's target installs into this environment's Python (nullopt: the lock names no
// target); a usage error when the Python is not one of the target's.
core::Result<std::optional<std::vector<core::Tag>>> lock_target_tags(const Options& options,
                                                                     const lock::Lock& lk,
                                                                     const Interpreter& in,
                                                                     const std::string& python) {
  std::optional<std::vector<core::Tag>> tags;
  if (lk.gpulock && lk.gpulock->target) {
    const auto& t = *lk.gpulock->target;
    // The lock's wheels are chosen for its target: binary wheels of another Python do not load.
    // A target spanning several Pythons (issue 22) takes any of them.
    const std::string& xy = in.markers.python_version;
    std::string python_tag = t.python;
    for (const auto& p : t.pythons) {
      if (p == xy || (p.ends_with('t') && p.substr(0, p.size() - 1) == xy)) python_tag = p;
    }
    if (!python_tag.empty() && python_tag != xy && python_tag != xy + "t") {
      const std::string pythons =
          t.pythons.empty() ? t.python : fmt::format("{}", fmt::join(t.pythons, ", "));
      return std::unexpected(
          core::make_error(ErrorCode::Usage,
                           fmt::format("the lock is for Python {}; this environment's Python is {}",
                                       pythons, in.version),
                           python)
              .with_hint(fmt::format("install into a Python {} environment (--venv DIR makes one "
                                     "with a python{} from PATH), or resolve for Python {}",
                                     t.python, t.python, xy)));
    }
    // Every platform of the target adds its tags, the first one's first.
    std::vector<std::string> platforms = t.platforms;
    if (platforms.empty()) platforms.push_back(t.platform);
    tags.emplace();
    for (const auto& platform : platforms) {
      auto target = core::TagTarget::from_platform_tag(python_tag, platform);
      if (!target) {
        return std::unexpected(target.error()
                                   .located(options.lock_path)
                                   .with_context("while reading [tool.gpulock.target]"));
      }
      for (auto& tag : core::supported_tags(*target)) {
        if (std::find(tags->begin(), tags->end(), tag) == tags->end()) tags->push_back(tag);
      }
    }
  }
  return tags;
}

}  // namespace

bool is_tool_package(std::string_view name) {
  return name == "pip" || name == "setuptools" || name == "wheel";
}

std::string_view sync_action_name(SyncAction action) {
  switch (action) {
    case SyncAction::Install:
      return "install";
    case SyncAction::Replace:
      return "replace";
    case SyncAction::Remove:
      return "remove";
    case SyncAction::Unchanged:
      return "unchanged";
    case SyncAction::Keep:
      return "keep";
  }
  return "unchanged";
}

std::size_t SyncPlan::count(SyncAction a) const {
  return static_cast<std::size_t>(
      std::count_if(items.begin(), items.end(), [&](const SyncItem& i) { return i.action == a; }));
}

std::uint64_t SyncPlan::bytes(SyncAction a) const {
  std::uint64_t total = 0;
  for (const auto& i : items) {
    if (i.action == a) total += i.size;
  }
  return total;
}

namespace {

// What a plan holds until it is applied: the environment's scheme and its lock.
struct NativeState : PlanState {
  InstallScheme scheme;
  EnvLock env_lock;
};

class NativeInstaller final : public Installer {
 public:
  explicit NativeInstaller(Options options) : options_(std::move(options)) {}

  core::Result<Plan> plan(const lock::Lock& lk, const Environment& env,
                          const Observer& observer) override {
    Plan result;
    const std::string& python = env.python;
    // A venv describes itself; other interpreters are asked (one process start).
    auto described = read_venv(python);
    core::Result<Interpreter> in =
        described ? core::Result<Interpreter>(std::move(*described)) : ask_interpreter(python);
    if (!in) return std::unexpected(in.error());
    const bool planned_venv = env.venv_to_make.has_value();
    result.python = planned_venv ? (*env.venv_to_make / "bin" / "python").string() : python;
    result.prefix = planned_venv ? *env.venv_to_make : in->prefix;
    result.python_version = in->version;
    result.system = !planned_venv && in->prefix == in->base_prefix;
    if (result.system && !options_.system) {
      return std::unexpected(
          core::make_error(ErrorCode::Usage,
                           fmt::format("{} is not a virtual environment (sys.prefix is "
                                       "sys.base_prefix, {})",
                                       python, in->prefix.string()),
                           python)
              .with_hint("give --system to install into it anyway (nothing is removed then), or "
                         "--venv .venv to make a virtual environment"));
    }
    auto state = std::make_shared<NativeState>();
    state->scheme = scheme_of(*in);
    const InstallScheme& scheme = state->scheme;
    // One sync of an environment at a time, held to the end (a dry run reads: shared).
    if (!planned_venv) {
      auto on_wait = [&](const std::string& line) {
        if (observer.info) observer.info(line);
      };
      const bool exclusive = !options_.dry_run;
      auto held = EnvLock::acquire(scheme.prefix, exclusive, options_.lock_timeout, on_wait);
      if (!held && scheme.purelib != scheme.prefix && options_.system) {
        // A --system prefix that is not writable: its site-packages.
        held = EnvLock::acquire(scheme.purelib, exclusive, options_.lock_timeout, on_wait);
      }
      if (!held) return std::unexpected(held.error());
      state->env_lock = std::move(*held);
      if (auto s = finish_interrupted_syncs(options_, scheme, result); !s)
        return std::unexpected(s.error());
    }
    auto env_now = scan(scheme, planned_venv);
    if (!env_now) return std::unexpected(env_now.error());

    auto tags = lock_target_tags(options_, lk, *in, python);
    if (!tags) return std::unexpected(tags.error());
    const fs::path lock_path(options_.lock_path);
    PlanInputs inputs{
        lk,       lock_path.has_parent_path() ? lock_path.parent_path() : fs::path("."),
        *env_now, in->markers,
        *tags,    options_};
    auto sync = make_plan(inputs);
    if (!sync) return std::unexpected(sync.error());
    result.sync = std::move(*sync);
    result.state = std::move(state);
    return result;
  }

  core::Result<Applied> apply(Plan& plan, const Observer& observer) override {
    Applied result;
    auto state = std::dynamic_pointer_cast<NativeState>(std::move(plan.state));
    if (!state) return core::fail(ErrorCode::Internal, "a plan that is not the native installer's");
    std::vector<std::shared_ptr<void>> holds;  // the cache entries, locked until the sync ends
    auto dirs = fetch_all(options_, plan.sync, observer, result, holds);
    if (!dirs) return std::unexpected(dirs.error());
    if (auto s = apply_plan(options_, plan.sync, *dirs, state->scheme, result); !s)
      return std::unexpected(s.error());
    // The sync is done: the environment's lock ends with `state`, so that the probe reads the
    // environment as any reader does (shared).
    return result;
  }

 private:
  // The distributions installed now (a venv still to be made is empty).
  static core::Result<probe::PythonEnvironment> scan(const InstallScheme& scheme,
                                                     bool planned_venv) {
    std::vector<fs::path> sites = {scheme.purelib};
    if (scheme.platlib != scheme.purelib) sites.push_back(scheme.platlib);
    std::erase_if(sites, [](const fs::path& p) {
      std::error_code ec;
      return !fs::is_directory(p, ec);
    });
    if (sites.empty() || planned_venv) return probe::PythonEnvironment{};
    return probe::scan_environment(sites);
  }

  Options options_;
};

}  // namespace

std::unique_ptr<Installer> make_native_installer(Options options) {
  return std::make_unique<NativeInstaller>(std::move(options));
}

}  // namespace gpulock::install

// The env layer of `gpulock check`: what is installed in an environment against the lock, the
// installed files against their RECORD (--deep), and the load probe's verdict.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "gpulock/app/probe_env.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/version.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/install/record.h"
#include "gpulock/install/sync_plan.h"
#include "gpulock/install/wheel_install.h"
#include "gpulock/probe/environment.h"
#include "gpulock/probe/load_probe.h"

#include "check_internal.h"
#include "locked_files.h"

namespace gpulock::app::check_detail {
namespace {

namespace fs = std::filesystem;

bool same_version(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto va = core::Version::parse(a);
  auto vb = core::Version::parse(b);
  return va && vb && *va == *vb;
}

std::string variant_of(const core::Version& v) {
  std::string local = v.local_string();
  return local.empty() ? std::string("no local label") : "+" + local;
}

struct RecordCheck {
  bool has_record = false;
  std::size_t files = 0;
  std::vector<std::string> problems;  // "path: modified", "path: missing"
};

// --deep: every file against its RECORD hash; else, for what gpulock installed, every file's
// size and mtime against those recorded at install (record.h's kStatFile).
RecordCheck verify_record(const probe::InstalledDistribution& d, bool deep) {
  RecordCheck out;
  const fs::path prefix = install::record::prefix_of_site(d.site_packages);
  if (!deep) {
    auto stats = install::record::read_stats(d.dist_info);
    if (!stats) return out;
    out.has_record = true;
    install::record::StatChecker checker(prefix, d.site_packages);
    for (const auto& row : *stats) {
      ++out.files;
      std::string problem = checker.check(row);
      if (!problem.empty()) out.problems.push_back(fmt::format("{}: {}", row.path, problem));
    }
    return out;
  }
  auto rows = install::record::read(d.dist_info);
  if (!rows) return out;
  out.has_record = true;
  for (const auto& row : *rows) {
    if (row.path.empty() || row.hash.empty()) continue;  // RECORD itself, .pyc files
    auto eq = row.hash.find('=');
    if (eq == std::string::npos || row.hash.substr(0, eq) != "sha256") continue;
    ++out.files;
    std::string problem = install::record::verify_file(prefix, d.site_packages, row);
    if (!problem.empty()) out.problems.push_back(fmt::format("{}: {}", row.path, problem));
  }
  return out;
}

DriftSeverity severity_of(probe::Severity s) {
  switch (s) {
    case probe::Severity::Fail:
      return DriftSeverity::Error;
    case probe::Severity::Warn:
      return DriftSeverity::Warning;
    case probe::Severity::Info:
      return DriftSeverity::Info;
  }
  return DriftSeverity::Error;
}

std::string python_xy(const std::string& full) {
  auto first = full.find('.');
  if (first == std::string::npos) return full;
  auto second = full.find('.', first + 1);
  return second == std::string::npos ? full : full.substr(0, second);
}

// Issue 44 item 1: the shared libraries the lock recorded for `p`'s wheel (read from the wheel's
// own zip at lock time, so this holds without a RECORD, or with one another tool rewrote) are
// in site-packages. Of several wheels (a lock for several platforms), the one installed is taken
// to be the one with the fewest missing. Returns the libraries it named (site-relative).
std::set<std::string> check_locked_files(const lock::Package& p,
                                         const probe::InstalledDistribution& installed,
                                         const std::string& install_hint,
                                         std::vector<Drift>& drifts) {
  auto libs = install::record::check_locked_libraries(p, installed.site_packages);
  if (libs.missing.empty()) return {};
  const auto& missing = libs.missing;
  Drift d = make_drift(
      CheckLayer::Env, "locked-file-missing", p.name,
      fmt::format("{} {}: {} of the {} shared libraries the lock records for {} {} not installed",
                  p.name, installed.version, missing.size(), libs.total, libs.file,
                  missing.size() == 1 ? "is" : "are"),
      p.line.line);
  constexpr std::size_t kMaxShown = 20;
  for (std::size_t i = 0; i < missing.size() && i < kMaxShown; ++i)
    d.details.push_back(fmt::format("{}: missing", missing[i]));
  if (missing.size() > kMaxShown)
    d.details.push_back(fmt::format("... and {} more", missing.size() - kMaxShown));
  // install's sync makes the same comparison (native_installer's make_plan) and replaces it.
  d.hint = fmt::format("{}; it replaces one whose recorded libraries are missing", install_hint);
  drifts.push_back(std::move(d));
  return {missing.begin(), missing.end()};
}

// `gpulock install --lock LOCK --python PYTHON`, as the hints name it.
std::string install_command(const Context& ctx, const std::string& python) {
  return fmt::format("gpulock install --lock {} --python {}", ctx.lock_path, python);
}

// Issue 44 item 1: every installed file of `p` against its wheel's member list (locked_files.h):
// a `locked-file-mismatch` drift for those missing or of another size, leaving out the
// libraries check_locked_files named (`named`).
detail::ListChecked check_locked_members(const Context& ctx, const std::string& python,
                                         const lock::Package& p,
                                         const probe::InstalledDistribution& installed,
                                         const detail::LockedLists& lists,
                                         const std::set<std::string>& named,
                                         std::vector<Drift>& drifts) {
  auto checked = detail::check_locked_members(p, installed, lists, named);
  if (checked.outcome != detail::ListCheck::Compared || checked.problems.empty()) return checked;
  Drift d = make_drift(CheckLayer::Env, "locked-file-mismatch", p.name,
                       detail::members_message(p, installed, checked), p.line.line);
  d.details = detail::members_details(checked, 20);
  // RECORD may still list the file and its hash: install's sync keeps a package whose RECORD
  // another tool wrote and checks out, so it is removed first.
  d.hint = detail::reinstall_hint(python, p.name, install_command(ctx, python));
  drifts.push_back(std::move(d));
  return checked;
}

// The installed files of `p`: against its RECORD (--deep), else against their size and mtime
// at install. Returns whether it found a problem.
bool check_record(const Context& ctx, const std::string& python, const lock::Package& p,
                  const probe::InstalledDistribution& installed, const std::string& install_hint,
                  LayerResult& layer, std::vector<Drift>& drifts) {
  const auto* got = &installed;
  const std::size_t line = p.line.line;
  auto rc = verify_record(*got, ctx.request.deep);
  if (!rc.has_record && !ctx.request.deep) return false;  // not by gpulock: --deep hashes
  if (!rc.has_record) {
    Drift d = make_drift(
        CheckLayer::Env, "record-unverifiable", p.name,
        fmt::format("{} {} has no RECORD, so its files cannot be verified", p.name, got->version),
        line);
    d.severity = DriftSeverity::Warning;
    d.hint = install_hint;
    drifts.push_back(std::move(d));
    return false;
  }
  if (!rc.problems.empty()) {
    Drift d = make_drift(CheckLayer::Env, "record-mismatch", p.name,
                         fmt::format("{} {}: {} of {} installed files {}", p.name, got->version,
                                     rc.problems.size(), rc.files,
                                     ctx.request.deep ? "differ from its RECORD"
                                                      : "changed since gpulock installed them"),
                         line);
    constexpr std::size_t kMaxShown = 20;
    for (std::size_t i = 0; i < rc.problems.size() && i < kMaxShown; ++i)
      d.details.push_back(rc.problems[i]);
    if (rc.problems.size() > kMaxShown) {
      d.details.push_back(fmt::format("... and {} more", rc.problems.size() - kMaxShown));
    }
    // gpulock install replaces a package whose files changed by the same size and mtime check
    // (or, for one another tool installed, its RECORD's hashes); a file --deep alone found
    // changed (same size and mtime, another sha256) it would keep, so that one is removed first.
    d.hint = ctx.request.deep
                 ? detail::reinstall_hint(python, p.name, install_command(ctx, python))
                 : fmt::format("reinstall it: `{}` replaces it", install_command(ctx, python));
    drifts.push_back(std::move(d));
    return true;
  }
  if (ctx.request.deep) {
    layer.notes.push_back(
        fmt::format("{} {}: {} files match RECORD", p.name, got->version, rc.files));
  }
  return false;
}

// The load probe's verdict for this environment (the lock and machine comparisons are the
// other layers').
void add_load_findings(const Context& ctx, const probe::PythonEnvironment& env,
                       const probe::LoadReport& load, LayerResult& layer,
                       std::vector<Drift>& drifts) {
  for (const auto& f : probe::assess_load(env, load)) {
    std::string message = f.message;
    if (message.ends_with('.')) message.pop_back();  // one style with the other lines
    if (f.severity == probe::Severity::Info) {
      layer.notes.push_back(fmt::format("load probe: {}", message));
      continue;
    }
    Drift d = make_drift(CheckLayer::Env, "load-" + f.id, f.subject, std::move(message));
    d.severity = severity_of(f.severity);
    d.hint = f.hint;
    if (!f.subject.empty()) {
      auto pkgs = lock::find_packages(ctx.lock, f.subject);
      if (!pkgs.empty()) d.line = pkgs.front()->line.line;
    }
    drifts.push_back(std::move(d));
  }
}

}  // namespace

core::Result<probe::MachineInfo> check_env(const Context& ctx, LayerResult& layer,
                                           std::vector<Drift>& drifts) {
  layer.checked = true;
  ProbeRequest pr;
  pr.python = default_python(ctx.request.python);
  pr.lock = ctx.lock_path;
  pr.machine = ctx.request.machine_flags;
  pr.member_lists = false;  // compared below, after RECORD's check
  auto report = probe_environment(pr);
  if (!report) return std::unexpected(report.error());
  const auto& env = report->environment;

  // Marker values of the environment's own Python.
  std::string xy = python_xy(env.python_version);
  std::optional<core::Environment> markers;
  if (!xy.empty())
    markers = core::Environment::linux_cpython(xy, target_machine(ctx.lock), env.python_version);

  const std::string& python = pr.python;
  const std::string install_hint =
      fmt::format("`{}` installs the locked versions", install_command(ctx, python));
  // A sync killed half way (issue 25): its stash and journal are still in the environment.
  std::vector<fs::path> roots;
  for (const auto& site : env.site_packages) {
    roots.push_back(site);
    roots.push_back(site.parent_path().parent_path().parent_path());  // the prefix
  }
  for (const auto& stash : install::find_interrupted_syncs(roots)) {
    Drift d = make_drift(
        CheckLayer::Env, "interrupted-install", stash.string(),
        fmt::format("an interrupted gpulock install left {}: the environment may be half "
                    "swapped",
                    stash.string()));
    d.severity = DriftSeverity::Warning;
    d.hint = fmt::format("`{}` rolls it back first", install_command(ctx, python));
    drifts.push_back(std::move(d));
  }
  std::set<std::string> locked;
  std::size_t applicable = 0;
  const auto lists = detail::read_locked_lists(ctx.lock, ctx.lock_dir, ctx.request.client, env);
  std::vector<detail::ListChecked> listed;
  for (const auto& p : ctx.lock.packages) {
    if (p.marker && markers) {
      auto m = core::Marker::parse(*p.marker);
      if (m && !m->matches(*markers)) continue;
    }
    ++applicable;
    locked.insert(p.name);
    const std::string want = p.version.value_or("");
    const auto* got = env.find(core::normalize_name(p.name));
    const std::size_t line = p.line.line;
    if (got == nullptr) {
      Drift d = make_drift(CheckLayer::Env, "not-installed", p.name,
                           fmt::format("{} {} is locked but not installed", p.name, want), line);
      d.expected = want;
      d.hint = install_hint;
      drifts.push_back(std::move(d));
      continue;
    }
    if (!p.version || same_version(got->version, want)) {
      // A file RECORD's check already named is not named twice.
      if (!check_record(ctx, python, p, *got, install_hint, layer, drifts)) {
        auto named = check_locked_files(p, *got, install_hint, drifts);
        listed.push_back(check_locked_members(ctx, python, p, *got, lists, named, drifts));
      }
      continue;
    }
    auto iv = core::Version::parse(got->version);
    auto lv = core::Version::parse(want);
    if (iv && lv && iv->public_version() == lv->public_version()) {
      Drift d = make_drift(
          CheckLayer::Env, "variant-differs", p.name,
          fmt::format("{} {} is installed, but the lock has {}: another variant ({} instead of {})",
                      p.name, got->version, want, variant_of(*iv), variant_of(*lv)),
          line);
      d.expected = want;
      d.actual = got->version;
      d.hint = install_hint;
      drifts.push_back(std::move(d));
      continue;
    }
    Drift d = make_drift(
        CheckLayer::Env, "version-differs", p.name,
        fmt::format("{} {} is installed, but the lock has {}", p.name, got->version, want), line);
    d.expected = want;
    d.actual = got->version;
    d.hint = install_hint;
    drifts.push_back(std::move(d));
  }

  std::set<std::string> seen;
  for (const auto& dist : env.distributions) {
    if (dist.name.empty() || locked.contains(dist.name) || !seen.insert(dist.name).second) continue;
    if (install::is_tool_package(dist.name) && !ctx.request.strict) continue;
    Drift d =
        make_drift(CheckLayer::Env, "not-in-lock", dist.name,
                   fmt::format("{} {} is installed but not in the lock", dist.name, dist.version));
    d.actual = dist.version;
    d.hint = fmt::format("`{} -m pip uninstall {}`, or add it to the inputs and re-resolve",
                         pr.python, dist.name);
    drifts.push_back(std::move(d));
  }

  for (auto& note : detail::file_list_notes(listed))
    layer.notes.push_back(std::move(note.text));
  add_load_findings(ctx, env, report->load, layer, drifts);

  layer.summary =
      fmt::format("Python {} ({}): {} installed; {} of the lock's {} apply to it",
                  env.python_version.empty() ? std::string("?") : env.python_version, pr.python,
                  plural(env.distributions.size(), "distribution", "distributions"), applicable,
                  plural(ctx.lock.packages.size(), "package", "packages"));
  for (const auto& w : env.warnings)
    layer.notes.push_back(w);
  return std::move(report->machine);
}

}  // namespace gpulock::app::check_detail

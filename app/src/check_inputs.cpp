// The inputs layer of `gpulock check`: the lock's record of what it was resolved from against
// the files it names and the input flags given to check. No network. Digests of these small texts
// use core::sha256_hex (no library to load), as `gpulock resolve` does when it writes them.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpulock/app/config.h"
#include "gpulock/app/project_file.h"
#include "gpulock/app/requirements_file.h"
#include "gpulock/catalog/source.h"
#include "gpulock/core/name.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/sha256.h"
#include "gpulock/core/text.h"
#include "gpulock/core/version.h"
#include "gpulock/index/page.h"
#include "gpulock/index/url.h"
#include "gpulock/sys/env.h"

#include "check_internal.h"
#include "resolve_inputs.h"

namespace gpulock::app::check_detail {
namespace {

namespace fs = std::filesystem;

// A requirement's text in one canonical spelling, so `torch >= 2.5` equals `torch>=2.5`.
std::string canonical_requirement(const std::string& text) {
  auto r = core::Requirement::parse(text);
  return r ? r->to_string() : text;
}

// The first locked version of `name` that `req` accepts, or the versions locked.
struct LockMatch {
  bool locked = false;
  bool satisfied = false;
  std::vector<std::string> versions;
};

LockMatch match_lock(const lock::Lock& lk, const core::Requirement& req) {
  LockMatch m;
  for (const auto* p : lock::find_packages(lk, core::normalize_name(req.name))) {
    m.locked = true;
    std::string v = p->version.value_or("");
    m.versions.push_back(v);
    if (req.specifier.empty()) {
      m.satisfied = true;
      continue;
    }
    auto parsed = core::Version::parse(v);
    // A locked pre-release was chosen on purpose: let the specifier accept it.
    if (parsed && req.specifier.contains(*parsed, true)) m.satisfied = true;
  }
  return m;
}

// What a changed input now asks that the lock does not give, one line each.
std::vector<std::string> unmet_requirements(const lock::Lock& lk,
                                            const std::vector<RequirementEntry>& entries,
                                            bool constraints,
                                            const std::optional<core::Environment>& env) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    const auto& r = e.requirement;
    if (env && !r.marker.empty() && !r.marker.matches(*env, "")) continue;
    if (!r.url.empty()) continue;
    auto m = match_lock(lk, r);
    std::string where = e.origin.line ? fmt::format("line {}: ", e.origin.line) : std::string();
    if (!m.locked) {
      if (!constraints) out.push_back(fmt::format("{}{}: not in the lock", where, r.to_string()));
      continue;
    }
    if (!m.satisfied) {
      out.push_back(fmt::format("{}{}: the lock has {} {}", where, r.to_string(),
                                core::normalize_name(r.name), fmt::join(m.versions, ", ")));
    }
  }
  return out;
}

// Explains a changed input file by what it now asks of the lock.
std::vector<std::string> explain_change(const Context& ctx, const lock::InputFile& f,
                                        const std::string& abs_path, const std::string& content) {
  std::vector<std::string> details;
  auto env = target_environment(ctx.lock);
  const auto* rec = recorded_inputs(ctx.lock);
  std::vector<RequirementEntry> entries;
  bool constraints = f.kind == "constraints";
  if (f.kind == "config") return {"a configuration file the lock's options came from"};
  if (f.kind == "project") {
    auto reqs =
        read_project_requirements(content, abs_path, rec ? rec->extras : std::vector<std::string>{},
                                  rec ? rec->groups : std::vector<std::string>{});
    if (!reqs) return {fmt::format("it no longer reads: {}", reqs.error().to_string())};
    entries = std::move(*reqs);
  } else {
    RequirementsInput in;
    RequirementsFileOptions options;
    // Only this file's own lines: nested files are inputs of their own in the record.
    options.reader = [&](const std::string& path) -> core::Result<std::string> {
      if (path == abs_path) return content;
      return std::string();
    };
    auto s = parse_requirements_text(content, abs_path, constraints, in, options);
    if (!s) return {fmt::format("it no longer reads: {}", s.error().to_string())};
    entries = constraints ? in.constraints : in.requirements;
    if (!constraints) {
      // -c lines inside a requirements file are constraints.
      auto more = unmet_requirements(ctx.lock, in.constraints, true, env);
      details.insert(details.end(), more.begin(), more.end());
    }
  }
  auto unmet = unmet_requirements(ctx.lock, entries, constraints, env);
  unmet.insert(unmet.end(), details.begin(), details.end());
  if (unmet.empty()) unmet.push_back("every requirement in it is still met by the locked versions");
  return unmet;
}

std::string update_hint(const lock::Lock& lk) {
  if (!lk.command.empty()) return fmt::format("update the lock: {}", lk.command);
  return "update the lock: run gpulock resolve again with the same inputs";
}

// The record resolve would write for `given` (requirements, files, extras, groups, options),
// plus the index list it would use.
struct GivenInputs {
  lock::GpulockInputs record;
  std::vector<std::pair<catalog::Source, std::string>> general_indexes;  // (source, url)
};

core::Result<GivenInputs> given_inputs(const Context& ctx, const ResolveRequest& given) {
  // Flag values resolve would refuse never get here: they are typed, parsed by the flags' own
  // parsers when the command line was read (exit 2), never compared as drift.
  // Read as resolve reads them: a bad requirement is invalid input (exit 3, naming the
  // argument), --extra/--group without --project a usage error; never drift.
  auto inputs = detail::read_resolve_inputs(given);
  if (!inputs) return std::unexpected(inputs.error());
  GivenInputs out;
  out.record = detail::to_record(given, *inputs, ctx.lock_dir);
  for (const auto& g : detail::general_indexes(given, inputs->req)) {
    auto source = g.type.is<catalog::FindLinks>() ? index::IndexSource::find_links(g.url)
                                                  : index::IndexSource::simple(g.url);
    // The lock records index URLs without credentials: a credential-only difference is none.
    out.general_indexes.emplace_back(g.type, index::strip_credentials(source.url));
  }
  return out;
}

template <class Set>
std::vector<std::string> minus(const Set& a, const Set& b) {
  std::vector<std::string> out;
  for (const auto& x : a) {
    if (!b.contains(x)) out.push_back(x);
  }
  return out;
}

// One drift per difference between the given flags and the record, each with the same hint.
class GivenDrifts {
 public:
  GivenDrifts(const Context& ctx, const lock::GpulockInputs& rec, std::vector<Drift>& drifts)
      : line_(rec.line.line),
        hint_(ctx.lock.command.empty()
                  ? std::string("resolve with the flags given here to update the lock")
                  : fmt::format("the lock was resolved with: {}", ctx.lock.command)),
        drifts_(drifts) {}
  void operator()(std::string kind, std::string subject, std::string message,
                  std::optional<std::string> expected, std::optional<std::string> actual) const {
    Drift d = make_drift(CheckLayer::Inputs, std::move(kind), std::move(subject),
                         std::move(message), line_);
    d.expected = std::move(expected);
    d.actual = std::move(actual);
    d.hint = hint_;
    drifts_.push_back(std::move(d));
  }

 private:
  std::size_t line_;
  std::string hint_;
  std::vector<Drift>& drifts_;
};

// Requirement arguments, compared in canonical spelling, order ignored.
void compare_requirements(const GivenInputs& given, const lock::GpulockInputs& rec,
                          const GivenDrifts& add) {
  std::multiset<std::string> recorded_reqs, given_reqs;
  std::map<std::string, std::string> spelled;
  for (const auto& r : rec.requirements) {
    recorded_reqs.insert(canonical_requirement(r));
    spelled.emplace(canonical_requirement(r), r);
  }
  for (const auto& r : given.record.requirements) {
    given_reqs.insert(canonical_requirement(r));
    spelled.emplace(canonical_requirement(r), r);
  }
  for (const auto& r : minus(given_reqs, recorded_reqs)) {
    add("requirement-added", spelled[r],
        fmt::format("the requirement {} is given but the lock was not resolved with it",
                    spelled[r]),
        std::nullopt, spelled[r]);
  }
  for (const auto& r : minus(recorded_reqs, given_reqs)) {
    add("requirement-removed", spelled[r],
        fmt::format("the lock was resolved with the requirement {}, which is not given",
                    spelled[r]),
        spelled[r], std::nullopt);
  }
}

// Files by (kind, path); their contents are compared by the re-read.
void compare_files(const GivenInputs& given, const lock::GpulockInputs& rec,
                   const GivenDrifts& add) {
  std::set<std::string> recorded_files, given_files;
  auto key = [](const lock::InputFile& f) { return f.kind + " " + f.path; };
  for (const auto& f : rec.files)
    recorded_files.insert(key(f));
  for (const auto& f : given.record.files)
    given_files.insert(key(f));
  for (const auto& f : given.record.files) {
    if (recorded_files.contains(key(f))) continue;
    add("input-added", f.path,
        fmt::format("{} ({} file) is given but the lock was not resolved from it", f.path, f.kind),
        std::nullopt, f.path);
  }
  for (const auto& f : rec.files) {
    if (given_files.contains(key(f))) continue;
    add("input-removed", f.path,
        fmt::format("the lock was resolved from {} ({} file), which is not given", f.path, f.kind),
        f.path, std::nullopt);
  }
}

// Extras and dependency groups, each added or removed since the lock.
void compare_extras_and_groups(const GivenInputs& given, const lock::GpulockInputs& rec,
                               const GivenDrifts& add) {
  const std::pair<std::string_view,
                  std::pair<const std::vector<std::string>*, const std::vector<std::string>*>>
      named_lists[] = {{"extra", {&rec.extras, &given.record.extras}},
                       {"group", {&rec.groups, &given.record.groups}}};
  for (const auto& [what, lists] : named_lists) {
    std::set<std::string> recorded(lists.first->begin(), lists.first->end());
    std::set<std::string> now(lists.second->begin(), lists.second->end());
    for (const auto& x : minus(now, recorded)) {
      add(fmt::format("{}-added", what), x,
          fmt::format("the {} {} is given but the lock was resolved without it", what, x),
          std::nullopt, x);
    }
    for (const auto& x : minus(recorded, now)) {
      add(fmt::format("{}-removed", what), x,
          fmt::format("the lock was resolved with the {} {}, which is not given", what, x), x,
          std::nullopt);
    }
  }
}

// Options, by key.
void compare_options(const GivenInputs& given, const lock::GpulockInputs& rec,
                     const GivenDrifts& add) {
  std::set<std::string> keys;
  for (const auto& [k, v] : rec.options)
    keys.insert(k);
  for (const auto& [k, v] : given.record.options)
    keys.insert(k);
  for (const auto& k : keys) {
    auto r = rec.options.find(k);
    auto g = given.record.options.find(k);
    std::optional<std::string> rv, gv;
    if (r != rec.options.end()) rv = r->second;
    if (g != given.record.options.end()) gv = g->second;
    if (rv == gv) continue;
    // Variables the options came from are compared with the environment (compare_variables).
    if (k.starts_with("env ")) continue;
    // The machine a lock was made for (--driver, --cuda-ceiling, --gpu-arch) is compared only
    // when check is given it: without those flags, check describes this machine by detection.
    if (!gv && (k == "driver" || k == "cuda-ceiling" || k == "gpu-arch")) continue;
    std::string message =
        rv && gv ? fmt::format("--{} is {} but the lock was resolved with {}", k, *gv, *rv)
        : gv     ? fmt::format("--{} {} is given but the lock was resolved without it", k, *gv)
                 : fmt::format("the lock was resolved with --{} {}, which is not given", k, *rv);
    add("option-changed", k, std::move(message), rv, gv);
  }
}

// A general index: `--index-url`, `--extra-index-url` or `--find-links` (not a pin, not the
// torch family, not a direct reference).
bool is_general(const catalog::Source& source) {
  return (source.is<catalog::Simple>() || source.is<catalog::FindLinks>()) &&
         (source.role == catalog::Role::Default || source.role == catalog::Role::Extra);
}

// Indexes: the general ones in priority order; the torch family's base.
void compare_indexes(const Context& ctx, const GivenInputs& given, const GivenDrifts& add) {
  const ResolveRequest& flags = *ctx.request.given;
  if (ctx.lock.gpulock) {
    std::vector<std::string> recorded_general, given_general;
    for (const auto& ix : ctx.lock.gpulock->indexes) {
      auto source = catalog::read_recorded_role(ix.role);
      if (source && is_general(*source)) {
        recorded_general.push_back(fmt::format("{} {}", catalog::recorded_role(*source), ix.url));
      }
    }
    for (const auto& [source, url] : given.general_indexes)
      given_general.push_back(fmt::format("{} {}", catalog::recorded_role(source), url));
    if (recorded_general != given_general) {
      add("index-changed", "indexes",
          fmt::format(
              "the indexes given ({}) are not the ones the lock was resolved from ({})",
              given_general.empty() ? "none" : fmt::format("{}", fmt::join(given_general, ", ")),
              recorded_general.empty() ? "none"
                                       : fmt::format("{}", fmt::join(recorded_general, ", "))),
          fmt::format("{}", fmt::join(recorded_general, ", ")),
          fmt::format("{}", fmt::join(given_general, ", ")));
    }
    if (flags.torch_backend || flags.nightly) {
      std::string base(core::trim_slash(index::url_from_user_input(flags.torch_index_base)));
      base += flags.nightly ? "/nightly" : "";
      base = index::strip_credentials(base) + "/";
      for (const auto& ix : ctx.lock.gpulock->indexes) {
        auto source = catalog::read_recorded_role(ix.role);
        if (!source || source->role != catalog::Role::Family || ix.url.starts_with(base)) continue;
        add("index-changed", "torch-index-base",
            fmt::format("the torch family comes from {} but the lock has it from {}", base, ix.url),
            ix.url, base);
        break;
      }
    }
  }
}

// The target, when given.
void compare_target(const Context& ctx, const GivenDrifts& add) {
  const ResolveRequest& flags = *ctx.request.given;
  if (ctx.lock.gpulock && ctx.lock.gpulock->target) {
    const auto& t = *ctx.lock.gpulock->target;
    if (!flags.target.python_version.empty() && flags.target.python_version != t.python) {
      add("target-changed", "python-version",
          fmt::format("--python-version is {} but the lock is for Python {}",
                      flags.target.python_version, t.python),
          t.python, flags.target.python_version);
    }
    if (!flags.target.platform.empty() && flags.target.platform != t.platform) {
      add("target-changed", "platform",
          fmt::format("--platform is {} but the lock is for {}", flags.target.platform, t.platform),
          t.platform, flags.target.platform);
    }
  }
}

// The given flags against the record: one drift per difference.
void compare_given(const Context& ctx, const GivenInputs& given, const lock::GpulockInputs& rec,
                   std::vector<Drift>& drifts) {
  GivenDrifts add(ctx, rec, drifts);
  compare_requirements(given, rec, add);
  compare_files(given, rec, add);
  compare_extras_and_groups(given, rec, add);
  compare_options(given, rec, add);
  compare_indexes(ctx, given, add);
  compare_target(ctx, add);
}

}  // namespace

core::Status check_inputs(const Context& ctx, LayerResult& layer, std::vector<Drift>& drifts) {
  layer.checked = true;
  const auto* rec = recorded_inputs(ctx.lock);
  if (rec == nullptr) {
    Drift d =
        make_drift(CheckLayer::Inputs, "inputs-not-recorded", "inputs",
                   "the lock records no inputs ([tool.gpulock.inputs]), so they cannot be checked",
                   ctx.lock.gpulock ? ctx.lock.gpulock->line.line : 0);
    d.severity = DriftSeverity::Warning;
    d.hint = "locks written by gpulock resolve record their inputs";
    drifts.push_back(std::move(d));
    layer.summary = "no inputs recorded";
    return {};
  }
  const std::size_t line = rec->line.line;

  if (!rec->sha256.empty()) {
    std::string actual = core::sha256_hex(lock::canonical_inputs_text(*rec));
    if (actual != rec->sha256) {
      Drift d = make_drift(
          CheckLayer::Inputs, "inputs-record-edited", "inputs",
          "the lock's [tool.gpulock.inputs] does not match its sha256: the record was edited "
          "after gpulock wrote it",
          line);
      d.expected = rec->sha256;
      d.actual = actual;
      d.hint = update_hint(ctx.lock);
      drifts.push_back(std::move(d));
    }
  }

  for (const auto& f : rec->files) {
    fs::path path = ctx.lock_dir / fs::path(f.path);
    std::string abs_path = path.lexically_normal().string();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      Drift d = make_drift(
          CheckLayer::Inputs, "input-missing", f.path,
          fmt::format("{} ({} file the lock was resolved from) is missing", f.path, f.kind), line);
      d.expected = f.sha256;
      d.hint = update_hint(ctx.lock);
      drifts.push_back(std::move(d));
      continue;
    }
    auto content = read_text_file(abs_path);
    if (!content) return std::unexpected(content.error());
    std::string actual = core::sha256_hex(*content);
    if (actual == f.sha256) continue;
    Drift d =
        make_drift(CheckLayer::Inputs, "input-changed", f.path,
                   fmt::format("{} changed since the lock was resolved (sha256 {}... is now {}...)",
                               f.path, short_sha(f.sha256), short_sha(actual)),
                   line);
    d.details = explain_change(ctx, f, abs_path, *content);
    d.expected = f.sha256;
    d.actual = actual;
    d.hint = update_hint(ctx.lock);
    drifts.push_back(std::move(d));
  }

  if (auto s = compare_user_settings(ctx, *rec, drifts); !s) return s;

  layer.summary =
      fmt::format("{}, {}, {} recorded", plural(rec->files.size(), "input file", "input files"),
                  plural(rec->requirements.size(), "requirement argument", "requirement arguments"),
                  plural(rec->options.size(), "option", "options"));
  if (ctx.request.given) {
    auto given = given_inputs(ctx, *ctx.request.given);
    if (!given) return std::unexpected(given.error());
    compare_given(ctx, *given, *rec, drifts);
    layer.summary += "; compared with the input flags given";
  }
  return {};
}

}  // namespace gpulock::app::check_detail

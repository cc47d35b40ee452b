// Declared targets resolved as a set (targets.h: resolve_targets, issue 22):
//
//   targets --expand--> units (each target's Pythons x machines), one index client for all
//           --resolve each unit--> results
//           --align within a target (strict: one version set serves every unit, else the
//             package that forces a split is named)
//           --align across targets (the newest public version any target locks; a target that
//             cannot take it keeps its own, with a line saying why)
//           --merge a target's units into one lock--> every lock written, or none.
//
// Alignment re-resolves a unit with `name==V` constraints (ResolveRun::align_pins) through
// the shared client, so a trial costs a warm resolve: no page is fetched twice.

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "gpulock/app/requirements_file.h"
#include "gpulock/app/targets.h"
#include "gpulock/core/name.h"
#include "gpulock/core/version.h"
#include "gpulock/lock/lockfile.h"

#include "resolve_session.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;
using Pins = std::map<std::string, std::string>;
using Versions = std::map<std::string, core::Version>;

// One Python on one machine of a target.
struct Unit {
  std::size_t target = 0;  // into the targets
  std::string python;
  std::string machine;     // the platform tag that names its machine (the first of its group)
  ResolveRequest request;  // without the alignment pins
  Pins pins;
  ResolveResult result;
};

// Versions that follow a CUDA build rather than a choice: aligning them across targets that
// lock different CUDA variants would only ever report the variant.
bool follows_cuda_variant(std::string_view name) {
  return name.starts_with("nvidia-") || name.starts_with("cuda-");
}

// The torch family first: aligning torch settles its companions and their dependencies.
int align_rank(std::string_view name) {
  if (name == "torch") return 0;
  if (name == "torchvision" || name == "torchaudio" || name == "triton" || name == "pytorch-triton")
    return 1;
  return 2;
}

// Public versions ("2.9.0" for 2.9.0+cu126) of a solved unit's packages.
Versions versions_of(const ResolveResult& r) {
  Versions out;
  for (const auto& p : r.lock.packages) {
    if (!p.version) continue;
    if (auto v = core::Version::parse(*p.version)) out.emplace(p.name, v->public_version());
  }
  return out;
}

// The platform tags of a target grouped by machine (OS and architecture): a group's first tag
// is its machine's platform, the others add wheel tags to it (as --platform given again does).
core::Result<std::vector<std::vector<std::string>>> machines_of(const TargetSpec& t) {
  std::vector<std::vector<std::string>> groups;
  std::vector<std::pair<int, std::string>> keys;
  for (const auto& platform : t.platforms) {
    auto tags = core::TagTarget::from_platform_tag(t.pythons.front(), platform);
    if (!tags) {
      return std::unexpected(
          tags.error().with_context(fmt::format("in target '{}': platform {}", t.name, platform)));
    }
    std::pair<int, std::string> key{static_cast<int>(tags->os), tags->arch};
    auto at = std::find(keys.begin(), keys.end(), key);
    if (at == keys.end()) {
      keys.push_back(key);
      groups.push_back({platform});
    } else {
      groups[static_cast<std::size_t>(at - keys.begin())].push_back(platform);
    }
  }
  return groups;
}

// Units solved at once by TargetSet::run_all.
constexpr std::size_t kParallelUnits = 8;

class TargetSet {
 public:
  TargetSet(const std::vector<TargetSpec>& targets, index::IndexClient& client,
            const ResolveObserver& observer)
      : targets_(targets), client_(client), observer_(observer) {}

  std::vector<Unit> units;
  std::vector<std::string> alignment;

  // Resolves a unit with `pins`; a trial is dry (no hint commands are tried).
  core::Result<ResolveResult> run(const Unit& u, const Pins& pins, bool trial) {
    // A declared target's machine as given, its lock returned for write_set.
    detail::ResolveRun run;
    run.machine_as_given = true;
    run.defer_write = true;
    run.trial = trial;
    run.align_pins.assign(pins.begin(), pins.end());
    auto result = detail::ResolveSession(u.request, std::move(run), observer_, &client_).run();
    if (!result) {
      return std::unexpected(result.error().with_context(
          fmt::format("while resolving target '{}'", targets_[u.target].name)));
    }
    return result;
  }

  // Every unit's first solve, at once: each on its own thread with its own provider, all through
  // the one client, so that a target's round trips overlap the others' instead of adding up (five
  // targets at 50 ms of RTT: 2.6 s one after another). Results in unit order, so what is printed
  // and which error is reported do not depend on timing.
  std::vector<std::optional<core::Result<ResolveResult>>> run_all() {
    std::vector<std::optional<core::Result<ResolveResult>>> results(units.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i = next++; i < units.size(); i = next++)
        results[i] = run(units[i], {}, false);
    };
    std::vector<std::thread> threads;
    const std::size_t wanted = std::min<std::size_t>(units.size(), kParallelUnits);
    for (std::size_t t = 1; t < wanted; ++t) {
      try {
        threads.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no thread to be had: the others (and this one) take its units
      }
    }
    work();
    for (auto& t : threads)
      t.join();
    return results;  // every one filled: the workers took each index once
  }

  std::vector<Unit*> units_of(std::size_t target) {
    std::vector<Unit*> out;
    for (auto& u : units)
      if (u.target == target) out.push_back(&u);
    return out;
  }

  // Pins `name` to `version` in every unit of `of` that locks another version. Accepted only
  // when each of them solves and no other package goes down (a minor dependency must not pull
  // torch back); then the units take the new results. Otherwise: why not.
  core::Result<std::optional<std::string>> try_pin(const std::vector<Unit*>& of,
                                                   const std::string& name,
                                                   const core::Version& version) {
    std::vector<std::pair<Unit*, ResolveResult>> trials;
    for (Unit* u : of) {
      Versions now = versions_of(u->result);
      auto it = now.find(name);
      if (it == now.end() || it->second == version) continue;
      Pins pins = u->pins;
      pins[name] = version.to_string();
      auto tried = run(*u, pins, true);
      if (!tried) return std::unexpected(tried.error());
      if (!tried->solved) return std::optional<std::string>(reason_of(*tried));
      Versions then = versions_of(*tried);
      for (const auto& [other, was] : now) {
        if (other == name || follows_cuda_variant(other)) continue;
        auto t = then.find(other);
        if (t != then.end() && t->second < was) {
          return std::optional<std::string>(fmt::format("it would lower {} from {} to {}", other,
                                                        was.to_string(), t->second.to_string()));
        }
      }
      trials.emplace_back(u, std::move(*tried));
    }
    for (auto& [u, r] : trials) {
      u->pins[name] = version.to_string();
      u->result = std::move(r);
    }
    return std::optional<std::string>();
  }

  // A target's units share one version set: for each package they lock differently, the
  // newest version every unit can take. None: the package forces a split (a result, with the
  // explanation in the first unit).
  core::Result<bool> align_within(std::size_t target) {
    auto of = units_of(target);
    if (of.size() < 2) return true;
    for (int round = 0; round < 64; ++round) {
      std::map<std::string, std::set<core::Version, std::greater<>>> seen;
      for (Unit* u : of)
        for (auto& [name, v] : versions_of(u->result))
          seen[name].insert(v);
      auto split = std::find_if(seen.begin(), seen.end(),
                                [](const auto& entry) { return entry.second.size() > 1; });
      if (split == seen.end()) return true;
      const std::string name = split->first;
      std::vector<std::string> refusals;
      bool aligned = false;
      for (const auto& v : split->second) {
        auto why = try_pin(of, name, v);
        if (!why) return std::unexpected(why.error());
        if (!*why) {
          aligned = true;
          break;
        }
        refusals.push_back(fmt::format("{} {}: {}", name, v.to_string(), **why));
      }
      if (!aligned) {
        report_split(target, of, name, refusals);
        return false;
      }
    }
    return true;
  }

  // Across targets: the newest public version any target locks, in every target that can take
  // it; a line for each that cannot. Returns whether any unit changed.
  core::Result<bool> align_across(std::map<std::pair<std::size_t, std::string>, bool>& settled) {
    std::map<std::string, std::map<std::size_t, core::Version>> locked;
    for (const auto& u : units) {
      for (auto& [name, v] : versions_of(u.result)) {
        auto [at, inserted] = locked[name].emplace(u.target, v);
        if (!inserted && at->second < v) at->second = v;
      }
    }
    std::vector<std::string> names;
    for (const auto& [name, by_target] : locked)
      if (by_target.size() > 1 && !follows_cuda_variant(name)) names.push_back(name);
    std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return align_rank(a) < align_rank(b);
    });
    bool changed = false;
    for (const auto& name : names) {
      const auto& by_target = locked[name];
      core::Version newest = by_target.begin()->second;
      for (const auto& [t, v] : by_target)
        if (newest < v) newest = v;
      for (const auto& [t, v] : by_target) {
        if (!(v < newest) || settled[{t, name}]) continue;
        // torch's companions follow the torch build: where torch kept its own, so do they.
        if (align_rank(name) == 1 && excepted_.contains({t, "torch"})) continue;
        auto why = try_pin(units_of(t), name, newest);
        if (!why) return std::unexpected(why.error());
        settled[{t, name}] = true;
        if (*why) {
          excepted_.insert({t, name});
          alignment.push_back(fmt::format("{} {} everywhere except target '{}': {}", name,
                                          newest.to_string(), targets_[t].name, **why));
        } else {
          changed = true;
        }
      }
    }
    return changed;
  }

 private:
  // Why a unit cannot take a pinned version: the failed resolve's headline, short.
  static std::string reason_of(const ResolveResult& failed) {
    const std::string& h = failed.explanation.headline;
    if (h.find("needs Python") != std::string::npos) return fmt::format("requires-python: {}", h);
    if (h.empty()) return "it does not solve";
    // The explanation speaks to the machine it ran on; here that is the target's.
    std::string out = h;
    for (std::size_t at = out.find("your driver"); at != std::string::npos;
         at = out.find("your driver", at))
      out.replace(at, 4, "its");
    return out;
  }

  void report_split(std::size_t target, const std::vector<Unit*>& of, const std::string& name,
                    const std::vector<std::string>& refusals) {
    Unit& first = *of.front();
    ResolveResult& r = first.result;
    r.solved = false;
    r.explanation = {};
    std::vector<std::string> locks;
    for (const Unit* u : of) {
      auto vs = versions_of(u->result);
      auto it = vs.find(name);
      locks.push_back(fmt::format("Python {} on {}: {}", u->python, u->machine,
                                  it == vs.end() ? std::string("none") : it->second.to_string()));
    }
    r.explanation.headline =
        fmt::format("no single version of {} serves every Python and platform of target '{}'", name,
                    targets_[target].name);
    r.explanation.lines.push_back(fmt::format("{} is locked as {}.", name, fmt::join(locks, "; ")));
    for (const auto& line : refusals)
      r.explanation.lines.push_back(fmt::format("{}.", line));
    r.explanation.lines.push_back(fmt::format(
        "Declare one target per Python or platform that needs its own {} (each gets its own "
        "pylock.<name>.toml).",
        name));
    r.explanation.brief = r.explanation.lines;
  }

  const std::vector<TargetSpec>& targets_;
  std::set<std::pair<std::size_t, std::string>> excepted_;  // (target, package) kept its own
  index::IndexClient& client_;
  const ResolveObserver& observer_;
};

// "python_version == "3.10" or python_version == "3.11"": where a package only some units of a
// target need is installed. Empty: every unit needs it.
std::string marker_for(const std::vector<const Unit*>& all, const std::vector<const Unit*>& some) {
  if (some.size() == all.size()) return {};
  std::set<std::string> pythons, machines, some_pythons, some_machines;
  for (const Unit* u : all) {
    pythons.insert(u->result.target.python_version);
    machines.insert(u->result.target.environment.platform_machine);
  }
  std::set<std::pair<std::string, std::string>> pairs;
  for (const Unit* u : some) {
    some_pythons.insert(u->result.target.python_version);
    some_machines.insert(u->result.target.environment.platform_machine);
    pairs.emplace(u->result.target.python_version, u->result.target.environment.platform_machine);
  }
  std::vector<std::string> terms;
  if (some_machines == machines && pairs.size() == some_pythons.size() * machines.size()) {
    for (const auto& p : some_pythons)
      terms.push_back(fmt::format("python_version == \"{}\"", p));
  } else if (some_pythons == pythons && pairs.size() == pythons.size() * some_machines.size()) {
    for (const auto& m : some_machines)
      terms.push_back(fmt::format("platform_machine == \"{}\"", m));
  } else {
    for (const Unit* u : some)
      terms.push_back(fmt::format("({})", u->result.target.environment_marker()));
  }
  return fmt::format("{}", fmt::join(terms, " or "));
}

// A target's units as one lock: every unit's wheels per package, `environments` for each unit,
// markers for what only some need. The first unit's result carries the rest (GPU facts, why).
ResolveResult merge_units(const TargetSpec& spec, const std::vector<const Unit*>& units,
                          const std::string& command_line) {
  ResolveResult merged = units.front()->result;
  if (units.size() == 1) return merged;
  lock::Lock& lk = merged.lock;
  lk.packages.clear();
  std::vector<std::string> environments;
  std::map<std::string, std::vector<const Unit*>> needed_by;
  std::map<std::string, std::size_t> at;
  for (const Unit* u : units) {
    environments.push_back(u->result.target.environment_marker());
    for (const auto& p : u->result.lock.packages) {
      needed_by[p.name].push_back(u);
      auto [it, inserted] = at.emplace(p.name, lk.packages.size());
      if (inserted) {
        lk.packages.push_back(p);
        continue;
      }
      lock::Package& into = lk.packages[it->second];
      if (!p.wheels) continue;
      if (!into.wheels) into.wheels.emplace();
      for (const auto& w : *p.wheels) {
        auto same = [&](const lock::FileEntry& e) {
          return e.url == w.url && e.name == w.name && e.path == w.path;
        };
        if (std::none_of(into.wheels->begin(), into.wheels->end(), same)) into.wheels->push_back(w);
      }
    }
    for (const auto& why : u->result.why) {
      if (std::none_of(merged.why.begin(), merged.why.end(),
                       [&](const PackageWhy& w) { return w.name == why.name; }))
        merged.why.push_back(why);
    }
  }
  std::sort(lk.packages.begin(), lk.packages.end(),
            [](const lock::Package& a, const lock::Package& b) { return a.name < b.name; });
  for (auto& p : lk.packages) {
    std::string m = marker_for(units, needed_by[p.name]);
    if (!m.empty()) p.marker = m;
  }
  lk.environments = environments;
  if (spec.pythons.size() > 1) lk.requires_python = spec.python_version;
  if (lk.gpulock && lk.gpulock->target) {
    auto& t = *lk.gpulock->target;
    if (spec.pythons.size() > 1) t.pythons = spec.pythons;
    if (spec.platforms.size() > 1) t.platforms = spec.platforms;
  }
  for (const Unit* u : units)
    for (const auto& w : u->result.warnings)
      if (std::find(merged.warnings.begin(), merged.warnings.end(), w) == merged.warnings.end())
        merged.warnings.push_back(w);
  merged.lock_text = lock::to_toml(lk, lock::WriteOptions{command_line});
  return merged;
}

// Every lock, or none: a failed write puts back the locks already replaced.
core::Status write_set(const std::vector<TargetOutcome>& out) {
  std::vector<std::pair<std::string, std::optional<std::string>>> replaced;
  for (const auto& o : out) {
    std::optional<std::string> old;
    std::error_code ec;
    if (fs::exists(o.output, ec)) {
      auto text = read_text_file(o.output);
      if (text) old = std::move(*text);
    }
    if (old == o.result.lock_text) continue;
    if (auto s = write_output(o.output, o.result.lock_text); !s) {
      for (const auto& [path, text] : replaced) {
        if (text) {
          (void)write_output(path, *text);
        } else {
          fs::remove(path, ec);
        }
      }
      return std::unexpected(s.error());
    }
    replaced.emplace_back(o.output, std::move(old));
  }
  return {};
}

}  // namespace

core::Result<TargetsOutcome> resolve_targets(const ResolveRequest& shared,
                                             const std::vector<TargetSpec>& targets,
                                             const fs::path& dir, const ResolveObserver& observer,
                                             const TargetsOptions& options) {
  // Units, and the tags of every one of them for the shared client's wheel filter.
  std::vector<Unit> units;
  std::vector<Target> tag_targets;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const TargetSpec& t = targets[i];
    auto machines = machines_of(t);
    if (!machines) return std::unexpected(machines.error());
    for (const auto& python : t.pythons) {
      for (const auto& group : *machines) {
        Unit u;
        u.target = i;
        u.python = python;
        u.machine = group.front();
        u.request = request_for_target(shared, t, dir);
        u.request.target.python_version = python;
        u.request.target.platform = group.front();
        u.request.target.more_platforms.assign(group.begin() + 1, group.end());
        auto tags = make_target(u.request.target);
        if (!tags) {
          return std::unexpected(
              tags.error().with_context(fmt::format("while resolving target '{}'", t.name)));
        }
        tag_targets.push_back(std::move(*tags));
        units.push_back(std::move(u));
      }
    }
  }
  index::IndexClient client(detail::client_options_for(shared, observer, tag_targets));
  TargetSet set(targets, client, observer);
  set.units = std::move(units);

  TargetsOutcome out;
  bool all_solved = true;
  auto first = set.run_all();
  for (std::size_t i = 0; i < set.units.size(); ++i) {
    auto& r = *first[i];
    if (!r) return std::unexpected(r.error());
    set.units[i].result = std::move(*r);
    all_solved = all_solved && set.units[i].result.solved;
  }
  std::vector<bool> target_solved(targets.size(), true);
  for (const auto& u : set.units)
    if (!u.result.solved) target_solved[u.target] = false;
  if (all_solved) {
    std::map<std::pair<std::size_t, std::string>, bool> settled;
    for (int pass = 0; pass < 4; ++pass) {
      for (std::size_t i = 0; i < targets.size(); ++i) {
        auto ok = set.align_within(i);
        if (!ok) return std::unexpected(ok.error());
        if (!*ok) target_solved[i] = false;
      }
      if (options.independent ||
          std::find(target_solved.begin(), target_solved.end(), false) != target_solved.end())
        break;
      auto changed = set.align_across(settled);
      if (!changed) return std::unexpected(changed.error());
      if (!*changed) break;
    }
  }

  for (std::size_t i = 0; i < targets.size(); ++i) {
    std::vector<const Unit*> of;
    for (const auto& u : set.units)
      if (u.target == i) of.push_back(&u);
    // An unsolved target is reported by its first unsolved unit, named when it has several.
    auto failed =
        std::find_if(of.begin(), of.end(), [](const Unit* u) { return !u->result.solved; });
    TargetOutcome o;
    o.name = targets[i].name;
    o.output = (dir / fmt::format("pylock.{}.toml", targets[i].name)).string();
    if (failed != of.end()) {
      o.result = (*failed)->result;
      if (of.size() > 1 && o.result.explanation.headline.find("serves every") == std::string::npos)
        o.result.explanation.headline +=
            fmt::format(" (Python {} on {})", (*failed)->python, (*failed)->machine);
    } else {
      o.result = merge_units(targets[i], of, shared.command_line);
    }
    out.targets.push_back(std::move(o));
  }
  out.alignment = std::move(set.alignment);
  out.index_stats = client.stats();
  const bool solved = std::all_of(out.targets.begin(), out.targets.end(),
                                  [](const TargetOutcome& o) { return o.result.solved; });
  if (!solved) return out;
  if (auto s = write_set(out.targets); !s) return std::unexpected(s.error());
  return out;
}

}  // namespace gpulock::app

// The solver's decision making: choosing a version, adding its dependencies as
// incompatibilities, recording unavailable candidates and the backjump after repeated rejections.

#include "solver_impl.h"

namespace gpulock::resolver::pubgrub {

// ------------------------------------------------------------------------------------------
// doc/solver.md §Decision Making

core::Status Solver::decision_making(PackageId p, bool& made) {
  made = false;
  Package& pk = pkgs_[p];
  Domain& d = domains_[pk.domain];
  const Assignment& a = asg_[pk.assigned.back()];
  const OwnedSet allowed(apool_.begin() + a.acc_off, apool_.begin() + a.acc_off + a.acc_len);

  // Candidates that may be chosen: available, not yanked unless pinned, and not a pre-release
  // under Disallow. These rules do not depend on the partial solution (except pins, which only
  // grow), so "none left" is a fact we can record as an incompatibility.
  OwnedSet& eligible = scratch_;
  detail::combine(allowed, d.available, detail::And{}, eligible);
  if (!d.yanked.empty()) {
    OwnedSet unpinned = detail::combined(d.yanked, d.pinned, detail::AndNot{});
    detail::combine(eligible, unpinned, detail::AndNot{}, scratch2_);
    eligible.swap(scratch2_);
  }
  if (d.policy == PrereleasePolicy::Disallow) {
    detail::combine(eligible, d.finals, detail::And{}, scratch2_);
    eligible.swap(scratch2_);
  }
  if (eligible.empty()) {
    add_unavailable(p, allowed);
    return {};
  }

  std::uint32_t bit = detail::kNoBit;
  if (pk.base != p && decided(pk.base)) {
    // A proxy follows its base when the base is already decided.
    std::uint32_t b = asg_[pkgs_[pk.base].assigned.back()].bit;
    if (detail::contains(eligible, b)) bit = b;
  }
  if (bit == detail::kNoBit) {
    bool any_pre = d.policy == PrereleasePolicy::Allow ||
                   (d.policy == PrereleasePolicy::IfNecessary && d.names_prerelease);
    if (!any_pre) bit = detail::lowest_and(eligible, d.finals);
    if (bit == detail::kNoBit) bit = detail::lowest(eligible);
  }

  auto key = pair_key(p, bit);
  if (!deps_of_.contains(key)) {
    Dependencies deps;
    if (p == kRoot) {
      deps.dependencies = request_.requirements;
    } else {
      ++stats_.dependency_requests;
      const auto& version = (*d.versions)[bit];
      auto r = provider_.dependencies(pk.name, bit, version, pk.extra);
      if (!r) {
        return std::unexpected(r.error().with_context("while reading the dependencies of " +
                                                      pk.info->display_name() + " " +
                                                      version.to_string()));
      }
      deps = std::move(*r);
    }
    if (deps.unavailable) {
      IncompatId id = make_one(NodeKind::Unavailable, p, true, detail::single(bit), kNone);
      incompats_[id].reason = static_cast<std::uint32_t>(reasons_.size());
      reasons_.push_back(*deps.unavailable);
      add_incompatibility(id);
      return {};
    }
    provider_.on_version_chosen(p == kRoot ? std::string_view{} : std::string_view(pk.name),
                                (*d.versions)[bit], deps.dependencies);
    auto added = add_incompatibilities_from_dependencies(p, bit, deps.dependencies);
    if (!added) return std::unexpected(added.error());
    auto ruled = add_conflicts(p, bit, deps.conflicts);
    if (!ruled) return std::unexpected(ruled.error());
    added->insert(added->end(), ruled->begin(), ruled->end());
    // "Add version to the partial solution as a decision, unless this would produce a
    // conflict in any of the new incompatibilities."
    for (IncompatId id : *added) {
      if (relation_if_decided(id, p, bit) == Rel::Satisfied) {
        note_rejection(p, id);
        return {};
      }
    }
  }
  add_decision(p, bit);
  made = true;
  return {};
}

// A candidate of `p` was passed over at decision time because its dependencies contradict a
// decided package (`id` names both). When that happens kConflictThreshold times, p's newest
// versions keep failing against an earlier decision: p, and every package decided after that
// decision (the path that led to p), are decided first from now on, and the solver goes back
// to before that decision (uv's rule for wrong-backtracking-basic/-indirect: without it the
// solver walks p down to an old version that no longer depends on the culprit, and returns a
// valid but worse solution).
std::uint32_t Solver::note_rejection(PackageId p, IncompatId id) {
  Package& pk = pkgs_[p];
  if (pk.boosted || ++pk.rejected < kConflictThreshold) return kNone;
  std::uint32_t culprit_level = kNone;
  const Incompat& inc = incompats_[id];
  for (std::uint32_t i = 0; i < inc.count; ++i) {
    PackageId q = terms_[inc.first + i].pkg;
    if (q == p || q == kRoot || !decided(q)) continue;
    for (std::uint32_t ai : pkgs_[q].assigned) {
      if (asg_[ai].cause == kNone) culprit_level = std::min(culprit_level, asg_[ai].level);
    }
  }
  pk.boosted = true;
  if (culprit_level == kNone || culprit_level == 0) return kNone;
  for (std::size_t i = asg_.size(); i-- > 0;) {
    const Assignment& a = asg_[i];
    if (a.level <= culprit_level) break;
    if (a.cause == kNone) pkgs_[a.pkg].boosted = true;
  }
  backjump_ = culprit_level - 1;
  return backjump_;
}

core::Result<std::vector<IncompatId>> Solver::add_incompatibilities_from_dependencies(
    PackageId p, std::uint32_t bit, const std::vector<Dependency>& deps) {
  std::vector<IncompatId> out;
  std::vector<Edge> edges;
  const OwnedSet depender = detail::single(bit);
  OwnedSet set;

  auto add_edge = [&](PackageId q, std::uint32_t text) {
    if (q == p) {
      // A version that depends on itself: harmless if it matches, else it cannot be used.
      if (detail::contains(set, bit)) return;
      IncompatId id = make_one(NodeKind::Unavailable, p, true, depender, kNone);
      incompats_[id].reason = static_cast<std::uint32_t>(reasons_.size());
      reasons_.push_back({UnavailableKind::Other, "depends on another version of itself", {}});
      add_incompatibility(id);
      out.push_back(id);
      return;
    }
    out.push_back(add_dependency(p, depender, q, set, text));
  };

  // A dependency that no candidate satisfies makes this version unusable, and its other
  // dependencies irrelevant: record {p in A} (A: every version seen with that dependency),
  // derived from "p depends on q<spec>" and "there is no version of q<spec>".
  auto add_empty = [&](PackageId q, std::uint32_t text) {
    OwnedSet versions = depender;
    std::uint64_t key = pair_key(p, q);
    auto it = empty_merged_.find(key);
    // Same dependency, written alike, and no candidate either way: one fact for all versions.
    // (Different specifiers both matching nothing stay apart: the fact keeps one text, which
    // must be true of every version, e.g. `__cuda>=12.6` vs `__cuda>=12.9` on a 12.4 driver.)
    if (it != empty_merged_.end() && incompats_[it->second].text == text) {
      const Incompat& old = incompats_[it->second];
      versions = detail::combined(versions, tset(terms_[old.first]), detail::Or{});
      text = old.text;
      remove_from_lists(it->second);
    }
    IncompatId id = make_one(NodeKind::Derived, p, true, versions, kNone);
    incompats_[id].empty_dep = q;
    incompats_[id].text = text;
    add_incompatibility(id);
    empty_merged_[key] = id;
    out.push_back(id);
  };

  if (pkgs_[p].base != p) {
    // doc: extras are proxies pinned to the same candidate of their base.
    PackageId base = pkgs_[p].base;
    set = detail::single(bit);
    add_edge(base, intern_string("==" + (*domain_of(p).versions)[bit].to_string()));
  }
  // Resolve every edge to (package, set) first, so an unsatisfiable one can short-circuit.
  struct Resolved {
    PackageId q;
    OwnedSet set;
    std::uint32_t text;
  };
  std::vector<Resolved> resolved;
  for (const Dependency& dep : deps) {
    auto base = intern(dep.name, "");
    if (!base) return std::unexpected(base.error());
    Domain& d = domain_of(*base);
    build_set(d, dep.specifier, set);
    Grant grant;
    grant.domain = pkgs_[*base].domain;
    grant.names_prerelease = dep.specifier.names_prerelease();
    bool exact = false;
    for (const auto& clause : dep.specifier) {
      if ((clause.op() == core::Operator::Equal && !clause.wildcard()) ||
          clause.op() == core::Operator::ArbitraryEqual) {
        exact = true;
      }
    }
    if (exact) grant.pins = set;
    if (grant.names_prerelease || !grant.pins.empty()) {
      grants_of_[pair_key(p, bit)].push_back(std::move(grant));
    }
    std::uint32_t text = intern_string(specifier_text(dep.specifier));
    edges.push_back(Edge{*base, intern_string(dep.to_string())});
    if (p == kRoot) pkgs_[*base].direct = true;
    resolved.push_back(Resolved{*base, set, text});
    for (const auto& extra : dep.extras) {
      auto proxy = intern(dep.name, extra);
      if (!proxy) return std::unexpected(proxy.error());
      if (p == kRoot) pkgs_[*proxy].direct = true;
      resolved.push_back(Resolved{*proxy, set, text});
    }
  }
  auto empty = std::find_if(resolved.begin(), resolved.end(),
                            [&](const Resolved& r) { return r.q != p && r.set.empty(); });
  if (empty != resolved.end()) {
    add_empty(empty->q, empty->text);
  } else {
    for (auto& r : resolved) {
      set = std::move(r.set);
      add_edge(r.q, r.text);
    }
  }
  deps_of_[pair_key(p, bit)] = std::move(edges);
  return out;
}

// A version's conflict rules: {p at this version, q outside the allowed set}, both terms
// positive, so q is not required (apply_constraints does the same for the root's -c
// constraints).
core::Result<std::vector<IncompatId>> Solver::add_conflicts(PackageId p, std::uint32_t bit,
                                                            const std::vector<Conflict>& rules) {
  std::vector<IncompatId> out;
  for (const Conflict& rule : rules) {
    auto q = intern(rule.name, "");
    if (!q) return std::unexpected(q.error());
    if (*q == p) continue;
    Domain& d = domain_of(*q);
    OwnedSet allowed;
    build_set(d, rule.allowed, allowed);
    OwnedSet outside = detail::combined(d.full, allowed, detail::AndNot{});
    if (outside.empty()) continue;
    IncompatId id =
        make_two(NodeKind::Conflict, p, true, detail::single(bit), kNone, *q, true, outside, kNone);
    incompats_[id].text = intern_string(rule.reason);
    add_incompatibility(id);
    out.push_back(id);
  }
  return out;
}

// The allowed set of `p` holds no eligible candidate: record why, one incompatibility per
// reason (kind and message), each an external fact for the explanation.
void Solver::add_unavailable(PackageId p, Set set) {
  Domain& d = domain_of(p);
  struct Group {
    UnavailableReason reason;
    OwnedSet bits;
  };
  std::vector<Group> groups;
  detail::for_each_index(set, [&](std::uint32_t i) {
    const Candidate& c = d.candidates[i];
    UnavailableReason reason;
    if (c.unavailable) {
      reason = *c.unavailable;
    } else if (d.policy == PrereleasePolicy::Disallow && c.version.is_prerelease()) {
      reason.kind = UnavailableKind::PrereleaseDisallowed;
    } else {
      reason.kind = UnavailableKind::Yanked;
      reason.message = c.yanked_reason;
    }
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.reason.kind == reason.kind && g.reason.message == reason.message;
    });
    if (it == groups.end()) {
      groups.push_back(Group{std::move(reason), {}});
      it = groups.end() - 1;
    }
    detail::push_index(it->bits, i);
  });
  for (auto& g : groups) {
    IncompatId id = make_one(NodeKind::Unavailable, p, true, g.bits, kNone);
    incompats_[id].reason = static_cast<std::uint32_t>(reasons_.size());
    reasons_.push_back(std::move(g.reason));
    add_incompatibility(id);
  }
}

}  // namespace gpulock::resolver::pubgrub

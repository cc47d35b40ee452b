// The solver's partial solution (assignments, satisfiers, backtracking) and the priority order
// of the packages left to decide.

#include "solver_impl.h"

namespace gpulock::resolver::pubgrub {

// ------------------------------------------------------------------------------------------
// Partial solution

Rel Solver::term_relation(const ITerm& t) const {
  const Package& pk = pkgs_[t.pkg];
  if (pk.assigned.empty()) {
    // Nothing known about the package: only "any" is satisfied and only "none" contradicted.
    if (t.len == 0) return t.positive ? Rel::Contradicted : Rel::Satisfied;
    return Rel::Inconclusive;
  }
  const Assignment& a = asg_[pk.assigned.back()];
  return sets_relation(a.acc_positive, aset(a), t.positive, tset(t));
}

IRel Solver::relation(IncompatId id) {
  ++stats_.propagations;
  const Incompat& inc = incompats_[id];
  std::uint32_t almost = kNone;
  for (std::uint32_t i = 0; i < inc.count; ++i) {
    Rel r = term_relation(terms_[inc.first + i]);
    if (r == Rel::Contradicted) return {IRel::Contradicted, i};
    if (r == Rel::Inconclusive) {
      if (almost != kNone) return {IRel::Inconclusive, kNone};
      almost = i;
    }
  }
  if (almost == kNone) return {IRel::Satisfied, kNone};
  return {IRel::Almost, almost};
}

Rel Solver::relation_if_decided(IncompatId id, PackageId p, std::uint32_t bit) const {
  const Incompat& inc = incompats_[id];
  bool inconclusive = false;
  for (std::uint32_t i = 0; i < inc.count; ++i) {
    const ITerm& t = terms_[inc.first + i];
    Rel r;
    if (t.pkg == p) {
      bool in = detail::contains(tset(t), bit);
      r = (in == t.positive) ? Rel::Satisfied : Rel::Contradicted;
    } else {
      r = term_relation(t);
    }
    if (r == Rel::Contradicted) return Rel::Contradicted;
    if (r == Rel::Inconclusive) inconclusive = true;
  }
  return inconclusive ? Rel::Inconclusive : Rel::Satisfied;
}

void Solver::add_derivation(PackageId p, IncompatId cause) {
  const ITerm* t = term_for(cause, p);
  Set own = tset(*t);
  bool own_pos = !t->positive;
  bool pos = own_pos;
  Package& pk = pkgs_[p];
  OwnedSet& acc = scratch3_;
  if (pk.assigned.empty()) {
    acc.assign(own.begin(), own.end());
  } else {
    const Assignment& prev = asg_[pk.assigned.back()];
    pos = intersect_into(prev.acc_positive, aset(prev), own_pos, own, acc);
  }
  auto off = static_cast<std::uint32_t>(apool_.size());
  apool_.insert(apool_.end(), acc.begin(), acc.end());
  pk.assigned.push_back(static_cast<std::uint32_t>(asg_.size()));
  asg_.push_back(Assignment{p, level_, cause, detail::kNoBit, pos, off,
                            static_cast<std::uint32_t>(acc.size())});
  incompats_[cause].referenced = true;
  if (pos) push_priority(p);
}

void Solver::add_decision(PackageId p, std::uint32_t bit) {
  ++level_;
  ++stats_.decisions;
  auto off = static_cast<std::uint32_t>(apool_.size());
  apool_.push_back(bit);
  apool_.push_back(bit + 1);
  pkgs_[p].assigned.push_back(static_cast<std::uint32_t>(asg_.size()));
  asg_.push_back(Assignment{p, level_, kNone, bit, true, off, 2});
  if (auto it = grants_of_.find(pair_key(p, bit)); it != grants_of_.end()) {
    for (const Grant& g : it->second) {
      grants_.emplace_back(level_, &g);
      Domain& d = domains_[g.domain];
      if (g.names_prerelease) ++d.names_prerelease;
      if (!g.pins.empty()) {
        detail::combine(d.pinned, g.pins, detail::Or{}, scratch3_);
        d.pinned.swap(scratch3_);
      }
    }
  }
}

// The earliest assignment of `p` whose accumulated term satisfies the term (tpos, t)
// (pub's PartialSolution.satisfier); the accumulated terms only shrink, so binary search.
std::uint32_t Solver::satisfier(PackageId p, bool tpos, Set t) const {
  const auto& list = pkgs_[p].assigned;
  std::size_t lo = 0;
  std::size_t hi = list.size();
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    const Assignment& a = asg_[list[mid]];
    if (sets_relation(a.acc_positive, aset(a), tpos, t) == Rel::Satisfied) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo < list.size() ? list[lo] : kNone;
}

void Solver::mark_contradicted(IncompatId id) {
  if (contradicted_[id] != 0) return;
  contradicted_[id] = level_ + 1;
  contradicted_stack_.emplace_back(id, level_);
}

// Grows the prefix of p's incompatibilities that are all contradicted, so unit propagation
// skips them: without it, a package tried down V versions rescans its O(V) contradicted
// dependency facts after every step (quadratic). Every mark in the prefix was set at a level
// <= level_, so the growth is undone when backtracking below level_ (backtrack), which is when
// a mark in it can be cleared; the other ways a mark or a position changes (an in-place merge,
// an incompatibility removed from the lists) reset the prefix (unsettle).
void Solver::settle(PackageId p) {
  Package& pk = pkgs_[p];
  std::uint32_t s = pk.settled;
  const auto n = static_cast<std::uint32_t>(pk.incompats.size());
  while (s < n && contradicted_[pk.incompats[s]] != 0)
    ++s;
  if (s == pk.settled) return;
  settled_stack_.push_back(SettledUndo{p, pk.settled, level_, pk.settled_ver});
  pk.settled = s;
}

// doc/solver.md §Conflict Resolution: "Backtrack by removing all assignments whose decision
// level is greater than previousSatisfierLevel from the partial solution."
void Solver::backtrack(std::uint32_t level) {
  ++stats_.backtracks;
  while (!asg_.empty() && asg_.back().level > level) {
    const Assignment& a = asg_.back();
    Package& pk = pkgs_[a.pkg];
    pk.assigned.pop_back();
    if (!pk.affected) {
      pk.affected = true;
      affected_.push_back(a.pkg);
    }
    apool_.resize(a.acc_off);
    asg_.pop_back();
  }
  level_ = level;
  // Whatever the undone decisions permitted is undone with them (issue 20): a pre-release
  // allowance or a yanked pin from a version no longer selected no longer applies.
  std::vector<std::uint32_t> touched;
  while (!grants_.empty() && grants_.back().first > level) {
    const Grant& g = *grants_.back().second;
    if (g.names_prerelease) --domains_[g.domain].names_prerelease;
    if (!g.pins.empty()) touched.push_back(g.domain);
    grants_.pop_back();
  }
  for (std::uint32_t dom : touched) {
    Domain& d = domains_[dom];
    d.pinned.clear();
    for (const auto& [lvl, g] : grants_) {
      if (g->domain != dom || g->pins.empty()) continue;
      detail::combine(d.pinned, g->pins, detail::Or{}, scratch3_);
      d.pinned.swap(scratch3_);
    }
  }
  // Marks are pushed with non-decreasing levels between backtracks, so they form a stack.
  // An entry may be stale (its mark was cleared by an in-place merge): it still pops, and
  // clears whatever mark above `level` its incompatibility has.
  while (!contradicted_stack_.empty() && contradicted_stack_.back().second > level) {
    IncompatId id = contradicted_stack_.back().first;
    if (contradicted_[id] > level + 1) contradicted_[id] = 0;
    contradicted_stack_.pop_back();
  }
  while (!settled_stack_.empty() && settled_stack_.back().level > level) {
    const SettledUndo& u = settled_stack_.back();
    if (pkgs_[u.pkg].settled_ver == u.ver) pkgs_[u.pkg].settled = u.old;
    settled_stack_.pop_back();
  }
  for (PackageId p : affected_) {
    pkgs_[p].affected = false;
    if (pending(p)) push_priority(p);
  }
  affected_.clear();
}

// ------------------------------------------------------------------------------------------
// Priority (uv's order, see solver.h)

void Solver::push_priority(PackageId p) {
  Package& pk = pkgs_[p];
  ++pk.stamp;
  std::uint8_t cls = 1;
  if (p == kRoot) {
    cls = 6;
  } else if (pk.boosted) {
    cls = 5;
  } else if (pk.direct) {
    cls = 4;
  } else {
    const Assignment& a = asg_[pk.assigned.back()];
    if (a.acc_positive && detail::is_single(aset(a))) {
      cls = 3;
    } else if (pk.conflicts >= kConflictThreshold) {
      cls = 2;
    }
  }
  heap_.push(HeapEntry{cls, domains_[pk.domain].priority, pk.first_seen, p, pk.stamp});
}

PackageId Solver::pick_package() {
  while (!heap_.empty()) {
    HeapEntry e = heap_.top();
    heap_.pop();
    if (e.stamp != pkgs_[e.pkg].stamp || !pending(e.pkg)) continue;
    return e.pkg;
  }
  return kNone;
}

}  // namespace gpulock::resolver::pubgrub

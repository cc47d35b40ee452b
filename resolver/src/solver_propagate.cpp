// The solver's unit propagation and conflict resolution (learning derived incompatibilities).

#include "solver_impl.h"

namespace gpulock::resolver::pubgrub {

// ------------------------------------------------------------------------------------------
// doc/solver.md §Unit Propagation. Returns the terminal incompatibility when version solving
// failed, else kNone.

IncompatId Solver::unit_propagation(PackageId start) {
  clear_changed();
  push_changed(start);
  while (!changed_.empty()) {
    PackageId p = changed_.back();
    changed_.pop_back();
    pkgs_[p].in_changed = false;
    IncompatId conflict = kNone;
    // Newest to oldest: conflict resolution tends to produce more general incompatibilities
    // later on. The list does not change while we scan it (derivations add no
    // incompatibilities).
    const auto& list = pkgs_[p].incompats;
    const std::size_t settled = pkgs_[p].settled;
    for (std::size_t k = list.size(); k-- > settled;) {
      ++stats_.visits;
      IncompatId id = list[k];
      if (contradicted_[id] != 0) continue;
      IRel r = relation(id);
      if (r.kind == IRel::Satisfied) {
        conflict = id;
        break;
      }
      if (r.kind == IRel::Almost) {
        PackageId q = term(id, r.term).pkg;
        add_derivation(q, id);
        mark_contradicted(id);
        push_changed(q);
      } else if (r.kind == IRel::Contradicted) {
        mark_contradicted(id);
      }
    }
    settle(p);
    if (conflict == kNone) continue;

    ++stats_.conflicts;
    for (std::uint32_t i = 0; i < incompats_[conflict].count; ++i) {
      PackageId q = term(conflict, i).pkg;
      if (q == kRoot) continue;
      if (++pkgs_[q].conflicts == kConflictThreshold && pending(q)) push_priority(q);
    }
    auto [terminal, root_cause] = conflict_resolution(conflict);
    if (terminal) return root_cause;
    // The root cause is now almost satisfied: derive the negation of its unsatisfied term.
    IRel r = relation(root_cause);
    clear_changed();
    if (r.kind != IRel::Almost) continue;  // cannot happen; propagation continues soundly
    PackageId q = term(root_cause, r.term).pkg;
    add_derivation(q, root_cause);
    mark_contradicted(root_cause);
    push_changed(q);
  }
  return kNone;
}

// doc/solver.md §Conflict Resolution, with the previous-satisfier computation of pub's
// version_solver.dart. Returns {true, id} when `id` proves there is no solution, else
// {false, root cause} after backtracking.
std::pair<bool, IncompatId> Solver::conflict_resolution(IncompatId incompat) {
  bool changed = false;
  OwnedSet& diff = scratch2_;
  std::vector<TmpTerm> prior;
  for (;;) {
    if (is_terminal(incompat)) return {true, incompat};

    // "Find the earliest assignment in the partial solution such that incompatibility is
    // satisfied by the partial solution up to and including that assignment."
    std::uint32_t most_recent = kNone;
    std::uint32_t most_recent_term = kNone;
    std::uint32_t previous_level = 1;
    bool has_diff = false;
    bool diff_pos = true;
    const std::uint32_t count = incompats_[incompat].count;
    for (std::uint32_t i = 0; i < count; ++i) {
      const ITerm t = term(incompat, i);
      std::uint32_t s = satisfier(t.pkg, t.positive, tset(t));
      if (s == kNone) return {true, incompat};  // not satisfied: cannot happen
      if (most_recent == kNone) {
        most_recent = s;
        most_recent_term = i;
      } else if (most_recent < s) {
        previous_level = std::max(previous_level, asg_[most_recent].level);
        most_recent = s;
        most_recent_term = i;
        has_diff = false;
      } else {
        previous_level = std::max(previous_level, asg_[s].level);
      }
      if (most_recent_term == i) {
        // "satisfier may not satisfy term on its own": difference = satisfier \ term.
        const Assignment& a = asg_[most_recent];
        if (a.cause == kNone) {
          const Bound one[2] = {a.bit, a.bit + 1};
          diff_pos = intersect_into(true, one, !t.positive, tset(t), diff);
        } else {
          const ITerm* ct = term_for(a.cause, t.pkg);
          diff_pos = intersect_into(!ct->positive, tset(*ct), !t.positive, tset(t), diff);
        }
        has_diff = !diff_pos || !diff.empty();
        if (has_diff) {
          std::uint32_t ps = satisfier(t.pkg, !diff_pos, diff);
          if (ps != kNone) previous_level = std::max(previous_level, asg_[ps].level);
        }
      }
    }

    const Assignment sat = asg_[most_recent];
    if (sat.cause == kNone || previous_level != sat.level) {
      if (changed) add_incompatibility(incompat);
      backtrack(previous_level);
      return {false, incompat};
    }

    // priorCause = incompatibility ∪ satisfier's cause, minus the satisfier's package, plus
    // not(satisfier \ term) when the satisfier did not satisfy the term alone.
    prior.clear();
    auto add_term = [&](PackageId pkg, bool pos, Set bits, std::uint32_t text) {
      for (auto& e : prior) {
        if (e.pkg != pkg) continue;
        OwnedSet out;
        bool opos = intersect_into(e.positive, e.bits, pos, bits, out);
        std::uint32_t otext = kNone;
        if (detail::equal(out, e.bits)) {
          otext = e.text;
        } else if (detail::equal(out, bits)) {
          otext = text;
        }
        e.positive = opos;
        e.bits = std::move(out);
        e.text = otext;
        return;
      }
      prior.push_back(TmpTerm{pkg, pos, OwnedSet(bits.begin(), bits.end()), text});
    };
    for (std::uint32_t i = 0; i < count; ++i) {
      if (i == most_recent_term) continue;
      const ITerm t = term(incompat, i);
      add_term(t.pkg, t.positive, tset(t), t.text);
    }
    const Incompat& cause = incompats_[sat.cause];
    for (std::uint32_t i = 0; i < cause.count; ++i) {
      const ITerm t = terms_[cause.first + i];
      if (t.pkg == sat.pkg) continue;
      add_term(t.pkg, t.positive, tset(t), t.text);
    }
    if (has_diff) {
      OwnedSet inv(diff);
      add_term(sat.pkg, !diff_pos, inv, kNone);
    }
    // Normalization (doc/solver.md §Incompatibility): drop terms that are always true, and
    // positive root terms of a derived incompatibility with more than one term.
    std::erase_if(prior, [&](const TmpTerm& t) { return !t.positive && t.bits.empty(); });
    if (prior.size() != 1) {
      std::erase_if(prior, [](const TmpTerm& t) { return t.pkg == kRoot && t.positive; });
    }
    incompat = make_incompat(NodeKind::Derived, prior, incompat, sat.cause);
    ++stats_.learned;
    changed = true;
  }
}

}  // namespace gpulock::resolver::pubgrub

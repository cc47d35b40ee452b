// The solver's incompatibilities: building them, indexing them by package, merging dependency
// facts written alike.

#include "solver_impl.h"

namespace gpulock::resolver::pubgrub {

// ------------------------------------------------------------------------------------------
// Incompatibilities (doc/solver.md §Incompatibility)

IncompatId Solver::make_incompat(NodeKind kind, std::span<const TmpTerm> terms, IncompatId c1,
                                 IncompatId c2) {
  auto first = static_cast<std::uint32_t>(terms_.size());
  for (const auto& t : terms)
    terms_.push_back(make_term(t.pkg, t.positive, t.bits, t.text));
  IncompatId id = push_incompat(kind, first, static_cast<std::uint32_t>(terms.size()));
  incompats_[id].cause1 = c1;
  incompats_[id].cause2 = c2;
  if (c1 != kNone) incompats_[c1].referenced = true;
  if (c2 != kNone) incompats_[c2].referenced = true;
  return id;
}

IncompatId Solver::push_incompat(NodeKind kind, std::uint32_t first, std::uint32_t count) {
  Incompat inc;
  inc.first = first;
  inc.count = count;
  inc.kind = kind;
  auto id = static_cast<IncompatId>(incompats_.size());
  incompats_.push_back(inc);
  contradicted_.push_back(0);
  ++stats_.incompatibilities;
  return id;
}

IncompatId Solver::make_two(NodeKind kind, PackageId p, bool ppos, Set pbits, std::uint32_t ptext,
                            PackageId q, bool qpos, Set qbits, std::uint32_t qtext) {
  auto first = static_cast<std::uint32_t>(terms_.size());
  terms_.push_back(make_term(p, ppos, pbits, ptext));
  terms_.push_back(make_term(q, qpos, qbits, qtext));
  return push_incompat(kind, first, 2);
}

IncompatId Solver::make_one(NodeKind kind, PackageId p, bool pos, Set bits, std::uint32_t text) {
  auto first = static_cast<std::uint32_t>(terms_.size());
  terms_.push_back(make_term(p, pos, bits, text));
  return push_incompat(kind, first, 1);
}

// "Add incompatibility to the solver's incompatibility set": index it by the packages it
// mentions (doc/solver.md §Unit Propagation), for unit propagation to find.
void Solver::add_incompatibility(IncompatId id) {
  Incompat& inc = incompats_[id];
  inc.listed = true;
  for (std::uint32_t i = 0; i < inc.count; ++i) {
    pkgs_[terms_[inc.first + i].pkg].incompats.push_back(id);
  }
}

void Solver::remove_from_lists(IncompatId id) {
  Incompat& inc = incompats_[id];
  if (!inc.listed) return;
  inc.listed = false;
  for (std::uint32_t i = 0; i < inc.count; ++i) {
    PackageId pkg = terms_[inc.first + i].pkg;
    auto& list = pkgs_[pkg].incompats;
    auto it = std::find(list.begin(), list.end(), id);
    if (it == list.end()) continue;
    if (static_cast<std::uint32_t>(it - list.begin()) < pkgs_[pkg].settled) unsettle(pkg);
    list.erase(it);
  }
}

const ITerm* Solver::term_for(IncompatId id, PackageId p) const {
  const Incompat& inc = incompats_[id];
  for (std::uint32_t i = 0; i < inc.count; ++i) {
    if (terms_[inc.first + i].pkg == p) return &terms_[inc.first + i];
  }
  return nullptr;
}

// Like pubgrub-rs merge_dependents: "p in A depends on q in T" and "p in B depends on q in T"
// become "p in A|B depends on q in T", so a version range reads as one fact. Registers and
// returns the resulting incompatibility for "p in `depender` depends on q in `set`". Only
// dependencies written alike merge: two specifiers can select the same known versions (none
// of a virtual package's one version: `__cuda>=12.6` and `__cuda>=12.9` on a 12.4 driver), and
// the merged fact keeps one text, which must be true of every version it covers.
IncompatId Solver::add_dependency(PackageId p, Set depender, PackageId q, Set set,
                                  std::uint32_t text) {
  // Only facts with the same text can merge, so they are kept by (p, q, text): a package
  // with V versions each pinning q differently costs O(1) here, not O(V).
  auto& past_ids = merged_[DepKey{p, q, text}];
  for (auto& past : past_ids) {
    const ITerm pq = term(past, 1);
    if (pq.text != text || !detail::equal(tset(pq), set)) continue;
    const ITerm pp = term(past, 0);
    OwnedSet wider = detail::combined(tset(pp), depender, detail::Or{});
    if (!incompats_[past].referenced) {
      // Nothing derives from `past` yet: widen it in place (and forget that it was
      // contradicted, since the new versions may not be).
      ITerm& own = terms_[incompats_[past].first];
      if (wider.size() <= own.len) {
        std::copy(wider.begin(), wider.end(), pool_.begin() + own.off);
      } else {
        own.off = store(wider);
      }
      own.len = static_cast<std::uint32_t>(wider.size());
      if (contradicted_[past] != 0) {
        // It may lie in a settled prefix: those are recomputed.
        unsettle(p);
        unsettle(q);
      }
      contradicted_[past] = 0;
      return past;
    }
    IncompatId merged =
        make_two(NodeKind::Dependency, p, true, wider, kNone, q, false, set, pq.text);
    remove_from_lists(past);
    add_incompatibility(merged);
    past = merged;
    return merged;
  }
  IncompatId id = make_two(NodeKind::Dependency, p, true, depender, kNone, q, false, set, text);
  past_ids.push_back(id);
  add_incompatibility(id);
  return id;
}

bool Solver::is_terminal(IncompatId id) const {
  const Incompat& inc = incompats_[id];
  if (inc.count == 0) return true;
  return inc.count == 1 && terms_[inc.first].pkg == kRoot && terms_[inc.first].positive;
}

}  // namespace gpulock::resolver::pubgrub

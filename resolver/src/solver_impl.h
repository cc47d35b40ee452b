#pragma once
// PubGrub, after dart pub doc/solver.md (cited by section below) and pubgrub-rs.
//
// Representation (see version_set.h): every package has a finite domain, its candidates in
// preference order; a term's set is a sorted list of index intervals over that domain
// (ranges.h), its boundaries stored in `pool_` (append-only, for incompatibilities) or `apool_`
// (a stack, for the partial solution). Each assignment stores the intersection of all
// assignments of its package up to and including itself, so the current term of a package is
// its last assignment's set, and satisfier searches are binary searches over a package's
// assignments. Set operations cost O(intervals), so a package with V versions costs O(1) per
// term in the usual case (one or two intervals), not O(V).
//
// This header holds the solver's data structures and the Solver class, shared by the files that
// define its members: solver_domains.cpp (packages and domains), solver_incompat.cpp
// (incompatibilities), solver_partial.cpp (the partial solution, priority), solver_propagate.cpp
// (unit propagation, conflict resolution), solver_decide.cpp (decision making),
// solver_results.cpp (Solution, NoSolution) and solver.cpp (the main loop, solve).

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpulock/resolver/solver.h"

#include "ordered_clause.h"
#include "ranges.h"

namespace gpulock::resolver::pubgrub {

using detail::Bound;
using detail::OwnedSet;
using detail::Set;
using PackageId = std::uint32_t;
using IncompatId = std::uint32_t;

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr PackageId kRoot = 0;
// uv's CONFLICT_THRESHOLD: a package involved in this many conflicts is decided earlier.
constexpr std::uint32_t kConflictThreshold = 5;

enum class Rel : std::uint8_t { Satisfied, Contradicted, Inconclusive };

struct ITerm {
  PackageId pkg = 0;
  bool positive = true;
  std::uint32_t off = 0;       // set in pool_: its boundaries
  std::uint32_t len = 0;       // how many boundaries
  std::uint32_t text = kNone;  // strings_ index of the requirement text, kNone if computed
};

// A term under construction (conflict resolution), owning its set.
struct TmpTerm {
  PackageId pkg = 0;
  bool positive = true;
  OwnedSet bits;
  std::uint32_t text = kNone;
};

struct Incompat {
  std::uint32_t first = 0;  // into terms_
  std::uint32_t count = 0;
  NodeKind kind = NodeKind::Derived;
  IncompatId cause1 = kNone;
  IncompatId cause2 = kNone;
  std::uint32_t reason = kNone;  // reasons_ index (Unavailable)
  std::uint32_t text = kNone;    // Constraint: its specifier; empty dependency: its specifier
  bool listed = false;           // registered in the per-package lists
  bool referenced = false;       // a cause of an assignment or of a derived incompatibility
  // Set on {p in A} derived from "p in A depends on q<text>" and "there is no version of
  // q<text>": those two facts are only materialized when the derivation tree is built.
  PackageId empty_dep = kNone;
};

struct Domain {
  std::shared_ptr<std::vector<core::Version>> versions;
  std::shared_ptr<std::vector<std::uint32_t>> ascending;
  std::vector<Candidate> candidates;
  std::uint32_t nbits = 0;
  // Preference order is strictly descending PEP 440 order (newest first, no ties, nothing
  // moved to the front): ordered clauses are then found by binary search (ordered_clause.h).
  bool descending = false;
  OwnedSet full;
  OwnedSet available;  // candidate.unavailable not set
  OwnedSet finals;     // not a pre-release
  OwnedSet yanked;
  // Permissions granted by the dependencies of the decided versions (grants_, undone with the
  // decision): yanked candidates unlocked by an exact pin, and pre-releases admitted because a
  // specifier names one.
  OwnedSet pinned;
  std::uint32_t names_prerelease = 0;  // how many active grants name a pre-release
  PrereleasePolicy policy = PrereleasePolicy::IfNecessary;
  int priority = 0;
  std::unordered_map<std::string, OwnedSet> clause_cache;  // clause text -> its set
  // Candidate indices by public version (built on the first `==X` clause): the candidates an
  // exact pin can match, found by hash.
  std::unique_ptr<std::unordered_map<core::Version, std::vector<std::uint32_t>, core::VersionHash>>
      by_public;
};

struct Package {
  std::string name;
  std::string extra;
  PackageId base = 0;
  bool is_virtual = false;
  std::uint32_t domain = 0;
  std::uint32_t first_seen = 0;
  std::shared_ptr<PackageInfo> info;
  std::vector<std::uint32_t> assigned;  // indices into asg_, oldest first
  std::vector<IncompatId> incompats;    // incompatibilities that mention this package
  // incompats[0, settled) are all contradicted now: unit propagation need not look at them
  // again (see settle). `settled_ver` changes whenever that prefix is reset.
  std::uint32_t settled = 0;
  std::uint32_t settled_ver = 0;
  bool direct = false;
  bool in_changed = false;
  bool affected = false;
  std::uint32_t conflicts = 0;
  std::uint32_t rejected = 0;  // candidates rejected at decision time by a decided package
  bool boosted = false;        // decided before everything else (see decision_making)
  std::uint32_t stamp = 0;
};

// What one dependency edge of a decided version permits for the package it names.
struct Grant {
  std::uint32_t domain = 0;
  bool names_prerelease = false;
  OwnedSet pins;  // empty: none
};

struct Assignment {
  PackageId pkg = 0;
  std::uint32_t level = 0;
  IncompatId cause = kNone;  // kNone: a decision
  std::uint32_t bit = detail::kNoBit;
  bool acc_positive = true;   // the accumulated intersection of the package's assignments
  std::uint32_t acc_off = 0;  // in apool_
  std::uint32_t acc_len = 0;
};

struct HeapEntry {
  std::uint8_t cls = 0;
  int hint = 0;
  std::uint32_t first_seen = 0;
  PackageId pkg = 0;
  std::uint32_t stamp = 0;
  friend bool operator<(const HeapEntry& a, const HeapEntry& b) {
    if (a.cls != b.cls) return a.cls < b.cls;
    if (a.hint != b.hint) return a.hint < b.hint;
    return a.first_seen > b.first_seen;
  }
};

struct Edge {
  PackageId to = 0;
  std::uint32_t text = kNone;  // "torch[opt]>=2"
};

struct IRel {
  enum Kind : std::uint8_t { Satisfied, Contradicted, Almost, Inconclusive } kind;
  std::uint32_t term;  // Almost: index of the unsatisfied term
};

inline std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  return (static_cast<std::uint64_t>(a) << 32U) | b;
}

// Intersection of two terms' sets with polarity (doc/solver.md §Term; a negative term also
// admits "not selected"). Returns the polarity of the result, written to `out` (which must not
// be the storage of `a` or `b`).
inline bool intersect_into(bool apos, Set a, bool bpos, Set b, OwnedSet& out) {
  if (apos && bpos) {
    detail::combine(a, b, detail::And{}, out);
    return true;
  }
  if (apos) {
    detail::combine(a, b, detail::AndNot{}, out);
    return true;
  }
  if (bpos) {
    detail::combine(b, a, detail::AndNot{}, out);
    return true;
  }
  detail::combine(a, b, detail::Or{}, out);
  return false;
}

// Relation of an accumulated assignment term `a` to a term `t` (doc/solver.md §Term:
// satisfies = subset, contradicts = disjoint).
inline Rel sets_relation(bool apos, Set a, bool tpos, Set t) {
  if (apos) {
    if (tpos) {
      if (detail::subset(a, t)) return Rel::Satisfied;
      if (detail::disjoint(a, t)) return Rel::Contradicted;
      return Rel::Inconclusive;
    }
    if (detail::disjoint(a, t)) return Rel::Satisfied;
    if (detail::subset(a, t)) return Rel::Contradicted;
    return Rel::Inconclusive;
  }
  // `a` admits "not selected", which no positive term does.
  if (tpos) return detail::subset(t, a) ? Rel::Contradicted : Rel::Inconclusive;
  return detail::subset(t, a) ? Rel::Satisfied : Rel::Inconclusive;
}

// Key of the dependency facts that may merge: (depender, dependency, requirement text).
struct DepKey {
  PackageId p = 0;
  PackageId q = 0;
  std::uint32_t text = 0;
  friend bool operator==(const DepKey&, const DepKey&) = default;
};
struct DepKeyHash {
  std::size_t operator()(const DepKey& k) const noexcept {
    std::uint64_t h = (static_cast<std::uint64_t>(k.p) << 32U) | k.q;
    h ^= static_cast<std::uint64_t>(k.text) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29U;
    return static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ULL);
  }
};

class Solver {
 public:
  Solver(Provider& provider, const SolveRequest& request, const SolveOptions& options)
      : provider_(provider), request_(request), options_(options) {}

  core::Result<Outcome> run();

 private:
  // ---- packages and domains
  core::Result<PackageId> intern(std::string_view name, std::string_view extra);
  core::Result<std::uint32_t> load_domain(std::string_view name);
  void make_root();
  // Appends a set's boundaries to pool_; returns the offset. `s` may point into pool_.
  std::uint32_t store(Set s) {
    auto off = static_cast<std::uint32_t>(pool_.size());
    if (!s.empty() && s.data() >= pool_.data() && s.data() < pool_.data() + pool_.size()) {
      OwnedSet copy(s.begin(), s.end());
      pool_.insert(pool_.end(), copy.begin(), copy.end());
    } else {
      pool_.insert(pool_.end(), s.begin(), s.end());
    }
    return off;
  }
  Set tset(const ITerm& t) const { return {pool_.data() + t.off, t.len}; }
  Set aset(const Assignment& a) const { return {apool_.data() + a.acc_off, a.acc_len}; }
  ITerm make_term(PackageId p, bool positive, Set s, std::uint32_t text) {
    std::uint32_t off = store(s);
    return ITerm{p, positive, off, static_cast<std::uint32_t>(s.size()), text};
  }
  Domain& domain_of(PackageId p) { return domains_[pkgs_[p].domain]; }
  void build_set(Domain& d, const core::SpecifierSet& spec, OwnedSet& out);
  std::uint32_t intern_string(const std::string& s);
  void apply_constraints(PackageId p);

  // ---- incompatibilities
  IncompatId make_incompat(NodeKind kind, std::span<const TmpTerm> terms, IncompatId c1 = kNone,
                           IncompatId c2 = kNone);
  IncompatId make_two(NodeKind kind, PackageId p, bool ppos, Set pbits, std::uint32_t ptext,
                      PackageId q, bool qpos, Set qbits, std::uint32_t qtext);
  IncompatId make_one(NodeKind kind, PackageId p, bool pos, Set bits, std::uint32_t text);
  IncompatId push_incompat(NodeKind kind, std::uint32_t first, std::uint32_t count);
  void add_incompatibility(IncompatId id);
  void remove_from_lists(IncompatId id);
  IncompatId add_dependency(PackageId p, Set depender, PackageId q, Set set, std::uint32_t text);
  const ITerm& term(IncompatId id, std::uint32_t i) const {
    return terms_[incompats_[id].first + i];
  }
  const ITerm* term_for(IncompatId id, PackageId p) const;
  bool is_terminal(IncompatId id) const;

  // ---- partial solution (doc/solver.md §Partial Solution)
  Rel term_relation(const ITerm& t) const;
  IRel relation(IncompatId id);
  Rel relation_if_decided(IncompatId id, PackageId p, std::uint32_t bit) const;
  void add_derivation(PackageId p, IncompatId cause);
  void add_decision(PackageId p, std::uint32_t bit);
  bool decided(PackageId p) const {
    const auto& a = pkgs_[p].assigned;
    return !a.empty() && asg_[a.back()].cause == kNone;
  }
  bool pending(PackageId p) const {
    const auto& a = pkgs_[p].assigned;
    return !a.empty() && asg_[a.back()].cause != kNone && asg_[a.back()].acc_positive;
  }
  std::uint32_t satisfier(PackageId p, bool tpos, Set t) const;
  void backtrack(std::uint32_t level);
  void mark_contradicted(IncompatId id);
  void settle(PackageId p);
  void unsettle(PackageId p) {
    pkgs_[p].settled = 0;
    ++pkgs_[p].settled_ver;
  }

  // ---- the algorithm
  IncompatId unit_propagation(PackageId start);
  std::pair<bool, IncompatId> conflict_resolution(IncompatId incompat);
  core::Status decision_making(PackageId p, bool& made);
  core::Result<std::vector<IncompatId>> add_conflicts(PackageId p, std::uint32_t bit,
                                                      const std::vector<Conflict>& rules);
  core::Result<std::vector<IncompatId>> add_incompatibilities_from_dependencies(
      PackageId p, std::uint32_t bit, const std::vector<Dependency>& deps);
  void add_unavailable(PackageId p, Set set);
  std::uint32_t note_rejection(PackageId p, IncompatId id);

  // ---- priority
  void push_priority(PackageId p);
  PackageId pick_package();
  void push_changed(PackageId p) {
    if (!pkgs_[p].in_changed) {
      pkgs_[p].in_changed = true;
      changed_.push_back(p);
    }
  }
  void clear_changed() {
    for (auto p : changed_)
      pkgs_[p].in_changed = false;
    changed_.clear();
  }

  // ---- results
  Term export_term(const ITerm& t) const;
  NoSolution build_no_solution(IncompatId terminal) const;
  Solution build_solution() const;

  Provider& provider_;
  const SolveRequest& request_;
  const SolveOptions& options_;

  std::vector<Package> pkgs_;
  std::unordered_map<std::string, PackageId> ids_;
  std::vector<Domain> domains_;
  std::vector<Bound> pool_;
  std::vector<Bound> apool_;
  std::vector<ITerm> terms_;
  std::vector<Incompat> incompats_;
  std::vector<UnavailableReason> reasons_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> string_ids_;
  std::vector<Assignment> asg_;
  std::uint32_t level_ = 0;
  std::vector<std::uint32_t> contradicted_;  // per incompatibility: level + 1 when contradicted
  std::vector<std::pair<IncompatId, std::uint32_t>> contradicted_stack_;  // (id, level)
  struct SettledUndo {
    PackageId pkg;
    std::uint32_t old;    // the prefix before it grew
    std::uint32_t level;  // the level it grew at
    std::uint32_t ver;    // the package's settled_ver then
  };
  std::vector<SettledUndo> settled_stack_;
  std::vector<PackageId> changed_;
  std::vector<PackageId> affected_;
  std::priority_queue<HeapEntry> heap_;
  std::unordered_map<DepKey, std::vector<IncompatId>, DepKeyHash> merged_;
  std::unordered_map<std::uint64_t, IncompatId> empty_merged_;  // (p, q) -> latest {p in A}
  std::unordered_map<std::uint64_t, std::vector<Edge>> deps_of_;
  std::unordered_map<std::uint64_t, std::vector<Grant>> grants_of_;  // (p, bit) -> its grants
  std::vector<std::pair<std::uint32_t, const Grant*>> grants_;       // active: (level, grant)
  PackageId backjump_ = kNone;  // set by decision_making: the package to decide first now
  std::map<std::string, std::vector<const Dependency*>, std::less<>> constraints_;
  SolveStats stats_;
  OwnedSet scratch_;
  OwnedSet exact_;  // build_set: the matches of an `==X` clause
  OwnedSet scratch2_;
  OwnedSet scratch3_;
};

}  // namespace gpulock::resolver::pubgrub

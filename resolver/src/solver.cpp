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

#include "gpulock/resolver/solver.h"

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

#include "ordered_clause.h"
#include "ranges.h"

namespace gpulock::resolver {
namespace {

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

std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  return (static_cast<std::uint64_t>(a) << 32U) | b;
}

// Intersection of two terms' sets with polarity (doc/solver.md §Term; a negative term also
// admits "not selected"). Returns the polarity of the result, written to `out` (which must not
// be the storage of `a` or `b`).
bool intersect_into(bool apos, Set a, bool bpos, Set b, OwnedSet& out) {
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
Rel sets_relation(bool apos, Set a, bool tpos, Set t) {
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

// ------------------------------------------------------------------------------------------
// Packages and domains

std::uint32_t Solver::intern_string(const std::string& s) {
  auto it = string_ids_.find(s);
  if (it != string_ids_.end()) return it->second;
  auto id = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(s);
  string_ids_.emplace(s, id);
  return id;
}

void Solver::make_root() {
  Domain d;
  d.versions = std::make_shared<std::vector<core::Version>>(1);
  d.ascending = std::make_shared<std::vector<std::uint32_t>>(1, 0);
  d.candidates.resize(1);
  d.nbits = 1;
  d.full = detail::single(0);
  d.available = d.finals = d.full;
  domains_.push_back(std::move(d));

  Package p;
  p.info = std::make_shared<PackageInfo>();
  p.info->is_root = true;
  p.info->versions = domains_[0].versions;
  p.info->ascending = domains_[0].ascending;
  p.direct = true;
  pkgs_.push_back(std::move(p));
}

core::Result<std::uint32_t> Solver::load_domain(std::string_view name) {
  ++stats_.candidate_requests;
  auto r = provider_.candidates(name);
  if (!r) {
    return std::unexpected(
        r.error().with_context("while listing the versions of " + std::string(name)));
  }
  Domain d;
  d.candidates = std::move(r->candidates);
  d.nbits = static_cast<std::uint32_t>(d.candidates.size());
  d.versions = std::make_shared<std::vector<core::Version>>();
  d.versions->reserve(d.nbits);
  for (const auto& c : d.candidates)
    d.versions->push_back(c.version);
  d.ascending = std::make_shared<std::vector<std::uint32_t>>(d.nbits);
  for (std::uint32_t i = 0; i < d.nbits; ++i)
    (*d.ascending)[i] = i;
  const auto& vs = *d.versions;
  std::stable_sort(d.ascending->begin(), d.ascending->end(),
                   [&](std::uint32_t a, std::uint32_t b) { return vs[a] < vs[b]; });
  d.descending = true;
  for (std::uint32_t j = 0; j < d.nbits && d.descending; ++j)
    d.descending = (*d.ascending)[j] == d.nbits - 1 - j;
  d.full = detail::interval(0, d.nbits);
  for (std::uint32_t i = 0; i < d.nbits; ++i) {
    const auto& c = d.candidates[i];
    if (!c.unavailable) detail::push_index(d.available, i);
    if (!c.version.is_prerelease()) detail::push_index(d.finals, i);
    if (c.yanked) detail::push_index(d.yanked, i);
  }
  if (r->prerelease) {
    d.policy = *r->prerelease;
  } else if (auto it = options_.prerelease_overrides.find(name);
             it != options_.prerelease_overrides.end()) {
    d.policy = it->second;
  } else {
    d.policy = options_.prerelease;
  }
  d.priority = r->priority;
  domains_.push_back(std::move(d));
  return static_cast<std::uint32_t>(domains_.size() - 1);
}

core::Result<PackageId> Solver::intern(std::string_view name, std::string_view extra) {
  std::string key(name);
  if (!extra.empty()) key += "[" + std::string(extra) + "]";
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  PackageId base = kNone;
  std::uint32_t domain = 0;
  if (!extra.empty()) {
    auto b = intern(name, "");
    if (!b) return std::unexpected(b.error());
    base = *b;
    domain = pkgs_[base].domain;
  } else {
    auto d = load_domain(name);
    if (!d) return std::unexpected(d.error());
    domain = *d;
  }
  auto id = static_cast<PackageId>(pkgs_.size());
  Package p;
  p.name = std::string(name);
  p.extra = std::string(extra);
  p.base = extra.empty() ? id : base;
  p.is_virtual = name.starts_with("__");
  p.domain = domain;
  p.first_seen = id;
  p.info = std::make_shared<PackageInfo>();
  p.info->name = p.name;
  p.info->extra = p.extra;
  p.info->is_virtual = p.is_virtual;
  p.info->versions = domains_[domain].versions;
  p.info->ascending = domains_[domain].ascending;
  pkgs_.push_back(std::move(p));
  ids_.emplace(std::move(key), id);
  ++stats_.packages;
  if (extra.empty()) apply_constraints(id);
  return id;
}

void Solver::build_set(Domain& d, const core::SpecifierSet& spec, OwnedSet& out) {
  out = d.full;
  for (const auto& clause : spec) {
    // `==X` without a wildcard or a local label matches only candidates whose public version
    // equals X (PEP 440 ignores their local label; `==1.5` matches 1.5.0): those are looked up,
    // not found by evaluating every candidate and cached. Without this, V versions each pinning
    // another package exactly (`a 1.k` needs `c==1.k`) cost O(V) each: quadratic backtracking.
    if (clause.op() == core::Operator::Equal && !clause.wildcard() &&
        !clause.version().has_local()) {
      if (!d.by_public) {
        d.by_public = std::make_unique<
            std::unordered_map<core::Version, std::vector<std::uint32_t>, core::VersionHash>>();
        for (std::uint32_t i = 0; i < d.nbits; ++i)
          (*d.by_public)[(*d.versions)[i].public_version()].push_back(i);
      }
      exact_.clear();
      if (auto m = d.by_public->find(clause.version()); m != d.by_public->end()) {
        for (std::uint32_t i : m->second) {  // ascending
          if (detail::contains(out, i) && clause.contains((*d.versions)[i], /*prereleases=*/true)) {
            detail::push_index(exact_, i);
          }
        }
      }
      out.swap(exact_);
      continue;
    }
    std::string key = clause.to_string();
    auto it = d.clause_cache.find(key);
    if (it == d.clause_cache.end()) {
      OwnedSet members;
      // Exact PEP 440 semantics: evaluate every candidate (version_set.h), unless the clause
      // is ordered and the domain newest first: then O(log V) (a package whose V versions
      // each name another bound, `botocore>=1.k,<1.(k+1)`, would cost O(V) per version).
      if (d.descending && detail::ordered_clause_members(*d.versions, clause, members)) {
        it = d.clause_cache.emplace(std::move(key), std::move(members)).first;
      }
    }
    if (it == d.clause_cache.end()) {
      OwnedSet members;
      for (std::uint32_t i = 0; i < d.nbits; ++i) {
        if (clause.contains((*d.versions)[i], /*prereleases=*/true)) detail::push_index(members, i);
      }
      it = d.clause_cache.emplace(std::move(key), std::move(members)).first;
    }
    detail::combine(out, it->second, detail::And{}, exact_);
    out.swap(exact_);
  }
}

// -c constraints become {root, q in not-C} when q is first mentioned, so unused constraints
// cost no provider call.
void Solver::apply_constraints(PackageId p) {
  auto it = constraints_.find(pkgs_[p].name);
  if (it == constraints_.end()) return;
  for (const Dependency* c : it->second) {
    Domain& d = domain_of(p);
    build_set(d, c->specifier, scratch_);
    OwnedSet outside = detail::combined(d.full, scratch_, detail::AndNot{});
    if (outside.empty()) continue;
    OwnedSet root_bits = detail::single(0);
    IncompatId id =
        make_two(NodeKind::Constraint, kRoot, true, root_bits, kNone, p, true, outside, kNone);
    incompats_[id].text = intern_string(specifier_text(c->specifier));
    add_incompatibility(id);
  }
}

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

// ------------------------------------------------------------------------------------------
// doc/solver.md §The Algorithm

core::Result<Outcome> Solver::run() {
  make_root();
  for (const Dependency& c : request_.constraints)
    constraints_[c.name].push_back(&c);
  {
    // {not root}: the root must be selected.
    IncompatId id = make_one(NodeKind::Root, kRoot, false, detail::single(0), kNone);
    add_incompatibility(id);
  }
  PackageId next = kRoot;
  for (;;) {
    if (provider_.should_cancel()) {
      return core::fail(core::ErrorCode::Cancelled, "resolution cancelled");
    }
    IncompatId terminal = unit_propagation(next);
    if (terminal != kNone) return Outcome{build_no_solution(terminal)};
    next = pick_package();
    if (next == kNone) return Outcome{build_solution()};
    bool made = false;
    backjump_ = kNone;
    auto st = decision_making(next, made);
    if (!st) return std::unexpected(st.error());
    if (backjump_ != kNone) backtrack(backjump_);
    if (!made && pending(next)) push_priority(next);
  }
}

// ------------------------------------------------------------------------------------------
// Results

Term Solver::export_term(const ITerm& t) const {
  Term out;
  out.positive = t.positive;
  Set s = tset(t);
  out.versions =
      VersionSet::from_bounds(pkgs_[t.pkg].info, std::vector<std::uint32_t>(s.begin(), s.end()));
  if (t.text != kNone) out.specifier = strings_[t.text];
  return out;
}

NoSolution Solver::build_no_solution(IncompatId terminal) const {
  NoSolution out;
  // Nodes are incompatibilities (role 0) plus, for an empty-dependency derivation, its two
  // facts materialized here (role 1: the dependency, role 2: "no version").
  struct Item {
    IncompatId id;
    int role;
  };
  auto key = [](Item it) {
    return static_cast<std::uint64_t>(it.id) * 3 + static_cast<std::uint64_t>(it.role);
  };
  std::unordered_map<std::uint64_t, std::size_t> index;
  std::vector<Item> order;
  std::vector<std::size_t> parents;
  // Pre-order walk, cause1 first; a node reached again only gains a parent.
  std::vector<Item> stack{{terminal, 0}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    if (auto found = index.find(key(it)); found != index.end()) {
      ++parents[found->second];
      continue;
    }
    index.emplace(key(it), order.size());
    order.push_back(it);
    parents.push_back(1);
    if (it.role != 0) continue;
    const Incompat& inc = incompats_[it.id];
    if (inc.empty_dep != kNone) {
      stack.push_back({it.id, 2});
      stack.push_back({it.id, 1});
    } else if (inc.kind == NodeKind::Derived) {
      stack.push_back({inc.cause2, 0});
      stack.push_back({inc.cause1, 0});
    }
  }
  auto empty_term = [&](PackageId q, bool positive, std::uint32_t text) {
    Term t;
    t.positive = positive;
    t.versions = VersionSet::from_bounds(pkgs_[q].info, {});
    t.specifier = strings_[text];
    return t;
  };
  std::size_t shared = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Incompat& inc = incompats_[order[i].id];
    DerivationNode node;
    if (order[i].role == 1) {
      node.kind = NodeKind::Dependency;
      node.terms.push_back(export_term(terms_[inc.first]));
      node.terms.push_back(empty_term(inc.empty_dep, false, inc.text));
    } else if (order[i].role == 2) {
      node.kind = NodeKind::NoVersions;
      node.terms.push_back(empty_term(inc.empty_dep, true, inc.text));
    } else {
      node.kind = inc.kind;
      for (std::uint32_t k = 0; k < inc.count; ++k) {
        node.terms.push_back(export_term(terms_[inc.first + k]));
      }
      if (inc.reason != kNone) node.reason = reasons_[inc.reason];
      if (inc.kind == NodeKind::Constraint) node.constraint = strings_[inc.text];
      if (inc.empty_dep != kNone) {
        node.cause1 = index.at(key({order[i].id, 1}));
        node.cause2 = index.at(key({order[i].id, 2}));
      } else if (inc.kind == NodeKind::Derived) {
        node.cause1 = index.at(key({inc.cause1, 0}));
        node.cause2 = index.at(key({inc.cause2, 0}));
      }
      if (inc.kind == NodeKind::Derived && i != 0 && parents[i] >= 2) node.shared_id = ++shared;
    }
    out.tree.nodes.push_back(std::move(node));
  }
  out.tree.root = 0;
  out.stats = stats_;
  return out;
}

Solution Solver::build_solution() const {
  Solution out;
  std::unordered_map<PackageId, std::size_t> slot;  // base package -> index in out.packages
  std::uint32_t order = 0;
  std::vector<std::pair<PackageId, std::uint32_t>> decisions;
  for (const Assignment& a : asg_) {
    if (a.cause != kNone) continue;
    decisions.emplace_back(a.pkg, a.bit);
    if (a.pkg == kRoot) continue;
    const Package& pk = pkgs_[a.pkg];
    if (pk.base != a.pkg) {
      ++order;
      continue;
    }
    ChosenPackage c;
    c.name = pk.name;
    c.version = (*domains_[pk.domain].versions)[a.bit];
    c.candidate_index = a.bit;
    c.is_virtual = pk.is_virtual;
    c.decision_level = a.level;
    c.decision_order = order++;
    slot.emplace(a.pkg, out.packages.size());
    out.packages.push_back(std::move(c));
  }
  for (const Assignment& a : asg_) {
    if (a.cause != kNone || a.pkg == kRoot) continue;
    const Package& pk = pkgs_[a.pkg];
    if (pk.base == a.pkg) continue;
    if (auto it = slot.find(pk.base); it != slot.end())
      out.packages[it->second].extras.push_back(pk.extra);
  }
  for (const auto& [p, bit] : decisions) {
    auto it = deps_of_.find(pair_key(p, bit));
    if (it == deps_of_.end()) continue;
    const Package& pk = pkgs_[p];
    for (const Edge& e : it->second) {
      auto s = slot.find(pkgs_[e.to].base);
      if (s == slot.end()) continue;
      Requirer r;
      if (p != kRoot) {
        r.package = pk.info->display_name();
        r.version = (*domains_[pk.domain].versions)[bit];
      }
      r.requirement = strings_[e.text];
      out.packages[s->second].required_by.push_back(std::move(r));
    }
  }
  for (auto& c : out.packages)
    std::sort(c.extras.begin(), c.extras.end());
  std::sort(out.packages.begin(), out.packages.end(),
            [](const ChosenPackage& a, const ChosenPackage& b) { return a.name < b.name; });
  out.stats = stats_;
  return out;
}

}  // namespace

core::Result<Outcome> solve(Provider& provider, const SolveRequest& request,
                            const SolveOptions& options) {
  Solver solver(provider, request, options);
  return solver.run();
}

}  // namespace gpulock::resolver

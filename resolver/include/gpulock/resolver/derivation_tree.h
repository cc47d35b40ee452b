#pragma once
/// @file
/// The proof that a resolution has no solution: PubGrub's derivation graph (dart pub
/// doc/solver.md §Derivation Graph; pubgrub-rs `report.rs` DerivationTree). Leaves are external
/// facts, inner nodes are incompatibilities derived from two causes during conflict
/// resolution. Nodes reached from more than one parent carry a `shared_id`, so a reporter can
/// explain them once and refer back to them by line number.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/resolver/provider.h"
#include "gpulock/resolver/version_set.h"

namespace gpulock::resolver {

enum class NodeKind : std::uint8_t {
  /// {not root}: the root must be selected (pubgrub-rs NotRoot).
  Root,
  /// {p in S}: no candidate of p is in S (S is empty over p's candidates; `terms[0].specifier`
  /// holds the requirement text, e.g. "__cuda>=12.6" with the ceiling 12.4).
  NoVersions,
  /// {p in S, not q in T}: p (terms[0]) depends on q (terms[1]); p may be the root ("you
  /// require q"). T may be empty (a dependency no candidate satisfies).
  Dependency,
  /// {root, q in not-C}: a user constraint (`-c`) allows only q in C (`constraint` holds C).
  Constraint,
  /// {p in S}: the candidates in S cannot be used, for `reason`.
  Unavailable,
  /// {p in S, q in T}: p (terms[0]) cannot be used with q in T (terms[1]), a provider's
  /// conflict rule (resolver::Conflict; `constraint` holds its reason).
  Conflict,
  /// Derived from `cause1` and `cause2` by conflict resolution (resolution rule).
  Derived,
};

struct DerivationNode {
  NodeKind kind = NodeKind::Derived;
  /// The incompatibility: these terms cannot all be true.
  std::vector<Term> terms;
  /// Unavailable only.
  UnavailableReason reason;
  /// Constraint: the constraint's specifier text ("<2"). Conflict: the rule's reason.
  std::string constraint;
  /// Derived only: indices into DerivationTree::nodes.
  std::size_t cause1 = 0;
  std::size_t cause2 = 0;
  /// Set (1, 2, ...) on Derived nodes that are a cause of two or more nodes.
  std::optional<std::size_t> shared_id;
};

struct DerivationTree {
  std::vector<DerivationNode> nodes;
  /// The final incompatibility ({root} or {}), whose derivation proves there is no solution.
  std::size_t root = 0;

  /// One line per node, for debugging and tests: "#3 derived(#1, #2) {foo>=2, not bar<1}".
  [[nodiscard]] std::string to_debug_string() const;
};

}  // namespace gpulock::resolver

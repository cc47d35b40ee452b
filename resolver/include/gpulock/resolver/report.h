#pragma once
/// @file
/// Turns a NoSolution's derivation tree into plain sentences, following dart pub
/// doc/solver.md §Error Reporting (linear chains, and numbered lines for derivations that are
/// used twice), with pubgrub-rs / uv simplifications.
///
/// Sentence forms (exact; tests pin them):
///   "Because <fact> and <fact>, <conclusion>."
///   "And because <fact>, <conclusion>."            (chains on the line above)
///   "And because <fact> and <fact>, <conclusion>." (a prior fact folded in, pub step 2.ii)
///   "Because <conclusion> (N) and <fact>, <conclusion>." / "And because <conclusion> (N), ..."
///   "Thus, <conclusion>."                          (pub step 1.iii.a)
/// A line that is referred to later ends with " (N)"; an empty line separates two branches.
/// Two facts are ordered as a chain: "you require a and a depends on b>=2", "torch==2.7.1 needs
/// CUDA >= 12.6 and your driver ... supports CUDA <= 12.4".
/// Facts: "you require foo>=1", "you require both foo>=1 and bar", "foo==1.0 depends on bar>=2",
/// "foo==1.0 depends on both bar>=2 and baz", "b>=2 needs Python >= 3.12" (virtual),
/// "there is no version of foo>=5", "there are no versions of foo",
/// "foo==2.0 has no wheel for the target" (unavailable: term + reason message),
/// "your constraints allow only foo<2".
/// Conclusions: "version solving failed" (the root), "foo>=2 cannot be used",
/// "foo>=2 must be used", "foo==1.0 requires bar>=2", "foo==1.0 and bar==2.0 are incompatible",
/// "foo==1.0 and bar==2.0 together require baz<3", "foo>=2 or bar must be used".
/// Versions sets render as in VersionSet::to_string(), or as the requirement text they came
/// from. Virtual packages and GPU facts get their words from the Describer.

#include <cstddef>
#include <string>
#include <vector>

#include "gpulock/resolver/provider.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::resolver {

struct Report {
  /// One sentence naming the deciding fact, without a final period (issue 16 item 10):
  ///   a blocking fact (no version, a build that cannot be used, a constraint) nearest to the
  ///   requirements: "<fact>" when it is about a required package, else "<fact>, and <req>
  ///   needs <package>";
  ///   else, the package whose requirements collide: "<req> needs <pkg><set> (through <via>),
  ///   and you require <pkg><set>" / "<req> needs <pkg><set>, and <req> needs <pkg><set>";
  ///   else "you require <req> and <req>, which cannot be satisfied together".
  std::string headline;
  /// The explanation, one sentence per line; "" separates branches.
  std::vector<std::string> lines;
  /// `lines` when they are at most kBriefMaxLines; else the same proof with each sub-derivation
  /// off the path to the deciding fact (the smaller side where no fact decides) stated as a
  /// fact without its derivation, and a last line saying how many lines --explain adds.
  std::vector<std::string> brief;
  /// Advice computed from the tree (pre-releases excluded by policy, yanked versions) and from
  /// Describer::package_hints() of the packages in the tree, in order of appearance, without
  /// duplicates and without the "hint: " prefix.
  std::vector<std::string> hints;

  /// The lines joined by "\n", then one "hint: <text>" line per hint; no trailing newline.
  [[nodiscard]] std::string to_string() const;
};

/// Proofs longer than this many lines are trimmed in Report::brief.
inline constexpr std::size_t kBriefMaxLines = 6;

/// Explains why there is no solution. `describer` is normally the provider used to solve.
[[nodiscard]] Report report(const NoSolution& no_solution, const Describer& describer);
/// Same, with the default wording only.
[[nodiscard]] Report report(const NoSolution& no_solution);

}  // namespace gpulock::resolver

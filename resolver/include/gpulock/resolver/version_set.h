#pragma once
/// @file
/// Packages and version sets as the solver's results show them.
///
/// The solver works on finite domains: when a package is first mentioned it asks the provider
/// for the package's full candidate list, and every set of versions of that package is a set of
/// those candidates (index i = the i-th candidate in the provider's preference order), held as
/// sorted half-open index intervals, so a range costs O(1) whatever the number of versions. A
/// set is built by evaluating `core::SpecifierSet::contains(v, /*prereleases=*/true)` on each
/// candidate, so set operations are exact for PEP 440 semantics (local labels, pre-releases,
/// `!=`, `===`, wildcards), which intervals over an infinite version line are not (`>1.7rc1`
/// excludes 1.7.post1 and 1.7+local but includes 1.7). Versions the provider did not list do
/// not exist as far as the solver is concerned.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/version.h"

namespace gpulock::resolver {

/// One package of a resolution: a real project, an extra's proxy (`torch[opt]`, pinned to the
/// version of its base `torch`), a virtual package (name starting with `__`, e.g. `__python`,
/// `__cuda`, whose candidates and wording come from the provider), or the root (the user's
/// requirements).
struct PackageInfo {
  /// PEP 503 normalized name of the base project ("torch", "__python"); empty for the root.
  std::string name;
  /// The extra of a proxy package ("opt" for `torch[opt]`), else empty.
  std::string extra;
  bool is_root = false;
  bool is_virtual = false;
  /// Candidate versions in the provider's preference order (shared by a base and its proxies).
  std::shared_ptr<const std::vector<core::Version>> versions;
  /// Indices into `versions`, in ascending PEP 440 order.
  std::shared_ptr<const std::vector<std::uint32_t>> ascending;

  /// "torch", "torch[opt]", "__python"; "root" for the root.
  [[nodiscard]] std::string display_name() const;
  [[nodiscard]] std::size_t size() const noexcept { return versions ? versions->size() : 0; }
};

/// A set of candidates of one package: indices into `PackageInfo::versions`, held as sorted,
/// disjoint, non-adjacent half-open intervals [b0, b1) ∪ [b2, b3) ∪ ... (canonical, so equal
/// sets have equal boundaries).
class VersionSet {
 public:
  VersionSet() = default;
  /// From a bitset: `words` holds ceil(size/64) words (bit i = index i); bits past the
  /// package's size must be zero.
  VersionSet(std::shared_ptr<const PackageInfo> package, const std::vector<std::uint64_t>& words);
  /// From interval boundaries b0 < b1 < b2 < ... (an even count; [b0, b1) ∪ [b2, b3) ∪ ...).
  [[nodiscard]] static VersionSet from_bounds(std::shared_ptr<const PackageInfo> package,
                                              std::vector<std::uint32_t> bounds);

  [[nodiscard]] const std::shared_ptr<const PackageInfo>& package() const noexcept {
    return package_;
  }
  /// Is the candidate with this index (preference order) in the set?
  [[nodiscard]] bool contains(std::size_t index) const noexcept;
  [[nodiscard]] std::size_t count() const noexcept;
  [[nodiscard]] bool empty() const noexcept { return count() == 0; }
  /// Every candidate of the package is in the set.
  [[nodiscard]] bool full() const noexcept;
  /// Member indices in preference order.
  [[nodiscard]] std::vector<std::size_t> indices() const;
  /// Member versions in ascending PEP 440 order.
  [[nodiscard]] std::vector<core::Version> versions() const;
  /// The interval boundaries (see the class comment).
  [[nodiscard]] const std::vector<std::uint32_t>& bounds() const noexcept { return bounds_; }

  /// The set rendered over the package's known versions, in PEP 440 order, as runs of
  /// consecutive known versions: "" when full, "==2.6.0" for one version, ">=2.5" for a run up
  /// to the newest, "<2.7" for a run from the oldest (bounded by the next known version),
  /// ">=2.5,<2.7" otherwise; several runs are joined by " | " ("==2.5.1 | >=2.7"); "(none)"
  /// when empty. Like uv, ranges are simplified onto the versions actually known.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const VersionSet& a, const VersionSet& b) {
    return a.package_ == b.package_ && a.bounds_ == b.bounds_;
  }

 private:
  std::shared_ptr<const PackageInfo> package_;
  std::vector<std::uint32_t> bounds_;
};

/// A PubGrub term: "package in set" (positive) or "not package in set" (negative; also true
/// when the package is not selected at all). See dart pub doc/solver.md §Term.
struct Term {
  bool positive = true;
  VersionSet versions;
  /// The requirement text the set came from (`>=2.5,<3`, "" for any version), kept when the
  /// set equals the set of that one requirement; std::nullopt when it is a computed set.
  std::optional<std::string> specifier;

  [[nodiscard]] const PackageInfo& package() const { return *versions.package(); }
  /// `specifier` if present, else `versions.to_string()`.
  [[nodiscard]] std::string set_text() const;
  /// "torch>=2.5" (name and set_text(), without the polarity).
  [[nodiscard]] std::string to_string() const;
};

}  // namespace gpulock::resolver

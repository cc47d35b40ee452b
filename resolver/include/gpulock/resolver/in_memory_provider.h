#pragma once
/// @file
/// A Provider over an in-memory registry, for tests and benchmarks (pubgrub-rs
/// OfflineDependencyProvider). Preference order is newest first (PEP 440), with versions named
/// by prefer() moved to the front in the order given.

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/resolver/provider.h"

namespace gpulock::resolver {

/// Parses a test-style requirement: `name[extra,...]specifier`, e.g. "bar>=1,<2",
/// "baz[x]", "__python>=3.12". The name is normalized unless it is virtual (`__...`).
/// Errors: InvalidRequirement (bad name or extras), InvalidSpecifier.
[[nodiscard]] core::Result<Dependency> parse_dependency(std::string_view text);

class InMemoryProvider : public Provider {
 public:
  /// Adds a version (parsed with core::Version::parse) of `package` with its dependencies
  /// (parse_dependency syntax). Adding an existing version replaces its dependencies.
  core::Status add(std::string_view package, std::string_view version,
                   const std::vector<std::string>& dependencies = {});
  /// Dependencies of `package[extra]` at an existing version.
  core::Status add_extra(std::string_view package, std::string_view version, std::string_view extra,
                         const std::vector<std::string>& dependencies);

  /// A conflict rule of an existing version (resolver::Conflict): `constraint` in
  /// parse_dependency syntax ("bar<2" allows only bar<2 beside it), `reason` why.
  core::Status add_conflict(std::string_view package, std::string_view version,
                            std::string_view constraint, std::string reason);
  core::Status set_yanked(std::string_view package, std::string_view version);
  core::Status set_unavailable(std::string_view package, std::string_view version,
                               UnavailableReason reason);
  core::Status set_dependencies_unavailable(std::string_view package, std::string_view version,
                                            UnavailableReason reason);
  /// Moves these versions to the front of the preference order, in this order.
  core::Status prefer(std::string_view package, const std::vector<std::string>& versions);
  void set_prerelease_policy(std::string_view package, PrereleasePolicy policy);
  void set_priority(std::string_view package, int priority);

  /// candidates(package) / dependencies(package, ...) fail with this error.
  void fail_candidates(std::string_view package, core::Error error);
  void fail_dependencies(std::string_view package, core::Error error);
  /// should_cancel() returns true once this many provider calls have been made.
  void cancel_after(std::size_t calls) { cancel_after_ = calls; }

  /// Wording: a virtual package shown as `label` with spaced operators ("Python >= 3.12"), and
  /// what describe_no_versions() returns for it (nullopt: default text; "": leave it out).
  void set_virtual_label(std::string_view package, std::string label,
                         std::optional<std::string> no_versions_text = std::nullopt);
  void add_hint(std::string_view package, std::string hint);

  /// Calls made so far, and the log of on_version_chosen ("foo 1.0: bar, baz").
  [[nodiscard]] std::size_t calls() const noexcept { return calls_; }
  [[nodiscard]] std::size_t candidate_calls() const noexcept { return candidate_calls_; }
  [[nodiscard]] const std::vector<std::string>& chosen_log() const noexcept { return chosen_; }

  // Provider
  [[nodiscard]] core::Result<PackageCandidates> candidates(std::string_view package) override;
  [[nodiscard]] core::Result<Dependencies> dependencies(std::string_view package, std::size_t index,
                                                        const core::Version& version,
                                                        std::string_view extra) override;
  [[nodiscard]] bool should_cancel() override;
  void on_version_chosen(std::string_view package, const core::Version& version,
                         std::span<const Dependency> dependencies) override;

  // Describer
  [[nodiscard]] std::optional<std::string> describe_term(const Term& term,
                                                         std::string_view text) const override;
  [[nodiscard]] std::optional<std::string> describe_no_versions(
      const Term& term, std::string_view text) const override;
  [[nodiscard]] std::vector<std::string> package_hints(const PackageInfo& package) const override;

 private:
  struct Entry {
    Candidate candidate;
    std::vector<Dependency> dependencies;
    std::vector<Conflict> conflicts;
    std::map<std::string, std::vector<Dependency>, std::less<>> extras;
    std::optional<UnavailableReason> dependencies_unavailable;
  };
  struct Package {
    std::vector<Entry> entries;                  // in insertion order
    std::map<core::Version, std::size_t> index;  // version -> entries index
    std::vector<std::size_t> order;              // preference order, set by candidates()
    std::vector<core::Version> preferred;
    std::optional<PrereleasePolicy> prerelease;
    int priority = 0;
    std::optional<core::Error> candidates_error;
    std::optional<core::Error> dependencies_error;
    std::optional<std::string> label;
    std::optional<std::string> no_versions_text;
    std::vector<std::string> hints;
  };

  core::Result<Entry*> find(std::string_view package, std::string_view version);
  /// Entry indices in preference order.
  [[nodiscard]] static std::vector<std::size_t> ordered(const Package& p);

  std::map<std::string, Package, std::less<>> packages_;
  std::size_t calls_ = 0;
  std::size_t candidate_calls_ = 0;
  std::optional<std::size_t> cancel_after_;
  std::vector<std::string> chosen_;
};

}  // namespace gpulock::resolver

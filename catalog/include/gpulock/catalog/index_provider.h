#pragma once
/// @file
/// IndexProvider: the resolver's Provider and Describer over a Catalog (catalog.h), a thin
/// adapter (issue 43 item 2). Candidates and dependencies are the catalog's (with the GPU
/// policy's facts); the explanation's words are the GPU policy's and the catalog's, and hints
/// that name a command are rendered by the HintWriter it is given (hint.h). The questions asked
/// after a solve are free functions over the catalog (after_solve.h).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/catalog/catalog.h"
#include "gpulock/catalog/hint.h"
#include "gpulock/resolver/provider.h"

namespace gpulock::catalog {

class IndexProvider final : public resolver::Provider {
 public:
  /// Over `catalog` (kept by reference: it outlives the provider). `write` renders the hints
  /// of package_hints; without one, a hint gives the edits alone.
  explicit IndexProvider(Catalog& catalog, HintWriter write = {});
  ~IndexProvider() override;

  // resolver::Provider
  core::Result<resolver::PackageCandidates> candidates(std::string_view package) override;
  core::Result<resolver::Dependencies> dependencies(std::string_view package, std::size_t index,
                                                    const core::Version& version,
                                                    std::string_view extra) override;
  bool should_cancel() override;
  void on_version_chosen(std::string_view package, const core::Version& version,
                         std::span<const resolver::Dependency> dependencies) override;

  // resolver::Describer
  std::optional<std::string> describe_term(const resolver::Term& term,
                                           std::string_view text) const override;
  std::optional<std::string> describe_dependency(const resolver::Term& depender,
                                                 const resolver::Term& dependency,
                                                 std::string_view depender_text,
                                                 std::string_view dependency_text) const override;
  std::optional<std::string> describe_no_versions(const resolver::Term& term,
                                                  std::string_view text) const override;
  std::vector<std::string> package_hints(const resolver::PackageInfo& package) const override;

  /// The catalog it reads (for the after-solve questions, after_solve.h).
  [[nodiscard]] Catalog& catalog() const noexcept { return catalog_; }
  /// The writer its hints are rendered with, for the after-solve questions' hints.
  [[nodiscard]] const HintWriter& hint_writer() const noexcept { return write_; }

 private:
  Catalog& catalog_;
  HintWriter write_;
};

}  // namespace gpulock::catalog

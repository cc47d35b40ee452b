// IndexProvider: the adapter to resolver::Provider over the Catalog (its candidates and
// dependencies), and the explanation's words: the GPU policy's, and the catalog's hints
// (first-index's other sources, arch fixes, placeholders), rendered by the HintWriter.

#include "gpulock/catalog/index_provider.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "gpulock/core/specifier.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"

#include "catalog_impl.h"

namespace gpulock::catalog {

IndexProvider::IndexProvider(Catalog& catalog, HintWriter write)
    : catalog_(catalog), write_(std::move(write)) {}

IndexProvider::~IndexProvider() = default;

core::Result<resolver::PackageCandidates> IndexProvider::candidates(std::string_view package) {
  return catalog_.candidates(package);
}

core::Result<resolver::Dependencies> IndexProvider::dependencies(std::string_view package,
                                                                 std::size_t index,
                                                                 const core::Version& version,
                                                                 std::string_view extra) {
  return catalog_.dependencies(package, index, version, extra);
}

bool IndexProvider::should_cancel() {
  // index::interrupted(): SIGINT/SIGTERM (the CLI) stop a long solve too.
  return index::interrupted();
}

void IndexProvider::on_version_chosen(std::string_view, const core::Version&,
                                      std::span<const resolver::Dependency> dependencies) {
  catalog_.on_version_chosen(dependencies);
}

std::optional<std::string> IndexProvider::describe_term(const resolver::Term& term,
                                                        std::string_view text) const {
  (void)text;
  const Catalog::Impl& impl = catalog_.impl();
  if (term.package().name == kPython) {
    std::string set = term.set_text();
    return set.empty() ? "Python" : fmt::format("Python {}", core::spaced_specifier(set));
  }
  return impl.gpu.describe_term(term);
}

std::optional<std::string> IndexProvider::describe_dependency(
    const resolver::Term& depender, const resolver::Term& dependency,
    std::string_view depender_text, std::string_view dependency_text) const {
  return catalog_.impl().gpu.describe_dependency(depender, dependency, depender_text,
                                                 dependency_text);
}

std::optional<std::string> IndexProvider::describe_no_versions(const resolver::Term& term,
                                                               std::string_view) const {
  const Catalog::Impl& impl = catalog_.impl();
  if (term.package().name == kPython) {
    return fmt::format("the target is Python {}", impl.config.target.python_full.to_string());
  }
  return impl.gpu.describe_no_versions(term);
}

std::vector<std::string> IndexProvider::package_hints(const resolver::PackageInfo& package) const {
  std::vector<std::string> hints;
  Catalog::Impl& impl = catalog_.impl();
  if (package.is_virtual || package.is_root) {
    if (package.name == gpu::kCuda) impl.cuda_hinted = true;
    return impl.gpu.virtual_hints(package.name);
  }
  auto it = impl.packages.find(package.name);
  if (it == impl.packages.end()) return hints;
  const PackageState& state = it->second;
  // No "pre-releases exist" hint here: under if-necessary a pre-release is chosen whenever no
  // final release remains, and the reporter itself explains pre-releases that
  // --prerelease disallow excluded. (A hint from this list alone misled: `x>9` with only
  // unrelated pre-releases, or nightly torch, where pre-releases are allowed already.)
  // First-index ignored lower-priority sources: say so when one of them has versions the used
  // source lacks. Only pages fetch_hint_pages fetched are read: no I/O here.
  if (auto other = impl.first_index_other(package.name)) {
    // Proven words (issue 43 item 5): the command only when a second solve confirmed it.
    auto fix = impl.checked_fix(fmt::format("first-index:{}={}", package.name, *other),
                                impl.first_index_fix(package.name, *other));
    hints.push_back(fmt::format(
        "{} was also found on {}, but under first-index only {} is used for it (protection "
        "against dependency confusion){}",
        package.name, *other, Catalog::Impl::sources_text(state.sources),
        fix ? "; " + write_hint(*fix, write_) : std::string()));
  }
  // A build without kernels for a GPU: which CUDA builds of that release have them. The command
  // that asks for one is suggested by the resolve workflow once it has tried it.
  for (const auto& fix : impl.arch_fixes(package.name, state)) {
    std::string hint = gpu::GpuPolicy::arch_fix_hint(fix.release, fix.arch, fix.builds);
    if (auto note = impl.gpu.arch_driver_note(fix.arch, fix.builds)) hint += "; " + *note;
    hints.push_back(std::move(hint));
  }
  if (!state.placeholder_for.empty()) {
    hints.push_back(fmt::format("{} is a placeholder; the CUDA 13 package is {}", package.name,
                                state.placeholder_for));
  } else if (state.only_sdists) {
    hints.push_back(
        fmt::format("{} has only source distributions on the index; gpulock does not build sdists",
                    package.name));
  } else if (state.only_other_platforms) {
    hints.push_back(fmt::format("{} has wheels only for other platforms or Pythons than {}",
                                package.name, impl.target_tag_text()));
  }
  return hints;
}

}  // namespace gpulock::catalog

#pragma once
/// @file
/// PEP 825 wheel variants (Draft, shared/data/gpu-stacks.md §7): the variant label of a wheel
/// file name, and the variant metadata a project publishes as `{name}-{version}-variants.json`
/// (or inlines in pylock.toml as `[packages.variants-json]`), in the three dialects seen: the
/// wheelnext draft (`$schema` .../v0.0.N.json: `providers`, `static-properties`), PEP 825
/// (.../peps/825/v0.1.1.json) and PEP 850 (.../peps/850/v0.2.0.json: `providers` with
/// `static-properties`). Pure: parsing only.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/version.h"

namespace gpulock::index {

/// A wheel file name split at its variant label (PEP 825 §filename: 6 dash-separated parts whose
/// third does not start with a digit, or 7 parts): the file name without `-{label}` and the
/// label.
struct VariantFilename {
  std::string base_filename;  ///< "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl"
  std::string label;          ///< "cuda12.8", "null"
};
/// nullopt for a wheel without a label (5 parts, or 6 with a build tag). Errors: InvalidInput
/// for a label outside `^[0-9a-z_.]+$`.
[[nodiscard]] core::Result<std::optional<VariantFilename>> split_variant_label(
    std::string_view filename);

/// The project (PEP 503 normalized) and version of a variant metadata file's name
/// (`torch-2.10.0-variants.json`, PEP 825 §metadata: name and version normalized as in wheel
/// file names); nullopt for any other name.
struct VariantsJsonName {
  std::string project;
  core::Version version;
};
[[nodiscard]] std::optional<VariantsJsonName> variants_json_name(std::string_view filename);

/// The variant label of a wheel file name, "" for a wheel without one (or an invalid label).
[[nodiscard]] std::string variant_label_of(std::string_view filename);

enum class VariantDialect : std::uint8_t {
  WheelnextDraft,  ///< https://variants-schema.wheelnext.dev/ , .../v0.0.N.json
  Pep825,          ///< .../peps/825/v0.M.N.json
  Pep850,          ///< .../peps/850/v0.M.N.json
};
/// "wheelnext-draft", "pep825", "pep850".
[[nodiscard]] std::string_view variant_dialect_name(VariantDialect d) noexcept;

/// feature -> values (a set: sorted, as PEP 825 serializes it).
using VariantFeatures = std::map<std::string, std::vector<std::string>>;
/// namespace -> features.
using VariantProperties = std::map<std::string, VariantFeatures>;

struct VariantsJson {
  std::string schema;
  VariantDialect dialect = VariantDialect::Pep825;
  /// `default-priorities.namespace`.
  std::vector<std::string> namespace_priorities;
  /// label -> its properties (`null`: none).
  std::map<std::string, VariantProperties> variants;
  /// Static providers' ordered values (draft: top-level `static-properties`; PEP 850:
  /// `providers.{ns}.static-properties`): namespace -> feature -> values, best first.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> static_properties;
};

/// Parses variant metadata, dispatching on `$schema`. Errors (InvalidMetadata, with `where`):
/// not JSON, no `$schema`, a `$schema` of no known dialect, a major version gpulock does not
/// support ("unsupported variant metadata version 2.0.0 (PEP 825 requires rejecting an unknown
/// major)"), a label, namespace, feature or value outside PEP 825's grammar.
[[nodiscard]] core::Result<VariantsJson> parse_variants_json(std::string_view text,
                                                             std::string_view where);

}  // namespace gpulock::index

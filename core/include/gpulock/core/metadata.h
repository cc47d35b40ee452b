#pragma once
/// @file
/// Core metadata (canonical spec: packaging.python.org, "Core metadata specifications"):
/// the `METADATA` file of a wheel, `PKG-INFO`, and PEP 658 `.metadata` files. RFC 822 style
/// headers with continuation lines and repeated fields; the body after the first blank line
/// is the description and is ignored.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"

namespace gpulock::core {

struct CoreMetadata {
  std::string metadata_version;           ///< "2.1"; 1.0 to 2.5 accepted (higher minor: warning)
  std::string name;                       ///< as written
  Version version;
  std::optional<SpecifierSet> requires_python;
  std::vector<Requirement> requires_dist;  ///< in file order
  std::vector<std::string> provides_extra;  ///< normalized (PEP 685), file order
  std::vector<std::string> warnings;        ///< e.g. a newer minor Metadata-Version

  /// Errors: InvalidMetadata with `line` set (1-based): missing/unknown-major
  /// Metadata-Version, missing Name or Version, an invalid Version, Requires-Python or
  /// Requires-Dist (the nested error's message is kept).
  [[nodiscard]] static Result<CoreMetadata> parse(std::string_view text);
};

}  // namespace gpulock::core

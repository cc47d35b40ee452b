#pragma once
/// @file
/// Core metadata (canonical spec: packaging.python.org, "Core metadata specifications"):
/// the `METADATA` file of a wheel, `PKG-INFO`, and PEP 658 `.metadata` files. RFC 822 style
/// headers with continuation lines and repeated fields; the body after the first blank line
/// is the description and is ignored.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"

namespace gpulock::core {

/// One line of a core-metadata header block, as Python's email parser splits it (which is what
/// pip, packaging.metadata and importlib.metadata read).
struct MetadataHeaderLine {
  enum class Kind {
    Field,         ///< "Name: value"
    Continuation,  ///< a folded line (starts with a space or tab) that extends the field before
    NotHeader,     ///< neither: it and the rest of the text are the description
  };
  Kind kind = Kind::Field;
  std::size_t line = 0;     ///< 1-based
  std::string_view name;    ///< Field: the field name as written
  std::string_view value;   ///< Field: from its first non-blank byte; otherwise the whole line
  std::size_t column0 = 0;  ///< Field: 0-based column of `value` in the line
};

/// Calls `visit` for each header line of `text` (a UTF-8 byte-order mark dropped, "\r\n" or
/// "\n" line ends) until the blank line that ends the headers, a NotHeader line (visited, then
/// the scan stops) or `visit` returning false. The one header reader of METADATA, PKG-INFO and
/// PEP 658 files: CoreMetadata::parse and the index's wheel Name/Version check both use it.
void scan_metadata_headers(std::string_view text,
                           const std::function<bool(const MetadataHeaderLine&)>& visit);

/// The most Requires-Dist fields one distribution's METADATA may have (issue 40: 200,000 of them
/// cost a resolve one page request each). The largest on PyPI have a few hundred.
inline constexpr std::size_t kMaxRequiresDist = 10'000;

struct CoreMetadata {
  std::string metadata_version;  ///< "2.1"; 1.0 to 2.5 accepted (higher minor: warning)
  std::string name;              ///< as written
  Version version;
  std::optional<SpecifierSet> requires_python;
  std::vector<Requirement> requires_dist;   ///< in file order
  std::vector<std::string> provides_extra;  ///< normalized (PEP 685), file order
  std::vector<std::string> warnings;        ///< e.g. a newer minor Metadata-Version

  /// Errors: InvalidMetadata with `line` set (1-based): missing/unknown-major
  /// Metadata-Version, missing Name or Version, an invalid Version, Requires-Python or
  /// Requires-Dist (the nested error's message is kept), more than kMaxRequiresDist
  /// Requires-Dist fields (the count named, `line` the first one over).
  [[nodiscard]] static Result<CoreMetadata> parse(std::string_view text);
};

}  // namespace gpulock::core

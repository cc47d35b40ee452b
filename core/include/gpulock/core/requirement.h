#pragma once
/// @file
/// PEP 508 dependency specifiers (canonical spec: packaging.python.org, "Dependency
/// specifiers"): `name [extras] (specifiers | @ url) ; marker`.

#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/specifier.h"

namespace gpulock::core {

struct Requirement {
  std::string name;                 ///< as written
  std::vector<std::string> extras;  ///< as written, in order, duplicates removed
  SpecifierSet specifier;           ///< empty for "any version" and for URL requirements
  std::string url;                  ///< the `@ URL` part, empty if none
  Marker marker;                    ///< empty() if none

  /// Accepts both quote styles, specifiers with or without parentheses (legacy
  /// `zope.interface (>3.5.0)`), whitespace anywhere PEP 508 allows it; the grammar is
  /// packaging 23.0's tokenizer (see requirement.cpp for where it differs from the PEP text).
  /// A URL is checked as packaging checks it (file: URLs must round-trip through urllib).
  /// Errors: InvalidRequirement (or the nested InvalidSpecifier/InvalidMarker) with the column
  /// in `text`.
  [[nodiscard]] static Result<Requirement> parse(std::string_view text);

  /// PEP 503 normalized name.
  [[nodiscard]] std::string normalized_name() const;

  /// packaging's str(Requirement): `name[a,b]<2,>=1; python_version >= "3.9"` (extras sorted,
  /// specifiers sorted as strings, `name@ url ; marker` for URL requirements: packaging writes
  /// no space before the '@').
  [[nodiscard]] std::string to_string() const;
};

}  // namespace gpulock::core

#pragma once
/// @file
/// The index flags of `gpulock resolve` as values (issue 21: parsed once, into types):
/// `--index NAME=URL` (a named index) and `--index-for GLOB=NAME` (packages matching GLOB come
/// only from that index). The CLI's validators, resolve, and `check` reading a lock's record use
/// these parsers; nothing else splits the text.

#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::index {

/// `--index NAME=URL`.
struct NamedIndex {
  std::string name;
  std::string url;  ///< as given (a path or file:// URL is made a URL where it is used)

  /// Errors: Usage, "invalid --index 'x': expected NAME=URL".
  [[nodiscard]] static core::Result<NamedIndex> parse(std::string_view text);
  /// "NAME=URL".
  [[nodiscard]] std::string to_string() const { return name + "=" + url; }
  friend bool operator==(const NamedIndex&, const NamedIndex&) = default;
};

/// `--index-for GLOB=NAME`. The glob is kept normalized like a project name (PEP 503, glob
/// characters untouched), so `Torch*` matches `torch` (issue 21).
struct IndexPin {
  std::string glob;
  std::string index;  ///< the NamedIndex it pins to

  /// Errors: Usage, "invalid --index-for 'x': expected GLOB=NAME".
  [[nodiscard]] static core::Result<IndexPin> parse(std::string_view text);
  /// "GLOB=NAME", the glob normalized.
  [[nodiscard]] std::string to_string() const { return glob + "=" + index; }
  friend bool operator==(const IndexPin&, const IndexPin&) = default;
};

}  // namespace gpulock::index

#pragma once
// Known classes of property failures that belong to open issues (fixed there, not here), so a
// harness that finds one skips that input instead of crashing. fuzz/README.md lists them.
#include "gpulock/core/marker.h"

namespace gpulock::fuzz {

/// Issue 20: marker values are printed unescaped between double quotes, so a marker holding a
/// value with `"` or `\` does not round-trip. True when `m` prints to text that parses back to
/// the same text (always true for the empty marker); the marker harness checks the rest of
/// marker printing, so harnesses of larger inputs skip requirements whose marker fails this.
inline bool marker_round_trips(const core::Marker& m) {
  if (m.empty()) return true;
  std::string printed = m.to_string();
  auto again = core::Marker::parse(printed);
  return again.has_value() && again->to_string() == printed;
}

}  // namespace gpulock::fuzz

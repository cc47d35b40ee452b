// Core metadata (core/metadata.h): METADATA, PKG-INFO, PEP 658 `.metadata`. Properties: the
// version prints and parses back equal; each Requires-Dist prints to a requirement that parses;
// Provides-Extra values are normalized.
#include "gpulock/core/metadata.h"

#include <fmt/format.h>

#include "gpulock/core/name.h"

#include "fuzz_check.h"

using namespace gpulock::core;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto md = CoreMetadata::parse(gpulock::fuzz::as_text(data, size));
  if (!md) return 0;
  auto v = Version::parse(md->version.to_string());
  FUZZ_CHECK(v.has_value() && *v == md->version, md->version.to_string());
  for (const Requirement& r : md->requires_dist) {
    std::string printed = r.to_string();
    auto again = Requirement::parse(printed);
    FUZZ_CHECK(again.has_value(),
               fmt::format("Requires-Dist prints as '{}', which does not parse", printed));
  }
  for (const std::string& extra : md->provides_extra) {
    FUZZ_CHECK(normalize_extra(extra) == extra, fmt::format("Provides-Extra '{}'", extra));
  }
  if (md->requires_python) {
    auto again = SpecifierSet::parse(md->requires_python->to_string());
    FUZZ_CHECK(again.has_value() && *again == *md->requires_python,
               md->requires_python->to_string());
  }
  return 0;
}

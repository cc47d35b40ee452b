// PEP 825 variant metadata (index/variants.h parse_variants_json: `$schema` dispatch to the
// wheelnext draft, PEP 825 and PEP 850 dialects) and the variant label of a wheel file name
// (split_variant_label). Byte 0 picks: even, the rest is a variants.json; odd, a file name.
// Properties: every label parsed is `[0-9a-z_.]+` (PEP 825 §label), as is every label split from
// a file name, and the file name without it plus `-{label}` has the name's length; every
// namespace and feature (of the variants and of static-properties) is `[a-z0-9_]+`; a
// variants.json parses the same way twice. (Values keep the file's order: the parser does not
// sort them, so order is not checked.)
#include <algorithm>

#include <fmt/format.h>

#include "gpulock/index/variants.h"

#include "fuzz_check.h"

using namespace gpulock;

namespace {

bool label_ok(std::string_view label) {
  return !label.empty() && std::all_of(label.begin(), label.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '.';
  });
}

// A namespace or feature name (PEP 825: `[a-z0-9_]+`).
bool name_ok(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_';
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text = gpulock::fuzz::as_text(data + 1, size - 1);
  if (data[0] & 1) {
    auto split = index::split_variant_label(text);
    if (!split || !*split) return 0;
    const auto& v = **split;
    FUZZ_CHECK(label_ok(v.label), fmt::format("label '{}' split from '{}'", v.label, text));
    FUZZ_CHECK(v.base_filename.size() + v.label.size() + 1 == text.size(),
               fmt::format("'{}' split into '{}' and '{}'", text, v.base_filename, v.label));
    return 0;
  }
  auto parsed = index::parse_variants_json(text, "variants.json");
  auto again = index::parse_variants_json(text, "variants.json");
  FUZZ_CHECK(parsed.has_value() == again.has_value(), "two parses of one text disagree");
  if (!parsed) {
    FUZZ_CHECK(!parsed.error().message.empty(), "an error without a message");
    return 0;
  }
  FUZZ_CHECK(parsed->schema == again->schema && parsed->dialect == again->dialect &&
                 parsed->variants == again->variants &&
                 parsed->namespace_priorities == again->namespace_priorities &&
                 parsed->static_properties == again->static_properties,
             "two parses of one text give different metadata");
  for (const auto& [label, properties] : parsed->variants) {
    FUZZ_CHECK(label_ok(label), fmt::format("variant label '{}'", label));
    for (const auto& [ns, features] : properties) {
      FUZZ_CHECK(name_ok(ns), fmt::format("namespace '{}' in variant '{}'", ns, label));
      for (const auto& [feature, values] : features) {
        FUZZ_CHECK(name_ok(feature), fmt::format("feature '{}' in variant '{}'", feature, label));
      }
    }
  }
  for (const auto& [ns, features] : parsed->static_properties) {
    FUZZ_CHECK(name_ok(ns), fmt::format("static-properties namespace '{}'", ns));
    for (const auto& [feature, values] : features)
      FUZZ_CHECK(name_ok(feature), fmt::format("static-properties feature '{}'", feature));
  }
  return 0;
}

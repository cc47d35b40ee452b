// PEP 440 versions (core/version.h). Properties: a parsed version equals itself, hashes and
// orders consistently, and its normalized text parses back to an equal version with the same
// text (parse -> print -> parse). The input is also split at the first newline into two
// versions whose order must be antisymmetric and agree with ==.
#include "gpulock/core/version.h"

#include <fmt/format.h>

#include "fuzz_check.h"

using gpulock::core::Version;

namespace {

void check_one(const Version& v, std::string_view text) {
  FUZZ_CHECK(v == v, fmt::format("'{}'", text));
  FUZZ_CHECK((v <=> v) == std::strong_ordering::equal, fmt::format("'{}'", text));
  std::string printed = v.to_string();
  auto again = Version::parse(printed);
  FUZZ_CHECK(again.has_value(), fmt::format("'{}' printed as '{}', which does not parse: {}", text,
                                            printed, again ? "" : again.error().message));
  FUZZ_CHECK(*again == v, fmt::format("'{}' -> '{}' -> '{}'", text, printed, again->to_string()));
  FUZZ_CHECK(again->to_string() == printed,
             fmt::format("'{}' -> '{}' -> '{}'", text, printed, again->to_string()));
  FUZZ_CHECK(again->hash() == v.hash(), fmt::format("hash differs after round trip of '{}'", text));
  // The derived versions are versions too.
  FUZZ_CHECK(v.public_version() <= v, fmt::format("public version of '{}' above it", text));
  FUZZ_CHECK(!v.public_version().has_local(), fmt::format("'{}'", text));
  FUZZ_CHECK(Version::parse(v.base_version().to_string()).has_value(), fmt::format("'{}'", text));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = gpulock::fuzz::as_text(data, size);
  auto v = Version::parse(text);
  if (v) check_one(*v, text);
  std::size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return 0;
  auto a = Version::parse(text.substr(0, nl));
  auto b = Version::parse(text.substr(nl + 1));
  if (!a || !b) return 0;
  check_one(*a, text.substr(0, nl));
  check_one(*b, text.substr(nl + 1));
  auto ab = *a <=> *b;
  auto ba = *b <=> *a;
  std::string pair = fmt::format("'{}' vs '{}'", a->to_string(), b->to_string());
  FUZZ_CHECK((ab == 0) == (ba == 0) && (ab < 0) == (ba > 0), pair);
  FUZZ_CHECK((ab == 0) == (*a == *b), pair);
  if (*a == *b) FUZZ_CHECK(a->hash() == b->hash(), pair);
  return 0;
}

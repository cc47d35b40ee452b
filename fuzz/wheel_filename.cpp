// Wheel and sdist file names (core/filename.h) and compressed tag sets (core/tags.h).
// Properties: a parsed wheel name has a normalized project name and 1..kMaxExpandedTags tags,
// equal to parse_tag_set of its python-abi-platform parts; the name rebuilt from the parsed
// parts parses to the same name, version, build and tags. Sdists: the same for
// `{name}-{version}{extension}`.
#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/filename.h"
#include "gpulock/core/name.h"
#include "gpulock/core/tags.h"

#include "fuzz_check.h"

using namespace gpulock::core;

namespace {

std::string underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

void check_wheel(std::string_view text) {
  auto w = WheelFilename::parse(text);
  if (!w) return;
  FUZZ_CHECK(normalize_name(w->name) == w->name, fmt::format("'{}': name '{}'", text, w->name));
  FUZZ_CHECK(!w->tags.empty() && w->tags.size() <= kMaxExpandedTags, fmt::format("'{}'", text));
  auto tags = parse_tag_set(fmt::format("{}-{}-{}", w->python_tag, w->abi_tag, w->platform_tag));
  FUZZ_CHECK(tags.has_value() && *tags == w->tags, fmt::format("'{}': tag set", text));
  std::string build = w->build ? fmt::format("-{}{}", w->build->first, w->build->second) : "";
  std::string rebuilt =
      fmt::format("{}-{}{}-{}-{}-{}.whl", underscored(w->name), w->version.to_string(), build,
                  w->python_tag, w->abi_tag, w->platform_tag);
  auto again = WheelFilename::parse(rebuilt);
  FUZZ_CHECK(again.has_value(), fmt::format("'{}' rebuilt as '{}', which does not parse: {}", text,
                                            rebuilt, again ? "" : again.error().message));
  FUZZ_CHECK(again->name == w->name && again->version == w->version && again->build == w->build &&
                 again->tags == w->tags,
             fmt::format("'{}' -> '{}'", text, rebuilt));
}

void check_sdist(std::string_view text) {
  auto s = SdistFilename::parse(text);
  if (!s) return;
  FUZZ_CHECK(normalize_name(s->name) == s->name, fmt::format("'{}': name '{}'", text, s->name));
  std::string rebuilt = fmt::format("{}-{}{}", s->name, s->version.to_string(), s->extension);
  auto again = SdistFilename::parse(rebuilt);
  FUZZ_CHECK(again.has_value(), fmt::format("'{}' rebuilt as '{}', which does not parse: {}", text,
                                            rebuilt, again ? "" : again.error().message));
  FUZZ_CHECK(
      again->name == s->name && again->version == s->version && again->extension == s->extension,
      fmt::format("'{}' -> '{}' -> {} {}", text, rebuilt, again->name, again->version.to_string()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = gpulock::fuzz::as_text(data, size);
  check_wheel(text);
  check_sdist(text);
  (void)is_wheel_filename(text);
  if (auto tags = parse_tag_set(text)) {
    FUZZ_CHECK(!tags->empty() && tags->size() <= kMaxExpandedTags, fmt::format("'{}'", text));
    for (const Tag& t : *tags) {
      FUZZ_CHECK(parse_tag_set(t.to_string()).has_value(),
                 fmt::format("'{}' in '{}'", t.to_string(), text));
    }
  }
  return 0;
}

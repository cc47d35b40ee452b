// --exclude-newer values (issue 6): a date (midnight UTC), an RFC 3339 timestamp, or a duration
// before "now" (7d, 12h, 2w, ISO 8601 P7D / PT12H).
#include <catch2/catch.hpp>

#include "gpulock/app/resolve_options.h"

namespace {
// The cutoff of `text` at `now`, through the flag's one parser (ExcludeNewer::parse).
gpulock::core::Result<std::int64_t> parse_exclude_newer(std::string_view text, std::int64_t now) {
  auto value = gpulock::app::ExcludeNewer::parse(text);
  if (!value) return std::unexpected(value.error());
  return value->cutoff(now);
}

constexpr std::int64_t kSecond = 1'000'000;
// 2025-03-05T16:00:00Z in microseconds since the epoch.
constexpr std::int64_t kMarch5At16 = 1741190400LL * kSecond;
}  // namespace

TEST_CASE("exclude-newer values: a date, a timestamp or a duration", "[app][exclude-newer]") {
  const std::int64_t now = kMarch5At16;
  SECTION("a date is midnight UTC of that day") {
    auto t = parse_exclude_newer("2025-03-05", now);
    REQUIRE(t.has_value());
    CHECK(*t == kMarch5At16 - 16 * 3600 * kSecond);
  }
  SECTION("timestamps, with Z or an offset") {
    auto z = parse_exclude_newer("2025-03-05T16:00:00Z", now);
    REQUIRE(z.has_value());
    CHECK(*z == kMarch5At16);
    auto offset = parse_exclude_newer("2025-03-05T17:00:01+01:00", now);
    REQUIRE(offset.has_value());
    CHECK(*offset == kMarch5At16 + kSecond);
  }
  SECTION("durations count back from now") {
    struct Case {
      const char* text;
      std::int64_t seconds;
    };
    for (const auto& c : {Case{"7d", 7 * 86400}, Case{"12h", 12 * 3600}, Case{"2w", 14 * 86400},
                          Case{"30m", 1800}, Case{"P7D", 7 * 86400}, Case{"PT12H", 12 * 3600}}) {
      INFO(c.text);
      auto t = parse_exclude_newer(c.text, now);
      REQUIRE(t.has_value());
      CHECK(*t == now - c.seconds * kSecond);
      CHECK(gpulock::app::ExcludeNewer::parse(c.text)->relative());
      CHECK(gpulock::app::ExcludeNewer::parse(c.text)->to_string() == c.text);
    }
  }
  SECTION("anything else is a usage error naming the value") {
    for (const char* bad : {"", "7x", "d", "2025-13-45", "yesterday", "P", "-7d", "100001d"}) {
      INFO(bad);
      auto t = parse_exclude_newer(bad, now);
      REQUIRE(!t.has_value());
      CHECK(t.error().code == gpulock::core::ErrorCode::Usage);
      CHECK(t.error().message.starts_with("invalid --exclude-newer"));
    }
  }
}

#include "gpulock/lock/toml_value.h"

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "gpulock/lock/lockfile.h"

using namespace gpulock::lock;

TEST_CASE("TOML basic strings escape quotes, backslashes and control characters", "[lock][toml]") {
  CHECK(toml_string("plain") == "\"plain\"");
  CHECK(toml_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(toml_string("t\tn\nr\rb\bf\f") == "\"t\\tn\\nr\\rb\\bf\\f\"");
  CHECK(toml_string(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
  CHECK(toml_string("\x1b[0m") == "\"\\u001B[0m\"");
  CHECK(toml_string("del\x7f") == "\"del\\u007F\"");
  CHECK(toml_string("caf\xc3\xa9 \xe2\x9c\x93") == "\"caf\xc3\xa9 \xe2\x9c\x93\"");
  // Invalid UTF-8 (a lone continuation byte, an overlong '/', a surrogate) becomes U+FFFD.
  CHECK(toml_string("a\x80z") == "\"a\xef\xbf\xbdz\"");
  CHECK(toml_string("\xc0\xaf") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK(toml_string("\xed\xa0\x80") == "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

TEST_CASE("keys are bare only when TOML allows it", "[lock][toml]") {
  CHECK(toml_key("index-strategy") == "index-strategy");
  CHECK(toml_key("a_b9") == "a_b9");
  CHECK(toml_key("key with space") == "\"key with space\"");
  CHECK(toml_key("dotted.key") == "\"dotted.key\"");
  CHECK(toml_key("") == "\"\"");
  CHECK(toml_key("caf\xc3\xa9") == "\"caf\xc3\xa9\"");
}

TEST_CASE("inline values: floats keep a point or exponent, tables sort keys", "[lock][toml]") {
  CHECK(to_toml_inline(TomlValue(1.0)) == "1.0");
  CHECK(to_toml_inline(TomlValue(1.5)) == "1.5");
  CHECK(to_toml_inline(TomlValue(-0.001)) == "-0.001");
  CHECK(to_toml_inline(TomlValue(1e20)) == "1e+20");
  CHECK(to_toml_inline(TomlValue(std::numeric_limits<double>::infinity())) == "inf");
  CHECK(to_toml_inline(TomlValue(-std::numeric_limits<double>::infinity())) == "-inf");
  CHECK(to_toml_inline(TomlValue(std::nan(""))) == "nan");
  CHECK(to_toml_inline(TomlValue(std::int64_t{-9223372036854775807 - 1})) ==
        "-9223372036854775808");
  CHECK(to_toml_inline(TomlValue(true)) == "true");
  TomlTable t;
  t.emplace("z", TomlValue(1));
  t.emplace("a b", TomlValue(TomlArray{TomlValue("x"), TomlValue(TomlTable{})}));
  CHECK(to_toml_inline(TomlValue(t)) == "{ \"a b\" = [\"x\", {}], z = 1 }");
  CHECK(to_toml_inline(TomlValue(TomlArray{})) == "[]");
}

TEST_CASE("date-times print as TOML and convert to UTC", "[lock][toml]") {
  TomlDatetime dt{{2025, 6, 4}, {17, 34, 58, 747000000}, 0};
  CHECK(to_toml_text(dt) == "2025-06-04T17:34:58.747000Z");
  dt.time.nanosecond = 0;
  CHECK(to_toml_text(dt) == "2025-06-04T17:34:58Z");
  dt.time.nanosecond = 1;
  CHECK(to_toml_text(dt) == "2025-06-04T17:34:58.000000001Z");
  dt.offset_minutes.reset();
  CHECK(to_toml_text(dt) == "2025-06-04T17:34:58.000000001");

  // +05:30 across midnight and a month end; -08:00 across a year end.
  TomlDatetime india{{2025, 3, 1}, {1, 15, 0, 0}, 330};
  CHECK(to_toml_text(india) == "2025-03-01T01:15:00+05:30");
  CHECK(to_toml_text(india.to_utc()) == "2025-02-28T19:45:00Z");
  TomlDatetime la{{2024, 12, 31}, {20, 0, 0, 0}, -480};
  CHECK(to_toml_text(la.to_utc()) == "2025-01-01T04:00:00Z");
  TomlDatetime leap{{2024, 3, 1}, {0, 30, 0, 0}, 60};
  CHECK(to_toml_text(leap.to_utc()) == "2024-02-29T23:30:00Z");
  CHECK(to_toml_text(TomlDate{2025, 1, 2}) == "2025-01-02");
  CHECK(to_toml_text(TomlTime{7, 8, 9, 0}) == "07:08:09");
}

TEST_CASE("generic values equal after a round trip through the reader", "[lock][toml]") {
  TomlTable other;
  other.emplace("nan", TomlValue(std::nan("")));
  other.emplace("big", TomlValue(std::int64_t{9007199254740993}));
  other.emplace("tiny", TomlValue(5e-324));
  other.emplace("third", TomlValue(1.0 / 3.0));
  other.emplace("when", TomlValue(TomlDatetime{{1999, 12, 31}, {23, 59, 59, 999999999}, -60}));
  other.emplace("quote'\"", TomlValue("\xe2\x9c\x93\n"));
  TomlTable deep;
  deep.emplace("list", TomlValue(TomlArray{TomlValue(TomlArray{TomlValue(1)}), TomlValue("s")}));
  other.emplace("deep", TomlValue(deep));
  Lock lock;
  lock.created_by = "test";
  lock.tool.emplace("other", TomlValue(other));
  const std::string text = to_toml(lock);
  auto back = parse_lock(text, "mem.toml");
  INFO(text);
  REQUIRE(back.has_value());
  CHECK(back->lock == lock);
  CHECK(to_toml(back->lock) == text);
}

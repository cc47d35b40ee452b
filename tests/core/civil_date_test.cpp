// core/civil_date.h: proleptic Gregorian days <-> dates, and UTC microseconds -> calendar parts.
#include "gpulock/core/civil_date.h"

#include <catch2/catch.hpp>

using namespace gpulock::core;

TEST_CASE("days_from_civil counts from 1970-01-01") {
  CHECK(days_from_civil(1970, 1, 1) == 0);
  CHECK(days_from_civil(1970, 1, 2) == 1);
  CHECK(days_from_civil(1969, 12, 31) == -1);
  CHECK(days_from_civil(2000, 3, 1) == 11017);
  CHECK(days_from_civil(2024, 2, 29) == 19782);
  CHECK(days_from_civil(2025, 6, 4) == 20243);
  CHECK(days_from_civil(1600, 1, 1) == -135140);
}

TEST_CASE("civil_from_days inverts days_from_civil, leap days included") {
  CHECK(civil_from_days(0) == CivilDate{1970, 1, 1});
  CHECK(civil_from_days(-1) == CivilDate{1969, 12, 31});
  CHECK(civil_from_days(19782) == CivilDate{2024, 2, 29});
  CHECK(civil_from_days(11016) == CivilDate{2000, 2, 29});
  CHECK(civil_from_days(-25508) == CivilDate{1900, 3, 1});  // 1900 is not a leap year
  for (std::int64_t d = -800'000; d <= 800'000; d += 997) {
    CivilDate c = civil_from_days(d);
    INFO(d);
    REQUIRE(days_from_civil(c.year, c.month, c.day) == d);
    REQUIRE(c.month >= 1);
    REQUIRE(c.month <= 12);
    REQUIRE(c.day >= 1);
    REQUIRE(c.day <= 31);
  }
}

TEST_CASE("civil_from_micros floors before the epoch") {
  CHECK(civil_from_micros(0) == CivilTime{{1970, 1, 1}, 0, 0, 0, 0});
  CHECK(civil_from_micros(-1) == CivilTime{{1969, 12, 31}, 23, 59, 59, 999'999});
  CHECK(civil_from_micros(-1'000'000) == CivilTime{{1969, 12, 31}, 23, 59, 59, 0});
  // 2025-06-04T17:34:58.747Z
  CHECK(civil_from_micros(1'749'058'498'747'000) == CivilTime{{2025, 6, 4}, 17, 34, 58, 747'000});
  CHECK(civil_from_micros(86'400'000'000 - 1) == CivilTime{{1970, 1, 1}, 23, 59, 59, 999'999});
}

#pragma once
/// @file
/// Calendar arithmetic on the proleptic Gregorian calendar, UTC: days and microseconds since
/// 1970-01-01 to and from year/month/day (H. Hinnant, "chrono-Compatible Low-Level Date
/// Algorithms": days_from_civil / civil_from_days). Pure; no time zones, no leap seconds.

#include <cstdint>

namespace gpulock::core {

struct CivilDate {
  std::int64_t year = 1970;
  unsigned month = 1;  ///< 1-12
  unsigned day = 1;    ///< 1-31

  friend bool operator==(const CivilDate&, const CivilDate&) = default;
};

/// A UTC instant split into its calendar parts.
struct CivilTime {
  CivilDate date;
  unsigned hour = 0;         ///< 0-23
  unsigned minute = 0;       ///< 0-59
  unsigned second = 0;       ///< 0-59
  std::uint32_t micros = 0;  ///< 0-999999

  friend bool operator==(const CivilTime&, const CivilTime&) = default;
};

/// Days since 1970-01-01 of `y`-`m`-`d` (negative before it). `m` in 1-12, `d` in 1-31; a day
/// past the month's end counts on (2023-02-30 is 2023-03-02).
[[nodiscard]] std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept;

/// The date `days` days after 1970-01-01 (before it when negative).
[[nodiscard]] CivilDate civil_from_days(std::int64_t days) noexcept;

/// The UTC calendar parts of `micros` microseconds since 1970-01-01T00:00:00Z (floor division,
/// so -1 is 1969-12-31T23:59:59.999999).
[[nodiscard]] CivilTime civil_from_micros(std::int64_t micros) noexcept;

}  // namespace gpulock::core

#include "gpulock/core/civil_date.h"

namespace gpulock::core {
namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

CivilDate civil_from_days(std::int64_t z) noexcept {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  CivilDate out;
  out.day = doy - (153 * mp + 2) / 5 + 1;
  out.month = mp < 10 ? mp + 3 : mp - 9;
  out.year = static_cast<std::int64_t>(yoe) + era * 400 + (out.month <= 2 ? 1 : 0);
  return out;
}

CivilTime civil_from_micros(std::int64_t micros) noexcept {
  const std::int64_t secs = floor_div(micros, 1'000'000);
  const std::int64_t days = floor_div(secs, 86400);
  const std::int64_t rem = secs - days * 86400;
  CivilTime out;
  out.date = civil_from_days(days);
  out.hour = static_cast<unsigned>(rem / 3600);
  out.minute = static_cast<unsigned>((rem / 60) % 60);
  out.second = static_cast<unsigned>(rem % 60);
  out.micros = static_cast<std::uint32_t>(micros - secs * 1'000'000);
  return out;
}

}  // namespace gpulock::core

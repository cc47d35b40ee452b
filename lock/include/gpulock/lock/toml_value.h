#pragma once
/// @file
/// A small generic TOML value (TOML 1.0, https://toml.io/en/v1.0.0) for the parts of a lock file
/// gpulock does not model: other tools' `[tool.*]` and `[packages.tool]` tables, the publisher
/// keys of `attestation-identities`, `dependencies` entries, and keys from a newer lock-version.
/// They are kept so that re-writing a lock loses nothing (PEP 751: `[tool]` data is disposable,
/// but a reader must not drop it silently). No toml++ type appears here.

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpulock::lock {

/// A TOML local date (`2025-01-25`).
struct TomlDate {
  std::int32_t year = 1970;
  std::uint8_t month = 1;  ///< 1..12
  std::uint8_t day = 1;    ///< 1..31
  friend auto operator<=>(const TomlDate&, const TomlDate&) = default;
};

/// A TOML local time (`11:30:10.164985`); nanoseconds as toml++ keeps them.
struct TomlTime {
  std::uint8_t hour = 0;
  std::uint8_t minute = 0;
  std::uint8_t second = 0;
  std::uint32_t nanosecond = 0;
  friend auto operator<=>(const TomlTime&, const TomlTime&) = default;
};

/// A TOML date-time: an offset date-time when `offset_minutes` is set (`Z` is 0), else a local
/// date-time.
struct TomlDatetime {
  TomlDate date;
  TomlTime time;
  std::optional<std::int32_t> offset_minutes;
  friend auto operator<=>(const TomlDatetime&, const TomlDatetime&) = default;

  /// The same instant in UTC (offset 0). A local date-time is taken as UTC.
  [[nodiscard]] TomlDatetime to_utc() const;
};

/// TOML text of a date, time or date-time, as gpulock writes it: `2025-06-04`, `17:34:58`,
/// `2025-06-04T17:34:58.747000Z` (UTC as `Z`, other offsets as `+hh:mm`; fractional seconds with
/// 6 digits when whole microseconds, else 9, none when zero).
[[nodiscard]] std::string to_toml_text(const TomlDate& d);
[[nodiscard]] std::string to_toml_text(const TomlTime& t);
[[nodiscard]] std::string to_toml_text(const TomlDatetime& dt);

struct TomlValue;
/// A TOML array (mixed element types are valid TOML 1.0).
using TomlArray = std::vector<TomlValue>;
/// A TOML table. Keys are kept sorted, so the same table always prints the same way.
using TomlTable = std::map<std::string, TomlValue, std::less<>>;

/// Any TOML value. Integers are 64-bit signed as TOML requires. Equality treats NaN as equal to
/// NaN (so a round trip of `nan` compares equal).
struct TomlValue {
  using Storage = std::variant<std::string, std::int64_t, double, bool, TomlDate, TomlTime,
                               TomlDatetime, TomlArray, TomlTable>;
  Storage data;

  TomlValue() = default;
  TomlValue(std::string s) : data(std::move(s)) {}          // NOLINT(implicit)
  TomlValue(const char* s) : data(std::string(s)) {}        // NOLINT(implicit)
  TomlValue(std::int64_t i) : data(i) {}                    // NOLINT(implicit)
  TomlValue(int i) : data(static_cast<std::int64_t>(i)) {}  // NOLINT(implicit)
  TomlValue(double d) : data(d) {}                          // NOLINT(implicit)
  TomlValue(bool b) : data(b) {}                            // NOLINT(implicit)
  TomlValue(TomlDate d) : data(d) {}                        // NOLINT(implicit)
  TomlValue(TomlTime t) : data(t) {}                        // NOLINT(implicit)
  TomlValue(TomlDatetime dt) : data(dt) {}                  // NOLINT(implicit)
  TomlValue(TomlArray a) : data(std::move(a)) {}            // NOLINT(implicit)
  TomlValue(TomlTable t) : data(std::move(t)) {}            // NOLINT(implicit)

  template <class T>
  [[nodiscard]] bool is() const noexcept {
    return std::holds_alternative<T>(data);
  }
  /// The value as T, or nullptr when it holds another type.
  template <class T>
  [[nodiscard]] const T* get_if() const noexcept {
    return std::get_if<T>(&data);
  }

  /// "string", "integer", "float", "boolean", "date", "time", "date-time", "array", "table".
  [[nodiscard]] std::string_view type_name() const noexcept;

  friend bool operator==(const TomlValue& a, const TomlValue& b);
};

/// True for keys TOML allows bare (`A-Za-z0-9_-`, non-empty).
[[nodiscard]] bool is_bare_key(std::string_view key) noexcept;

/// A key as written in TOML: bare when allowed, else a basic string.
[[nodiscard]] std::string toml_key(std::string_view key);

/// A TOML basic string literal with quotes: `"` and `\` escaped, control characters as `\b \t \n
/// \f \r` or `\uXXXX`, DEL escaped, other UTF-8 kept; invalid UTF-8 bytes become U+FFFD so the
/// output is always valid TOML.
[[nodiscard]] std::string toml_string(std::string_view text);

/// A value in inline form (`"x"`, `12`, `1.5`, `true`, `[1, 2]`, `{ a = 1 }`): what gpulock
/// writes for a value whose key is on one line. Floats use the shortest text that reads back to
/// the same double, always with a `.` or exponent (`1.0`, `1e+20`, `nan`, `-inf`).
[[nodiscard]] std::string to_toml_inline(const TomlValue& value);

}  // namespace gpulock::lock

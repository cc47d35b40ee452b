#pragma once
/// @file
/// The options of the catalog, as types (issue 21: parse once, into types): which sources a
/// package may come from (`--index-strategy`) and which nightly build date the torch family is
/// held to (`--nightly`). Each has one parser, used by the CLI's validator, by resolve, and by
/// `check` reading a lock's record, and one spelling for the lock and for messages. app
/// re-exports them beside its own options (app/resolve_options.h).
///
/// Errors are Usage errors worded "invalid --FLAG 'VALUE': expected ...".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpulock/core/civil_date.h"
#include "gpulock/core/error.h"

namespace gpulock::catalog {

/// `--index-strategy`: first-index (a package comes only from the first source that has it, the
/// torchtriton lesson) or unsafe-best-match (every source merged).
enum class IndexStrategy : std::uint8_t { FirstIndex, UnsafeBestMatch };
[[nodiscard]] core::Result<IndexStrategy> parse_index_strategy(std::string_view text);
[[nodiscard]] std::string_view index_strategy_name(IndexStrategy strategy) noexcept;

/// A nightly build date, UTC. `--nightly` takes one (YYYY-MM-DD) or `latest`; a nightly
/// version's dev tag carries one (`2.13.0.dev20260601+cu130` -> 2026-06-01); the lock's
/// snapshot records one. One type for the four places a date was a string (issue 21).
class NightlyDate {
 public:
  /// "YYYY-MM-DD" (month 1-12, day 1-31) or "latest". Errors: Usage.
  [[nodiscard]] static core::Result<NightlyDate> parse(std::string_view text);
  /// The date of a build tag "YYYYMMDD" (the digits after `.dev` in a nightly version); nullopt
  /// when `tag` is not eight digits of a valid month and day.
  [[nodiscard]] static std::optional<NightlyDate> from_build_tag(std::string_view tag);
  [[nodiscard]] static NightlyDate latest() { return NightlyDate(); }
  [[nodiscard]] static NightlyDate on(core::CivilDate date) { return NightlyDate(date); }

  [[nodiscard]] bool is_latest() const noexcept { return !date_; }
  /// The date; nullopt for `latest`.
  [[nodiscard]] const std::optional<core::CivilDate>& date() const noexcept { return date_; }
  /// "YYYY-MM-DD" or "latest".
  [[nodiscard]] std::string to_string() const;
  /// "YYYYMMDD" as in a version's dev tag ("" for `latest`).
  [[nodiscard]] std::string build_tag() const;

  friend bool operator==(const NightlyDate&, const NightlyDate&) = default;

 private:
  NightlyDate() = default;
  explicit NightlyDate(core::CivilDate date) : date_(date) {}
  std::optional<core::CivilDate> date_;
};

}  // namespace gpulock::catalog

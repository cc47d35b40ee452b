// The catalog's options (options.h): one parser each.

#include "gpulock/catalog/options.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/option_text.h"

namespace gpulock::catalog {
namespace {

unsigned two_digits(std::string_view s) {
  return static_cast<unsigned>((s[0] - '0') * 10 + (s[1] - '0'));
}

}  // namespace

core::Result<IndexStrategy> parse_index_strategy(std::string_view text) {
  if (text == "first-index") return IndexStrategy::FirstIndex;
  if (text == "unsafe-best-match") return IndexStrategy::UnsafeBestMatch;
  return core::invalid_option("index-strategy", text, "first-index or unsafe-best-match");
}

std::string_view index_strategy_name(IndexStrategy strategy) noexcept {
  return strategy == IndexStrategy::UnsafeBestMatch ? "unsafe-best-match" : "first-index";
}

core::Result<NightlyDate> NightlyDate::parse(std::string_view text) {
  if (text == "latest") return latest();
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    std::string tag =
        fmt::format("{}{}{}", text.substr(0, 4), text.substr(5, 2), text.substr(8, 2));
    if (auto d = from_build_tag(tag)) return *d;
  }
  return core::invalid_option("nightly", text, "a build date YYYY-MM-DD (UTC) or latest");
}

std::optional<NightlyDate> NightlyDate::from_build_tag(std::string_view tag) {
  if (tag.size() != 8 || !core::all_digits(tag)) return std::nullopt;
  core::CivilDate d;
  d.year =
      static_cast<std::int64_t>(two_digits(tag.substr(0, 2)) * 100 + two_digits(tag.substr(2, 2)));
  d.month = two_digits(tag.substr(4, 2));
  d.day = two_digits(tag.substr(6, 2));
  if (d.year < 2000 || d.month < 1 || d.month > 12 || d.day < 1 || d.day > 31) return std::nullopt;
  return on(d);
}

std::string NightlyDate::to_string() const {
  if (!date_) return "latest";
  return fmt::format("{:04}-{:02}-{:02}", date_->year, date_->month, date_->day);
}

std::string NightlyDate::build_tag() const {
  if (!date_) return {};
  return fmt::format("{:04}{:02}{:02}", date_->year, date_->month, date_->day);
}

}  // namespace gpulock::catalog

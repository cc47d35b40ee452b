#include "gpulock/index/page.h"

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/index/url.h"

namespace gpulock::index {
namespace {

// Howard Hinnant's days_from_civil: days since 1970-01-01 of a proleptic Gregorian date.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) noexcept {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2 ? 1 : 0;
}

bool read_digits(std::string_view s, std::size_t& pos, std::size_t count, unsigned& out) noexcept {
  if (pos + count > s.size()) return false;
  unsigned v = 0;
  for (std::size_t i = 0; i < count; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  out = v;
  pos += count;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) noexcept {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

const std::string kEmptyName;
const core::Version kVersionZero;

bool is_pytorch_host(std::string_view host) {
  return host == "download.pytorch.org" || host == "download-r2.pytorch.org";
}

}  // namespace

IndexSource IndexSource::simple(std::string_view url_or_path, std::string display_name) {
  IndexSource s;
  s.url = url_from_user_input(url_or_path);
  UrlParts parts = split_url(s.url);
  if (!parts.has_query && !parts.has_fragment && (s.url.empty() || s.url.back() != '/')) {
    s.url.push_back('/');
  }
  s.kind = SourceKind::SimpleApi;
  s.name = std::move(display_name);
  s.forbidden_means_missing = is_pytorch_host(url_host(s.url));
  return s;
}

IndexSource IndexSource::find_links(std::string_view url_or_path, std::string display_name) {
  IndexSource s;
  s.url = url_from_user_input(url_or_path);
  s.kind = SourceKind::FindLinks;
  s.name = std::move(display_name);
  s.forbidden_means_missing = is_pytorch_host(url_host(s.url));
  return s;
}

std::string IndexSource::project_url(std::string_view project) const {
  if (kind == SourceKind::FindLinks) return url;
  std::string out = url;
  if (out.empty() || out.back() != '/') out.push_back('/');
  out += core::normalize_name(project);
  out.push_back('/');
  return out;
}

std::string_view DistFile::hash(std::string_view algorithm) const noexcept {
  for (const auto& h : hashes) {
    if (h.algorithm == algorithm) return h.hex;
  }
  return {};
}

std::string_view DistFile::core_metadata_sha256() const noexcept {
  for (const auto& h : core_metadata_hashes) {
    if (h.algorithm == "sha256") return h.hex;
  }
  return {};
}

const core::Version& DistFile::version() const noexcept {
  if (wheel) return wheel->version;
  if (sdist) return sdist->version;
  return kVersionZero;
}

const std::string& DistFile::project() const noexcept {
  if (wheel) return wheel->name;
  if (sdist) return sdist->name;
  return kEmptyName;
}

std::string format_timestamp(std::int64_t micros) {
  std::int64_t secs = micros >= 0 ? micros / 1'000'000 : -((-micros + 999'999) / 1'000'000);
  auto frac = static_cast<std::int64_t>(micros - secs * 1'000'000);
  std::int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  std::int64_t rem = secs - days * 86400;
  std::int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(days, y, m, d);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", y, m, d, rem / 3600,
                                (rem / 60) % 60, rem % 60);
  if (frac != 0) out += fmt::format(".{:06}", frac);
  out.push_back('Z');
  return out;
}

std::optional<std::int64_t> parse_timestamp(std::string_view s) noexcept {
  std::size_t pos = 0;
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(s, pos, 4, year) || !expect(s, pos, '-') || !read_digits(s, pos, 2, month) ||
      !expect(s, pos, '-') || !read_digits(s, pos, 2, day)) {
    return std::nullopt;
  }
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!read_digits(s, pos, 2, hour) || !expect(s, pos, ':') || !read_digits(s, pos, 2, minute) ||
      !expect(s, pos, ':') || !read_digits(s, pos, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  std::int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    std::int64_t frac = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) frac = frac * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (std::size_t i = digits; i < 6; ++i)
      frac *= 10;
    micros = frac;
  }
  std::int64_t offset = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z' || s[pos] == 'z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int sign = s[pos] == '-' ? -1 : 1;
      ++pos;
      unsigned oh = 0, om = 0;
      if (!read_digits(s, pos, 2, oh)) return std::nullopt;
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (!read_digits(s, pos, 2, om)) return std::nullopt;
      offset = sign * static_cast<std::int64_t>(oh * 3600 + om * 60);
    }
  }
  if (pos != s.size()) return std::nullopt;
  std::int64_t days = days_from_civil(year, month, day);
  std::int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset;
  return secs * 1'000'000 + micros;
}

}  // namespace gpulock::index

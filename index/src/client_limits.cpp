// Byte sizes and the environment variables that set the client's limits (time and size).
#include <charconv>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "gpulock/index/client.h"

#include "client_limits.h"

namespace gpulock::index {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  std::uint64_t value = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || p == text.data() || value == 0) return std::nullopt;
  std::string unit(p, text.data() + text.size());
  while (!unit.empty() && unit.front() == ' ')
    unit.erase(0, 1);
  for (char& c : unit)
    c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  int shift = 0;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else {
    const std::string prefixes = "KMGT";
    auto at = prefixes.find(unit.front());
    std::string rest = unit.substr(1);
    if (at == std::string::npos || !(rest.empty() || rest == "B" || rest == "IB")) {
      return std::nullopt;
    }
    shift = 10 * (static_cast<int>(at) + 1);
  }
  if (shift > 0 && value > (~std::uint64_t{0} >> shift)) return std::nullopt;
  return value << shift;
}

std::string format_byte_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  for (int i = 3; i >= 0; --i) {
    std::uint64_t unit = std::uint64_t{1} << (10 * (i + 1));
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{} {}", bytes / unit, kUnits[i]);
  }
  return fmt::format("{} bytes", bytes);
}

namespace detail {
namespace {

std::string_view env_view(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string_view(v) : std::string_view();
}

// Whole or fractional seconds ("30", "2.5"), > 0.
std::optional<std::chrono::milliseconds> env_seconds(const char* name) {
  std::string_view v = env_view(name);
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  std::string text(v);
  double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(seconds > 0) || seconds > 1e7) return std::nullopt;
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000 + 0.5));
}

}  // namespace

void apply_limit_environment(ClientOptions& o) {
  // The read timeout: gpulock's own variable, else uv's, else pip's (both mean seconds without
  // progress on a socket).
  for (const char* name : {"GPULOCK_HTTP_TIMEOUT", "UV_HTTP_TIMEOUT", "PIP_DEFAULT_TIMEOUT"}) {
    if (auto t = env_seconds(name)) {
      o.low_speed_time = *t;
      break;
    }
  }
  if (auto t = env_seconds("GPULOCK_HTTP_LOW_SPEED_TIME")) o.floor_window = *t;
  if (std::string_view v = env_view("GPULOCK_HTTP_LOW_SPEED_LIMIT"); !v.empty()) {
    std::uint32_t bytes = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), bytes);
    if (ec == std::errc{} && p == v.data() + v.size()) o.floor_bytes = bytes;
  }
  if (auto t = env_seconds("GPULOCK_HTTP_DEADLINE")) o.deadline = *t;
  if (auto t = env_seconds("GPULOCK_HTTP_MAX_RETRY_DELAY")) o.max_retry_delay = *t;
  if (auto n = parse_byte_size(env_view("GPULOCK_MAX_PAGE_SIZE"))) o.max_page_bytes = *n;
  if (auto n = parse_byte_size(env_view("GPULOCK_MAX_DOWNLOAD_SIZE"))) o.max_download_bytes = *n;
}

}  // namespace detail
}  // namespace gpulock::index

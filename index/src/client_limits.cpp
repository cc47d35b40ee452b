// Byte sizes and the environment variables that set the client's limits (time and size).
#include "client_limits.h"

#include <charconv>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "gpulock/core/text.h"
#include "gpulock/index/client.h"
#include "gpulock/sys/env.h"

namespace gpulock::index {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  text = core::trim_right(text, " ");
  std::uint64_t value = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || p == text.data() || value == 0) return std::nullopt;
  std::string unit(core::trim_left(text.substr(static_cast<std::size_t>(p - text.data())), " "));
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

// Whole or fractional seconds ("30", "2.5"), > 0.
std::optional<std::chrono::milliseconds> parse_seconds(std::string_view v) {
  char* end = nullptr;
  std::string text(v);
  double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(seconds > 0) || seconds > 1e7) return std::nullopt;
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000 + 0.5));
}

constexpr std::string_view kSeconds = "seconds above 0, e.g. 30 or 2.5";
constexpr std::string_view kSize = "a size such as 1G, 512M or 1048576";

// A gpulock variable read with `parse` (which returns an optional): unset leaves `out` alone,
// a value `parse` refuses is an error.
template <class T, class Parse>
core::Status read_env(const char* name, sys::EnvLookup env, Parse parse, std::string_view expected,
                      T& out) {
  auto v = sys::env_value(name, env);
  if (!v) return {};
  auto parsed = parse(*v);
  if (!parsed) return std::unexpected(sys::invalid_env(name, *v, expected));
  out = *parsed;
  return {};
}

core::Status seconds_from(const char* name, sys::EnvLookup env, std::chrono::milliseconds& out) {
  return read_env(name, env, parse_seconds, kSeconds, out);
}

core::Status size_from(const char* name, sys::EnvLookup env, std::uint64_t& out) {
  return read_env(name, env, parse_byte_size, kSize, out);
}

std::optional<std::uint32_t> parse_bytes_per_second(std::string_view v) {
  std::uint32_t bytes = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), bytes);
  if (ec != std::errc{} || p != v.data() + v.size()) return std::nullopt;
  return bytes;
}

}  // namespace

core::Status apply_limit_environment(ClientOptions& o, sys::EnvLookup env) {
  // The read timeout: gpulock's own variable, else uv's, else pip's (both mean seconds without
  // progress on a socket). uv's and pip's belong to those tools: a value gpulock cannot use is
  // passed over, not an error.
  if (sys::env_value("GPULOCK_HTTP_TIMEOUT", env)) {
    if (auto s = seconds_from("GPULOCK_HTTP_TIMEOUT", env, o.low_speed_time); !s) return s;
  } else {
    for (const char* name : {"UV_HTTP_TIMEOUT", "PIP_DEFAULT_TIMEOUT"}) {
      auto v = sys::env_value(name, env);
      if (auto t = v ? parse_seconds(*v) : std::nullopt) {
        o.low_speed_time = *t;
        break;
      }
    }
  }
  if (auto s = seconds_from("GPULOCK_HTTP_LOW_SPEED_TIME", env, o.floor_window); !s) return s;
  if (auto s = read_env("GPULOCK_HTTP_LOW_SPEED_LIMIT", env, parse_bytes_per_second,
                        "bytes per second, 0 for no floor", o.floor_bytes);
      !s) {
    return s;
  }
  if (auto s = seconds_from("GPULOCK_HTTP_DEADLINE", env, o.deadline); !s) return s;
  if (auto s = seconds_from("GPULOCK_HTTP_MAX_RETRY_DELAY", env, o.max_retry_delay); !s) return s;
  if (auto s = size_from("GPULOCK_MAX_PAGE_SIZE", env, o.max_page_bytes); !s) return s;
  if (auto s = size_from("GPULOCK_MAX_DOWNLOAD_SIZE", env, o.max_download_bytes); !s) return s;
  return {};
}

}  // namespace detail
}  // namespace gpulock::index

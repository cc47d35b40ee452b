#include "gpulock/sys/env.h"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace gpulock::sys {

std::optional<std::string_view> env_value(const char* name, EnvLookup env) {
  const char* v = env != nullptr ? env(name) : std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string_view(v);
}

core::Error invalid_env(std::string_view name, std::string_view value, std::string_view expected) {
  return core::fail(core::ErrorCode::Usage,
                    fmt::format("invalid value for {}: {} (expected {})", name,
                                core::quote_for_message(value), expected))
      .error();
}

core::Result<std::optional<std::int64_t>> env_integer(const char* name, std::int64_t min,
                                                      std::int64_t max, std::string_view expected,
                                                      EnvLookup env) {
  auto text = env_value(name, env);
  if (!text) return std::optional<std::int64_t>();
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < min || v > max) {
    return std::unexpected(invalid_env(name, *text, expected));
  }
  return std::optional<std::int64_t>(v);
}

}  // namespace gpulock::sys

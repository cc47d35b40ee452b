#pragma once
// A run of decimal digits as a number, for the gpu module's parsers (internal header).

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpulock::gpu::detail {

/// nullopt when empty, not all digits, or over 9 digits (so it always fits).
inline std::optional<std::uint32_t> parse_number(std::string_view text) noexcept {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::uint32_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace gpulock::gpu::detail

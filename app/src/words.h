#pragma once
// Wording helpers shared by app's sources (the provider's words and the GPU policy's).

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gpulock::app {

// "needs Python >=3.12" -> ">= 3.12" spacing for the explanation.
inline std::string spaced_specifier(std::string_view spec) {
  std::string out;
  std::size_t i = 0;
  while (i < spec.size()) {
    std::size_t j = i;
    while (j < spec.size() && std::string_view("<>=!~").find(spec[j]) != std::string_view::npos)
      ++j;
    std::size_t end = spec.find(',', j);
    std::string_view op = spec.substr(i, j - i);
    std::string_view operand =
        spec.substr(j, end == std::string_view::npos ? std::string_view::npos : end - j);
    if (!out.empty()) out += ", ";
    out += op.empty() ? std::string(operand) : fmt::format("{} {}", op, operand);
    if (end == std::string_view::npos) break;
    i = end + 1;
    while (i < spec.size() && spec[i] == ' ')
      ++i;
  }
  return out;
}

}  // namespace gpulock::app

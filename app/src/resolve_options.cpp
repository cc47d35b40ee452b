// The option values of resolve that are app's concepts (resolve_options.h): one parser each.

#include "gpulock/app/resolve_options.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/option_text.h"
#include "gpulock/core/version.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/index/page.h"

namespace gpulock::app {
namespace {

// Durations of --exclude-newer: 7d, 12h, 30m, 2w, 10s, or ISO 8601 P7D / PT12H; nullopt when
// `d` is none. At most 100000 units.
std::optional<std::int64_t> duration_seconds(std::string_view d) {
  if (d.starts_with("P") || d.starts_with("p")) {
    d.remove_prefix(1);
    if (d.starts_with("T") || d.starts_with("t")) d.remove_prefix(1);
  }
  if (d.size() < 2) return std::nullopt;
  std::string_view number = d.substr(0, d.size() - 1);
  if (!core::all_digits(number)) return std::nullopt;
  std::int64_t n = 0;
  for (char c : number) {
    n = n * 10 + (c - '0');
    if (n > 100000) return std::nullopt;
  }
  switch (d.back()) {
    case 'w':
    case 'W':
      return n * 7 * 86400;
    case 'd':
    case 'D':
      return n * 86400;
    case 'h':
    case 'H':
      return n * 3600;
    case 'm':
    case 'M':
      return n * 60;
    case 's':
    case 'S':
      return n;
    default:
      return std::nullopt;
  }
}

}  // namespace

core::Result<TorchBackend> TorchBackend::parse(std::string_view text) {
  if (text == "auto") return automatic();
  if (text == "cpu") return cpu();
  // cuXYZ: the label PyTorch's indexes use, read as a version's local label is.
  if (text.size() >= 5 && text.size() <= 6 && text.starts_with("cu") &&
      core::all_digits(text.substr(2))) {
    auto v = core::Version::parse(fmt::format("0+{}", text));
    if (v) {
      auto build = gpu::classify_build(*v);
      if (build.kind == gpu::BuildKind::Cuda && build.cuda) return cuda(*build.cuda);
    }
  }
  return core::invalid_option("torch-backend", text, "auto, cpu or cuXYZ (e.g. cu124)");
}

std::string TorchBackend::to_string() const {
  switch (kind_) {
    case Kind::Auto:
      return "auto";
    case Kind::Cpu:
      return "cpu";
    case Kind::Cuda:
      break;
  }
  return cuda_ ? gpu::variant_name(*cuda_) : std::string("auto");
}

core::Result<ExcludeNewer> ExcludeNewer::parse(std::string_view text) {
  auto bad = [&] {
    return core::invalid_option(
        "exclude-newer", text,
        "a date (2025-06-01), a timestamp (2025-06-01T12:00:00Z) or a duration (7d, 12h, P7D)");
  };
  ExcludeNewer out;
  out.text_ = std::string(text);
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    auto t = index::parse_timestamp(fmt::format("{}T00:00:00Z", text));
    if (!t) return bad();
    out.micros_ = *t;
    return out;
  }
  if (auto t = index::parse_timestamp(text)) {
    out.micros_ = *t;
    return out;
  }
  if (auto seconds = duration_seconds(text)) {
    out.relative_ = true;
    out.micros_ = *seconds * 1'000'000;
    return out;
  }
  return bad();
}

}  // namespace gpulock::app

#include "gpulock/gpu/cuda_versions.h"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "number.h"

namespace gpulock::gpu {
namespace {

using detail::parse_number;

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

// Source: NVIDIA CUDA Toolkit Release Notes, Table 3 (Linux x86_64 minimum driver of each
// toolkit's first release), via shared/data/pytorch-gpu-wheels.json
// `cuda_drivers.toolkit_min_driver`. Only the first release of each minor matters for the
// ceiling: a driver at or above it runs that minor natively.
constexpr std::array kTable{
    CudaDriverRow{{11, 0}, "11.0.1 RC", "450.36.06"},
    CudaDriverRow{{11, 1}, "11.1 GA", "455.23"},
    CudaDriverRow{{11, 2}, "11.2.0 GA", "460.27.03"},
    CudaDriverRow{{11, 3}, "11.3.0 GA", "465.19.01"},
    CudaDriverRow{{11, 4}, "11.4.0 GA", "470.42.01"},
    CudaDriverRow{{11, 5}, "11.5 GA", "495.29.05"},
    CudaDriverRow{{11, 6}, "11.6 GA", "510.39.01"},
    CudaDriverRow{{11, 7}, "11.7 GA", "515.43.04"},
    CudaDriverRow{{11, 8}, "11.8 GA", "520.61.05"},
    CudaDriverRow{{12, 0}, "12.0 GA", "525.60.13"},
    CudaDriverRow{{12, 1}, "12.1 GA", "530.30.02"},
    CudaDriverRow{{12, 2}, "12.2 GA", "535.54.03"},
    CudaDriverRow{{12, 3}, "12.3 GA", "545.23.06"},
    CudaDriverRow{{12, 4}, "12.4 GA", "550.54.14"},
    CudaDriverRow{{12, 5}, "12.5 GA", "555.42.02"},
    CudaDriverRow{{12, 6}, "12.6 GA", "560.28.03"},
    CudaDriverRow{{12, 8}, "12.8 GA", "570.26"},
    CudaDriverRow{{12, 9}, "12.9 GA", "575.51.03"},
    CudaDriverRow{{13, 0}, "13.0 GA", "580.65.06"},
    CudaDriverRow{{13, 1}, "13.1 GA", "590.44.01"},
    CudaDriverRow{{13, 2}, "13.2 GA", "595.45.04"},
};

// Source: NVIDIA CUDA Toolkit Release Notes, Table 2 (minor version compatibility), Linux,
// cross-checked with uv's table (`cuda_drivers.minor_version_compatibility`).
struct MinorFloor {
  std::uint32_t major;
  std::string_view min_driver;
};
constexpr std::array kMinorFloors{
    MinorFloor{11, "450.80.02"},
    MinorFloor{12, "525.60.13"},
    MinorFloor{13, "580"},
};

DriverVersion must_parse(std::string_view text) {
  // The tables above are constants checked by the unit tests; a failure here is a bug.
  auto v = DriverVersion::parse(text);
  return v ? *v : DriverVersion{};
}

}  // namespace

core::Result<DriverVersion> DriverVersion::parse(std::string_view text) {
  DriverVersion v;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && is_digit(text[i])) continue;
    if (i < text.size() && text[i] != '.') {
      return core::fail(core::ErrorCode::InvalidInput,
                        fmt::format("invalid driver version {}: expected numbers separated by dots "
                                    "like 550.54.14",
                                    core::quote_for_message(text)),
                        i + 1);
    }
    auto part = parse_number(text.substr(start, i - start));
    if (!part) {
      return core::fail(core::ErrorCode::InvalidInput,
                        fmt::format("invalid driver version {}: expected numbers separated by dots "
                                    "like 550.54.14",
                                    core::quote_for_message(text)),
                        i + 1);
    }
    v.parts_.push_back(*part);
    start = i + 1;
  }
  if (v.parts_.size() > 4) {
    return core::fail(
        core::ErrorCode::InvalidInput,
        fmt::format("invalid driver version {}: more than 4 parts", core::quote_for_message(text)));
  }
  v.text_ = std::string(text);
  return v;
}

std::strong_ordering operator<=>(const DriverVersion& a, const DriverVersion& b) noexcept {
  std::size_t n = std::max(a.parts_.size(), b.parts_.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t x = i < a.parts_.size() ? a.parts_[i] : 0;
    std::uint32_t y = i < b.parts_.size() ? b.parts_[i] : 0;
    if (x != y) return x <=> y;
  }
  return std::strong_ordering::equal;
}

bool operator==(const DriverVersion& a, const DriverVersion& b) noexcept {
  return (a <=> b) == std::strong_ordering::equal;
}

core::Result<CudaVersion> CudaVersion::parse(std::string_view text) {
  auto bad = [&] {
    return core::fail(core::ErrorCode::InvalidInput,
                      fmt::format("invalid CUDA version {}: expected major.minor like 12.4",
                                  core::quote_for_message(text)));
  };
  std::size_t dot = text.find('.');
  auto major = parse_number(text.substr(0, dot));
  if (!major || *major == 0 || *major > 99) return bad();
  std::uint32_t minor = 0;
  if (dot != std::string_view::npos) {
    std::string_view rest = text.substr(dot + 1);
    std::size_t dot2 = rest.find('.');
    auto m = parse_number(rest.substr(0, dot2));
    if (!m || *m > 9) return bad();
    if (dot2 != std::string_view::npos && !parse_number(rest.substr(dot2 + 1))) return bad();
    minor = *m;
  }
  return CudaVersion{*major, minor};
}

std::optional<CudaVersion> CudaVersion::from_driver_api(int encoded) noexcept {
  if (encoded < 1000 || encoded > 99990) return std::nullopt;
  auto v = static_cast<std::uint32_t>(encoded);
  return CudaVersion{v / 1000, (v % 1000) / 10};
}

std::string CudaVersion::to_string() const {
  return fmt::format("{}.{}", major, minor);
}

core::Result<ComputeCapability> ComputeCapability::parse(std::string_view text) {
  auto bad = [&] {
    return core::fail(core::ErrorCode::InvalidInput,
                      fmt::format("invalid GPU architecture {}: expected sm_XY like sm_86 or a "
                                  "compute capability like 8.6",
                                  core::quote_for_message(text)));
  };
  if (text.starts_with("sm_")) {
    std::string_view digits = text.substr(3);
    if (digits.size() < 2 || digits.size() > 3) return bad();
    auto major = parse_number(digits.substr(0, digits.size() - 1));
    auto minor = parse_number(digits.substr(digits.size() - 1));
    if (!major || !minor || *major == 0) return bad();
    return ComputeCapability{*major, *minor};
  }
  std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return bad();
  auto major = parse_number(text.substr(0, dot));
  auto minor = parse_number(text.substr(dot + 1));
  if (!major || !minor || *major == 0 || *major > 99 || *minor > 9) return bad();
  return ComputeCapability{*major, *minor};
}

std::string ComputeCapability::to_string() const {
  return fmt::format("sm_{}{}", major, minor);
}

std::string ComputeCapability::dotted() const {
  return fmt::format("{}.{}", major, minor);
}

std::span<const CudaDriverRow> cuda_driver_table() noexcept {
  return kTable;
}

std::string_view cuda_driver_table_source() noexcept {
  return "NVIDIA CUDA Toolkit Release Notes, Table 3 (toolkit GA minimum Linux drivers) and "
         "Table 2 (minor version compatibility), via data/pytorch-gpu-wheels.json cuda_drivers";
}

std::optional<CudaVersion> cuda_ceiling_for_driver(const DriverVersion& driver) {
  // A bare branch ("550") means that branch's drivers: its ceiling is the newest CUDA whose
  // first driver is on that branch or older (R550 -> 12.4, not 12.3 for "550.0").
  bool branch_only = driver.parts().size() == 1;
  std::optional<CudaVersion> best;
  for (const auto& row : kTable) {
    auto min = must_parse(row.min_driver);
    if (branch_only ? min.branch() <= driver.branch() : min <= driver) best = row.cuda;
  }
  return best;
}

std::optional<DriverVersion> newest_driver_in_table() {
  return must_parse(kTable.back().min_driver);
}

std::optional<DriverVersion> minor_compat_floor(std::uint32_t cuda_major) {
  for (const auto& f : kMinorFloors) {
    if (f.major == cuda_major) return must_parse(f.min_driver);
  }
  return std::nullopt;
}

std::optional<DriverVersion> min_driver_for_cuda(CudaVersion cuda, CudaCompat compat) {
  std::optional<DriverVersion> strict;
  for (const auto& row : kTable) {
    if (row.cuda.major == cuda.major && row.cuda >= cuda) {
      strict = must_parse(row.min_driver);
      break;
    }
  }
  if (compat == CudaCompat::Strict) return strict;
  auto floor = minor_compat_floor(cuda.major);
  if (!floor) return strict;
  if (!strict) return floor;
  return std::min(*floor, *strict);
}

bool ceiling_allows(CudaVersion ceiling, CudaVersion needed, CudaCompat compat) noexcept {
  if (compat == CudaCompat::Strict) return needed <= ceiling;
  return needed.major <= ceiling.major;
}

core::Result<CudaCompat> parse_cuda_compat(std::string_view text) {
  if (text == "strict") return CudaCompat::Strict;
  if (text == "minor") return CudaCompat::Minor;
  return core::fail(core::ErrorCode::Usage,
                    fmt::format("invalid --cuda-compat {}: expected strict or minor",
                                core::quote_for_message(text)));
}

std::string_view cuda_compat_name(CudaCompat compat) noexcept {
  return compat == CudaCompat::Minor ? "minor" : "strict";
}

core::Result<DriverSpec> DriverSpec::parse(std::string_view text) {
  std::string_view t = core::trim(text, " \t");
  if (t.empty() || t == "auto") return DriverSpec();
  if (t == "none") return none();
  auto v = DriverVersion::parse(t);
  if (!v) {
    core::Error e = core::make_error(
        core::ErrorCode::Usage, fmt::format("invalid value for --driver: {}", v.error().message));
    return std::unexpected(
        e.with_hint("give a driver version like 550.54.14, or 'none' for no GPU"));
  }
  return of(std::move(*v));
}

std::string DriverSpec::to_string() const {
  switch (kind_) {
    case Kind::Auto:
      return "auto";
    case Kind::None:
      return "none";
    case Kind::Version:
      break;
  }
  return version_ ? version_->to_string() : std::string("auto");
}

}  // namespace gpulock::gpu

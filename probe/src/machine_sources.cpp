#include "machine_sources.h"

#include <fmt/format.h>

#include "gpulock/core/text.h"
#include "gpulock/gpu/inventory.h"

namespace gpulock::probe::detail {
namespace {

// Spaces, tabs and line ends around a value read from a file or a program's output.
constexpr std::string_view kSpace = " \t\r\n";

std::optional<gpu::DriverVersion> driver_token(std::string_view token) {
  if (token.find('.') == std::string_view::npos) return std::nullopt;
  auto v = gpu::DriverVersion::parse(token);
  if (!v) return std::nullopt;
  return *v;
}

}  // namespace

std::string first_line(std::string_view text) {
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = core::trim(text.substr(0, nl), kSpace);
    if (!line.empty()) return std::string(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return {};
}

std::optional<gpu::DriverVersion> parse_sysfs_version(std::string_view content) {
  std::string_view v = core::trim(content, kSpace);
  if (v.empty()) return std::nullopt;
  auto parsed = gpu::DriverVersion::parse(v);
  if (!parsed) return std::nullopt;
  return *parsed;
}

std::optional<gpu::DriverVersion> parse_procfs_version(std::string_view content) {
  // The first line only, read by fleet's reader (gpu/inventory.h): a Jetson's L4T release
  // ("35.3.1") is not a driver version.
  auto module = gpu::read_proc_module(content.substr(0, content.find('\n')));
  if (!module) return std::nullopt;
  return module->driver;
}

std::optional<gpu::DriverVersion> version_from_library_file(std::string_view path) {
  std::string_view name =
      path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  std::size_t so = name.find(".so.");
  if (so == std::string_view::npos) return std::nullopt;
  return driver_token(name.substr(so + 4));
}

core::Result<std::vector<SmiGpu>> parse_nvidia_smi(std::string_view output, bool with_compute_cap) {
  // fleet's reader of the same CSV (gpu/inventory.h), given the query's columns; the probe
  // asked for exactly these, so anything else in the output is refused, not skipped.
  static const std::vector<std::string_view> kWithCc = {"driver_version", "name", "compute_cap",
                                                        "uuid"};
  static const std::vector<std::string_view> kWithoutCc = {"driver_version", "name", "uuid"};
  auto bad = [](std::string_view line) {
    return core::fail(core::ErrorCode::InvalidInput,
                      fmt::format("unexpected nvidia-smi output {}",
                                  core::quote_for_message(core::trim(line, kSpace), 60)));
  };
  const gpu::SmiCsv csv = gpu::read_smi_csv_rows(output, with_compute_cap ? kWithCc : kWithoutCc);
  if (!csv.other_lines.empty()) return bad(csv.other_lines.front().second);
  std::vector<SmiGpu> gpus;
  for (const auto& row : csv.rows) {
    auto driver = gpu::DriverVersion::parse(row.driver);
    if (!driver || row.name.empty() || row.uuid.empty()) return bad(row.text);
    SmiGpu gpu{*driver, row.name, std::nullopt, row.uuid == "[N/A]" ? std::string() : row.uuid};
    if (with_compute_cap && row.cc != "[N/A]") {
      auto parsed = gpu::ComputeCapability::parse(row.cc);
      if (!parsed || row.cc.find('.') == std::string::npos) return bad(row.text);
      gpu.compute_capability = *parsed;
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace gpulock::probe::detail

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
  std::vector<SmiGpu> gpus;
  std::string_view rest = output;
  while (!rest.empty()) {
    std::size_t nl = rest.find('\n');
    std::string_view line = core::trim(rest.substr(0, nl), kSpace);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (line.empty()) continue;
    auto bad = [&] {
      return core::fail(
          core::ErrorCode::InvalidInput,
          fmt::format("unexpected nvidia-smi output {}", core::quote_for_message(line, 60)));
    };
    std::vector<std::string_view> fields;
    for (std::string_view l = line;;) {
      std::size_t comma = l.find(',');
      fields.push_back(core::trim(l.substr(0, comma), kSpace));
      if (comma == std::string_view::npos) break;
      l.remove_prefix(comma + 1);
    }
    std::size_t fixed = with_compute_cap ? 3 : 2;  // driver, [cc,] uuid around the name
    if (fields.size() < fixed + 1) return bad();
    auto driver = gpu::DriverVersion::parse(fields.front());
    if (!driver) return bad();
    SmiGpu gpu{*driver, {}, std::nullopt, std::string(fields.back())};
    if (gpu.uuid.empty()) return bad();
    if (gpu.uuid == "[N/A]") gpu.uuid.clear();
    std::size_t name_end = fields.size() - (with_compute_cap ? 2 : 1);
    if (with_compute_cap) {
      std::string_view cc = fields[fields.size() - 2];
      if (cc != "[N/A]") {
        auto parsed = gpu::ComputeCapability::parse(cc);
        if (!parsed || cc.find('.') == std::string_view::npos) return bad();
        gpu.compute_capability = *parsed;
      }
    }
    for (std::size_t i = 1; i < name_end; ++i) {
      if (i > 1) gpu.name += ", ";
      gpu.name += fields[i];
    }
    if (gpu.name.empty()) return bad();
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace gpulock::probe::detail

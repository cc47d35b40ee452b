// The sub-libraries of one cuDNN version, from the cuDNN file table (gpu/wheel_rules.h; issue 41
// item 6) and from the files found. Pure.
#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "gpulock/core/version.h"
#include "gpulock/probe/cudnn.h"

namespace gpulock::probe {
namespace {

// The version of a `>=` clause ("9.21" of ">=9.21"), else "".
std::string lower_bound_of(std::string_view ships) {
  while (!ships.empty()) {
    auto comma = ships.find(',');
    std::string_view clause = ships.substr(0, comma);
    if (clause.starts_with(">=")) return std::string(clause.substr(2));
    if (comma == std::string_view::npos) break;
    ships.remove_prefix(comma + 1);
  }
  return {};
}

// "libcudnn_ops.so.9" -> "ops" when the major matches.
std::optional<std::string> sublibrary_of(std::string_view file, std::uint32_t major) {
  auto slash = file.rfind('/');
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  const std::string suffix = fmt::format(".so.{}", major);
  if (!file.starts_with("libcudnn_") || !file.ends_with(suffix)) return std::nullopt;
  std::string_view name = file.substr(9, file.size() - 9 - suffix.size());
  if (name.empty()) return std::nullopt;
  return std::string(name);
}

}  // namespace

std::vector<CudnnSublibrary> cudnn_sublibraries(const CudnnVersion& version,
                                                std::span<const std::string> record_files,
                                                std::span<const std::string> directory_files) {
  const gpu::CudnnFileTable& table = gpu::cudnn_file_table();
  std::vector<CudnnSublibrary> out;
  const std::string shim = fmt::format("libcudnn.so.{}", version.major);
  const std::string graph = fmt::format("libcudnn_graph.so.{}", version.major);
  auto parsed = core::Version::parse(version.to_string());
  for (const auto& row : table.rows) {
    if (row.major != version.major || !parsed) continue;
    bool ships = row.ships.contains(*parsed);
    bool looked_up = row.looked_up && row.looked_up->contains(*parsed);
    if (!ships && !looked_up) continue;
    out.push_back({row.name, fmt::format("libcudnn_{}.so.{}", row.name, version.major),
                   row.loaded_by == "cudnn" ? shim : graph, ships, lower_bound_of(row.ships_text),
                   table.sources_text(row.sources)});
  }
  auto add_files = [&](std::span<const std::string> files, bool recorded, const char* source) {
    for (const auto& file : files) {
      auto name = sublibrary_of(file, version.major);
      if (!name) continue;
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const CudnnSublibrary& s) { return s.name == *name; });
      if (it != out.end()) {
        if (recorded) it->required = true;  // the wheel ships it
        continue;
      }
      // Unknown to the table: engines and heuristics come from libcudnn_graph in cuDNN 9.
      bool from_graph =
          version.major >= 9 && (name->starts_with("engines_") || name->starts_with("heuristic"));
      out.push_back({*name, fmt::format("libcudnn_{}.so.{}", *name, version.major),
                     from_graph ? graph : shim, true, "", source});
    }
  };
  add_files(record_files, true, "the wheel's RECORD");
  add_files(directory_files, false, "the directory");
  return out;
}

}  // namespace gpulock::probe

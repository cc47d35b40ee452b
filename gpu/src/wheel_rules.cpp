// Wheel-content rules (wheel_rules.h): the cuDNN file table (gpu/data/cudnn_files.txt,
// compiled in, parsed once; issue 41 item 6) and the hazards a wheel's file list leaves
// against it (issue 44 item 2). Pure.
#include "gpulock/gpu/wheel_rules.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "table_sources.h"

namespace gpulock::gpu {

core::Result<CudnnFileTable> CudnnFileTable::parse(std::string_view text) {
  CudnnFileTable out;
  detail::TableSources sources;
  for (const auto& table_row : core::table_rows(text)) {
    const std::size_t line_no = table_row.line;
    const auto& w = table_row.words;
    auto bad = [&](std::string_view why) {
      return core::fail(core::ErrorCode::InvalidInput,
                        fmt::format("cudnn_files.txt line {}: {}", line_no, why));
    };
    if (sources.take(table_row, out.sources)) continue;
    if (w[0] != "sublibrary" || w.size() != 7) {
      return bad(
          "expected `sublibrary MAJOR NAME LOADED_BY SHIPS LOOKED_UP SOURCES` or "
          "`source KEY WHERE`");
    }
    Row row;
    auto [ptr, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), row.major);
    if (ec != std::errc() || ptr != w[1].data() + w[1].size()) return bad("expected a major");
    row.name = std::string(w[2]);
    row.loaded_by = std::string(w[3]);
    if (row.loaded_by != "cudnn" && row.loaded_by != "cudnn_graph") {
      return bad("LOADED_BY is cudnn or cudnn_graph");
    }
    auto ships = core::SpecifierSet::parse(w[4]);
    if (!ships) return bad(fmt::format("SHIPS: {}", ships.error().message));
    row.ships = std::move(*ships);
    row.ships_text = std::string(w[4]);
    if (w[5] != "-") {
      auto looked = core::SpecifierSet::parse(w[5]);
      if (!looked) return bad(fmt::format("LOOKED_UP: {}", looked.error().message));
      row.looked_up = std::move(*looked);
      row.looked_up_text = std::string(w[5]);
    }
    row.sources = sources.use(line_no, w[6]);
    out.rows.push_back(std::move(row));
  }
  if (auto checked = sources.check("cudnn_files.txt", out.sources); !checked)
    return std::unexpected(checked.error());
  return out;
}

const CudnnFileTable& cudnn_file_table() {
  static const CudnnFileTable kTable = [] {
    auto parsed = CudnnFileTable::parse(cudnn_files_text());
    // The compiled-in text is part of the build; the unit tests parse it.
    if (!parsed) std::abort();
    return std::move(*parsed);
  }();
  return kTable;
}

std::string CudnnFileTable::sources_text(const std::vector<std::string>& keys) const {
  std::string out;
  for (const auto& key : keys) {
    auto it =
        std::find_if(sources.begin(), sources.end(), [&](const auto& s) { return s.first == key; });
    if (!out.empty()) out += "; ";
    out += it == sources.end() ? key : fmt::format("{} {}", key, it->second);
  }
  return out;
}

std::string WheelHazard::text() const {
  if (release_ships) {
    return fmt::format(
        "ships no {}, which its release ships and its {} loads by name: an incomplete wheel, so "
        "another release's copy on the library path would be loaded "
        "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)",
        file, loaded_by);
  }
  return fmt::format(
      "ships no {}, which its {} loads by name: another release's copy on the library path "
      "would be loaded (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH at the first convolution)",
      file, loaded_by);
}

bool has_wheel_rules(std::string_view package) {
  constexpr std::string_view kPrefix = "nvidia-cudnn-cu";
  if (!package.starts_with(kPrefix) || package.size() == kPrefix.size()) return false;
  return std::all_of(package.begin() + static_cast<std::ptrdiff_t>(kPrefix.size()), package.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<WheelHazard> wheel_hazards(std::string_view package, const core::Version& version,
                                       std::span<const std::string> shared_libraries) {
  std::vector<WheelHazard> out;
  if (!has_wheel_rules(package) || version.release().empty()) return out;
  const auto major = static_cast<std::uint32_t>(version.release().front());
  auto ships_file = [&](const std::string& file) {
    return std::any_of(shared_libraries.begin(), shared_libraries.end(), [&](const auto& path) {
      auto slash = path.rfind('/');
      return std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1) == file;
    });
  };
  const std::string shim = fmt::format("libcudnn.so.{}", major);
  if (!ships_file(shim)) return out;
  // cuDNN's own version: the wheel's first three numbers (nvidia-cudnn-cu13 9.20.0.48 is 9.20.0).
  std::string text;
  for (std::size_t i = 0; i < version.release().size() && i < 3; ++i)
    text += (i ? "." : "") + std::to_string(version.release()[i]);
  auto cudnn = core::Version::parse(text);
  if (!cudnn) return out;
  const CudnnFileTable& table = cudnn_file_table();
  for (const auto& row : table.rows) {
    if (row.major != major) continue;
    const bool ships = row.ships.contains(*cudnn);
    const bool looked_up = row.looked_up && row.looked_up->contains(*cudnn);
    if (!ships && !looked_up) continue;
    std::string file = fmt::format("libcudnn_{}.so.{}", row.name, major);
    if (ships_file(file)) continue;
    out.push_back({std::move(file),
                   row.loaded_by == "cudnn" ? shim : fmt::format("libcudnn_graph.so.{}", major),
                   ships, table.sources_text(row.sources)});
  }
  return out;
}

}  // namespace gpulock::gpu

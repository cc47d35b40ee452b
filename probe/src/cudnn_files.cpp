// The cuDNN file table (issue 41 item 6): probe/data/cudnn_files.txt, compiled in, parsed once,
// and the sub-libraries of one cuDNN version from it and from the files found. Pure.
#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "gpulock/core/version.h"
#include "gpulock/probe/cudnn.h"

namespace gpulock::probe {
namespace {

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t')
      ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    if (comma != 0) out.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

// The version of a `>=` clause ("9.21" of ">=9.21"), else "".
std::string lower_bound_of(std::string_view ships) {
  for (const auto& clause : split_commas(ships)) {
    if (clause.starts_with(">=")) return clause.substr(2);
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

std::string sources_text(const CudnnFileTable& table, const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& key : keys) {
    auto it = std::find_if(table.sources.begin(), table.sources.end(),
                           [&](const auto& s) { return s.first == key; });
    if (!out.empty()) out += "; ";
    out += it == table.sources.end() ? key : fmt::format("{} {}", key, it->second);
  }
  return out;
}

}  // namespace

core::Result<CudnnFileTable> CudnnFileTable::parse(std::string_view text) {
  CudnnFileTable out;
  std::vector<std::pair<std::size_t, std::string>> used;  // line, source key
  std::size_t line_no = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto w = words_of(line);
    if (w.empty()) continue;
    auto bad = [&](std::string_view why) {
      return core::fail(core::ErrorCode::InvalidInput,
                        fmt::format("cudnn_files.txt line {}: {}", line_no, why));
    };
    if (w[0] == "source" && w.size() >= 3) {
      const auto* end = w.back().data() + w.back().size();
      out.sources.emplace_back(std::string(w[1]), std::string(w[2].data(), end));
      continue;
    }
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
    row.sources = split_commas(w[6]);
    for (const auto& key : row.sources)
      used.emplace_back(line_no, key);
    out.rows.push_back(std::move(row));
  }
  for (const auto& use : used) {
    // (Not a structured binding: clang 14 cannot capture one in a lambda.)
    const std::string& key = use.second;
    bool defined = std::any_of(out.sources.begin(), out.sources.end(),
                               [&](const auto& s) { return s.first == key; });
    if (!defined) {
      return core::fail(
          core::ErrorCode::InvalidInput,
          fmt::format("cudnn_files.txt line {}: source {} has no `source` row", use.first, key));
    }
  }
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

std::vector<CudnnSublibrary> cudnn_sublibraries(const CudnnVersion& version,
                                                std::span<const std::string> record_files,
                                                std::span<const std::string> directory_files) {
  const CudnnFileTable& table = cudnn_file_table();
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
                   sources_text(table, row.sources)});
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

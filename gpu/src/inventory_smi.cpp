// nvidia-smi's own outputs (shared/data/inventory-formats.md, sections 1, 2, 4, 5, 10 and 13):
// the default table in the layouts of drivers 450 to 610, `--query-gpu` CSV and `-L`.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "inventory_internal.h"

namespace gpulock::gpu::inventory_detail {
namespace {

// The token after `key` in `line` (up to a space or '|', at most kMaxField), else empty.
std::string value_after(std::string_view line, std::string_view key) {
  return std::string(token_after(line, key, " \t|").substr(0, kMaxField));
}

std::vector<std::string_view> cells_of(std::string_view line) {
  std::vector<std::string_view> cells;
  auto t = core::trim(line);
  if (!t.starts_with('|')) return cells;
  t.remove_prefix(1);
  while (!t.empty() && cells.size() < 16) {
    auto bar = t.find('|');
    if (bar == std::string_view::npos) break;  // a cell not closed: the line is cut
    cells.push_back(t.substr(0, bar));
    t.remove_prefix(bar + 1);
  }
  return cells;
}

// `|   0  NVIDIA A100-SXM4-80GB   On  | 00000000:07:00.0 Off |   0 |`: the GPU's name.
std::optional<std::string> gpu_row_name(std::string_view line) {
  auto cells = cells_of(line);
  if (cells.size() < 3) return std::nullopt;
  auto first = core::trim(cells[0]);
  std::size_t digits = 0;
  while (digits < first.size() && first[digits] >= '0' && first[digits] <= '9')
    ++digits;
  if (digits == 0 || digits > 3 || digits == first.size() || first[digits] != ' ')
    return std::nullopt;
  auto bus = core::trim(cells[1]);
  if (bus.find(':') == std::string_view::npos && !bus.starts_with("N/A")) return std::nullopt;
  auto name = core::trim(first.substr(digits));
  for (std::string_view p : {"On", "Off", "N/A"}) {
    if (name.size() > p.size() && name.ends_with(p) && (name[name.size() - p.size() - 1] == ' ')) {
      name = core::trim(name.substr(0, name.size() - p.size()));
      break;
    }
  }
  if (name.empty() ||
      (name[0] >= '0' && name[0] <= '9' && name.find(' ') != std::string_view::npos))
    return std::nullopt;
  return std::string(name.substr(0, kMaxField));
}

// `user@node-a:~$ nvidia-smi`: the host a prompt names, else empty.
std::string prompt_host(std::string_view line) {
  auto at = line.find('@');
  if (at == std::string_view::npos || line.find("nvidia-smi") == std::string_view::npos) return {};
  auto rest = line.substr(at + 1);
  auto end = rest.find_first_of(":~$#] \t");
  if (end == 0 || end == std::string_view::npos) return {};
  return std::string(rest.substr(0, std::min(end, std::size_t{253})));
}

std::string host_name(std::string_view stem, std::size_t index, std::string prompt) {
  if (!prompt.empty()) return prompt;
  return index == 0 ? std::string(stem) : fmt::format("{}#{}", stem, index + 1);
}

// The fields of a CSV line, trimmed; a field in double quotes may hold commas (`""` is a quote).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  while (fields.size() < 64) {
    auto lead = core::trim_left(line);
    if (lead.starts_with('"')) {
      std::string value;
      std::size_t i = 1;
      for (; i < lead.size(); ++i) {
        if (lead[i] != '"') {
          value.push_back(lead[i]);
        } else if (i + 1 < lead.size() && lead[i + 1] == '"') {
          value.push_back('"');
          ++i;
        } else {
          break;
        }
      }
      auto after = lead.substr(std::min(i + 1, lead.size()));
      auto comma = after.find(',');
      if (i < lead.size() && core::trim(after.substr(0, comma)).empty()) {
        fields.emplace_back(value.substr(0, kMaxField));
        if (comma == std::string_view::npos) break;
        line = after.substr(comma + 1);
        continue;
      }
      // No closing quote, or text after it: read as it stands.
    }
    auto comma = line.find(',');
    auto f = core::trim(line.substr(0, comma));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    fields.emplace_back(f.substr(0, kMaxField));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return fields;
}

// A header field's key: lowercased, units ("memory.total [MiB]") dropped.
std::string header_key(std::string_view field) {
  auto bracket = field.find('[');
  auto t = core::trim(field.substr(0, bracket));
  std::string key;
  for (char c : t)
    key.push_back(core::ascii_lower(c));
  return key;
}

// A value without "[N/A]" and units ("12288 MiB" stays as is; only N/A forms are dropped).
std::string csv_value(std::string_view v) {
  v = core::trim(v);
  if (v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "[Unknown Error]") return {};
  return std::string(v);
}

bool is_driver_text(std::string_view f) {
  auto v = leading_version(f);
  if (v.size() != f.size() || f.find('.') == std::string_view::npos) return false;
  auto d = DriverVersion::parse(f);
  return d && d->branch() >= 100;
}

bool is_cc_text(std::string_view f) {
  if (f.size() < 3 || f.size() > 4 || f.find('.') == std::string_view::npos) return false;
  auto c = ComputeCapability::parse(f);
  return c && c->major < 30;
}

struct Columns {
  int name = -1, driver = -1, cc = -1, host = -1, uuid = -1;
  std::size_t count = 0;  ///< the fields of a row
};

template <class Fields>
Columns columns_of_header(const Fields& fields) {
  Columns c;
  c.count = fields.size();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    auto k = header_key(fields[i]);
    const int idx = static_cast<int>(i);
    if (k == "name" || k == "gpu_name")
      c.name = idx;
    else if (k == "driver_version")
      c.driver = idx;
    else if (k == "compute_cap")
      c.cc = idx;
    else if (k == "host" || k == "hostname" || k == "node" || k == "nodename")
      c.host = idx;
    else if (k == "uuid" || k == "gpu_uuid")
      c.uuid = idx;
  }
  return c;
}

// A row without a header: which field is which, from the values.
Columns columns_of_row(const std::vector<std::string>& fields) {
  Columns c;
  c.count = fields.size();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    const int idx = static_cast<int>(i);
    if (c.driver < 0 && is_driver_text(f))
      c.driver = idx;
    else if (c.cc < 0 && is_cc_text(f))
      c.cc = idx;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    const int idx = static_cast<int>(i);
    if (idx == c.driver || idx == c.cc || f.empty()) continue;
    const bool letters = std::any_of(f.begin(), f.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    });
    if (c.uuid < 0 && (f.starts_with("GPU-") || f.starts_with("MIG-"))) {
      c.uuid = idx;
      continue;
    }
    if (!letters || f.ends_with("MiB") || f.ends_with(" W") || f.starts_with("0000")) continue;
    const bool gpu_like = compute_capability_of_name(f).has_value() || f.starts_with("NVIDIA") ||
                          f.starts_with("Tesla") || f.starts_with("Quadro") ||
                          f.starts_with("Graphics");
    if (c.name < 0 && gpu_like)
      c.name = idx;
    else if (c.host < 0 && i == 0)
      c.host = idx;
  }
  return c;
}

std::string field_at(const std::vector<std::string>& fields, int i) {
  if (i < 0 || static_cast<std::size_t>(i) >= fields.size()) return {};
  return fields[static_cast<std::size_t>(i)];
}

}  // namespace

std::vector<RawHost> read_smi_table(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  std::string prompt;
  bool no_devices = false;
  for (const auto& line : split_lines(text)) {
    if (auto p = prompt_host(line.text); !p.empty()) prompt = std::move(p);
    if (line.text.find("No devices were found") != std::string_view::npos) no_devices = true;
    const bool header = line.text.find("NVIDIA-SMI") != std::string_view::npos &&
                        (line.text.find("Driver Version:") != std::string_view::npos ||
                         line.text.find("KMD Version:") != std::string_view::npos);
    if (header && hosts.size() < kMaxHosts) {
      RawHost h;
      h.name = host_name(stem, hosts.size(), std::exchange(prompt, {}));
      h.line = line.number;
      h.smi_version = std::string(
          leading_version(core::trim_left(line.text.substr(line.text.find("NVIDIA-SMI") + 10))));
      h.driver = value_after(line.text, "Driver Version:");
      if (h.driver.empty()) h.driver = value_after(line.text, "KMD Version:");
      if (line.text.find("CUDA UMD Version:") != std::string_view::npos) {
        h.ceiling = value_after(line.text, "CUDA UMD Version:");
        h.ceiling_from = "CUDA UMD Version";
      } else {
        h.ceiling = value_after(line.text, "CUDA Version:");
        h.ceiling_from = "CUDA Version";
      }
      hosts.push_back(std::move(h));
      continue;
    }
    if (auto name = gpu_row_name(line.text)) {
      if (hosts.empty()) {
        RawHost h;
        h.name = host_name(stem, 0, std::exchange(prompt, {}));
        h.line = line.number;
        h.unknown.emplace_back("driver version (the text starts below the table's header)");
        h.unknown.emplace_back("CUDA ceiling (the text starts below the table's header)");
        hosts.push_back(std::move(h));
      }
      auto& h = hosts.back();
      if (h.gpus.size() < kMaxGpusPerHost) h.gpus.push_back({std::move(*name), {}, false});
      h.gpus_listed = true;
      continue;
    }
    auto cells = cells_of(line.text);
    if (!hosts.empty() && !hosts.back().gpus.empty() && cells.size() >= 3 &&
        core::trim(cells.back()) == "Enabled")
      hosts.back().gpus.back().mig = true;
  }
  for (auto& h : hosts) {
    if (!h.gpus.empty()) continue;
    if (no_devices) {
      h.gpus_listed = true;
      h.warnings.emplace_back("nvidia-smi found no devices");
    } else {
      h.warnings.emplace_back("the table stops before its GPU rows (cut off)");
    }
  }
  return hosts;
}

std::vector<RawHost> read_smi_csv(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  std::unordered_map<std::string, std::size_t> index;  // host name -> its place in hosts
  for (const auto& row : read_smi_csv_rows(text).rows) {
    const std::string driver = csv_value(row.driver);
    const std::string cc = csv_value(row.cc);
    const std::string name = csv_value(row.name);
    if (driver.empty() && cc.empty() && name.empty()) continue;
    if (!driver.empty() && !is_driver_text(driver)) continue;
    std::string host = csv_value(row.host);
    if (host.empty()) host = std::string(stem);
    auto found = index.find(host);
    if (found == index.end()) {
      if (hosts.size() >= kMaxHosts) continue;
      RawHost h;
      h.name = host;
      h.line = row.line;
      h.gpus_listed = true;
      hosts.push_back(std::move(h));
      found = index.emplace(host, hosts.size() - 1).first;
    }
    auto it = hosts.begin() + static_cast<std::ptrdiff_t>(found->second);
    if (it->driver.empty()) it->driver = driver;
    if (!driver.empty() && driver != it->driver)
      it->warnings.push_back(
          fmt::format("rows disagree on the driver ({} and {})", it->driver, driver));
    if (it->gpus.size() < kMaxGpusPerHost)
      it->gpus.push_back({name.empty() ? std::string("(unnamed GPU)") : name, cc, false});
  }
  return hosts;
}

std::vector<RawHost> read_smi_list(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  RawHost h;
  h.name = std::string(stem);
  h.gpus_listed = true;
  h.unknown.emplace_back("driver version (nvidia-smi -L names GPUs only)");
  h.unknown.emplace_back("CUDA ceiling (nvidia-smi -L names GPUs only)");
  for (const auto& line : split_lines(text)) {
    auto t = core::trim(line.text);
    if (t.starts_with("MIG ") && !h.gpus.empty()) {
      h.gpus.back().mig = true;
      continue;
    }
    if (!t.starts_with("GPU ")) continue;
    auto colon = t.find(": ");
    auto uuid = t.find(" (UUID:");
    if (colon == std::string_view::npos) continue;
    if (h.line == 0) h.line = line.number;
    auto name = core::trim(t.substr(
        colon + 2, uuid == std::string_view::npos ? std::string_view::npos : uuid - colon - 2));
    if (h.gpus.size() < kMaxGpusPerHost)
      h.gpus.push_back({std::string(name.substr(0, kMaxField)), {}, false});
  }
  if (!h.gpus.empty()) hosts.push_back(std::move(h));
  return hosts;
}

}  // namespace gpulock::gpu::inventory_detail

namespace gpulock::gpu {

SmiCsv read_smi_csv_rows(std::string_view text, const std::vector<std::string_view>& columns) {
  using namespace inventory_detail;
  SmiCsv out;
  // A bound on what is kept of lines that are not rows: the caller needs the first, not all.
  constexpr std::size_t kMaxOther = 64;
  std::optional<Columns> header;
  if (!columns.empty()) header = columns_of_header(columns);
  for (const auto& line : split_lines(text)) {
    if (core::trim(line.text).empty()) continue;
    auto other = [&] {
      if (out.other_lines.size() < kMaxOther) out.other_lines.emplace_back(line.number, line.text);
    };
    // The command line, a prompt or a comment around the output, or a line of another text.
    const auto lead = core::trim_left(line.text);
    if (line.text.find(',') == std::string_view::npos || lead.starts_with('#') ||
        lead.starts_with('$') || line.text.find("--query-gpu") != std::string_view::npos) {
      other();
      continue;
    }
    auto fields = csv_fields(line.text);
    if (!header) {
      auto c = columns_of_header(fields);
      if (c.name >= 0 || c.driver >= 0 || c.cc >= 0) {
        header = c;
        continue;
      }
    }
    const Columns c = header ? *header : columns_of_row(fields);
    if (fields.size() < c.count || (fields.size() > c.count && c.name < 0)) {
      other();  // another text's line, or a row cut off
      continue;
    }
    if (fields.size() > c.count) {  // a name with commas in it
      const auto first = static_cast<std::size_t>(c.name);
      const std::size_t extra = fields.size() - c.count;
      for (std::size_t k = 1; k <= extra; ++k)
        fields[first] += ", " + fields[first + k];
      fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(first + 1),
                   fields.begin() + static_cast<std::ptrdiff_t>(first + 1 + extra));
    }
    out.rows.push_back(SmiCsvRow{line.text, line.number, field_at(fields, c.host),
                                 field_at(fields, c.driver), field_at(fields, c.name),
                                 field_at(fields, c.cc), field_at(fields, c.uuid)});
  }
  return out;
}

}  // namespace gpulock::gpu

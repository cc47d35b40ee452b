// Inventories (gpu/inventory.h, issue 45): format names and detection, the dispatch to each
// reader, and finish_host, which every reader's hosts go through (driver, ceiling read or
// derived, compute capabilities, the facts read, derived and unknown).
#include "gpulock/gpu/inventory.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "inventory_internal.h"

namespace gpulock::gpu {
using namespace inventory_detail;

namespace {

struct FormatName {
  InventoryFormat format;
  std::string_view name;
};
constexpr std::array kFormatNames{
    FormatName{InventoryFormat::Auto, "auto"},
    FormatName{InventoryFormat::KubectlJson, "kubectl-json"},
    FormatName{InventoryFormat::SmiTable, "nvidia-smi"},
    FormatName{InventoryFormat::SmiCsv, "csv"},
    FormatName{InventoryFormat::Proc, "proc"},
    FormatName{InventoryFormat::SmiXml, "xml"},
    FormatName{InventoryFormat::SmiList, "nvidia-smi-L"},
    FormatName{InventoryFormat::KubectlDescribe, "kubectl-describe"},
    FormatName{InventoryFormat::ProbeJson, "probe-json"},
    FormatName{InventoryFormat::SmiQuery, "nvidia-smi-q"},
    FormatName{InventoryFormat::CollectEnv, "collect-env"},
    FormatName{InventoryFormat::Slurm, "slurm"},
};

// The CUDA ceilings of branches newer than cuda_versions.cpp's table (which stops at 13.2,
// R595): from shared/data/inventory-formats.md, "Driver branch to CUDA ceiling" (R610 13.3,
// read from the R610 header `CUDA UMD Version: 13.3`).
struct BranchCeiling {
  std::uint32_t branch;
  CudaVersion cuda;
};
constexpr std::array kBranchesAfterTable{BranchCeiling{610, {13, 3}}};

bool is_yaml(std::string_view text) {
  for (const auto& line : split_lines(text.substr(0, std::min<std::size_t>(text.size(), 65536)))) {
    if (line.text.starts_with("apiVersion:") || line.text.starts_with("kind: List") ||
        line.text.starts_with("kind: Node") || line.text.starts_with("- apiVersion:"))
      return true;
  }
  return false;
}

bool looks_like_list(std::string_view text) {
  for (const auto& line : split_lines(text)) {
    auto t = core::trim(line.text);
    if (t.starts_with("GPU ") && t.find(": ") != std::string_view::npos &&
        t.find("(UUID: ") != std::string_view::npos)
      return true;
  }
  return false;
}

bool looks_like_csv(std::string_view text) {
  for (const auto& line : split_lines(text)) {
    if (line.text.find(',') == std::string_view::npos) continue;
    if (icontains(line.text, "driver_version") || icontains(line.text, "compute_cap") ||
        icontains(line.text, "name,") || icontains(line.text, "name ,"))
      return true;
    // A row without a header: some field is a driver version.
    std::string_view rest = line.text;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      auto field = core::trim(rest.substr(0, comma));
      if (!leading_version(field).empty() && leading_version(field).size() == field.size() &&
          field.find('.') != std::string_view::npos && field.size() >= 5)
        return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return false;
}

// Adds `what` to the host's unknown facts unless a reader named it already (with its reason).
void add_unknown(InventoryHost& h, std::string_view what) {
  for (const auto& u : h.unknown)
    if (u.starts_with(what)) return;
  h.unknown.emplace_back(what);
}

std::string_view short_text(std::string_view s) {
  return s.substr(0, std::min<std::size_t>(s.size(), 80));
}

void finish_driver(const RawHost& raw, InventoryHost& h,
                   std::optional<DriverVersion>& derive_from) {
  if (!raw.l4t.empty()) {
    h.l4t = raw.l4t;
    h.read.push_back(fmt::format("Jetson L4T release {} (not a driver version)", raw.l4t));
    h.unknown.emplace_back("driver version (Jetson: /proc shows the L4T release)");
    return;
  }
  std::optional<DriverVersion> driver;
  if (!raw.driver.empty()) {
    if (auto v = DriverVersion::parse(raw.driver)) {
      driver = *v;
    } else {
      h.unknown.push_back(fmt::format("driver version (reads '{}')", short_text(raw.driver)));
    }
  } else {
    add_unknown(h, "driver version");
  }
  const bool smi_differs = !raw.smi_version.empty() && raw.smi_version != raw.driver;
  if (driver && (raw.wsl || smi_differs)) {
    h.wsl = true;
    h.read.push_back(
        smi_differs
            ? fmt::format("Windows driver {} (WSL; NVIDIA-SMI {} is the Linux user-mode version)",
                          driver->to_string(), raw.smi_version)
            : fmt::format("Windows driver {} (WSL)", driver->to_string()));
    h.warnings.emplace_back(
        "WSL: the driver is the Windows driver; the fit uses the CUDA ceiling, not "
        "Linux driver minimums");
    // Windows drivers are numbered on the Linux branches (R550: 551.xx).
    derive_from = driver;
    if (auto umd = DriverVersion::parse(raw.smi_version)) derive_from = *umd;
    return;
  }
  if (driver) {
    h.machine.driver = driver;
    h.read.push_back(fmt::format("driver {}", driver->to_string()));
    derive_from = driver;
  }
}

void finish_ceiling(const RawHost& raw, InventoryHost& h,
                    const std::optional<DriverVersion>& derive_from) {
  const std::string_view stated = core::trim(raw.ceiling);
  if (!stated.empty()) {
    if (auto c = CudaVersion::parse(stated); c && c->major >= 1 && c->major < 100) {
      h.machine.ceiling = *c;
      h.machine.ceiling_method = "stated";
      h.read.push_back(fmt::format("CUDA ceiling {} ({})", c->to_string(),
                                   raw.ceiling_from.empty() ? "stated" : raw.ceiling_from));
      return;
    }
    h.warnings.push_back(fmt::format(
        "{} reads '{}'", raw.ceiling_from.empty() ? "the CUDA ceiling" : raw.ceiling_from,
        short_text(stated)));
  }
  if (!derive_from) {
    add_unknown(h, "CUDA ceiling");
    return;
  }
  const DerivedCeiling d = ceiling_of_branch(*derive_from);
  if (d.newer_than_table) {
    h.machine.ceiling = d.ceiling;
    h.machine.ceiling_method = "assumed";
    h.unknown.emplace_back("CUDA ceiling unknown (driver newer than gpulock's table)");
    if (d.ceiling) {
      h.warnings.push_back(
          fmt::format("R{}: judged as at least CUDA {}, the newest ceiling gpulock knows",
                      derive_from->branch(), d.ceiling->to_string()));
    }
  } else if (d.ceiling) {
    h.machine.ceiling = d.ceiling;
    h.machine.ceiling_method = "derived";
    h.derived.push_back(fmt::format("CUDA ceiling {} (the R{} branch's, from NVIDIA's table)",
                                    d.ceiling->to_string(), derive_from->branch()));
  } else {
    h.unknown.emplace_back("CUDA ceiling (driver older than gpulock's table)");
  }
}

void finish_gpus(RawHost& raw, InventoryHost& h) {
  bool all_known = !raw.gpus.empty();
  std::vector<ComputeCapability> archs;
  for (std::size_t i = 0; i < raw.gpus.size() && i < kMaxGpusPerHost; ++i) {
    auto& g = raw.gpus[i];
    InventoryGpu gpu{std::move(g.name), std::nullopt, false, g.mig};
    if (!g.cc.empty()) {
      if (auto cc = ComputeCapability::parse(core::trim(g.cc))) {
        gpu.cc = *cc;
        gpu.cc_stated = true;
      }
    }
    if (!gpu.cc) gpu.cc = compute_capability_of_name(gpu.name);
    if (!gpu.cc) {
      all_known = false;
      h.unknown.push_back(
          fmt::format("compute capability of GPU {} ('{}': not in gpulock's "
                      "name table)",
                      i, short_text(gpu.name)));
    } else if (std::find(archs.begin(), archs.end(), *gpu.cc) == archs.end()) {
      archs.push_back(*gpu.cc);
      if (gpu.cc_stated) {
        h.read.push_back(fmt::format("compute capability {}", gpu.cc->dotted()));
      } else {
        h.derived.push_back(fmt::format("compute capability {} (from the name '{}')",
                                        gpu.cc->dotted(), short_text(gpu.name)));
      }
    }
    h.gpus.push_back(std::move(gpu));
  }
  if (all_known) {
    std::sort(archs.begin(), archs.end());
    h.machine.archs = std::move(archs);
  }
  if (raw.gpus.empty() && !raw.gpus_listed) add_unknown(h, "GPUs");
  if (raw.gpus.empty() && raw.gpus_listed && raw.driver.empty() && raw.ceiling.empty())
    h.machine.no_gpu = true;
  std::vector<std::string_view> models;
  bool mig = false;
  for (const auto& g : h.gpus) {
    if (std::find(models.begin(), models.end(), g.name) == models.end()) models.push_back(g.name);
    mig = mig || g.mig;
  }
  if (models.size() > 1)
    h.warnings.emplace_back("mixed GPU models: a lock fits only when every GPU is supported");
  if (mig)
    h.warnings.emplace_back(
        "MIG is on: its instances have their GPU's compute capability and driver");
}

}  // namespace

std::string_view inventory_format_name(InventoryFormat format) noexcept {
  for (const auto& f : kFormatNames)
    if (f.format == format) return f.name;
  return "auto";
}

core::Result<InventoryFormat> parse_inventory_format(std::string_view text) {
  for (const auto& f : kFormatNames)
    if (f.name == text) return f.format;
  std::vector<std::string_view> names;
  for (const auto& f : kFormatNames)
    names.push_back(f.name);
  return std::unexpected(
      core::make_error(core::ErrorCode::Usage,
                       fmt::format("invalid --inventory-format {}: expected one of {}",
                                   core::quote_for_message(text), fmt::join(names, ", ")))
          .with_hint(fmt::format("the formats: {}", fmt::join(names, ", "))));
}

DerivedCeiling ceiling_of_branch(const DriverVersion& driver) {
  const std::uint32_t branch = driver.branch();
  for (const auto& row : kBranchesAfterTable)
    if (row.branch == branch) return {row.cuda, false};
  const auto newest = newest_driver_in_table();
  if (newest && branch > newest->branch()) {
    // A branch no row names: at least the newest ceiling of an older branch.
    std::optional<CudaVersion> best = cuda_ceiling_for_driver(*newest);
    for (const auto& row : kBranchesAfterTable)
      if (row.branch < branch) best = row.cuda;
    return {best, true};
  }
  auto branch_only = DriverVersion::parse(fmt::format("{}", branch));
  if (!branch_only) return {};
  return {cuda_ceiling_for_driver(*branch_only), false};
}

InventoryFormat detect_inventory_format(std::string_view text) {
  if (text.find("\"gpulock.machine/1\"") != std::string_view::npos)
    return InventoryFormat::ProbeJson;
  if (text.find("\"apiVersion\"") != std::string_view::npos &&
      text.find("\"kind\"") != std::string_view::npos && text.find('{') != std::string_view::npos)
    return InventoryFormat::KubectlJson;
  if (text.find("<nvidia_smi_log") != std::string_view::npos) return InventoryFormat::SmiXml;
  if (text.find("NVSMI LOG") != std::string_view::npos ||
      (text.find("Product Name") != std::string_view::npos &&
       text.find("Attached GPUs") != std::string_view::npos))
    return InventoryFormat::SmiQuery;
  if (text.find("Collecting environment information") != std::string_view::npos ||
      (text.find("GPU models and configuration") != std::string_view::npos &&
       text.find("Nvidia driver version") != std::string_view::npos) ||
      (text.find("PyTorch version:") != std::string_view::npos &&
       text.find("Nvidia driver version") != std::string_view::npos))
    return InventoryFormat::CollectEnv;
  if (text.find("NodeName=") != std::string_view::npos &&
      text.find("Gres=") != std::string_view::npos)
    return InventoryFormat::Slurm;
  if (text.find("\nLabels:") != std::string_view::npos &&
      (text.starts_with("Name:") || text.find("\nName:") != std::string_view::npos))
    return InventoryFormat::KubectlDescribe;
  if (text.find("NVIDIA-SMI ") != std::string_view::npos &&
      (text.find("Driver Version:") != std::string_view::npos ||
       text.find("KMD Version:") != std::string_view::npos))
    return InventoryFormat::SmiTable;
  if (text.find("| GPU  Name") != std::string_view::npos) return InventoryFormat::SmiTable;
  if (text.find("NVRM version:") != std::string_view::npos ||
      (text.find("NVIDIA UNIX") != std::string_view::npos &&
       text.find("Kernel Module") != std::string_view::npos) ||
      (text.find("Model:") != std::string_view::npos &&
       text.find("GPU UUID:") != std::string_view::npos))
    return InventoryFormat::Proc;
  if (looks_like_list(text)) return InventoryFormat::SmiList;
  if (looks_like_csv(text)) return InventoryFormat::SmiCsv;
  return InventoryFormat::Auto;
}

core::Result<Inventory> parse_inventory(std::string_view text, std::string_view display_name,
                                        InventoryFormat format, const FeatureMap* features) {
  const std::string where(display_name);
  if (text.size() > kMaxText)
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("inventory too large ({} bytes; at most {})", text.size(), kMaxText), where);
  if (format == InventoryFormat::Auto) {
    format = detect_inventory_format(text);
    if (format == InventoryFormat::Auto && is_yaml(text)) {
      return std::unexpected(
          core::make_error(core::ErrorCode::InvalidInput,
                           "kubectl YAML output is not read: give the node list as JSON", where)
              .with_hint("kubectl get nodes -o json > nodes.json"));
    }
    if (format == InventoryFormat::Auto) {
      return std::unexpected(
          core::make_error(core::ErrorCode::InvalidInput,
                           "no inventory format recognised (no GPU or driver fact found)", where)
              .with_hint(
                  "give kubectl get nodes -o json, kubectl describe nodes, nvidia-smi (-q, -q -x, "
                  "-L, --query-gpu=name,driver_version,compute_cap --format=csv), "
                  "/proc/driver/nvidia/version, gpulock probe --machine --json, "
                  "collect_env or scontrol show node -o output"));
    }
  }
  const std::string stem = stem_of(display_name);
  std::vector<RawHost> raw;
  switch (format) {
    case InventoryFormat::KubectlJson: {
      auto r = read_kubectl_json(text, stem);
      if (!r) return std::unexpected(r.error().located(where));
      raw = std::move(*r);
      break;
    }
    case InventoryFormat::SmiTable:
      raw = read_smi_table(text, stem);
      break;
    case InventoryFormat::SmiCsv:
      raw = read_smi_csv(text, stem);
      break;
    case InventoryFormat::Proc:
      raw = read_proc(text, stem);
      break;
    case InventoryFormat::SmiXml:
      raw = read_smi_xml(text, stem);
      break;
    case InventoryFormat::SmiList:
      raw = read_smi_list(text, stem);
      break;
    case InventoryFormat::KubectlDescribe:
      raw = read_kubectl_describe(text, stem);
      break;
    case InventoryFormat::ProbeJson:
      raw = read_probe_json(text, stem);
      break;
    case InventoryFormat::SmiQuery:
      raw = read_smi_query(text, stem);
      break;
    case InventoryFormat::CollectEnv:
      raw = read_collect_env(text, stem);
      break;
    case InventoryFormat::Slurm:
      raw = read_slurm(text, stem, features);
      break;
    case InventoryFormat::Auto:
      break;
  }
  Inventory inv;
  inv.format = format;
  bool any_fact = false;
  for (auto& r : raw) {
    any_fact = any_fact || !r.driver.empty() || !r.ceiling.empty() || !r.gpus.empty() ||
               !r.l4t.empty() || r.platform.has_value() || !r.no_gpu_read.empty() ||
               !r.probe_error.empty();
    inv.hosts.push_back(finish_host(std::move(r)));
  }
  if (!any_fact) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("no GPU or driver fact could be read as {}", inventory_format_name(format)),
        where, 1);
  }
  return inv;
}

namespace inventory_detail {

std::string stem_of(std::string_view display_name) {
  auto slash = display_name.find_last_of('/');
  if (slash != std::string_view::npos) display_name.remove_prefix(slash + 1);
  auto dot = display_name.rfind('.');
  if (dot != std::string_view::npos && dot > 0) display_name = display_name.substr(0, dot);
  if (display_name.empty() || display_name == "-") return "stdin";
  return std::string(display_name.substr(0, kMaxField));
}

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, number});
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

bool icontains(std::string_view s, std::string_view needle) noexcept {
  if (needle.size() > s.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= s.size(); ++i)
    if (core::iequals(s.substr(i, needle.size()), needle)) return true;
  return false;
}

std::string_view leading_version(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
    ++i;
  while (i > 0 && s[i - 1] == '.')
    --i;
  if (i == 0 || s[0] == '.') return {};
  return s.substr(0, i);
}

std::string cpu_of(std::string_view arch) {
  if (arch == "amd64" || arch == "x86_64") return "x86_64";
  if (arch == "arm64" || arch == "aarch64") return "aarch64";
  return std::string(arch.substr(0, 64));
}

InventoryHost finish_host(RawHost raw) {
  InventoryHost h;
  h.name = raw.name.empty() ? std::string("host") : std::move(raw.name);
  h.line = raw.line;
  h.warnings = std::move(raw.warnings);
  h.unknown = std::move(raw.unknown);
  h.labels = std::move(raw.labels);
  h.labelled = raw.labelled;
  h.features = std::move(raw.features);
  h.featured = raw.featured;
  if (!raw.probe_error.empty())
    h.warnings.push_back(fmt::format("the probe failed on the node: {}", raw.probe_error));
  const bool none_read = !raw.no_gpu_read.empty();
  if (none_read) {
    h.machine.no_gpu = true;
    h.read.push_back(std::move(raw.no_gpu_read));
  }
  std::optional<DriverVersion> derive_from;
  finish_driver(raw, h, derive_from);
  if (raw.l4t.empty()) finish_ceiling(raw, h, derive_from);
  if (!raw.l4t.empty()) add_unknown(h, "CUDA ceiling");
  finish_gpus(raw, h);
  if (raw.platform) {
    h.machine.platform = raw.platform;
    h.read.push_back(fmt::format("platform {}/{}", raw.platform->os, raw.platform->cpu));
  } else {
    add_unknown(h, "platform (OS and CPU)");
  }
  if (none_read)  // read as none: no driver version or ceiling is unknown
    std::erase_if(h.unknown, [](const std::string& u) {
      return u == "driver version" || u == "CUDA ceiling";
    });
  return h;
}

}  // namespace inventory_detail
}  // namespace gpulock::gpu

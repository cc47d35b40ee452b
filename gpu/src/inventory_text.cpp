// Inventories in `key : value` text (shared/data/inventory-formats.md, sections 2, 4 and 12):
// `nvidia-smi -q`, PyTorch's `python -m torch.utils.collect_env`, and Slurm's
// `scontrol show node -o` (one node per line, `Key=Value` words).
#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "inventory_internal.h"

namespace gpulock::gpu::inventory_detail {
namespace {

struct KeyValue {
  std::string_view key;
  std::string_view value;
  std::size_t indent = 0;
};

// `    Product Name                          : Tesla T4` -> {"Product Name", "Tesla T4", 4}.
std::optional<KeyValue> key_value(std::string_view line) {
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  KeyValue kv;
  kv.indent = line.find_first_not_of(" \t");
  kv.key = core::trim(line.substr(0, colon));
  kv.value = core::trim(line.substr(colon + 1).substr(0, kMaxField));
  return kv;
}

// "Linux-5.15.0-1057-aws-x86_64-with-glibc2.35" -> x86_64.
std::optional<Platform> platform_of_python(std::string_view s) {
  for (std::string_view cpu : {"x86_64", "aarch64", "arm64", "ppc64le", "s390x"}) {
    if (s.find(cpu) != std::string_view::npos && s.find("Linux") != std::string_view::npos)
      return Platform{"linux", cpu_of(cpu)};
  }
  return std::nullopt;
}

}  // namespace

std::vector<RawHost> read_smi_query(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  RawHost h;
  h.name = std::string(stem);
  bool in_mig = false;
  for (const auto& line : split_lines(text)) {
    auto kv = key_value(line.text);
    if (!kv) {
      auto t = core::trim(line.text);
      in_mig = t == "MIG Mode";
      continue;
    }
    if (h.line == 0 && !kv->key.empty()) h.line = line.number;
    if (kv->key == "Driver Version" || kv->key == "KMD Version") {
      h.driver = std::string(kv->value);
    } else if (kv->key.starts_with("CUDA Version") || kv->key.starts_with("CUDA UMD Version")) {
      h.ceiling = std::string(kv->value);
      h.ceiling_from = std::string(kv->key);
    } else if (kv->key == "Product Name" && h.gpus.size() < kMaxGpusPerHost) {
      h.gpus.push_back({std::string(kv->value), {}, false});
      h.gpus_listed = true;
    } else if (kv->key == "Attached GPUs" && kv->value == "0") {
      h.gpus_listed = true;
    } else if (kv->key == "Current" && in_mig && !h.gpus.empty()) {
      h.gpus.back().mig = kv->value == "Enabled";
      in_mig = false;
    } else if (kv->key == "Driver Model" || (kv->key == "Current" && kv->value == "WDDM")) {
      if (kv->value.find("WDDM") != std::string_view::npos) h.wsl = true;
    }
  }
  // WDDM: finish_host words the Windows driver and its warning.
  if (!h.driver.empty() || !h.gpus.empty()) hosts.push_back(std::move(h));
  return hosts;
}

std::vector<RawHost> read_collect_env(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  RawHost h;
  h.name = std::string(stem);
  bool gpu_lines = false;
  for (const auto& line : split_lines(text)) {
    const auto t = core::trim(line.text);
    if (gpu_lines && t.starts_with("GPU ")) {
      auto colon = t.find(": ");
      if (colon != std::string_view::npos && h.gpus.size() < kMaxGpusPerHost)
        h.gpus.push_back(
            {std::string(core::trim(t.substr(colon + 2)).substr(0, kMaxField)), {}, false});
      continue;
    }
    gpu_lines = false;
    auto kv = key_value(line.text);
    if (!kv) continue;
    if (kv->key == "GPU models and configuration") {
      if (h.line == 0) h.line = line.number;
      h.gpus_listed = true;
      gpu_lines = true;
      // The first GPU on the same line: "GPU models and configuration: GPU 0: NVIDIA A10G".
      if (kv->value.starts_with("GPU ")) {
        auto colon = kv->value.find(": ");
        if (colon != std::string_view::npos)
          h.gpus.push_back({std::string(core::trim(kv->value.substr(colon + 2))), {}, false});
      }
    } else if (kv->key == "Nvidia driver version") {
      if (h.line == 0) h.line = line.number;
      if (kv->value != "N/A" && kv->value != "Could not collect") h.driver = std::string(kv->value);
    } else if (kv->key == "Python platform" || kv->key == "OS") {
      if (auto p = platform_of_python(kv->value)) h.platform = p;
      if (kv->value.find("microsoft-standard-WSL2") != std::string_view::npos) h.wsl = true;
    }
  }
  // collect_env's CUDA versions are the toolkit's, never the ceiling (they can exceed it).
  if (!h.driver.empty() || !h.gpus.empty()) hosts.push_back(std::move(h));
  return hosts;
}

std::vector<RawHost> read_slurm(std::string_view text, std::string_view stem,
                                const FeatureMap* map) {
  std::vector<RawHost> hosts;
  (void)stem;
  for (const auto& line : split_lines(text)) {
    auto t = core::trim(line.text);
    if (!t.starts_with("NodeName=") || hosts.size() >= kMaxHosts) continue;
    RawHost h;
    h.line = line.number;
    h.featured = true;
    std::string gres, features;
    std::string_view rest = t;
    while (!rest.empty()) {
      auto sp = rest.find(' ');
      auto word = rest.substr(0, sp);
      auto eq = word.find('=');
      if (eq != std::string_view::npos) {
        auto key = word.substr(0, eq);
        auto value = word.substr(eq + 1, kMaxField);
        if (key == "NodeName")
          h.name = std::string(value);
        else if (key == "Arch")
          h.platform = Platform{"linux", cpu_of(value)};
        else if (key == "Gres")
          gres = std::string(value), h.gpus_listed = true;  // "(null)": no GPU
        else if (key == "ActiveFeatures")
          features = std::string(value);
      }
      if (sp == std::string_view::npos) break;
      rest = core::trim_left(rest.substr(sp + 1));
    }
    // Gres=gpu:a100:8(S:0-1),gpu:t4:1: every GPU of a known type.
    std::string_view g = gres;
    while (!g.empty()) {
      auto comma = g.find(',');
      auto item = g.substr(0, comma);
      if (item.starts_with("gpu:")) {
        auto parts = item.substr(4);
        auto colon = parts.find(':');
        std::string type =
            colon == std::string_view::npos ? std::string() : std::string(parts.substr(0, colon));
        auto count_text = colon == std::string_view::npos ? parts : parts.substr(colon + 1);
        std::size_t n = 0;
        for (char c : count_text.substr(0, 4)) {
          if (c < '0' || c > '9') break;
          n = n * 10 + static_cast<std::size_t>(c - '0');
        }
        h.gpus_listed = true;
        if (map != nullptr) {
          if (auto name = map->find(type, "gpu"); !name.empty()) type = std::string(name);
        }
        for (std::size_t i = 0; i < n && h.gpus.size() < kMaxGpusPerHost; ++i)
          h.gpus.push_back({type.empty() ? std::string("(untyped gpu gres)") : type, {}, false});
      }
      if (comma == std::string_view::npos) break;
      g.remove_prefix(comma + 1);
    }
    // Features that name a driver ("nvidia-driver-550.54.15", "driver_570"): no standard
    // exists; other site-specific names are not read.
    std::string_view f = features;
    while (!f.empty()) {
      auto comma = f.find(',');
      auto item = f.substr(0, comma);
      if (!item.empty() && item != "(null)" && h.features.size() < 1024)
        h.features.emplace_back(item);
      if (map != nullptr) {
        if (auto v = map->find(item, "driver"); !v.empty()) h.driver = std::string(v);
        if (auto v = map->find(item, "ceiling"); !v.empty()) {
          h.ceiling = std::string(v);
          h.ceiling_from = fmt::format("feature {} (--slurm-features)", item);
        }
      }
      auto at = item.find("driver");
      if (at != std::string_view::npos) {
        auto v = item.substr(at + 6);
        while (!v.empty() && (v[0] == '-' || v[0] == '_' || v[0] == '='))
          v.remove_prefix(1);
        if (!leading_version(v).empty() && h.driver.empty())
          h.driver = std::string(leading_version(v));
      }
      if (comma == std::string_view::npos) break;
      f.remove_prefix(comma + 1);
    }
    if (h.driver.empty() && !h.gpus.empty())
      h.unknown.emplace_back(
          "driver version (no ActiveFeatures name it, e.g. nvidia-driver-550.54.15)");
    if (!h.name.empty()) hosts.push_back(std::move(h));
  }
  return hosts;
}

}  // namespace gpulock::gpu::inventory_detail

namespace gpulock::gpu {

std::string_view FeatureMap::find(std::string_view name, std::string_view kind) const {
  for (const auto& e : entries)
    if (e.name == name && e.kind == kind) return e.value;
  return {};
}

core::Result<FeatureMap> parse_feature_map(std::string_view text, std::string_view where) {
  using namespace inventory_detail;
  FeatureMap map;
  for (const auto& line :
       split_lines(text.substr(0, std::min<std::size_t>(text.size(), 1 << 20)))) {
    auto t = core::trim(line.text.substr(0, line.text.find('#')));
    if (t.empty()) continue;
    auto bad = [&](std::string why) {
      return core::fail_at(core::ErrorCode::InvalidInput,
                           fmt::format("{}: expected NAME driver=VERSION, NAME ceiling=X.Y or "
                                       "NAME gpu=PRODUCT",
                                       why),
                           std::string(where), line.number);
    };
    auto sp = t.find_first_of(" \t");
    if (sp == std::string_view::npos) return bad("no KIND=VALUE");
    auto rest = core::trim(t.substr(sp));
    auto eq = rest.find('=');
    if (eq == std::string_view::npos) return bad("no '='");
    FeatureMap::Entry e{std::string(t.substr(0, sp)), std::string(core::trim(rest.substr(0, eq))),
                        std::string(core::trim(rest.substr(eq + 1)))};
    if (e.kind == "driver") {
      if (!DriverVersion::parse(e.value)) return bad(fmt::format("bad driver '{}'", e.value));
    } else if (e.kind == "ceiling") {
      if (!CudaVersion::parse(e.value)) return bad(fmt::format("bad CUDA version '{}'", e.value));
    } else if (e.kind != "gpu" || e.value.empty()) {
      return bad(fmt::format("unknown KIND '{}'", e.kind));
    }
    if (map.entries.size() < 10000) map.entries.push_back(std::move(e));
  }
  return map;
}

}  // namespace gpulock::gpu

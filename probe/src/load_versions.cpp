// The versions of the files the load probe planned and saw mapped (load_probe_impl.h): what
// cuDNN's own calls said, else a version symbol read from the file, its file name, the wheel
// that owns it, or the cuDNN next to it.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "elf_file.h"
#include "load_probe_impl.h"

namespace gpulock::probe::detail {
namespace {

// "9.1.0" from "libcudnn_ops.so.9.1.0" (three or more numbers after ".so.").
std::optional<std::string> version_from_file_name(const std::string& path) {
  std::string file = basename_of(path);
  auto at = file.find(".so.");
  if (at == std::string::npos) return std::nullopt;
  std::string rest = file.substr(at + 4);
  if (rest.empty() || std::count(rest.begin(), rest.end(), '.') < 2) return std::nullopt;
  if (rest.find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
  return rest;
}

// Sub-library name from a file name: "libcudnn_ops.so.9" -> "ops"; "" for libcudnn itself.
std::optional<std::string> cudnn_part(const std::string& path) {
  std::string file = basename_of(path);
  if (!file.starts_with("libcudnn")) return std::nullopt;
  auto so = file.find(".so");
  if (so == std::string::npos) return std::nullopt;
  if (file.compare(0, 9, "libcudnn_") == 0) return file.substr(9, so - 9);
  return std::string();
}

}  // namespace

// Version of a file that did not report one while loaded: its own symbol read from the file,
// the version in its file name, the wheel that owns it, or the cuDNN next to it.
std::optional<VersionRead> Probe::version_of_file(const std::string& path, const std::string& part,
                                                  bool is_cudnn) {
  const std::string real = canonical(path);
  if (!part.empty()) {
    for (const auto& sym : cudnn_version_symbols(part)) {
      if (auto bytes = detail::read_symbol_bytes(real, sym, 4)) {
        if (auto v = CudnnVersion::from_symbol_bytes(*bytes)) {
          return VersionRead{v->to_string(), sym + " (read from the file)"};
        }
      }
    }
  }
  if (auto v = version_from_file_name(real)) return VersionRead{*v, "file name"};
  if (const auto* owner = env_.owner_of(path)) {
    // A cuDNN file has its release's three-part version; the wheel adds a fourth part.
    std::string text = owner->version;
    if (is_cudnn) {
      if (auto v = CudnnVersion::from_text(owner->version)) text = v->to_string();
    }
    return VersionRead{text, fmt::format("RECORD of {} {}", owner->display_name, owner->version)};
  }
  const std::string file = basename_of(path);
  const auto so = file.find(".so.");
  if (!part.empty() && part != "graph" && so != std::string::npos) {
    const std::string graph_major = file.substr(so + 4, file.find('.', so + 4) - (so + 4));
    std::string sibling = join(dirname_of(real), "libcudnn_graph.so." + graph_major);
    if (auto bytes = detail::read_symbol_bytes(sibling, "cudnn_graph_version", 4)) {
      if (auto v = CudnnVersion::from_symbol_bytes(*bytes)) {
        return VersionRead{
            v->to_string(),
            fmt::format("cuDNN in the same directory (libcudnn_graph.so.{})", graph_major)};
      }
    }
  }
  return std::nullopt;
}

void Probe::fill_versions() {
  for (const auto& c : report_.calls) {
    if (c.outcome != LoadOutcome::Ok || !c.value) continue;
    auto v = static_cast<std::uint64_t>(*c.value);
    if (c.function == "cudnnGetVersion") {
      report_.cudnn_version_raw = v;
      report_.cudnn_version = CudnnVersion::from_runtime(v);
    } else if (c.function == "cudnnGetCudartVersion") {
      report_.cudart_version_raw = v;
    } else if (c.function == "cudnnGetMaxDeviceVersion") {
      report_.max_device_version_raw = v;
    }
  }
  std::map<std::string, VersionRead> by_real_path;
  for (auto& lib : report_.preloads) {
    if (plan_.cudnn_index >= 0 &&
        &lib == &report_.preloads[static_cast<std::size_t>(plan_.cudnn_index)] &&
        report_.cudnn_version) {
      lib.version = VersionRead{report_.cudnn_version->to_string(), "cudnnGetVersion"};
    } else if (lib.path) {
      lib.version = version_of_file(*lib.path, cudnn_part(*lib.path).value_or(""),
                                    cudnn_part(*lib.path).has_value());
    }
    if (lib.version && lib.real_path) by_real_path[*lib.real_path] = *lib.version;
  }
  for (auto& lib : report_.sublibraries) {
    if (!lib.path) continue;
    if (!lib.version) lib.version = version_of_file(*lib.path, lib.name, true);
    if (lib.version && lib.real_path) by_real_path[*lib.real_path] = *lib.version;
  }
  for (auto& m : report_.mapped) {
    auto it = by_real_path.find(m.path);
    if (it != by_real_path.end()) {
      m.version = it->second;
    } else {
      m.version =
          version_of_file(m.path, cudnn_part(m.path).value_or(""), cudnn_part(m.path).has_value());
    }
  }
  std::sort(report_.mapped.begin(), report_.mapped.end(),
            [](const MappedLibrary& a, const MappedLibrary& b) {
              return std::pair(!a.inside_environment, a.path) <
                     std::pair(!b.inside_environment, b.path);
            });
  // What libcudnn itself mapped for each sub-library, when it is not the planned file.
  for (auto& lib : report_.sublibraries) {
    const std::string prefix = fmt::format("libcudnn_{}.so", lib.name);
    for (const auto& m : report_.mapped) {
      if (!basename_of(m.path).starts_with(prefix)) continue;
      if (!lib.real_path || *lib.real_path != m.path) lib.actually_mapped = m.path;
      break;
    }
  }
}

}  // namespace gpulock::probe::detail

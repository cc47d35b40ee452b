#include "gpulock/probe/cudnn.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace gpulock::probe {
namespace {

// Which sub-libraries a cuDNN version ships, and which library dlopens each (by bare soname,
// so with that library's RUNPATH). `since`/`until` bound the versions that ship it (inclusive
// since, exclusive until); `looked_up_since` is the first version whose loader asks for it even
// though the version does not ship it.
struct Row {
  std::uint32_t major;
  std::string_view name;
  std::string_view loaded_by;  // "cudnn" or "cudnn_graph"
  CudnnVersion since;
  std::optional<CudnnVersion> looked_up_since;
  std::string_view source;
};

constexpr std::string_view kApiOverview =
    "docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html (cuDNN 9 library split)";
constexpr std::string_view kGraphLoads =
    "cuDNN 9 API overview; libcudnn_graph loads the engine and heuristic libraries (issue 8)";
constexpr std::string_view kTensorIr =
    "google-ml-infra/rules_ml_toolchain#280 (\"appeared starting from CUDNN 9.21\"); "
    "pytorch/pytorch#188892 and #187824: 9.20.0's libcudnn_graph dlopens it, its wheel omits it";
constexpr std::string_view kExt =
    "JuliaPackaging/Yggdrasil#14741 (libcudnn_ext, loaded by the cuDNN shim at run time)";
constexpr std::string_view kCudnn8 =
    "cuDNN 8 API reference (six sub-libraries loaded by libcudnn.so.8)";

const Row kRows[] = {
    {9, "graph", "cudnn", {9, 0, 0}, std::nullopt, kApiOverview},
    {9, "engines_precompiled", "cudnn_graph", {9, 0, 0}, std::nullopt, kGraphLoads},
    {9, "engines_runtime_compiled", "cudnn_graph", {9, 0, 0}, std::nullopt, kGraphLoads},
    {9, "heuristic", "cudnn_graph", {9, 0, 0}, std::nullopt, kGraphLoads},
    {9, "engines_tensor_ir", "cudnn_graph", {9, 21, 0}, CudnnVersion{9, 20, 0}, kTensorIr},
    {9, "ops", "cudnn", {9, 0, 0}, std::nullopt, kApiOverview},
    {9, "cnn", "cudnn", {9, 0, 0}, std::nullopt, kApiOverview},
    {9, "adv", "cudnn", {9, 0, 0}, std::nullopt, kApiOverview},
    {9, "ext", "cudnn", {9, 24, 0}, std::nullopt, kExt},
    {8, "ops_infer", "cudnn", {8, 0, 0}, std::nullopt, kCudnn8},
    {8, "ops_train", "cudnn", {8, 0, 0}, std::nullopt, kCudnn8},
    {8, "cnn_infer", "cudnn", {8, 0, 0}, std::nullopt, kCudnn8},
    {8, "cnn_train", "cudnn", {8, 0, 0}, std::nullopt, kCudnn8},
    {8, "adv_infer", "cudnn", {8, 0, 0}, std::nullopt, kCudnn8},
    {8, "adv_train", "cudnn", {8, 0, 0}, std::nullopt, kCudnn8},
};

struct StatusName {
  int code;
  std::string_view name;
};

// cuDNN 9 (cudnn_graph.h). cuDNN 8 used 1-14 for the same ideas.
constexpr StatusName kStatus[] = {
    {0, "SUCCESS"},
    {1001, "NOT_INITIALIZED"},
    {1002, "SUBLIBRARY_VERSION_MISMATCH"},
    {1003, "SERIALIZATION_VERSION_MISMATCH"},
    {1004, "DEPRECATED"},
    {1005, "LICENSE_ERROR"},
    {1006, "RUNTIME_IN_PROGRESS"},
    {1007, "RUNTIME_FP_OVERFLOW"},
    {1008, "SUBLIBRARY_LOADING_FAILED"},
    {2000, "BAD_PARAM"},
    {2001, "INVALID_VALUE"},
    {2002, "BAD_PARAM_NULL_POINTER"},
    {2003, "BAD_PARAM_MISALIGNED_POINTER"},
    {2004, "BAD_PARAM_NOT_FINALIZED"},
    {2005, "BAD_PARAM_OUT_OF_BOUND"},
    {2006, "BAD_PARAM_SIZE_INSUFFICIENT"},
    {2007, "BAD_PARAM_STREAM_MISMATCH"},
    {2008, "BAD_PARAM_SHAPE_MISMATCH"},
    {2009, "BAD_PARAM_DUPLICATED_ENTRIES"},
    {2010, "BAD_PARAM_ATTRIBUTE_TYPE"},
    {2011, "BAD_PARAM_CUDA_GRAPH_MISMATCH"},
    {2012, "BAD_PARAM_DESCRIPTOR_TYPE"},
    {3000, "NOT_SUPPORTED"},
    {3001, "NOT_SUPPORTED_GRAPH_PATTERN"},
    {3002, "NOT_SUPPORTED_SHAPE"},
    {3003, "NOT_SUPPORTED_DATA_TYPE"},
    {3004, "NOT_SUPPORTED_LAYOUT"},
    {3005, "NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"},
    {3006, "NOT_SUPPORTED_INCOMPATIBLE_CUDART"},
    {3007, "NOT_SUPPORTED_ARCH_MISMATCH"},
    {3008, "NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING"},
    {3009, "NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"},
    {3010, "NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT"},
    {3011, "NOT_SUPPORTED_PADDING"},
    {3012, "NOT_SUPPORTED_BAD_LAUNCH_PARAM"},
    {3013, "NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API"},
    {3014, "NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE"},
    {4000, "INTERNAL_ERROR"},
    {4001, "INTERNAL_ERROR_COMPILATION_FAILED"},
    {4002, "INTERNAL_ERROR_UNEXPECTED_VALUE"},
    {4003, "INTERNAL_ERROR_HOST_ALLOCATION_FAILED"},
    {4004, "INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"},
    {4005, "INTERNAL_ERROR_BAD_LAUNCH_PARAM"},
    {4006, "INTERNAL_ERROR_TEXTURE_CREATION_FAILED"},
    {5000, "EXECUTION_FAILED"},
    {5001, "EXECUTION_FAILED_CUDA_DRIVER"},
    {5002, "EXECUTION_FAILED_CUBLAS"},
    {5003, "EXECUTION_FAILED_CUDART"},
    {5004, "EXECUTION_FAILED_CURAND"},
};

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

std::optional<CudnnVersion> CudnnVersion::from_runtime(std::uint64_t v) noexcept {
  if (v == 0) return std::nullopt;
  CudnnVersion out;
  if (v >= 90000) {
    out = {static_cast<std::uint32_t>(v / 10000), static_cast<std::uint32_t>(v / 100 % 100),
           static_cast<std::uint32_t>(v % 100)};
  } else {
    out = {static_cast<std::uint32_t>(v / 1000), static_cast<std::uint32_t>(v / 100 % 10),
           static_cast<std::uint32_t>(v % 100)};
  }
  if (out.major == 0 || out.major > 99) return std::nullopt;
  return out;
}

std::optional<CudnnVersion> CudnnVersion::from_text(std::string_view text) noexcept {
  std::uint32_t parts[3] = {0, 0, 0};
  std::size_t n = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end && n < 3) {
    std::uint32_t v = 0;
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc()) break;
    parts[n++] = v;
    p = r.ptr;
    if (p < end && *p == '.') {
      ++p;
    } else {
      break;
    }
  }
  if (n < 2) return std::nullopt;
  return CudnnVersion{parts[0], parts[1], parts[2]};
}

std::optional<CudnnVersion> CudnnVersion::from_symbol_bytes(
    std::span<const unsigned char> b) noexcept {
  if (b.size() < 4 || b[3] != 0 || b[2] < 7 || b[2] > 99) return std::nullopt;
  return CudnnVersion{b[2], b[1], b[0]};
}

std::string CudnnVersion::to_string() const {
  return fmt::format("{}.{}.{}", major, minor, patch);
}

std::string cudnn_status_name(int code) {
  for (const auto& s : kStatus) {
    if (s.code == code) return fmt::format("CUDNN_STATUS_{}", s.name);
  }
  return fmt::format("CUDNN_STATUS_{}", code);
}

std::vector<CudnnSublibrary> cudnn_sublibraries(const CudnnVersion& version,
                                                std::span<const std::string> record_files) {
  std::vector<CudnnSublibrary> out;
  const std::string shim = fmt::format("libcudnn.so.{}", version.major);
  const std::string graph = fmt::format("libcudnn_graph.so.{}", version.major);
  for (const auto& row : kRows) {
    if (row.major != version.major) continue;
    bool ships = version >= row.since;
    bool looked_up = row.looked_up_since && version >= *row.looked_up_since;
    if (!ships && !looked_up) continue;
    out.push_back({std::string(row.name), fmt::format("libcudnn_{}.so.{}", row.name, version.major),
                   row.loaded_by == "cudnn" ? shim : graph, ships, std::string(row.source)});
  }
  for (const auto& file : record_files) {
    auto name = sublibrary_of(file, version.major);
    if (!name) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const CudnnSublibrary& s) { return s.name == *name; });
    if (it != out.end()) {
      it->required = true;  // the wheel ships it
      continue;
    }
    // Unknown to the table: engines and heuristics come from libcudnn_graph in cuDNN 9.
    bool from_graph =
        version.major >= 9 && (name->starts_with("engines_") || name->starts_with("heuristic"));
    out.push_back({*name, fmt::format("libcudnn_{}.so.{}", *name, version.major),
                   from_graph ? graph : shim, true, "the wheel's RECORD"});
  }
  return out;
}

std::vector<std::string> cudnn_version_check_functions(std::uint32_t major) {
  if (major == 8) {
    return {"cudnnOpsInferVersionCheck", "cudnnOpsTrainVersionCheck", "cudnnCnnInferVersionCheck",
            "cudnnCnnTrainVersionCheck", "cudnnAdvInferVersionCheck", "cudnnAdvTrainVersionCheck"};
  }
  return {"cudnnGraphVersionCheck", "cudnnOpsVersionCheck", "cudnnCnnVersionCheck",
          "cudnnAdvVersionCheck"};
}

std::vector<std::string> cudnn_version_symbols(std::string_view name) {
  return {fmt::format("cudnn_{}_version", name), fmt::format("cudnn_{}_infer_version", name)};
}

}  // namespace gpulock::probe

#include "gpulock/probe/cudnn.h"

#include <charconv>

#include <fmt/format.h>

namespace gpulock::probe {
namespace {

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

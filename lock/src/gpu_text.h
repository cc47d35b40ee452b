#pragma once
// The text of a [tool.gpulock.gpu] value: its type's canonical print, the text gpulock writes
// (a driver as written, CUDA "12.4", "strict", "sm_90"). The writer writes it, diff shows it.

#include <optional>
#include <string>
#include <vector>

#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::lock {

inline std::string gpu_text(const gpu::DriverSpec& v) {
  return v.to_string();
}
inline std::string gpu_text(const gpu::DriverVersion& v) {
  return v.to_string();
}
inline std::string gpu_text(const gpu::CudaVersion& v) {
  return v.to_string();
}
inline std::string gpu_text(gpu::CudaCompat v) {
  return std::string(gpu::cuda_compat_name(v));
}
inline std::string gpu_text(const std::string& v) {
  return v;
}

template <class T>
std::optional<std::string> gpu_text(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return gpu_text(*v);
}

inline std::vector<std::string> gpu_text(const std::vector<gpu::ComputeCapability>& archs) {
  std::vector<std::string> out;
  out.reserve(archs.size());
  for (const auto& a : archs)
    out.push_back(a.to_string());
  return out;
}

}  // namespace gpulock::lock

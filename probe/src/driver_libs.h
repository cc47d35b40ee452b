#pragma once
// NVML and the CUDA driver API, loaded with dlopen in a forked child (child_process.h). The
// child reports line by line ("key\tvalue\n") as it goes, announcing each call before making
// it, so the parent knows which call hung or crashed and keeps what came before.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/sys/process.h"

namespace gpulock::probe::detail {

/// A GPU as a library reported it (raw values).
struct LibGpu {
  std::uint32_t index = 0;
  std::string name;
  std::string uuid;
  int cc_major = -1;
  int cc_minor = -1;
  std::optional<std::uint64_t> memory_bytes;
};

/// Everything one library child reported.
struct LibReport {
  bool loaded = false;
  std::string path;                    ///< the file that loaded (symlinks resolved)
  std::vector<std::string> dl_errors;  ///< dlopen errors of the candidates tried
  std::string missing_symbol;          ///< a required function the library lacks
  std::string pending_call;            ///< the last call announced but not finished
  /// Return codes by function, in call order ("nvmlInit_v2", 0).
  std::vector<std::pair<std::string, int>> calls;
  std::string driver_version;       ///< nvmlSystemGetDriverVersion
  std::optional<int> cuda_version;  ///< nvmlSystemGetCudaDriverVersion_v2 / cuDriverGetVersion
  std::optional<std::uint32_t> count;
  std::vector<LibGpu> gpus;
  sys::ChildResult child;

  /// The return code of the first call of `function`, if it was made.
  [[nodiscard]] std::optional<int> rc(std::string_view function) const;
};

/// Starts the NVML child: tries each of `candidates` (a soname, then absolute paths). With
/// `hermetic`, a soname is looked up in LD_LIBRARY_PATH only (tests).
[[nodiscard]] core::Result<sys::ChildProcess> start_nvml_child(std::vector<std::string> candidates,
                                                               bool hermetic);
/// Starts the libcuda child, same.
[[nodiscard]] core::Result<sys::ChildProcess> start_cuda_child(std::vector<std::string> candidates,
                                                               bool hermetic);

/// Parses a child's report (its `out`) into a LibReport.
[[nodiscard]] LibReport parse_lib_report(sys::ChildResult child);

/// "NVML_ERROR_LIB_RM_VERSION_MISMATCH" for 18, "NVML_ERROR_UNKNOWN (999)".
[[nodiscard]] std::string nvml_error_name(int rc);
/// "CUDA_ERROR_STUB_LIBRARY" for 34, "CUDA_ERROR_NO_DEVICE" for 100.
[[nodiscard]] std::string cuda_error_name(int rc);

// Return codes gpulock interprets.
inline constexpr int kNvmlErrorNoPermission = 4;
inline constexpr int kNvmlErrorDriverNotLoaded = 9;
inline constexpr int kNvmlErrorLibRmVersionMismatch = 18;
inline constexpr int kCudaErrorStubLibrary = 34;
inline constexpr int kCudaErrorNoDevice = 100;
inline constexpr int kCudaErrorSystemDriverMismatch = 803;

}  // namespace gpulock::probe::detail

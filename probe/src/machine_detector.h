#pragma once
// The detector behind detect_machine (machine.h): one object for the steps, their state and the
// evidence they gather. Its parts, one file each:
//   machine.cpp            the order of the steps; paths under the test root, steps, warnings
//   machine_overrides.cpp  1. the overrides, and reading them from the flags and the environment
//   machine_libraries.cpp  2. and 3. NVML and libcuda, each in a child process
//   machine_kernel.cpp     4. the kernel module's version files and the device nodes
//   machine_smi.cpp        5. nvidia-smi, when the steps above left something unknown
//   machine_combine.cpp    the values from the steps' answers: driver, CUDA ceiling, GPUs, archs
// The verdict is a pure function of what they found (machine_verdict.cpp).

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulock/probe/machine.h"
#include "gpulock/sys/process.h"

#include "driver_libs.h"
#include "machine_sources.h"
#include "machine_verdict.h"

namespace gpulock::probe::detail {

/// A timeout for a message: "30 s", "1.5 s".
[[nodiscard]] std::string format_seconds(std::chrono::milliseconds ms);

enum class FileRead { Ok, Missing, Unreadable };

// The state of the nvidia-smi step.
struct SmiState {
  bool ran = false;
  bool found = false;
  std::vector<detail::SmiGpu> gpus;
};

class Detector {
 public:
  Detector(const DetectOptions& options, MachineInfo& info) : o_(options), m_(info) {}

  void run();

 private:
  // machine.cpp: paths under the (test) root, steps and warnings.
  std::string under_root(std::string_view path) const;
  std::string shown(std::string_view path) const;
  bool exists(std::string_view path) const;
  FileRead read_file(std::string_view path, std::string& content, std::string& error) const;
  void step(std::string name, StepOutcome outcome, std::string detail);
  void warn(std::string text);

  // machine_overrides.cpp: 1. overrides.
  bool record_overrides();

  // machine_libraries.cpp: 2. and 3. NVML and libcuda.
  void run_libraries();
  std::optional<std::pair<StepOutcome, std::string>> abnormal_end(const LibReport& r,
                                                                  std::string_view library) const;
  void record_nvml();
  void record_cuda();

  // machine_kernel.cpp: 4. the kernel module and the device nodes.
  void read_kernel_module();
  std::size_t count_proc_gpus() const;
  void scan_devices();

  // machine_smi.cpp: 5. nvidia-smi.
  void run_nvidia_smi_if_needed();
  core::Result<sys::ChildResult> run_smi(const std::string& path, bool with_cc);
  void classify_smi(const std::string& path, const sys::ChildResult& r, bool with_cc);

  // machine_combine.cpp: combining.
  void set_ceiling_from_table();
  static std::optional<gpu::ComputeCapability> cc_of(const LibGpu& g);
  std::vector<GpuInfo> gpus_from(const LibReport& r, Method method) const;
  void combine();
  std::optional<gpu::DriverVersion> combine_driver();
  void find_driver_mismatch(const std::optional<gpu::DriverVersion>& cuda_file);
  void combine_gpus();
  void combine_ceiling();
  void combine_archs();
  void warn_missing_libraries();
  void compare_nvml_and_cuda();

  const DetectOptions& o_;
  MachineInfo& m_;
  std::optional<LibReport> nvml_;
  std::optional<LibReport> cuda_;
  bool nvml_ok_ = false;
  bool cuda_init_failed_ = false;
  bool wsl_libcuda_ = false;
  std::optional<gpu::DriverVersion> sysfs_;
  std::optional<gpu::DriverVersion> procfs_;
  std::size_t proc_gpus_ = 0;
  SmiState smi_;
  detail::Evidence ev_;  // what decide() reads besides m_
};

}  // namespace gpulock::probe::detail

#pragma once
// The verdict of machine detection, apart from the steps that gather its evidence: detect_machine
// (machine.cpp) runs the steps (machine_detector.h), fills MachineInfo's values and an Evidence,
// then calls decide.

#include <string>
#include <string_view>
#include <vector>

#include "gpulock/probe/machine.h"

namespace gpulock::probe::detail {

/// What the steps found that the verdict rests on, besides the values already in MachineInfo
/// (driver, CUDA ceiling, kernel module, GPUs, architectures). Each reason list keeps the
/// steps' sentences in order; the first one is quoted in the verdict.
struct Evidence {
  bool cuda_ok = false;             ///< libcuda initialized and counted the devices
  bool cuda_hidden_by_env = false;  ///< CUDA_VISIBLE_DEVICES hides every GPU from CUDA
  bool wsl = false;                 ///< WSL 2: the Windows host's driver
  bool gpu_nodes = false;           ///< /dev/nvidiaN device nodes exist
  std::string stub_path;            ///< the CUDA toolkit's stub libcuda, when that is all found
  std::string user_space_version;   ///< the user-space libraries' driver version, if known
  std::vector<std::string> denied_nodes;       ///< device nodes this user may not open
  std::vector<std::string> mismatch;           ///< user-space and kernel driver disagree
  std::vector<std::string> no_permission;      ///< a GPU is there but may not be used
  std::vector<std::string> module_not_loaded;  ///< libraries without the kernel module
  std::vector<std::string> no_device;          ///< a driver but no GPU visible
};

/// Sets `m.status`, `m.verdict`, `m.hints` and `m.wsl`, and adds the warnings the verdict
/// implies, from `evidence` and the values already in `m`. Pure: reads no file, runs nothing.
void decide(const Evidence& evidence, MachineInfo& m);

/// "1 GPU", "2 GPUs".
[[nodiscard]] std::string plural(std::size_t n, std::string_view word);
/// `items` joined by `sep`.
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::string_view sep);
/// "sm_80, sm_90".
[[nodiscard]] std::string archs_text(const std::vector<gpu::ComputeCapability>& archs);

}  // namespace gpulock::probe::detail

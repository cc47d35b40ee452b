#pragma once
/// @file
/// PEP 825 variant selection (Draft; shared/data/gpu-stacks.md §7.5): which variant label of a
/// release this machine takes, in PEP 825's order, with the NVIDIA namespace's compatible values
/// from gpulock's own detection (the semantics of nvidia-variant-provider: values from the
/// driver's UMD down, sm_arch of the highest GPU), and gpulock's policy on top: the strict
/// driver ceiling (the build's CUDA version, read from its label, not `cuda_version_lower_bound`)
/// and every GPU's architecture (an intersection, not the highest GPU's). The `null` variant is
/// never taken silently when a GPU was asked for. Pure: no I/O.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/index/variants.h"

namespace gpulock::catalog {

/// How the NVIDIA namespace is judged.
enum class VariantPolicy : std::uint8_t {
  Pep825,   ///< the provider's semantics only (PEP 825 ordering with NVP's values)
  Gpulock,  ///< plus the strict ceiling (unless --cuda-compat minor) and all GPUs' archs
};

/// The ordered compatible values of an NVIDIA feature on `machine` (nvidia-variant-provider's
/// `get_supported_configs`): `cuda_version_lower_bound` from the ceiling's X.Y down to 11,
/// `cuda_version_upper_bound` above it, `sm_arch` of the highest GPU; empty without a GPU.
[[nodiscard]] std::vector<std::string> nvidia_feature_values(std::string_view feature,
                                                             const gpu::GpuContext& machine);

/// The kernels a variant's `nvidia :: sm_arch` values name (`90_real`: SASS for 9.0,
/// `120_virtual`: PTX for 12.0), as the GPU policy's arch list; nullopt without sm_arch.
[[nodiscard]] std::optional<gpu::ArchList> arch_list_of_variant(
    const index::VariantProperties& props);

struct VariantSelection {
  std::vector<std::string> order;               ///< compatible labels, best first (no null)
  std::map<std::string, std::string> rejected;  ///< label -> why ("needs CUDA 12.8 ...")
  bool null_available = false;                  ///< a `null` variant exists
  /// The chosen label; empty when no variant fits (never `null` while a GPU was asked for).
  std::string chosen;
  /// Why nothing was chosen, for the explanation ("no variant of torch 2.10.0 fits ...").
  std::string problem;
  /// The chosen label's properties as "ns :: feature :: value", narrowed to those the machine
  /// supports (PEP 825 variant_properties).
  std::vector<std::string> properties;
};

/// Orders and filters the variants of one release (`labels`: those of its wheels for the
/// target; a label missing from `metadata` is incompatible). `gpu_asked`: a CUDA build was
/// requested (no silent `null`).
[[nodiscard]] VariantSelection select_variant(const index::VariantsJson& metadata,
                                              const std::vector<std::string>& labels,
                                              const gpu::GpuContext& machine, VariantPolicy policy,
                                              bool gpu_asked);

}  // namespace gpulock::catalog

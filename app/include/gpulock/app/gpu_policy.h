#pragma once
/// @file
/// Facts and rules of gpulock's GPU policy (DESIGN.md §GPU model, issue "GPU policy"): which
/// packages form the PyTorch family, which of them link CUDA, what CUDA a wheel needs, and which
/// GPU architectures a torch build carries kernels for.
///
/// Data sources are named beside each table in gpu_policy.cpp (keys of
/// shared/data/pytorch-gpu-wheels.json, which cites pytorch/test-infra, pytorch/builder and
/// NVIDIA's release notes).

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/version.h"
#include "gpulock/probe/cuda_versions.h"

namespace gpulock::app {

/// CUDA versions and compute capabilities are probe's types (probe/cuda_versions.h): ordered
/// numerically, never by PEP 440 local-label order (`cu92` sorts above `cu130` there).
using CudaVersion = probe::CudaVersion;
using ComputeCapability = probe::ComputeCapability;

/// The PyTorch variant name of a CUDA version: 12.4 -> "cu124".
[[nodiscard]] std::string variant_name(CudaVersion cuda);

/// What a wheel's local version label says about its build.
enum class BuildKind : std::uint8_t {
  Unlabeled,  ///< no local label (PyPI builds): CUDA comes from its nvidia-* pins, if any
  Cuda,       ///< +cuXYZ
  Cpu,        ///< +cpu (also +cpu.cxx11.abi and similar)
  Rocm,       ///< +rocmX.Y
  Other,      ///< +xpu or anything else gpulock does not model
};

struct BuildLabel {
  BuildKind kind = BuildKind::Unlabeled;
  std::optional<CudaVersion> cuda;  ///< for Cuda
};

/// Classifies a version's local label: `+cu124` -> {Cuda, 12.4}, `+cu92` -> {Cuda, 9.2},
/// `+cu130` -> {Cuda, 13.0}, `+cpu` -> {Cpu}, none -> {Unlabeled}.
[[nodiscard]] BuildLabel classify_build(const core::Version& version);

/// The CUDA a wheel needs from its dependencies: the version of an `nvidia-cuda-runtime*` pin
/// (`nvidia-cuda-runtime-cu12==12.4.127` -> 12.4) or of a `cuda-toolkit` pin
/// (`cuda-toolkit[cudart]==13.0.2` -> 13.0); nullopt when there is neither. Only exact (`==`)
/// pins count.
[[nodiscard]] std::optional<CudaVersion> cuda_from_dependencies(std::span<const core::Requirement> requires_dist);

/// `nvidia-cuda-runtime-cuNN X.Y.z` (and the suffix-less CUDA 13 `nvidia-cuda-runtime`) itself
/// needs CUDA X.Y: returns X.Y for such a package name and version, nullopt otherwise.
[[nodiscard]] std::optional<CudaVersion> cuda_needed_by_runtime_package(std::string_view normalized_name,
                                                                        const core::Version& version);

/// What a CUDA-bound package needs of the driver (issue 16 item 2; shared/data/gpu-stacks.md
/// §6.5): the CUDA major always, for every `nvidia-*` wheel (its `-cu11`/`-cu12`/`-cu13` suffix,
/// or none for CUDA 13's names), `cuda-toolkit` and `cuda-bindings`/`cuda-python` (the version's
/// major); the minor too (`minor_exact`) only where the version names the CUDA release:
/// `nvidia-cuda-runtime*`, `nvidia-cuda-nvrtc*`, `nvidia-nvjitlink*`, `nvidia-cuda-cupti*`, CUDA
/// 12's `nvidia-cublas-cu12` and `cuda-toolkit`. (cuBLAS 13.1 ships with CUDA 13.0; cuFFT, cuRAND,
/// cuSOLVER and cuSPARSE versions are not CUDA versions.) nullopt for any other package.
struct CudaNeed {
  CudaVersion cuda;          ///< X.0 when only the major is known
  bool minor_exact = false;  ///< the minor is the CUDA release the package needs
};
[[nodiscard]] std::optional<CudaNeed> cuda_need_of_package(std::string_view normalized_name,
                                                           const core::Version& version);

/// The PyTorch family: packages read from the torch-family source (`--torch-backend`,
/// `--nightly`). Same list as uv's `TorchStrategy::applies_to` (shared/research/uv.md §1.4).
[[nodiscard]] bool is_torch_family(std::string_view normalized_name);

/// Torch-family packages that link CUDA and so must share one variant (`__cuda_variant`);
/// triton and pytorch-triton are not CUDA-linked (uv.md §1.4 `has_system_dependency`).
[[nodiscard]] bool is_cuda_linked(std::string_view normalized_name);

/// The architectures a torch build carries: cubins for these capabilities, and PTX for `ptx`
/// (JIT-compiled on any newer GPU).
struct ArchList {
  std::vector<ComputeCapability> cubins;
  std::optional<ComputeCapability> ptx;
  std::string source;  ///< where the list comes from (a key of the shared data)
  bool assumed = false;  ///< no list is known: bounded by what its CUDA can build
};

/// The architectures a build with CUDA `cuda` can carry SASS for (shared/data/cuda-archs.md: what
/// each toolkit adds and drops), as an assumed list with no PTX: the bound used when a build's own
/// arch list is unknown. `source` says it is assumed.
[[nodiscard]] ArchList archs_cuda_can_build(CudaVersion cuda);


/// The arch list of torch `torch_version` (its release X.Y decides) built for CUDA `cuda` on
/// `machine` ("x86_64", "aarch64"); nullopt when the table has no entry (the caller allows the
/// build and warns).
[[nodiscard]] std::optional<ArchList> torch_arch_list(const core::Version& torch_version, CudaVersion cuda,
                                                      std::string_view machine);

/// Does a build with `list` run on a GPU of capability `gpu`? Yes if the list has a cubin X.Z with
/// Z <= Y for the GPU's X.Y (same major), or PTX for an arch <= X.Y.
[[nodiscard]] bool arch_list_runs_on(const ArchList& list, ComputeCapability gpu);

/// The CUDA versions whose builds of torch `torch_version` (its release X.Y decides) carry
/// kernels for a GPU of capability `gpu` on `machine`, per the arch table, lowest first. Empty
/// when no build in the table does (or the table has no entry for the release).
[[nodiscard]] std::vector<CudaVersion> torch_cuda_builds_running_on(const core::Version& torch_version,
                                                                     ComputeCapability gpu, std::string_view machine);

/// "5.0, 6.0, 7.0, 8.0+PTX" style rendering for messages.
[[nodiscard]] std::string describe_arch_list(const ArchList& list);

/// cuDNN 9.11 and newer dropped Maxwell, Pascal and Volta: the lowest capability a cuDNN version
/// supports (7.5 from 9.11.0 on), or nullopt for no limit known.
[[nodiscard]] std::optional<ComputeCapability> cudnn_min_capability(const core::Version& cudnn_version);

}  // namespace gpulock::app

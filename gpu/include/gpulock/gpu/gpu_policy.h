#pragma once
/// @file
/// Facts and rules of gpulock's GPU policy (DESIGN.md §GPU model, issue "GPU policy"): which
/// packages form the PyTorch family, which of them link CUDA, what CUDA a wheel needs, and which
/// GPU architectures a torch build carries kernels for; and GpuPolicy, the policy as one pure
/// unit (issue 21): from a candidate's facts and the machine, the solver edges, the reasons a
/// candidate cannot be used and the explanation's GPU words. No I/O.
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
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/machine.h"
#include "gpulock/resolver/provider.h"

namespace gpulock::gpu {

/// The PyTorch variant name of a CUDA version: 12.4 -> "cu124".
[[nodiscard]] std::string variant_name(CudaVersion cuda);

/// The CUDA a PEP 825 variant label names (`cuda12.8`, `cu129`), nullopt for others (`null`,
/// `xpu`).
[[nodiscard]] std::optional<CudaVersion> cuda_of_variant_label(std::string_view label);

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
[[nodiscard]] std::optional<CudaVersion> cuda_from_dependencies(
    std::span<const core::Requirement> requires_dist);

/// `nvidia-cuda-runtime-cuNN X.Y.z` (and the suffix-less CUDA 13 `nvidia-cuda-runtime`) itself
/// needs CUDA X.Y: returns X.Y for such a package name and version, nullopt otherwise.
[[nodiscard]] std::optional<CudaVersion> cuda_needed_by_runtime_package(
    std::string_view normalized_name, const core::Version& version);

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
  std::string source;    ///< where the list comes from (a key of the shared data)
  bool assumed = false;  ///< no list is known: bounded by what its CUDA can build
};

/// The architectures a build with CUDA `cuda` can carry SASS for (shared/data/cuda-archs.md: what
/// each toolkit adds and drops), as an assumed list with no PTX: the bound used when a build's own
/// arch list is unknown. `source` says it is assumed.
[[nodiscard]] ArchList archs_cuda_can_build(CudaVersion cuda);

/// An arch list from its text: "8.0;9.0;12.0+PTX" (cubins, and PTX for 12.0), "PTX:12.0" (PTX
/// only); `source` says where it comes from.
[[nodiscard]] ArchList parse_arch_list(std::string_view text, std::string_view source);

/// The arch list of torch `torch_version` (its release X.Y decides) built for CUDA `cuda` on
/// `machine` ("x86_64", "aarch64"); nullopt when the table has no entry (the caller allows the
/// build and warns).
[[nodiscard]] std::optional<ArchList> torch_arch_list(const core::Version& torch_version,
                                                      CudaVersion cuda, std::string_view machine);

/// Does a build with `list` run on a GPU of capability `gpu`? Yes if the list has a cubin X.Z with
/// Z <= Y for the GPU's X.Y (same major), or PTX for an arch <= X.Y.
[[nodiscard]] bool arch_list_runs_on(const ArchList& list, ComputeCapability gpu);

/// The CUDA versions whose builds of torch `torch_version` (its release X.Y decides) carry
/// kernels for a GPU of capability `gpu` on `machine`, per the arch table, lowest first. Empty
/// when no build in the table does (or the table has no entry for the release).
[[nodiscard]] std::vector<CudaVersion> torch_cuda_builds_running_on(
    const core::Version& torch_version, ComputeCapability gpu, std::string_view machine);

/// "5.0, 6.0, 7.0, 8.0+PTX" style rendering for messages.
[[nodiscard]] std::string describe_arch_list(const ArchList& list);

/// cuDNN 9.11 and newer dropped Maxwell, Pascal and Volta: the lowest capability a cuDNN version
/// supports (7.5 from 9.11.0 on), or nullopt for no limit known.
[[nodiscard]] std::optional<ComputeCapability> cudnn_min_capability(
    const core::Version& cudnn_version);

/// The kernels a build carries, by the tables (one rule for candidates and for locks): torch's
/// arch list (by release and CUDA on `platform_machine`; `torch_list` when known from elsewhere;
/// what its CUDA can build, assumed, when no list is known), a stacks row (JAX, CuPy,
/// flash-attn, TensorFlow, ...), else, for a GPU package outside the torch family and the
/// `nvidia-*`/`cuda-*` libraries, the CUDA major's first architecture (CUDA 13: 7.5). nullopt
/// when no table speaks for the package (torchvision and torchaudio follow torch's build).
struct Kernels {
  CudaVersion cuda;                        ///< the CUDA of the build
  bool exact = false;                      ///< the build names its CUDA minor (else the major)
  ArchList list;                           ///< the kernels (when `floor` is unset)
  std::optional<ComputeCapability> floor;  ///< only a floor is known: archs below it have none
};
[[nodiscard]] std::optional<Kernels> kernels_of(std::string_view package,
                                                const core::Version& version, CudaNeed need,
                                                std::string_view platform_machine,
                                                const std::optional<ArchList>& torch_list);

/// Why a build with `kernels` cannot run on a GPU of capability `arch` ("has no kernels for
/// your GPU's sm_61 (its CUDA 12.8 build carries 7.5, 8.0, 9.0, 10.0, 12.0+PTX)"); nullopt when
/// it can (arch_list_runs_on, or at or above the floor).
[[nodiscard]] std::optional<std::string> missing_kernels(const Kernels& kernels,
                                                         ComputeCapability arch);

/// The driver branches that can drive a GPU family (shared/data/gpu-names.md, "Driver branches
/// that can drive a family"): Blackwell (10.x, 11.x, 12.x) from R570, Hopper from R520; R580 is
/// the last branch for Maxwell, Pascal and Volta, R470 the last for Kepler. nullopt for a family
/// the data says nothing of.
struct DriverBranches {
  std::string_view family;             ///< "Blackwell"
  std::optional<std::uint32_t> first;  ///< the first branch that drives it (570)
  std::optional<std::uint32_t> last;   ///< the last branch that drives it (580)
};
[[nodiscard]] std::optional<DriverBranches> driver_branches_for(ComputeCapability arch);

/// "Blackwell GPUs (sm_120) need driver branch R570 or later, and this driver is R560"; nullopt
/// when `driver`'s branch drives `arch` (or nothing is known).
[[nodiscard]] std::optional<std::string> branch_cannot_drive(ComputeCapability arch,
                                                             const DriverVersion& driver);

/// The virtual packages of the GPU policy: `__cuda` (one version: the driver's CUDA ceiling),
/// `__cuda_variant` (the CUDA X.Y, or 0 for CPU, that the CUDA-linked torch family shares) and
/// `__cuda_major` (one CUDA major's libraries per environment).
inline constexpr std::string_view kCuda = "__cuda";
inline constexpr std::string_view kCudaVariant = "__cuda_variant";
inline constexpr std::string_view kCudaMajor = "__cuda_major";
/// `__import_<name>` (issue 23): packages that install the same import package (`cupy-cuda12x`
/// and `cupy-cuda13x` both install `cupy`) each depend on their own version of it, so two of
/// them cannot share an environment.
inline constexpr std::string_view kImportPrefix = "__import_";

/// A wheel that exists only as a 0.0.x placeholder sdist (`nvidia-cuda-runtime-cu13 0.0.1`): the
/// real package's name (`nvidia-cuda-runtime`, CUDA 13's unsuffixed name), nullopt otherwise
/// (gpu-stacks.md §6.1).
[[nodiscard]] std::optional<std::string> placeholder_real_name(std::string_view normalized_name,
                                                               const core::Version& version);

/// Two packages of different CUDA majors that install the same library directory (issue 23):
/// "nvidia-cudnn-cu12 (CUDA 12, for jax-cuda12-plugin) and nvidia-cudnn-cu13 (CUDA 13, for
/// torch) both install nvidia/cudnn/lib".
struct SharedDirConflict {
  std::string dir;
  struct Side {
    std::string package;
    std::uint32_t major = 0;
    std::string required_by;  ///< a package that requires it ("torch"), or empty
  };
  Side first, second;
};
[[nodiscard]] std::string shared_dir_text(const SharedDirConflict& conflict);

/// What the resolution knows of the target machine (a gpu::Machine: `no_gpu` is `--driver none`,
/// only CPU builds of CUDA-linked packages qualify; an absent ceiling is unknown, no driver found
/// and none given), with the compatibility the lock is made under (`--cuda-compat`).
struct GpuContext : Machine {
  CudaCompat compat = CudaCompat::Strict;
};

/// One candidate as the GPU policy sees it: what the catalog read of the wheel the target would
/// install. Its build label is the version's (classify_build).
struct CandidateFacts {
  std::string_view package;  ///< PEP 503 normalized
  const core::Version& version;
  /// The wheel's Requires-Dist that apply to the target (its nvidia-* / cuda-toolkit pins).
  std::span<const core::Requirement> requires_dist = {};
  /// torch: the arch list of this build when known from elsewhere; nullopt: torch_arch_list's.
  std::optional<ArchList> arch_list = std::nullopt;
  /// PEP 825: the label of the variant wheel chosen ("" for none). A label naming a CUDA
  /// (`cuda12.8`, `cu129`) is the CUDA need, before the Requires-Dist pins (a variant's
  /// un-suffixed `nvidia-*` names do not say its CUDA); `null` is a build without CUDA.
  std::string_view variant_label = {};
};

/// What the GPU policy adds to a candidate's dependencies.
struct GpuFacts {
  /// In this order: `__cuda_variant` (CUDA-linked torch family), `__cuda_major` (nvidia-*),
  /// `__cuda` (anything that needs CUDA).
  std::vector<resolver::Dependency> dependencies;
  /// Why the candidate cannot be used (GpuArchMissing: no kernels for a GPU of the machine).
  std::optional<resolver::UnavailableReason> unavailable;
  std::optional<CudaNeed> need;  ///< the CUDA it needs (label, pins, or its own name)
  bool archs_assumed = false;    ///< torch: no arch list known, bounded by its CUDA's archs
  std::string warning;           ///< one line for the run's warnings, or empty
};

/// The GPU policy (DESIGN.md §GPU model) for one machine and target CPU (`platform_machine`:
/// "x86_64", "aarch64"): pure, so that the provider, the explanation and the tests share it.
class GpuPolicy {
 public:
  GpuPolicy(GpuContext machine, std::string platform_machine);

  [[nodiscard]] const GpuContext& machine() const noexcept { return machine_; }

  // ---- solver facts ----
  /// The candidates of `__cuda` (the ceiling; none without a GPU or a known ceiling),
  /// `__cuda_variant` (13.9 ... 9.0, then 0 for CPU) and `__cuda_major` (13 ... 9); nullopt for
  /// any other name.
  [[nodiscard]] std::optional<resolver::PackageCandidates> virtual_candidates(
      std::string_view name) const;
  /// The dependencies of a virtual candidate: a CUDA X.Y variant uses CUDA X libraries
  /// (`__cuda_major==X`); nullopt for a name that is not the policy's.
  [[nodiscard]] std::optional<resolver::Dependencies> virtual_dependencies(
      std::string_view name, const core::Version& version) const;
  /// The CUDA a candidate needs: its +cuXYZ label, the CUDA of its runtime pins (PyPI torch),
  /// else its own name and version (nvidia-*, cuda-toolkit, cuda-bindings).
  [[nodiscard]] static std::optional<CudaNeed> cuda_need(
      std::string_view package, const core::Version& version,
      std::span<const core::Requirement> requires_dist);
  /// The edges and the verdict for one candidate whose metadata was read.
  [[nodiscard]] GpuFacts facts(const CandidateFacts& candidate) const;
  /// Why a candidate cannot be used before its metadata is read: cuDNN >= 9.11 on a GPU below
  /// sm_75 ("needs 7.5 or newer and your GPU is 6.1").
  [[nodiscard]] std::optional<resolver::UnavailableReason> candidate_unavailable(
      std::string_view package, const core::Version& version) const;
  /// A build from a torch variant above the driver's ceiling (--torch-backend auto): one wording
  /// for all of them, so that the explanation states it once for a range.
  [[nodiscard]] resolver::UnavailableReason above_ceiling(const BuildLabel& build) const;
  /// Whether the machine runs builds that need CUDA `need` (false without a GPU or a ceiling).
  [[nodiscard]] bool allows(CudaVersion need) const;
  /// Whether a torch build for CUDA `cuda` has kernels for every GPU of the machine (its arch
  /// list, or what its CUDA can build when none is known).
  [[nodiscard]] bool runs_on_every_gpu(const core::Version& torch_version, CudaVersion cuda) const;
  /// The CUDA builds of torch `torch_version`'s release with kernels for `arch`, lowest first.
  [[nodiscard]] std::vector<CudaVersion> builds_with_kernels_for(const core::Version& torch_version,
                                                                 ComputeCapability arch) const;

  // ---- words ----
  /// "your driver 550.54.14 supports CUDA <= 12.4", "--driver none means no GPU", ...
  [[nodiscard]] std::string ceiling_text() const;
  /// "needs CUDA 13.0 and your driver 535.54.03 supports CUDA <= 12.2".
  [[nodiscard]] std::string needs_cuda_text(CudaVersion need) const;
  /// The GPU virtual packages ("CUDA >= 12.6", "the CUDA 12.4 variant", "CUDA 12 libraries") and
  /// labeled torch-family builds ("torch==2.7.1", "torch (CUDA 11.8 builds)"); nullopt otherwise.
  [[nodiscard]] std::optional<std::string> describe_term(const resolver::Term& term) const;
  /// "torch==2.7.1 (CUDA 12.6 build) needs CUDA >= 12.6", "torchvision==0.19.0 is a CUDA 11.8
  /// build", "nvidia-cudnn-cu12==9.5.1.17 uses CUDA 12 libraries"; nullopt when `dependency` is
  /// not a GPU virtual package.
  [[nodiscard]] std::optional<std::string> describe_dependency(
      const resolver::Term& depender, const resolver::Term& dependency,
      std::string_view depender_text, std::string_view dependency_text) const;
  /// `__cuda`: ceiling_text(); nullopt for other names.
  [[nodiscard]] std::optional<std::string> describe_no_versions(const resolver::Term& term) const;
  /// The hints of a GPU virtual package in a failed solve (`__cuda`: the driver a newer CUDA
  /// build needs, or how to lock for a GPU machine under --driver none).
  [[nodiscard]] std::vector<std::string> virtual_hints(std::string_view name) const;
  /// "torch's CUDA 12.6 builds need a driver >= 560.28.03 (run `gpulock probe --machine` to see
  /// yours)"; nullopt when no driver is known for that CUDA.
  [[nodiscard]] std::optional<std::string> driver_needed_hint(std::string_view package,
                                                              CudaVersion lowest) const;
  /// The build of the newest version a request admits, when its lowest build needs more than
  /// the lowest of all (an unpinned request, issue 43): "torch's CUDA 11.8 builds need a driver
  /// >= 520.61.05, and torch 2.13.0 (the newest) a driver >= 560.28.03 for its CUDA 12.6 build
  /// (run `gpulock probe --machine` to see yours)".
  struct NewestBuild {
    const core::Version& version;
    CudaVersion cuda;
  };
  [[nodiscard]] std::optional<std::string> driver_needed_hint(std::string_view package,
                                                              CudaVersion lowest,
                                                              const NewestBuild& newest) const;
  /// A release (`torch 2.8`) without kernels for `arch` in a candidate: which CUDA builds have
  /// them ("torch 2.8 has kernels for your GPU's 6.1 only in variant cu126").
  [[nodiscard]] static std::string arch_fix_hint(std::string_view release, ComputeCapability arch,
                                                 std::span<const CudaVersion> builds);
  /// What the machine's driver lacks for those builds, to follow arch_fix_hint: "the lowest,
  /// CUDA 12.9, needs a driver >= 575.51.03 (yours is 560.35.03)" when the driver is below the
  /// lowest build's minimum, and "Blackwell GPUs need driver branch R570 or later" when the
  /// driver's branch cannot drive the GPU at all (driver_branches_for). nullopt when the
  /// driver is unknown or runs the lowest build.
  [[nodiscard]] std::optional<std::string> arch_driver_note(
      ComputeCapability arch, std::span<const CudaVersion> builds) const;

 private:
  GpuContext machine_;
  std::string platform_machine_;
};

}  // namespace gpulock::gpu

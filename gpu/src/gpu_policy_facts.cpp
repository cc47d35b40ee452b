// GpuPolicy: the GPU policy as solver facts (DESIGN.md §GPU model): the candidates of the virtual
// packages (__cuda, __cuda_variant, __cuda_major), the edges a candidate adds to them, and why a
// candidate cannot be used on the machine. Pure: no I/O.

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/specifier.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/gpu/gpu_stacks.h"

namespace gpulock::gpu {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

namespace {

core::Version make_version(std::uint64_t major, std::uint64_t minor) {
  std::uint64_t parts[2] = {major, minor};
  return core::Version::from_release(parts);
}

resolver::Dependency edge(std::string_view name, const std::string& specifier) {
  return {std::string(name), {}, *core::SpecifierSet::parse(specifier)};
}

}  // namespace

GpuPolicy::GpuPolicy(GpuContext machine, std::string platform_machine)
    : machine_(std::move(machine)), platform_machine_(std::move(platform_machine)) {}

std::optional<resolver::PackageCandidates> GpuPolicy::virtual_candidates(
    std::string_view name) const {
  resolver::PackageCandidates out;
  out.priority = 100;
  if (name == kCuda) {
    if (!machine_.no_gpu && machine_.ceiling) {
      out.candidates.push_back({make_version(machine_.ceiling->major, machine_.ceiling->minor),
                                false,
                                std::nullopt,
                                {}});
    }
    return out;
  }
  if (name == kCudaVariant) {
    // Every CUDA a variant label can name (9.0 to 13.9), and 0 for CPU builds.
    for (std::uint64_t major = 13; major >= 9; --major) {
      for (std::uint64_t minor = 10; minor-- > 0;)
        out.candidates.push_back({make_version(major, minor), false, std::nullopt, {}});
    }
    out.candidates.push_back({make_version(0, 0), false, std::nullopt, {}});
    return out;
  }
  if (name == kCudaMajor) {
    for (std::uint64_t major = 13; major >= 9; --major) {
      std::uint64_t parts[1] = {major};
      out.candidates.push_back({core::Version::from_release(parts), false, std::nullopt, {}});
    }
    return out;
  }
  if (name.starts_with(kImportPrefix)) {
    // One version per package that installs the import package (the table's `provides` row).
    for (const auto& row : gpu_stacks().provides) {
      if (row.import_name != name.substr(kImportPrefix.size())) continue;
      for (std::uint64_t k = 1; k <= row.packages.size(); ++k) {
        std::uint64_t parts[1] = {k};
        out.candidates.push_back({core::Version::from_release(parts), false, std::nullopt, {}});
      }
    }
    return out;
  }
  return std::nullopt;
}

std::optional<resolver::Dependencies> GpuPolicy::virtual_dependencies(
    std::string_view name, const core::Version& version) const {
  if (name != kCuda && name != kCudaVariant && name != kCudaMajor &&
      !name.starts_with(kImportPrefix))
    return std::nullopt;
  resolver::Dependencies out;
  if (name == kCudaVariant && version.release_at(0) != 0) {
    // A CUDA X.Y variant uses CUDA X libraries: it meets `nvidia-*-cuNN` pins through
    // `__cuda_major`.
    out.dependencies.push_back(edge(kCudaMajor, fmt::format("=={}", version.release_at(0))));
  }
  return out;
}

namespace {

// The CUDA major of the nvidia-* wheels a wheel requires, when they agree (gpu-stacks.md §6.1:
// `-cu11`/`-cu12`/`-cu13` suffixes, CUDA 13's unsuffixed names).
std::optional<std::uint32_t> major_of_required_libraries(
    std::span<const core::Requirement> requires_dist) {
  std::optional<std::uint32_t> major;
  for (const auto& req : requires_dist) {
    std::string name = req.normalized_name();
    if (!name.starts_with("nvidia-")) continue;
    auto need = cuda_need_of_package(name, core::Version{});
    if (!need) continue;
    if (major && *major != need->cuda.major) return std::nullopt;
    major = need->cuda.major;
  }
  return major;
}

std::optional<CoupledBuild> coupled_build(std::string_view package, const core::Version& version) {
  const auto* row = gpu_stacks().coupled_of(package);
  if (row == nullptr || !version.has_local()) return std::nullopt;
  return parse_coupled_label(row->form, version);
}

}  // namespace

std::optional<CudaNeed> GpuPolicy::cuda_need(std::string_view package, const core::Version& version,
                                             std::span<const core::Requirement> requires_dist) {
  // In order (issue 23): the local label (`+cu126`; a coupled label `+cu12torch2.8...`,
  // `+pt211cu128`), the CUDA of its runtime / cuda-toolkit pins (PyPI torch), its name
  // (`cupy-cuda12x`, `jax-cuda13-plugin`, nvidia-*, cuda-toolkit), the CUDA major of the nvidia-*
  // wheels it requires, the table of releases by CUDA major (onnxruntime-gpu).
  BuildLabel build = classify_build(version);
  if (build.cuda) return CudaNeed{*build.cuda, true};
  if (auto coupled = coupled_build(package, version)) {
    if (coupled->cuda) return CudaNeed{*coupled->cuda, true};
    return CudaNeed{CudaVersion{coupled->cuda_major, 0}, false};
  }
  if (build.kind == BuildKind::Unlabeled) {
    if (auto from_pins = cuda_from_dependencies(requires_dist)) return CudaNeed{*from_pins, true};
  }
  const auto& stacks = gpu_stacks();
  if (auto major = stacks.major_by_name(package)) return CudaNeed{CudaVersion{*major, 0}, false};
  if (auto own = cuda_need_of_package(package, version)) return own;
  if (build.kind != BuildKind::Unlabeled) return std::nullopt;
  if (auto major = major_of_required_libraries(requires_dist))
    return CudaNeed{CudaVersion{*major, 0}, false};
  if (auto major = stacks.major_by_release(package, version))
    return CudaNeed{CudaVersion{*major, 0}, false};
  return std::nullopt;
}

GpuFacts GpuPolicy::facts(const CandidateFacts& candidate) const {
  GpuFacts out;
  const std::string_view package = candidate.package;
  BuildLabel build = classify_build(candidate.version);
  out.need = cuda_need(package, candidate.version, candidate.requires_dist);
  if (!candidate.variant_label.empty()) {
    // PEP 825: the variant's label says its build (variant wheels carry no local label).
    if (auto cuda = cuda_of_variant_label(candidate.variant_label)) {
      out.need = CudaNeed{*cuda, true};
      build = BuildLabel{BuildKind::Cuda, *cuda};
    } else if (candidate.variant_label == "null") {
      out.need.reset();
      build = BuildLabel{BuildKind::Cpu, std::nullopt};
    }
  }
  std::optional<CudaVersion> cuda;
  if (out.need) cuda = out.need->cuda;
  if (is_cuda_linked(package)) {
    if (build.kind == BuildKind::Cuda && build.cuda) {
      out.dependencies.push_back(edge(kCudaVariant, "==" + build.cuda->to_string()));
    } else if (build.kind == BuildKind::Cpu) {
      out.dependencies.push_back(edge(kCudaVariant, "==0"));
    }
  }
  // One CUDA major's libraries per environment: `nvidia-*-cuNN` wheels name their major, and so
  // do CUDA builds of the torch family (through `__cuda_variant`), so a cu118 torch next to a
  // user's nvidia-cudnn-cu12 pin (two runtimes the loader would mix) is a conflict, not a
  // silent lock.
  if (package.starts_with("nvidia-") && out.need) {
    out.dependencies.push_back(edge(kCudaMajor, fmt::format("=={}", out.need->cuda.major)));
  }
  if (cuda) {
    // Without a GPU (or a known ceiling) every CUDA build fails alike ("needs CUDA"): one
    // specifier for all lets the solver state that once for a whole range of versions. Where
    // only the major is known (cuda-bindings 13.x, nvidia-cufft), the major is the bound.
    std::string floor = machine_.no_gpu || !machine_.ceiling ? std::string(">=0")
                        : machine_.compat == gpu::CudaCompat::Minor || !out.need->minor_exact
                            ? fmt::format(">={}.0", cuda->major)
                            : ">=" + cuda->to_string();
    out.dependencies.push_back(edge(kCuda, floor));
  }
  // A label naming a torch build (flash-attn `+cu12torch2.8`, PyG `+pt211cu128`, vLLM `+cu129`):
  // only that torch minor and CUDA variant (or major).
  if (auto coupled = coupled_build(package, candidate.version)) {
    if (coupled->torch_release) {
      out.dependencies.push_back(
          edge("torch", fmt::format("=={}.{}.*", coupled->torch_release->release_at(0),
                                    coupled->torch_release->release_at(1))));
    }
    if (coupled->cuda) {
      out.dependencies.push_back(edge(kCudaVariant, "==" + coupled->cuda->to_string()));
    } else {
      out.dependencies.push_back(edge(kCudaMajor, fmt::format("=={}", coupled->cuda_major)));
    }
  }
  // One owner per import package (`cupy`): each provider is one version of `__import_cupy`.
  if (const auto* provides = gpu_stacks().provides_of(package)) {
    auto at = std::find(provides->packages.begin(), provides->packages.end(), package);
    out.dependencies.push_back(
        edge(fmt::format("{}{}", kImportPrefix, provides->import_name),
             fmt::format("=={}", static_cast<std::size_t>(at - provides->packages.begin()) + 1)));
  }
  if (!cuda || machine_.archs.empty() || machine_.no_gpu) return out;
  auto kernels = kernels_of(package, candidate.version, *out.need, platform_machine_,
                            package == "torch" ? candidate.arch_list : std::nullopt);
  if (!kernels) return out;
  if (kernels->list.assumed && package == "torch") {
    out.warning = fmt::format(
        "no GPU architecture list is known for torch {} (CUDA {}); assumed: kernels for what "
        "CUDA {} can build, no PTX",
        candidate.version.public_version().to_string(), cuda->to_string(), cuda->to_string());
  }
  if (!kernels->floor) out.archs_assumed = kernels->list.assumed;
  for (const auto& arch : machine_.archs) {
    if (auto why = missing_kernels(*kernels, arch)) {
      out.unavailable =
          UnavailableReason{UnavailableKind::GpuArchMissing,
                            std::move(*why),
                            {{"arch", arch.to_string()}, {"cuda", cuda->to_string()}}};
      break;
    }
  }
  return out;
}

std::optional<Kernels> kernels_of(std::string_view package, const core::Version& version,
                                  CudaNeed need, std::string_view platform_machine,
                                  const std::optional<ArchList>& torch_list) {
  const CudaVersion cuda = need.cuda;
  Kernels k;
  k.cuda = cuda;
  k.exact = package == "torch" || need.minor_exact;
  if (package == "torch") {
    // An unknown list is bounded by what its CUDA can build: SASS for those archs, no PTX.
    auto list = torch_list ? torch_list : torch_arch_list(version, cuda, platform_machine);
    k.list = list ? *list : archs_cuda_can_build(cuda);
    return k;
  }
  if (const auto* row = gpu_stacks().archs_of(package, version, cuda.major)) {
    k.list = parse_arch_list(row->list, row->source);
    return k;
  }
  if (is_torch_family(package) || package.starts_with("nvidia-") || package.starts_with("cuda-"))
    return std::nullopt;
  auto floor = gpu_stacks().arch_floor(cuda.major);
  if (!floor) return std::nullopt;
  k.floor = *floor;
  return k;
}

std::optional<std::string> missing_kernels(const Kernels& kernels, ComputeCapability arch) {
  const CudaVersion cuda = kernels.cuda;
  if (kernels.floor) {
    if (!(arch < *kernels.floor)) return std::nullopt;
    return fmt::format("has no kernels for your GPU's {} (CUDA {} builds start at {})",
                       arch.to_string(), cuda.major, kernels.floor->to_string());
  }
  if (arch_list_runs_on(kernels.list, arch)) return std::nullopt;
  std::string built_for =
      kernels.exact ? fmt::format("CUDA {}", cuda.to_string()) : fmt::format("CUDA {}", cuda.major);
  if (kernels.list.assumed) {
    return fmt::format(
        "has no kernels for your GPU's {} (no arch list is known for it, and CUDA {} cannot "
        "build for {})",
        arch.to_string(), cuda.to_string(), arch.to_string());
  }
  return fmt::format("has no kernels for your GPU's {} (its {} build carries {})", arch.to_string(),
                     built_for, describe_arch_list(kernels.list));
}

std::optional<UnavailableReason> GpuPolicy::candidate_unavailable(
    std::string_view package, const core::Version& version) const {
  // cuDNN 9.11 and newer dropped Maxwell, Pascal and Volta (torch refuses it below sm_75).
  if (!package.starts_with("nvidia-cudnn-") || machine_.archs.empty()) return std::nullopt;
  auto floor = cudnn_min_capability(version);
  if (!floor) return std::nullopt;
  for (const auto& arch : machine_.archs) {
    if (arch < *floor) {
      return UnavailableReason{
          UnavailableKind::GpuArchMissing,
          fmt::format("needs {} or newer and your GPU is {}", floor->to_string(), arch.to_string()),
          {{"arch", arch.to_string()}}};
    }
  }
  return std::nullopt;
}

UnavailableReason GpuPolicy::above_ceiling(const BuildLabel& build) const {
  UnavailableReason r;
  r.kind = UnavailableKind::CudaTooNew;
  std::string who =
      machine_.driver ? fmt::format("your driver {}", machine_.driver->to_string()) : "your driver";
  r.message =
      machine_.compat == gpu::CudaCompat::Minor
          ? fmt::format("needs a newer CUDA than {} runs (CUDA {}.x)", who, machine_.ceiling->major)
          : fmt::format("needs a newer CUDA than {} runs (CUDA <= {})", who,
                        machine_.ceiling->to_string());
  if (build.cuda) r.fields = {{"cuda", build.cuda->to_string()}};
  return r;
}

bool GpuPolicy::allows(CudaVersion need) const {
  return !machine_.no_gpu && machine_.ceiling &&
         gpu::ceiling_allows(*machine_.ceiling, need, machine_.compat);
}

bool GpuPolicy::runs_on_every_gpu(const core::Version& torch_version, CudaVersion cuda) const {
  if (machine_.archs.empty()) return true;
  auto list = torch_arch_list(torch_version, cuda, platform_machine_);
  if (!list) list = archs_cuda_can_build(cuda);
  return std::all_of(machine_.archs.begin(), machine_.archs.end(),
                     [&](const ComputeCapability& a) { return arch_list_runs_on(*list, a); });
}

std::vector<CudaVersion> GpuPolicy::builds_with_kernels_for(const core::Version& torch_version,
                                                            ComputeCapability arch) const {
  return torch_cuda_builds_running_on(torch_version, arch, platform_machine_);
}

}  // namespace gpulock::gpu

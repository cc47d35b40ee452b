// IndexProvider: the GPU policy as solver facts: candidates of the virtual packages (__python,
// __cuda, __cuda_variant, __cuda_major) and the CUDA a candidate needs.

#include "gpulock/app/index_provider.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/app/command_line.h"
#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"

#include "index_provider_impl.h"

namespace gpulock::app {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

auto IndexProvider::Impl::arch_fixes(std::string_view name, const PackageState& state) const
    -> std::vector<ArchFix> {
  std::vector<ArchFix> out;
  std::set<std::string, std::less<>> seen;
  for (const auto& e : state.entries) {
    const auto& u = e.dependencies_unavailable;
    if (!u || u->kind != UnavailableKind::GpuArchMissing) continue;
    auto field = std::find_if(u->fields.begin(), u->fields.end(), [](const auto& f) { return f.first == "arch"; });
    if (field == u->fields.end()) continue;
    auto arch = ComputeCapability::parse(field->second);
    if (!arch || !seen.insert(field->second).second) continue;
    out.push_back({*arch, fmt::format("{} {}.{}", name, e.version.release_at(0), e.version.release_at(1)),
                   torch_cuda_builds_running_on(e.version, *arch, config.target.environment.platform_machine)});
  }
  return out;
}

auto IndexProvider::Impl::virtual_candidates(std::string_view name) const
    -> std::optional<resolver::PackageCandidates> {
  resolver::PackageCandidates out;
  out.priority = 100;
  if (name == kPython) {
    out.candidates.push_back({config.target.python_full, false, std::nullopt});
    return out;
  }
  if (name == kCuda) {
    if (!config.gpu.no_gpu && config.gpu.ceiling) {
      out.candidates.push_back({make_version(config.gpu.ceiling->major, config.gpu.ceiling->minor), false, std::nullopt});
    }
    return out;
  }
  if (name == kCudaVariant) {
    // Every CUDA a variant label can name (9.0 to 13.9), and 0 for CPU builds.
    for (std::uint64_t major = 13; major >= 9; --major) {
      for (std::uint64_t minor = 10; minor-- > 0;) out.candidates.push_back({make_version(major, minor), false, std::nullopt});
    }
    out.candidates.push_back({make_version(0, 0), false, std::nullopt});
    return out;
  }
  if (name == kCudaMajor) {
    for (std::uint64_t major = 13; major >= 9; --major) {
      std::uint64_t parts[1] = {major};
      out.candidates.push_back({core::Version::from_release(parts), false, std::nullopt});
    }
    return out;
  }
  return std::nullopt;
}

auto IndexProvider::Impl::cuda_need(std::string_view package, const VersionEntry& entry,
                                    std::span<const core::Requirement> requires_dist)
    -> std::optional<CudaNeed> {
  if (entry.build.cuda) return CudaNeed{*entry.build.cuda, true};
  if (entry.build.kind == BuildKind::Unlabeled) {
    if (auto from_pins = cuda_from_dependencies(requires_dist)) return CudaNeed{*from_pins, true};
  }
  return cuda_need_of_package(package, entry.version);
}

auto IndexProvider::Impl::ceiling_text() const -> std::string {
  if (config.gpu.no_gpu) return "--driver none means no GPU";
  if (!config.gpu.ceiling) return "no NVIDIA driver was found";
  std::string who = config.gpu.driver
                        ? fmt::format("your driver {}", config.gpu.driver->to_string())
                        : "your driver";
  if (config.gpu.compat == probe::CudaCompat::Minor) {
    return fmt::format("{} supports CUDA {}.x (minor-version compatibility)", who, config.gpu.ceiling->major);
  }
  return fmt::format("{} supports CUDA <= {}", who, config.gpu.ceiling->to_string());
}

auto IndexProvider::Impl::gpu_facts(std::string_view package, const core::Version& version, VersionEntry& entry,
                                    std::span<const core::Requirement> included,
                                    std::vector<resolver::Dependency>& deps) -> std::optional<UnavailableReason> {
  const auto& gpu = config.gpu;
  auto need = cuda_need(package, entry, included);
  std::optional<CudaVersion> cuda;
  if (need) cuda = need->cuda;
  entry.needs_cuda = cuda;
  if (is_cuda_linked(package)) {
    if (entry.build.kind == BuildKind::Cuda && entry.build.cuda) {
      auto spec = core::SpecifierSet::parse("==" + entry.build.cuda->to_string());
      deps.push_back({std::string(kCudaVariant), {}, *spec});
    } else if (entry.build.kind == BuildKind::Cpu) {
      deps.push_back({std::string(kCudaVariant), {}, *core::SpecifierSet::parse("==0")});
    }
  }
  // One CUDA major's libraries per environment: `nvidia-*-cuNN` wheels name their major, and so
  // do CUDA builds of the torch family (through `__cuda_variant`), so a cu118 torch next to a
  // user's nvidia-cudnn-cu12 pin (two runtimes the loader would mix) is a conflict, not a
  // silent lock.
  // (CUDA builds reach `__cuda_major` through their `__cuda_variant`, see above.)
  if (package.starts_with("nvidia-") && need) {
    deps.push_back(
        {std::string(kCudaMajor), {}, *core::SpecifierSet::parse(fmt::format("=={}", need->cuda.major))});
  }
  if (cuda) {
    // Without a GPU (or a known ceiling) every CUDA build fails alike ("needs CUDA"): one
    // specifier for all lets the solver state that once for a whole range of versions. Where
    // only the major is known (cuda-bindings 13.x, nvidia-cufft), the major is the bound.
    std::string floor = gpu.no_gpu || !gpu.ceiling                                  ? std::string(">=0")
                        : gpu.compat == probe::CudaCompat::Minor || !need->minor_exact ? fmt::format(">={}.0", cuda->major)
                                                                                      : ">=" + cuda->to_string();
    deps.push_back({std::string(kCuda), {}, *core::SpecifierSet::parse(floor)});
  }
  // Kernels for every GPU: the arch list of this torch build (by release and CUDA).
  if (package == "torch" && cuda && !gpu.archs.empty() && !gpu.no_gpu) {
    // An unknown list is bounded by what its CUDA can build: SASS for those archs, no PTX.
    auto list = torch_arch_list(version, *cuda, config.target.environment.platform_machine);
    if (!list) {
      list = archs_cuda_can_build(*cuda);
      warn(fmt::format("no GPU architecture list is known for torch {} (CUDA {}); assumed: kernels for what CUDA {} "
                              "can build, no PTX",
                              version.public_version().to_string(), cuda->to_string(), cuda->to_string()));
    }
    entry.archs_assumed = list->assumed;
    for (const auto& arch : gpu.archs) {
      if (!arch_list_runs_on(*list, arch)) {
        std::string why = list->assumed
                              ? fmt::format("has no kernels for your GPU's {} (no arch list is known for it, and CUDA {} "
                                            "cannot build for {})",
                                            arch.to_string(), cuda->to_string(), arch.to_string())
                              : fmt::format("has no kernels for your GPU's {} (its CUDA {} build carries {})",
                                            arch.to_string(), cuda->to_string(), describe_arch_list(*list));
        return UnavailableReason{UnavailableKind::GpuArchMissing, std::move(why),
                                 {{"arch", arch.to_string()}, {"cuda", cuda->to_string()}}};
      }
    }
  }
  return std::nullopt;
}

}  // namespace gpulock::app

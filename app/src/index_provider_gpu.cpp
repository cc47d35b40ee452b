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

}  // namespace gpulock::app

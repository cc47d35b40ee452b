// GpuPolicy: the explanation's GPU words (the driver's ceiling, the GPU virtual packages, CUDA
// builds of the torch family) and the hints a failed solve gives about them. Pure: no I/O.

#include <map>

#include <fmt/format.h>

#include "gpulock/gpu/gpu_policy.h"

namespace gpulock::gpu {

namespace {

// Several labeled torch-family builds: when the set is exactly "every build of these variants",
// the variants ("torch (CUDA 11.8 builds)"); PEP 440 ranges over local labels read badly.
std::optional<std::string> whole_variants(const resolver::Term& term,
                                          const std::vector<core::Version>& versions) {
  auto label_key = [](const core::Version& v) {
    auto l = classify_build(v);
    if (l.kind == BuildKind::Cuda && l.cuda) return fmt::format("CUDA {}", l.cuda->to_string());
    if (l.kind == BuildKind::Cpu) return std::string("CPU");
    return std::string();
  };
  std::map<std::string, std::size_t> in_set, in_all;
  for (const auto& v : versions)
    ++in_set[label_key(v)];
  for (const auto& v : *term.package().versions) {
    auto key = label_key(v);
    if (in_set.contains(key)) ++in_all[key];
  }
  if (in_set.contains("") || in_set != in_all) return std::nullopt;
  std::string labels;
  for (const auto& [key, n] : in_set)
    labels += (labels.empty() ? "" : ", ") + key;
  return fmt::format("{} ({} builds)", term.package().display_name(), labels);
}

}  // namespace

std::string GpuPolicy::ceiling_text() const {
  if (machine_.no_gpu) return "--driver none means no GPU";
  if (!machine_.ceiling) return "no NVIDIA driver was found";
  std::string who =
      machine_.driver ? fmt::format("your driver {}", machine_.driver->to_string()) : "your driver";
  if (machine_.compat == gpu::CudaCompat::Minor) {
    return fmt::format("{} supports CUDA {}.x (minor-version compatibility)", who,
                       machine_.ceiling->major);
  }
  return fmt::format("{} supports CUDA <= {}", who, machine_.ceiling->to_string());
}

std::string GpuPolicy::needs_cuda_text(CudaVersion need) const {
  return fmt::format("needs CUDA {} and {}", need.to_string(), ceiling_text());
}

std::optional<std::string> GpuPolicy::describe_term(const resolver::Term& term) const {
  const auto& name = term.package().name;
  if (name == kCuda) {
    std::string set = term.set_text();
    return set.empty() ? "CUDA" : fmt::format("CUDA {}", core::spaced_specifier(set));
  }
  auto versions = term.versions.versions();
  if (name == kCudaVariant) {
    if (versions.size() == 1) {
      if (versions[0].release_at(0) == 0) return std::string("the CPU variant");
      return fmt::format("the CUDA {}.{} variant", versions[0].release_at(0),
                         versions[0].release_at(1));
    }
    return std::string("one CUDA variant");
  }
  if (name == kCudaMajor) {
    if (versions.size() == 1) return fmt::format("CUDA {} libraries", versions[0].release_at(0));
    return std::string("one CUDA major version");
  }
  if (name.starts_with(kImportPrefix)) {
    return fmt::format("the import package {}", name.substr(kImportPrefix.size()));
  }
  if (!is_torch_family(name) || !term.positive) return std::nullopt;
  // A single labeled torch-family build reads as its public version: "torch==2.7.1".
  if (versions.size() == 1 && versions[0].has_local()) {
    auto label = classify_build(versions[0]);
    if (label.kind == BuildKind::Cuda || label.kind == BuildKind::Cpu) {
      return fmt::format("{}=={}", term.package().display_name(),
                         versions[0].public_version().to_string());
    }
  }
  if (versions.size() > 1 && !term.versions.full() && term.package().versions)
    return whole_variants(term, versions);
  return std::nullopt;
}

std::optional<std::string> GpuPolicy::describe_dependency(const resolver::Term& depender,
                                                          const resolver::Term& dependency,
                                                          std::string_view depender_text,
                                                          std::string_view dependency_text) const {
  const auto& dep = dependency.package().name;
  if (dep.starts_with(kImportPrefix)) {
    // "cupy-cuda12x==14.2.0 installs the import package cupy".
    return fmt::format("{} installs the import package {}", depender_text,
                       dep.substr(kImportPrefix.size()));
  }
  if (dep != kCuda && dep != kCudaVariant && dep != kCudaMajor) return std::nullopt;
  std::string who(depender_text);
  auto versions = depender.versions.versions();
  if (versions.size() == 1) {
    auto label = classify_build(versions[0]);
    if (label.kind == BuildKind::Cuda && label.cuda) {
      who = fmt::format("{}=={} (CUDA {} build)", depender.package().display_name(),
                        versions[0].public_version().to_string(), label.cuda->to_string());
    } else if (label.kind == BuildKind::Cpu) {
      who = fmt::format("{}=={} (CPU build)", depender.package().display_name(),
                        versions[0].public_version().to_string());
    }
  }
  if (dep == kCuda) {
    // Without a GPU (or a known ceiling) the version a build needs is beside the point.
    if (machine_.no_gpu || !machine_.ceiling) return fmt::format("{} needs CUDA", who);
    return fmt::format("{} needs {}", who, dependency_text);
  }
  auto variants = dependency.versions.versions();
  if (dep == kCudaMajor) {
    // "nvidia-cudnn-cu12==9.5.1.17 uses CUDA 12 libraries".
    if (variants.size() == 1)
      return fmt::format("{} uses CUDA {} libraries", who, variants[0].release_at(0));
    return fmt::format("{} needs {}", depender_text, dependency_text);
  }
  // `__cuda_variant`: "torchvision==0.19.0 is a CUDA 11.8 build".
  if (variants.size() == 1) {
    if (variants[0].release_at(0) == 0) return fmt::format("{} is a CPU build", depender_text);
    return fmt::format("{} is a CUDA {}.{} build", depender_text, variants[0].release_at(0),
                       variants[0].release_at(1));
  }
  return fmt::format("{} needs {}", depender_text, dependency_text);
}

std::string shared_dir_text(const SharedDirConflict& c) {
  auto side = [](const SharedDirConflict::Side& s) {
    return s.required_by.empty() || s.required_by == s.package
               ? fmt::format("{} (CUDA {})", s.package, s.major)
               : fmt::format("{} (CUDA {}, for {})", s.package, s.major, s.required_by);
  };
  return fmt::format(
      "{} and {} both install {}: one CUDA major and one owner per library directory, so they "
      "cannot share an environment.",
      side(c.first), side(c.second), c.dir);
}

std::optional<std::string> GpuPolicy::describe_no_versions(const resolver::Term& term) const {
  if (term.package().name == kCuda) return ceiling_text();
  return std::nullopt;
}

std::vector<std::string> GpuPolicy::virtual_hints(std::string_view name) const {
  std::vector<std::string> hints;
  if (name != kCuda) return hints;
  if (machine_.ceiling && machine_.compat == gpu::CudaCompat::Strict && !machine_.no_gpu) {
    auto next = gpu::min_driver_for_cuda({machine_.ceiling->major, machine_.ceiling->minor + 1},
                                         gpu::CudaCompat::Strict);
    if (next) {
      hints.push_back(fmt::format(
          "a newer CUDA build needs a driver >= {} (run `gpulock probe --machine` to see "
          "yours)",
          next->to_string()));
    }
  }
  if (machine_.no_gpu) {
    hints.push_back(
        "CUDA builds need a GPU: to lock for a GPU machine, add --driver VERSION with the version "
        "`gpulock probe --machine` prints there");
  }
  return hints;
}

std::optional<std::string> GpuPolicy::driver_needed_hint(std::string_view package,
                                                         CudaVersion lowest) const {
  auto md = gpu::min_driver_for_cuda(lowest, machine_.compat);
  if (!md) return std::nullopt;
  return fmt::format(
      "{}'s CUDA {} builds need a driver >= {} (run `gpulock probe --machine` to see yours)",
      package, lowest.to_string(), md->to_string());
}

std::optional<std::string> GpuPolicy::driver_needed_hint(std::string_view package,
                                                         CudaVersion lowest,
                                                         const NewestBuild& newest) const {
  auto md = gpu::min_driver_for_cuda(lowest, machine_.compat);
  auto newest_md = gpu::min_driver_for_cuda(newest.cuda, machine_.compat);
  if (!md) return std::nullopt;
  if (!newest_md || !(*md < *newest_md)) return driver_needed_hint(package, lowest);
  return fmt::format(
      "{}'s CUDA {} builds need a driver >= {}, and {} {} (the newest) a driver >= {} for its "
      "CUDA {} build (run `gpulock probe --machine` to see yours)",
      package, lowest.to_string(), md->to_string(), package,
      newest.version.public_version().to_string(), newest_md->to_string(), newest.cuda.to_string());
}

std::string GpuPolicy::arch_fix_hint(std::string_view release, ComputeCapability arch,
                                     std::span<const CudaVersion> builds) {
  if (builds.empty()) {
    return fmt::format("no CUDA build of {} has kernels for your GPU's {}; an older release may",
                       release, arch.to_string());
  }
  std::string variants;
  for (const auto& b : builds)
    variants += (variants.empty() ? "" : ", ") + variant_name(b);
  return fmt::format("{} has kernels for your GPU's {} only in variant{} {}", release,
                     arch.to_string(), builds.size() == 1 ? "" : "s", variants);
}

std::optional<std::string> GpuPolicy::arch_driver_note(ComputeCapability arch,
                                                       std::span<const CudaVersion> builds) const {
  if (!machine_.driver) return std::nullopt;
  std::string note;
  if (!builds.empty()) {
    auto needed = min_driver_for_cuda(builds.front(), machine_.compat);
    if (needed && *machine_.driver < *needed) {
      note = fmt::format("{}CUDA {}, needs a driver >= {} (yours is {})",
                         builds.size() == 1 ? "" : "the lowest, ", builds.front().to_string(),
                         needed->to_string(), machine_.driver->to_string());
    }
  }
  if (auto branch = branch_cannot_drive(arch, *machine_.driver))
    note += (note.empty() ? "" : "; ") + *branch;
  if (note.empty()) return std::nullopt;
  return note;
}

}  // namespace gpulock::gpu

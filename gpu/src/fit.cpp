// The one fit rule (fit.h, issue 43): does a lock run on a machine. Pure: no I/O.
#include "gpulock/gpu/fit.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpulock::gpu {
namespace {

// "manylinux_2_28_x86_64" -> "x86_64": the part after the OS's version numbers.
std::string cpu_after(std::string_view rest) {
  // Skip "_N" version parts ("2_28_", "11_0_"), then the CPU may itself hold '_' (x86_64).
  std::size_t i = 0;
  while (i < rest.size()) {
    std::size_t end = rest.find('_', i);
    std::string_view part = rest.substr(i, end == std::string_view::npos ? rest.npos : end - i);
    const bool number = !part.empty() && std::all_of(part.begin(), part.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
    if (!number) break;
    if (end == std::string_view::npos) return {};
    i = end + 1;
  }
  return std::string(rest.substr(i));
}

std::string platform_text(const Platform& p) {
  return fmt::format("{} {}", p.os, p.cpu);
}

void check_platform(const LockFacts& lock, const Machine& machine, Fit& fit) {
  if (lock.platforms.empty()) return;
  std::vector<Platform> wanted;
  for (const auto& tag : lock.platforms) {
    if (auto p = platform_of_tag(tag)) wanted.push_back(*p);
  }
  if (wanted.empty()) return;
  if (!machine.platform) {
    fit.unknown.push_back(
        fmt::format("CPU architecture unknown: assumed to be one the lock is for ({})",
                    fmt::join(lock.platforms, ", ")));
    return;
  }
  if (std::find(wanted.begin(), wanted.end(), *machine.platform) != wanted.end()) return;
  FitReason r;
  r.problem = FitProblem::Platform;
  r.subject = "platform";
  r.expected = fmt::format("{}", fmt::join(lock.platforms, ", "));
  r.actual = platform_text(*machine.platform);
  fit.reasons.push_back(std::move(r));
}

// Rule 2: the driver runs the lock's CUDA. Returns false when no driver is known.
bool check_driver(const LockFacts& lock, const Machine& machine, Fit& fit) {
  if (machine.no_gpu || (!machine.driver && !machine.ceiling)) {
    FitReason r;
    r.problem = FitProblem::NoDriver;
    r.subject = "driver";
    r.line = lock.gpu_line;
    if (lock.min_driver) r.expected = lock.min_driver->to_string();
    r.actual = machine.no_gpu ? "none" : "";
    fit.reasons.push_back(std::move(r));
    return false;
  }
  if (lock.min_driver && machine.driver && *machine.driver < *lock.min_driver) {
    FitReason r;
    r.problem = FitProblem::DriverBelow;
    r.subject = "driver";
    r.line = lock.gpu_line;
    r.expected = lock.min_driver->to_string();
    r.actual = machine.driver->to_string();
    fit.reasons.push_back(std::move(r));
    return true;
  }
  if (lock.cuda && machine.ceiling && !ceiling_allows(*machine.ceiling, *lock.cuda, lock.compat)) {
    FitReason r;
    r.problem = FitProblem::CeilingBelow;
    r.subject = "cuda";
    r.line = lock.gpu_line;
    r.expected = lock.cuda->to_string();
    r.actual = machine.ceiling->to_string();
    fit.reasons.push_back(std::move(r));
  }
  return true;
}

// The CUDA a locked package's build needs: its label, else (the torch family's PyPI builds,
// whose CUDA is their runtime pins') the lock's, else its own name and version.
std::optional<CudaNeed> need_of(const LockedPackage& p, const LockFacts& lock) {
  auto label = classify_build(p.version);
  if (label.kind == BuildKind::Cuda && label.cuda) return CudaNeed{*label.cuda, true};
  if (label.kind == BuildKind::Unlabeled && is_cuda_linked(p.name) && lock.cuda)
    return CudaNeed{*lock.cuda, true};
  if (label.kind != BuildKind::Unlabeled) return std::nullopt;
  return GpuPolicy::cuda_need(p.name, p.version, {});
}

// Rule 3: kernels for every GPU, package by package in lock order; then cuDNN's floor.
void check_kernels(const LockFacts& lock, const Machine& machine, Fit& fit) {
  const std::string cpu = lock.cpu.empty() ? std::string("x86_64") : lock.cpu;
  for (const auto& p : lock.packages) {
    auto need = need_of(p, lock);
    if (!need) continue;
    auto kernels = kernels_of(p.name, p.version, *need, cpu, std::nullopt);
    if (!kernels) continue;
    if (!kernels->floor && kernels->list.assumed) {
      fit.assumed_lists.push_back(fmt::format(
          "no arch list is known for {} {} (CUDA {}): GPUs compared with what CUDA {} can "
          "build, assumed ({})",
          p.name, p.version.to_string(), need->cuda.to_string(), need->cuda.to_string(),
          describe_arch_list(kernels->list)));
    }
    for (const auto& arch : machine.archs) {
      auto why = missing_kernels(*kernels, arch);
      if (!why) continue;
      FitReason r;
      r.problem = FitProblem::NoKernels;
      r.subject = arch.to_string();
      r.package = p.name;
      r.version = p.version.to_string();
      r.line = p.line;
      r.expected = kernels->floor ? fmt::format(">= {}", kernels->floor->dotted())
                                  : describe_arch_list(kernels->list);
      r.actual = arch.to_string();
      r.assumed = !kernels->floor && kernels->list.assumed;
      r.detail = std::move(*why);
      fit.reasons.push_back(std::move(r));
    }
  }
  for (const auto& p : lock.packages) {
    if (!p.name.starts_with("nvidia-cudnn-")) continue;
    auto floor = cudnn_min_capability(p.version);
    for (const auto& arch : machine.archs) {
      if (!floor || !(arch < *floor)) continue;
      FitReason r;
      r.problem = FitProblem::CudnnArch;
      r.subject = arch.to_string();
      r.package = p.name;
      r.version = p.version.to_string();
      r.line = p.line;
      r.expected = fmt::format(">= {}", floor->dotted());
      r.actual = arch.to_string();
      fit.reasons.push_back(std::move(r));
    }
    break;  // the environment's cuDNN: the first one locked
  }
}

}  // namespace

std::optional<Platform> platform_of_tag(std::string_view tag) {
  auto cpu_of = [](std::string cpu) { return cpu == "amd64" ? std::string("x86_64") : cpu; };
  for (std::string_view os : {"manylinux", "musllinux"}) {
    if (tag.starts_with(os) && tag.size() > os.size() && tag[os.size()] == '_') {
      auto cpu = cpu_after(tag.substr(os.size() + 1));
      if (cpu.empty()) return std::nullopt;
      return Platform{"linux", cpu};
    }
  }
  if (tag.starts_with("manylinux1_") || tag.starts_with("manylinux2010_") ||
      tag.starts_with("manylinux2014_")) {
    return Platform{"linux", std::string(tag.substr(tag.find('_') + 1))};
  }
  if (tag.starts_with("linux_") && tag.size() > 6)
    return Platform{"linux", std::string(tag.substr(6))};
  if (tag.starts_with("macosx_")) {
    auto cpu = cpu_after(tag.substr(7));
    if (cpu.empty()) return std::nullopt;
    return Platform{"macos", cpu};
  }
  if (tag.starts_with("win_") && tag.size() > 4)
    return Platform{"windows", cpu_of(std::string(tag.substr(4)))};
  if (tag == "win32") return Platform{"windows", "x86"};
  return std::nullopt;
}

const LockedPackage* cuda_raised_by(const LockFacts& lock) {
  if (!lock.cuda || !lock.build_cuda || !(*lock.build_cuda < *lock.cuda)) return nullptr;
  for (const auto& p : lock.packages) {
    auto need = need_of(p, lock);
    if (need && need->minor_exact && need->cuda == *lock.cuda && !is_torch_family(p.name))
      return &p;
  }
  return nullptr;
}

std::string reason_text(const FitReason& r) {
  switch (r.problem) {
    case FitProblem::Platform:
      return fmt::format("this machine is {}, and the lock is for {}", r.actual, r.expected);
    case FitProblem::CudnnArch:
      return fmt::format(
          "{} {} does not support this machine's GPU ({}): it needs compute capability {} or "
          "newer",
          r.package, r.version, r.subject, r.expected.substr(3));
    case FitProblem::NoKernels:
      if (r.expected.starts_with(">= ")) {
        return fmt::format(
            "{} {} has no kernels for this machine's GPU ({}): its CUDA builds start at {}",
            r.package, r.version, r.subject, r.expected.substr(3));
      }
      return fmt::format("{} {} has no kernels for this machine's GPU ({}): it {} {}", r.package,
                         r.version, r.subject,
                         r.assumed ? "can carry at most (assumed from its CUDA)" : "carries",
                         r.expected);
    case FitProblem::NoDriver:
    case FitProblem::DriverBelow:
    case FitProblem::CeilingBelow:
      break;
  }
  return {};
}

Fit lock_fits(const LockFacts& lock, const Machine& machine) {
  Fit fit;
  fit.cuda_lock = lock.cuda_builds;
  check_platform(lock, machine, fit);
  if (lock.cuda_builds) {
    if (check_driver(lock, machine, fit)) {
      if (machine.archs.empty()) {
        fit.unknown.push_back(
            "GPU architectures unknown here: not compared with the locked builds");
      } else {
        check_kernels(lock, machine, fit);
      }
    }
  }
  fit.fits = fit.reasons.empty();
  return fit;
}

}  // namespace gpulock::gpu

// The machine layer of `gpulock check`: can this machine run the lock? Its driver against the
// lock's minimum, its CUDA ceiling against the lock's CUDA, its GPUs against the locked torch
// build's arch list and the locked cuDNN's lowest supported GPU (DESIGN.md §GPU model).
#include <algorithm>

#include <fmt/format.h>

#include "gpulock/app/command_line.h"
#include "gpulock/core/version.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/fit.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/gpu/library_rules.h"
#include "gpulock/lock/gpu_facts.h"
#include "gpulock/lock/wheel_files.h"
#include "gpulock/probe/load_probe.h"

#include "check_internal.h"

namespace gpulock::app::check_detail {
namespace {

std::string arch_names(const std::vector<gpu::ComputeCapability>& archs) {
  std::string out;
  for (const auto& a : archs)
    out += (out.empty() ? "" : ", ") + a.to_string();
  return out;
}

// What this machine is: "driver 580.65.06 (nvml), CUDA ceiling 13.0, GPU sm_90".
std::string machine_text(const probe::MachineInfo& machine) {
  std::string here;
  if (machine.driver) {
    here = fmt::format("driver {} ({})", machine.driver->value.to_string(),
                       probe::method_name(machine.driver->method));
  } else {
    here = machine.status == probe::MachineStatus::NoGpuOverride ? "no GPU (--driver none)"
                                                                 : "no NVIDIA driver";
  }
  if (machine.cuda_ceiling)
    here += fmt::format(", CUDA ceiling {}", machine.cuda_ceiling->value.to_string());
  if (machine.gpu_archs && !machine.gpu_archs->value.empty()) {
    here += fmt::format(", GPU {}", arch_names(machine.gpu_archs->value));
  }
  return here;
}

// One reason of the fit rule (gpu::lock_fits) as a drift, in check's words.
Drift drift_of(const Context& ctx, const probe::MachineInfo& machine, const lock::GpulockGpu* gpu,
               const gpu::FitReason& r) {
  switch (r.problem) {
    case gpu::FitProblem::Platform: {
      Drift d = make_drift(CheckLayer::Machine, "platform-mismatch", "platform",
                           gpu::reason_text(r), r.line);
      d.expected = r.expected;
      d.actual = r.actual;
      d.hint = fmt::format("resolve a lock for this machine ({})", relock_here(ctx.lock.command));
      return d;
    }
    case gpu::FitProblem::DriverBelow: {
      Drift d = make_drift(
          CheckLayer::Machine, "driver-below-minimum", "driver",
          fmt::format(
              "this machine's NVIDIA driver {} is older than the lock's minimum {}{}", r.actual,
              r.expected,
              gpu->cuda ? fmt::format(" (for CUDA {})", gpu->cuda->to_string()) : std::string()),
          r.line);
      d.expected = r.expected;
      d.actual = r.actual;
      d.hint =
          fmt::format("update the driver to {} or newer, or resolve a lock for this machine ({})",
                      r.expected, relock_here(ctx.lock.command));
      return d;
    }
    case gpu::FitProblem::CeilingBelow: {
      Drift d = make_drift(
          CheckLayer::Machine, "cuda-ceiling-below-lock", "cuda",
          fmt::format("this machine's CUDA ceiling is {} ({}), but the lock's builds need CUDA {}",
                      r.actual, probe::method_name(machine.cuda_ceiling->method), r.expected),
          r.line);
      d.expected = r.expected;
      d.actual = r.actual;
      d.hint = fmt::format("update the driver, or resolve a lock for this machine ({})",
                           relock_here(ctx.lock.command));
      return d;
    }
    case gpu::FitProblem::CudnnArch: {
      Drift d =
          make_drift(CheckLayer::Machine, "gpu-arch-cudnn", r.subject, gpu::reason_text(r), r.line);
      d.expected = r.expected;
      d.actual = r.actual;
      d.hint =
          "use a lock with a cuDNN older than 9.11 (torch builds before cuDNN 9.11) for this GPU";
      return d;
    }
    case gpu::FitProblem::NoKernels:
    case gpu::FitProblem::NoDriver:
      break;
  }
  Drift d = make_drift(CheckLayer::Machine, "gpu-arch-unsupported", r.subject, gpu::reason_text(r),
                       r.line);
  d.expected = r.expected;
  d.actual = r.actual;
  d.hint = fmt::format(
      "resolve the lock again for this GPU ({}): it picks a build with kernels for {} when one "
      "fits the requirements",
      relock_here(ctx.lock.command), r.subject);
  return d;
}

// The GPUs the lock was resolved for, against this machine's (issue 16 item 3): a GPU the
// lock was not made for, whose kernels the checks above found, is worth a note.
void note_other_gpus(const lock::GpulockGpu* gpu, const std::vector<gpu::ComputeCapability>& archs,
                     const std::vector<Drift>& drifts, LayerResult& layer) {
  if (gpu && !gpu->archs.empty()) {
    for (const auto& arch : archs) {
      const std::string name = arch.to_string();
      if (std::find(gpu->archs.begin(), gpu->archs.end(), arch) != gpu->archs.end()) continue;
      if (std::any_of(drifts.begin(), drifts.end(),
                      [&](const Drift& d) { return d.subject == name; }))
        continue;
      layer.notes.push_back(
          fmt::format("GPU {} is not one the lock was resolved for ({}); the locked builds have "
                      "kernels for it",
                      name, arch_names(gpu->archs)));
    }
  }
}

// "LD_LIBRARY_PATH entry DIR", "ld.so cache", ...: how the loader found `copy`.
std::string route(const probe::LibraryCopy& copy) {
  std::string via(probe::found_via_name(copy.via));
  if (copy.via == probe::FoundVia::LdLibraryPath) via += " entry " + copy.entry;
  return via;
}

// Whether the lock records `soname` missing from `package`'s wheel because the set lacks a
// companion its libraries load by name (a `needs` row: cuDNN's libnvrtc), not because the wheel
// lacks a file of its own release (a hazard).
bool is_companion(std::string_view package, std::string_view soname) {
  const auto& needs = gpu::library_rules().needs;
  return std::any_of(needs.begin(), needs.end(), [&](const gpu::LibraryRules::Need& n) {
    return n.loader == package && n.file == soname;
  });
}

// A companion the set lacks (the lock records it as missing): the copy this machine's loader
// takes is a note (the lock does not pin it); none is a drift, since the load then fails.
void check_companion(const lock::Package& p, const std::string& wheel, const std::string& soname,
                     const std::optional<probe::LibraryCopy>& copy, LayerResult& layer,
                     std::vector<Drift>& drifts) {
  const std::string what = fmt::format(
      "{} {} ({}) loads {} by name, and no locked wheel ships it (the lock records it "
      "as missing)",
      p.name, p.version.value_or(""), wheel, soname);
  if (copy) {
    layer.notes.push_back(fmt::format(
        "{}; on this machine the loader takes {} through the {}: a copy the lock does not pin",
        what, copy->path, route(*copy)));
    return;
  }
  Drift d = make_drift(CheckLayer::Machine, "companion-missing", p.name,
                       fmt::format("{}; this machine has no copy on LD_LIBRARY_PATH, in the ld.so "
                                   "cache or in the system directories, so its load fails when "
                                   "{}'s libraries need it",
                                   what, p.name),
                       p.line.line);
  d.hint = fmt::format("lock a set that holds the wheel shipping {}, or install a copy", soname);
  drifts.push_back(std::move(d));
}

// Issue 44 item 3: a wheel the lock records with missing libraries (a hazard, locked because a
// requirement pinned it): where this machine's loader would take each from instead. A copy is a
// library of another release loaded beside the wheel's own: an error. None: nothing to say.
// A companion the set lacks: check_companion.
void check_hazard_copies(const Context& ctx, LayerResult& layer, std::vector<Drift>& drifts) {
  auto options = probe::load_probe_options_from_env();
  if (!options) return;  // only GPULOCK_PROBE_TIMEOUT_MS can be wrong, which this never uses
  for (const auto& p : ctx.lock.packages) {
    auto files = lock::wheel_files(p);
    if (!files) continue;
    for (const auto& [wheel, rec] : *files) {
      for (const auto& soname : rec.missing_libraries) {
        auto copy = probe::find_library_copy(soname, *options);
        if (is_companion(p.name, soname)) {
          check_companion(p, wheel, soname, copy, layer, drifts);
          continue;
        }
        if (!copy) continue;
        Drift d = make_drift(
            CheckLayer::Machine, "hazard-copy", p.name,
            fmt::format("{} {} ({}) ships no {}, which its own libraries load by name (the lock "
                        "records it as missing); on this machine the loader takes {} through "
                        "the {} instead: a copy from another release, loaded beside this one's "
                        "libraries (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH at the first "
                        "convolution)",
                        p.name, p.version.value_or(""), wheel, soname, copy->path, route(*copy)),
            p.line.line);
        d.hint = copy->via == probe::FoundVia::LdLibraryPath
                     ? fmt::format(
                           "remove {} from LD_LIBRARY_PATH, or lock a release whose wheel "
                           "ships {}",
                           copy->entry, soname)
                     : fmt::format(
                           "remove {} (or its directory from the loader's search), or "
                           "lock a release whose wheel ships {}",
                           copy->path, soname);
        drifts.push_back(std::move(d));
      }
    }
  }
}

}  // namespace

void check_machine(const Context& ctx, const probe::MachineInfo& machine, LayerResult& layer,
                   std::vector<Drift>& drifts) {
  layer.checked = true;
  check_hazard_copies(ctx, layer, drifts);
  std::string here = machine_text(machine);
  const auto* gpu = recorded_gpu(ctx.lock);
  auto facts = lock::gpu_facts(ctx.lock);
  if (facts.cpu.empty()) facts.cpu = target_machine(ctx.lock);
  const gpu::Fit fit = gpu::lock_fits(facts, probe::fit_machine(machine));
  for (const auto& r : fit.reasons) {
    if (r.problem != gpu::FitProblem::NoDriver) drifts.push_back(drift_of(ctx, machine, gpu, r));
  }
  if (gpu == nullptr) {
    layer.summary =
        fmt::format("{}; the lock records no GPU facts ([tool.gpulock.gpu]) to compare", here);
    return;
  }
  if (!fit.cuda_lock) {
    layer.summary = fmt::format("{}; the lock has no CUDA builds, so any machine runs it", here);
    return;
  }
  const std::size_t gpu_line = gpu->line.line;
  std::string needs;
  if (gpu->min_driver) needs += fmt::format("driver >= {}", gpu->min_driver->to_string());
  if (gpu->cuda)
    needs += fmt::format("{}CUDA {}", needs.empty() ? "" : ", ", gpu->cuda->to_string());
  // The package that raised the lock's CUDA above its build's (a CUDA 12.6 torch beside an
  // unpinned nvidia-cublas-cu12 12.9): named, so the CUDA is not read as the build's.
  if (const auto* raised = gpu::cuda_raised_by(facts))
    needs += fmt::format(" (for {} {})", raised->name, raised->version.to_string());
  if (gpu->variant) needs += fmt::format("{}variant {}", needs.empty() ? "" : ", ", *gpu->variant);
  layer.summary = fmt::format("{}; the lock needs {}", here, needs);

  for (const auto& r : fit.reasons) {
    if (r.problem != gpu::FitProblem::NoDriver) continue;
    // A machine without a driver (a CI runner): what could not be checked, not a failure.
    Drift d = make_drift(
        CheckLayer::Machine, "no-driver", "driver",
        fmt::format(
            "no NVIDIA driver was found here, so the lock's driver minimum{} and GPU "
            "architectures were not checked",
            gpu->min_driver ? fmt::format(" ({})", gpu->min_driver->to_string()) : std::string()),
        gpu_line);
    d.severity = DriftSeverity::Info;
    if (!machine.verdict.empty()) d.details.push_back(machine.verdict);
    d.hint =
        "on a machine without a GPU, check the inputs and the environment only (--inputs --env)";
    drifts.push_back(std::move(d));
    return;
  }
  for (const auto& note : fit.unknown)
    layer.notes.push_back(note);
  for (const auto& note : fit.assumed_lists)
    layer.notes.push_back(note);
  if (machine.gpu_archs && !machine.gpu_archs->value.empty())
    note_other_gpus(gpu, machine.gpu_archs->value, drifts, layer);
}

}  // namespace gpulock::app::check_detail

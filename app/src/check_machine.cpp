// The machine layer of `gpulock check`: can this machine run the lock? Its driver against the
// lock's minimum, its CUDA ceiling against the lock's CUDA, its GPUs against the locked torch
// build's arch list and the locked cuDNN's lowest supported GPU (DESIGN.md §GPU model).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/app/command_line.h"
#include "gpulock/app/gpu_policy.h"
#include "gpulock/core/version.h"
#include "gpulock/probe/cuda_versions.h"

#include "check_internal.h"

namespace gpulock::app::check_detail {
namespace {

std::string arch_names(const std::vector<probe::ComputeCapability>& archs) {
  std::string out;
  for (const auto& a : archs)
    out += (out.empty() ? "" : ", ") + a.to_string();
  return out;
}

const lock::Package* first_package(const lock::Lock& lk, std::string_view name) {
  auto found = lock::find_packages(lk, name);
  return found.empty() ? nullptr : found.front();
}

const lock::Package* cudnn_package(const lock::Lock& lk) {
  for (const auto& p : lk.packages) {
    if (p.name.starts_with("nvidia-cudnn-")) return &p;
  }
  return nullptr;
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

// The lock's driver minimum and CUDA against this machine's driver and ceiling.
void check_driver(const Context& ctx, const probe::MachineInfo& machine,
                  const lock::GpulockGpu* gpu, const std::optional<probe::CudaVersion>& lock_cuda,
                  std::vector<Drift>& drifts) {
  const std::size_t gpu_line = gpu->line.line;
  // The lock's compat, through the flag's parser; a value it refuses counts as strict.
  const auto compat =
      gpu->compat ? probe::parse_cuda_compat(*gpu->compat).value_or(probe::CudaCompat::Strict)
                  : probe::CudaCompat::Strict;
  bool driver_reported = false;
  if (gpu->min_driver && machine.driver) {
    auto min = probe::DriverVersion::parse(*gpu->min_driver);
    if (min && machine.driver->value < *min) {
      Drift d = make_drift(
          CheckLayer::Machine, "driver-below-minimum", "driver",
          fmt::format("this machine's NVIDIA driver {} is older than the lock's minimum {}{}",
                      machine.driver->value.to_string(), min->to_string(),
                      gpu->cuda ? fmt::format(" (for CUDA {})", *gpu->cuda) : std::string()),
          gpu_line);
      d.expected = min->to_string();
      d.actual = machine.driver->value.to_string();
      d.hint =
          fmt::format("update the driver to {} or newer, or resolve a lock for this machine ({})",
                      min->to_string(), relock_here(ctx.lock.command));
      drifts.push_back(std::move(d));
      driver_reported = true;
    }
  }
  if (!driver_reported && lock_cuda && machine.cuda_ceiling &&
      !probe::ceiling_allows(machine.cuda_ceiling->value, *lock_cuda, compat)) {
    Drift d = make_drift(
        CheckLayer::Machine, "cuda-ceiling-below-lock", "cuda",
        fmt::format("this machine's CUDA ceiling is {} ({}), but the lock's builds need CUDA {}",
                    machine.cuda_ceiling->value.to_string(),
                    probe::method_name(machine.cuda_ceiling->method), lock_cuda->to_string()),
        gpu_line);
    d.expected = lock_cuda->to_string();
    d.actual = machine.cuda_ceiling->value.to_string();
    d.hint = fmt::format("update the driver, or resolve a lock for this machine ({})",
                         relock_here(ctx.lock.command));
    drifts.push_back(std::move(d));
  }
}

// The locked torch build's kernels against this machine's GPUs.
void check_torch_kernels(const Context& ctx, const std::vector<probe::ComputeCapability>& archs,
                         const std::optional<probe::CudaVersion>& lock_cuda, LayerResult& layer,
                         std::vector<Drift>& drifts) {
  if (const auto* torch = first_package(ctx.lock, "torch"); torch && torch->version) {
    auto tv = core::Version::parse(*torch->version);
    std::optional<probe::CudaVersion> torch_cuda;
    if (tv) {
      auto label = classify_build(*tv);
      if (label.kind == BuildKind::Cuda) torch_cuda = label.cuda;
      if (label.kind == BuildKind::Unlabeled) torch_cuda = lock_cuda;
    }
    if (tv && torch_cuda) {
      auto list = torch_arch_list(*tv, *torch_cuda, target_machine(ctx.lock));
      // No list known for the build: what its CUDA can compile, SASS only, is assumed, as
      // resolve assumes it (issue 16 item 3), and said.
      const bool assumed = !list;
      if (assumed) {
        list = archs_cuda_can_build(*torch_cuda);
        layer.notes.push_back(
            fmt::format("no arch list is known for torch {} (CUDA {}): GPUs compared with what "
                        "CUDA {} can build, assumed ({})",
                        *torch->version, torch_cuda->to_string(), torch_cuda->to_string(),
                        describe_arch_list(*list)));
      }
      {
        for (const auto& arch : archs) {
          if (arch_list_runs_on(*list, arch)) continue;
          Drift d = make_drift(
              CheckLayer::Machine, "gpu-arch-unsupported", arch.to_string(),
              fmt::format("torch {} has no kernels for this machine's GPU ({}): it {} {}",
                          *torch->version, arch.to_string(),
                          assumed ? "can carry at most (assumed from its CUDA)" : "carries",
                          describe_arch_list(*list)),
              torch->line.line);
          d.expected = describe_arch_list(*list);
          d.actual = arch.to_string();
          d.hint = fmt::format(
              "resolve the lock again for this GPU ({}): it picks a build with kernels for {} when "
              "one fits the requirements",
              relock_here(ctx.lock.command), arch.to_string());
          drifts.push_back(std::move(d));
        }
      }
    }
  }
}

// cuDNN 9.11 and newer dropped GPUs below compute capability 7.5.
void check_cudnn_archs(const Context& ctx, const std::vector<probe::ComputeCapability>& archs,
                       std::vector<Drift>& drifts) {
  if (const auto* cudnn = cudnn_package(ctx.lock); cudnn && cudnn->version) {
    auto cv = core::Version::parse(*cudnn->version);
    auto floor = cv ? cudnn_min_capability(*cv) : std::nullopt;
    for (const auto& arch : archs) {
      if (!floor || arch >= *floor) continue;
      Drift d =
          make_drift(CheckLayer::Machine, "gpu-arch-cudnn", arch.to_string(),
                     fmt::format("{} {} does not support this machine's GPU ({}): it needs compute "
                                 "capability {} or newer",
                                 cudnn->name, *cudnn->version, arch.to_string(), floor->dotted()),
                     cudnn->line.line);
      d.expected = fmt::format(">= {}", floor->dotted());
      d.actual = arch.to_string();
      d.hint =
          "use a lock with a cuDNN older than 9.11 (torch builds before cuDNN 9.11) for this GPU";
      drifts.push_back(std::move(d));
    }
  }
}

// The GPUs the lock was resolved for, against this machine's (issue 16 item 3): a GPU the
// lock was not made for, whose kernels the checks above found, is worth a note.
void note_other_gpus(const lock::GpulockGpu* gpu,
                     const std::vector<probe::ComputeCapability>& archs,
                     const std::vector<Drift>& drifts, LayerResult& layer) {
  if (gpu && !gpu->archs.empty()) {
    for (const auto& arch : archs) {
      const std::string name = arch.to_string();
      if (std::find(gpu->archs.begin(), gpu->archs.end(), name) != gpu->archs.end()) continue;
      if (std::any_of(drifts.begin(), drifts.end(),
                      [&](const Drift& d) { return d.subject == name; }))
        continue;
      layer.notes.push_back(
          fmt::format("GPU {} is not one the lock was resolved for ({}); the locked builds have "
                      "kernels for it",
                      name, fmt::join(gpu->archs, ", ")));
    }
  }
}

}  // namespace

void check_machine(const Context& ctx, const probe::MachineInfo& machine, LayerResult& layer,
                   std::vector<Drift>& drifts) {
  layer.checked = true;
  std::string here = machine_text(machine);
  const auto* gpu = recorded_gpu(ctx.lock);
  std::optional<probe::CudaVersion> lock_cuda;
  if (gpu && gpu->cuda) {
    if (auto c = probe::CudaVersion::parse(*gpu->cuda)) lock_cuda = *c;
  }
  const bool cuda_lock = gpu && (lock_cuda || (gpu->variant && *gpu->variant != "cpu"));
  if (gpu == nullptr) {
    layer.summary =
        fmt::format("{}; the lock records no GPU facts ([tool.gpulock.gpu]) to compare", here);
    return;
  }
  if (!cuda_lock) {
    layer.summary = fmt::format("{}; the lock has no CUDA builds, so any machine runs it", here);
    return;
  }
  const std::size_t gpu_line = gpu->line.line;
  std::string needs;
  if (gpu->min_driver) needs += fmt::format("driver >= {}", *gpu->min_driver);
  if (gpu->cuda) needs += fmt::format("{}CUDA {}", needs.empty() ? "" : ", ", *gpu->cuda);
  if (gpu->variant) needs += fmt::format("{}variant {}", needs.empty() ? "" : ", ", *gpu->variant);
  layer.summary = fmt::format("{}; the lock needs {}", here, needs);

  if (!machine.driver && !machine.cuda_ceiling) {
    Drift d = make_drift(
        CheckLayer::Machine, "no-driver", "driver",
        fmt::format("no NVIDIA driver was found here, so the lock's driver minimum{} and GPU "
                    "architectures were not checked",
                    gpu->min_driver ? fmt::format(" ({})", *gpu->min_driver) : std::string()),
        gpu_line);
    d.severity = DriftSeverity::Info;
    if (!machine.verdict.empty()) d.details.push_back(machine.verdict);
    d.hint =
        "on a machine without a GPU, check the inputs and the environment only (--inputs --env)";
    drifts.push_back(std::move(d));
    return;
  }

  check_driver(ctx, machine, gpu, lock_cuda, drifts);

  if (!machine.gpu_archs || machine.gpu_archs->value.empty()) {
    layer.notes.push_back("GPU architectures unknown here: not compared with the locked builds");
    return;
  }
  const auto& archs = machine.gpu_archs->value;
  check_torch_kernels(ctx, archs, lock_cuda, layer, drifts);
  check_cudnn_archs(ctx, archs, drifts);
  note_other_gpus(gpu, archs, drifts, layer);
}

}  // namespace gpulock::app::check_detail

// Step 1 of machine detection (machine_detector.h): the overrides, read from the flags and the
// environment (read_overrides, detect_options_from_env), and recorded by the detector; a driver
// override describes another machine, so nothing is detected.
#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "machine_detector.h"

namespace gpulock::probe {

namespace {

struct Picked {
  std::string text;
  std::string origin;
};

std::optional<Picked> pick(const std::string& flag_text, std::string_view flag,
                           const char* env_name, EnvLookup env) {
  if (!flag_text.empty()) return Picked{flag_text, std::string(flag)};
  if (auto v = sys::env_value(env_name, env)) return Picked{std::string(*v), env_name};
  return std::nullopt;
}

std::unexpected<core::Error> usage(const Picked& p, const core::Error& e) {
  core::Error out = core::make_error(core::ErrorCode::Usage,
                                     fmt::format("invalid value for {}: {}", p.origin, e.message),
                                     e.where, e.line);
  for (const auto& h : e.hints)
    out = out.with_hint(h);
  return std::unexpected<core::Error>(std::move(out));
}

}  // namespace

core::Result<Overrides> read_overrides(const OverrideFlags& flags, EnvLookup env) {
  // Each fact from its flag, else its variable; `--driver auto` asks for detection, whatever
  // GPULOCK_DRIVER says. Then the one parser (gpu::parse_machine) over what was picked.
  auto driver =
      flags.driver == "auto" ? std::nullopt : pick(flags.driver, "--driver", "GPULOCK_DRIVER", env);
  if (driver && core::trim(driver->text, " \t") == "auto") driver.reset();
  auto ceiling = pick(flags.cuda_ceiling, "--cuda-ceiling", "GPULOCK_CUDA_CEILING", env);
  auto archs = pick(flags.gpu_arch, "--gpu-arch", "GPULOCK_GPU_ARCH", env);
  gpu::MachineFlags picked{driver ? driver->text : "", ceiling ? ceiling->text : "",
                           archs ? archs->text : ""};
  auto spec = gpu::parse_machine(picked);
  if (!spec) {
    const auto& p = spec.error().field == gpu::MachineField::Driver        ? *driver
                    : spec.error().field == gpu::MachineField::CudaCeiling ? *ceiling
                                                                           : *archs;
    return usage(p, spec.error().error);
  }
  Overrides o;
  if (driver) {
    o.no_driver = spec->driver.is_none();
    o.driver = spec->driver.version();
    o.driver_origin = driver->origin;
    o.driver_raw = driver->text;
  }
  if (ceiling) {
    o.cuda_ceiling = spec->ceiling;
    o.cuda_ceiling_origin = ceiling->origin;
    o.cuda_ceiling_raw = ceiling->text;
  }
  if (archs) {
    o.gpu_archs = std::move(spec->archs);
    o.gpu_arch_origin = archs->origin;
    o.gpu_arch_raw = archs->text;
  }
  return o;
}

core::Result<std::optional<std::chrono::milliseconds>> probe_timeout_from_env(EnvLookup env) {
  auto ms = sys::env_integer("GPULOCK_PROBE_TIMEOUT_MS", 1, 600000, "milliseconds, 1-600000", env);
  if (!ms) return std::unexpected(ms.error());
  if (!*ms) return std::optional<std::chrono::milliseconds>();
  return std::optional<std::chrono::milliseconds>(std::chrono::milliseconds(**ms));
}

core::Result<DetectOptions> detect_options_from_env(const OverrideFlags& flags, EnvLookup env) {
  auto overrides = read_overrides(flags, env);
  if (!overrides) return std::unexpected(overrides.error());
  DetectOptions o;
  o.overrides = std::move(*overrides);
  if (auto root = sys::env_value("GPULOCK_TEST_ROOT", env)) {
    o.root = std::string(*root);
    o.hermetic = true;
  }
  auto timeout = probe_timeout_from_env(env);
  if (!timeout) return std::unexpected(timeout.error());
  if (*timeout) o.timeout = **timeout;
  return o;
}

namespace detail {

// ----- 1. overrides -----
bool Detector::record_overrides() {
  const Overrides& ov = o_.overrides;
  std::vector<std::string> given;
  if (ov.no_driver) given.push_back(fmt::format("no GPU ({}=none)", ov.driver_origin));
  if (ov.driver)
    given.push_back(fmt::format("driver {} ({})", ov.driver->to_string(), ov.driver_origin));
  if (ov.cuda_ceiling) {
    given.push_back(
        fmt::format("CUDA ceiling {} ({})", ov.cuda_ceiling->to_string(), ov.cuda_ceiling_origin));
  }
  if (ov.gpu_archs) {
    given.push_back(
        fmt::format("GPU archs {} ({})", archs_text(*ov.gpu_archs), ov.gpu_arch_origin));
  }
  if (given.empty()) {
    step("overrides", StepOutcome::NotFound,
         "none given (GPULOCK_DRIVER, GPULOCK_CUDA_CEILING, GPULOCK_GPU_ARCH unset)");
  } else {
    step("overrides", StepOutcome::Ok, join(given, "; "));
  }
  if (ov.cuda_ceiling) {
    m_.cuda_ceiling = Detected<gpu::CudaVersion>{*ov.cuda_ceiling, Method::Override,
                                                 ov.cuda_ceiling_origin, ov.cuda_ceiling_raw};
  }
  if (ov.gpu_archs) {
    m_.gpu_archs = Detected<std::vector<gpu::ComputeCapability>>{
        *ov.gpu_archs, Method::Override, ov.gpu_arch_origin, ov.gpu_arch_raw};
  }
  if (!ov.no_driver && !ov.driver) return false;

  std::string why = fmt::format("not run: the driver is given by {}", ov.driver_origin);
  for (const char* name : {"nvml", "libcuda", "sysfs", "procfs", "devices", "nvidia-smi"}) {
    step(name, StepOutcome::Skipped, why);
  }
  if (ov.no_driver) {
    m_.status = MachineStatus::NoGpuOverride;
    m_.verdict = fmt::format(
        "no GPU: {} says this machine has no NVIDIA driver; only CPU builds "
        "qualify",
        ov.driver_origin == "--driver" ? "--driver none" : ov.driver_origin + "=none");
    if (ov.cuda_ceiling || ov.gpu_archs) {
      warn(fmt::format("{} and {} are ignored: there is no GPU",
                       ov.cuda_ceiling ? ov.cuda_ceiling_origin : ov.gpu_arch_origin,
                       ov.driver_origin));
      m_.cuda_ceiling.reset();
      m_.gpu_archs.reset();
    }
    return true;
  }
  m_.driver =
      Detected<gpu::DriverVersion>{*ov.driver, Method::Override, ov.driver_origin, ov.driver_raw};
  if (!m_.cuda_ceiling) set_ceiling_from_table();
  m_.status = MachineStatus::Override;
  std::string ceiling =
      m_.cuda_ceiling
          ? fmt::format("CUDA ceiling {} ({})", m_.cuda_ceiling->value.to_string(),
                        m_.cuda_ceiling->method == Method::Override ? m_.cuda_ceiling->source
                                                                    : "NVIDIA's driver table")
          : "no CUDA ceiling (the driver is older than every CUDA in NVIDIA's table)";
  std::string archs =
      m_.gpu_archs
          ? fmt::format("GPU archs {} ({})", archs_text(m_.gpu_archs->value), m_.gpu_archs->source)
          : "GPU archs not given";
  m_.verdict =
      fmt::format("another machine described: driver {} ({}), {}, {}; nothing was detected",
                  ov.driver->to_string(), ov.driver_origin, ceiling, archs);
  if (!m_.gpu_archs) {
    m_.hints.push_back(
        "pass --gpu-arch sm_XY (or GPULOCK_GPU_ARCH) so that builds are checked "
        "against the target GPUs");
  }
  return true;
}

}  // namespace detail

}  // namespace gpulock::probe

// Machine detection, after the steps (machine_detector.h): their answers combined into values,
// each with its method (driver version, CUDA ceiling, GPUs, architectures), and the warnings
// where the sources disagree or one is missing.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "machine_detector.h"

namespace gpulock::probe::detail {

using sys::ChildResult;

void Detector::set_ceiling_from_table() {
  if (!m_.driver) return;
  auto c = gpu::cuda_ceiling_for_driver(m_.driver->value);
  if (!c) return;
  const auto& d = m_.driver->value;
  if (d.parts().size() == 1) {
    warn(fmt::format(
        "driver {} is a branch number: read as the R{} branch, whose drivers run CUDA <= {}",
        d.to_string(), d.branch(), c->to_string()));
  } else if (auto newest = gpu::newest_driver_in_table(); newest && newest->branch() < d.branch()) {
    warn(
        fmt::format("driver {} is newer than gpulock's driver table (up to {}): its CUDA ceiling "
                    "is assumed to be {}",
                    d.to_string(), newest->to_string(), c->to_string()));
  }
  m_.cuda_ceiling = Detected<gpu::CudaVersion>{
      *c, Method::DriverTable,
      fmt::format("NVIDIA's table (driver {} from {})", m_.driver->value.to_string(),
                  m_.driver->method == Method::Override
                      ? m_.driver->source
                      : std::string(method_name(m_.driver->method))),
      m_.driver->value.to_string()};
}

// ----- combining -----
std::optional<gpu::ComputeCapability> Detector::cc_of(const detail::LibGpu& g) {
  if (g.cc_major <= 0 || g.cc_minor < 0) return std::nullopt;
  return gpu::ComputeCapability{static_cast<std::uint32_t>(g.cc_major),
                                static_cast<std::uint32_t>(g.cc_minor)};
}

std::vector<GpuInfo> Detector::gpus_from(const LibReport& r, Method method) const {
  std::vector<GpuInfo> out;
  for (const auto& g : r.gpus) {
    out.push_back(GpuInfo{g.index, g.name, g.uuid, cc_of(g), g.memory_bytes, method});
  }
  return out;
}

void Detector::combine() {
  auto cuda_file = combine_driver();
  find_driver_mismatch(cuda_file);
  combine_gpus();
  compare_nvml_and_cuda();
  combine_ceiling();
  combine_archs();
  warn_missing_libraries();
}

std::optional<gpu::DriverVersion> Detector::combine_driver() {
  // Driver version.
  if (nvml_ok_ && !nvml_->driver_version.empty()) {
    if (auto v = gpu::DriverVersion::parse(nvml_->driver_version)) {
      m_.driver = Detected<gpu::DriverVersion>{*v, Method::Nvml, "nvmlSystemGetDriverVersion",
                                               nvml_->driver_version};
    } else {
      warn(fmt::format("NVML gave an unreadable driver version {}",
                       core::quote_for_message(nvml_->driver_version)));
    }
  }
  if (!m_.driver && m_.kernel_module) m_.driver = m_.kernel_module;
  if (!m_.driver && smi_.found) {
    const auto& v = smi_.gpus.front().driver;
    m_.driver = Detected<gpu::DriverVersion>{
        v, Method::NvidiaSmi, "nvidia-smi --query-gpu=driver_version", v.to_string()};
  }
  std::optional<gpu::DriverVersion> cuda_file = cuda_ && cuda_->loaded && ev_.stub_path.empty()
                                                    ? detail::version_from_library_file(cuda_->path)
                                                    : std::nullopt;
  if (!m_.driver && cuda_file && (ev_.cuda_ok || cuda_init_failed_)) {
    m_.driver = Detected<gpu::DriverVersion>{*cuda_file, Method::Libcuda,
                                             fmt::format("file name of {}", shown(cuda_->path)),
                                             cuda_->path.substr(cuda_->path.rfind('/') + 1)};
  }
  return cuda_file;
}

void Detector::find_driver_mismatch(const std::optional<gpu::DriverVersion>& cuda_file) {
  // Driver updated but not reloaded: user space and kernel module differ.
  if (m_.kernel_module) {
    const gpu::DriverVersion& kernel = m_.kernel_module->value;
    if (m_.driver && m_.driver->method == Method::Nvml && m_.driver->value != kernel) {
      ev_.mismatch.push_back(
          fmt::format("NVML reports driver {} but the loaded kernel module is {}",
                      m_.driver->value.to_string(), kernel.to_string()));
      ev_.user_space_version = m_.driver->value.to_string();
    }
    if (nvml_ && nvml_->loaded) {
      if (auto v = detail::version_from_library_file(nvml_->path); v && *v != kernel) {
        ev_.mismatch.push_back(fmt::format("{} is version {} but the loaded kernel module is {}",
                                           shown(nvml_->path), v->to_string(), kernel.to_string()));
        ev_.user_space_version = v->to_string();
      }
    }
    if (cuda_file && *cuda_file != kernel) {
      if (cuda_->path.find("/compat/") != std::string::npos) {
        warn(fmt::format(
            "libcuda {} is a CUDA forward-compatibility package ({}) on kernel module {}",
            cuda_file->to_string(), shown(cuda_->path), kernel.to_string()));
      } else {
        ev_.mismatch.push_back(fmt::format("{} is version {} but the loaded kernel module is {}",
                                           shown(cuda_->path), cuda_file->to_string(),
                                           kernel.to_string()));
        ev_.user_space_version = cuda_file->to_string();
      }
    }
  }
  // Without a kernel module, libcuda failing to initialize means the module is missing.
  if (!m_.kernel_module && !ev_.wsl && cuda_init_failed_ && !ev_.cuda_hidden_by_env &&
      ev_.mismatch.empty()) {
    ev_.module_not_loaded.push_back(
        "libcuda loads but cuInit fails and no nvidia kernel module is loaded");
  }
}

void Detector::combine_gpus() {
  // GPUs: NVML (no CUDA context needed), else libcuda, else nvidia-smi.
  if (nvml_ok_ && !nvml_->gpus.empty()) {
    m_.gpus = gpus_from(*nvml_, Method::Nvml);
  } else if (ev_.cuda_ok && !cuda_->gpus.empty()) {
    m_.gpus = gpus_from(*cuda_, Method::Libcuda);
  } else if (smi_.found) {
    std::uint32_t i = 0;
    for (const auto& g : smi_.gpus) {
      m_.gpus.push_back(
          GpuInfo{i++, g.name, g.uuid, g.compute_capability, std::nullopt, Method::NvidiaSmi});
    }
  }
}

void Detector::combine_ceiling() {
  // Ceiling: libcuda (what the CUDA runtime accepts), else NVML, else the table.
  if (!m_.cuda_ceiling) {
    std::optional<gpu::CudaVersion> from_cuda;
    if (cuda_ &&
        (ev_.cuda_ok || ev_.cuda_hidden_by_env ||
         cuda_->rc("cuInit") == detail::kCudaErrorNoDevice) &&
        cuda_->cuda_version) {
      from_cuda = gpu::CudaVersion::from_driver_api(*cuda_->cuda_version);
    }
    std::optional<gpu::CudaVersion> from_nvml;
    if (nvml_ok_ && nvml_->cuda_version)
      from_nvml = gpu::CudaVersion::from_driver_api(*nvml_->cuda_version);
    if (from_cuda && ev_.mismatch.empty()) {
      m_.cuda_ceiling = Detected<gpu::CudaVersion>{
          *from_cuda, Method::Libcuda, "cuDriverGetVersion", std::to_string(*cuda_->cuda_version)};
    } else if (from_nvml) {
      m_.cuda_ceiling =
          Detected<gpu::CudaVersion>{*from_nvml, Method::Nvml, "nvmlSystemGetCudaDriverVersion_v2",
                                     std::to_string(*nvml_->cuda_version)};
    } else {
      set_ceiling_from_table();
    }
  } else if (m_.driver) {
    // Overridden: still say what the machine would have given.
    if (auto c = gpu::cuda_ceiling_for_driver(m_.driver->value);
        c && *c != m_.cuda_ceiling->value) {
      warn(fmt::format("CUDA ceiling {} from {} replaces the detected driver's {}",
                       m_.cuda_ceiling->value.to_string(), m_.cuda_ceiling->source,
                       c->to_string()));
    }
  }
}

void Detector::combine_archs() {
  // Architectures every build must support.
  if (m_.gpu_archs && !m_.gpus.empty()) {
    std::vector<gpu::ComputeCapability> detected;
    for (const auto& g : m_.gpus) {
      if (g.compute_capability) detected.push_back(*g.compute_capability);
    }
    std::sort(detected.begin(), detected.end());
    detected.erase(std::unique(detected.begin(), detected.end()), detected.end());
    if (!detected.empty() && detected != m_.gpu_archs->value) {
      warn(fmt::format("GPU archs {} from {} replace the detected {}",
                       archs_text(m_.gpu_archs->value), m_.gpu_archs->source,
                       archs_text(detected)));
    }
  }
  if (!m_.gpu_archs && !m_.gpus.empty()) {
    std::vector<gpu::ComputeCapability> archs;
    for (const auto& g : m_.gpus) {
      if (g.compute_capability) {
        archs.push_back(*g.compute_capability);
      } else {
        warn(fmt::format("the compute capability of GPU {} ({}) is unknown; pass --gpu-arch sm_XY",
                         g.index, g.name.empty() ? "unnamed" : g.name));
      }
    }
    std::sort(archs.begin(), archs.end());
    archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
    if (!archs.empty()) {
      Method method = m_.gpus.front().method;
      m_.gpu_archs = Detected<std::vector<gpu::ComputeCapability>>{archs, method, "every GPU",
                                                                   archs_text(archs)};
    }
  }
}

void Detector::warn_missing_libraries() {
  // One side present without the other.
  bool nvml_missing = nvml_ && !nvml_->loaded && nvml_->child.end == ChildResult::End::Exited;
  bool cuda_missing = cuda_ && !cuda_->loaded && cuda_->child.end == ChildResult::End::Exited;
  if (nvml_ok_ && (cuda_missing || !ev_.stub_path.empty())) {
    if (!ev_.stub_path.empty()) {
      warn(
          fmt::format("libcuda.so.1 resolves to the CUDA toolkit's stub ({}) although a driver is "
                      "installed: CUDA programs such as torch will fail; remove its directory from "
                      "LD_LIBRARY_PATH",
                      ev_.stub_path));
    } else {
      warn(
          "NVML works but libcuda.so.1 was not found: CUDA programs such as torch will not find "
          "the "
          "driver; install the driver's CUDA library (libcuda, e.g. libnvidia-compute or "
          "nvidia-driver-cuda)");
    }
  }
  if (ev_.cuda_ok && nvml_missing) {
    warn(
        "libcuda works but libnvidia-ml.so.1 (NVML) was not found: GPU names and architectures "
        "come from libcuda; nvidia-smi will not work");
  }
  if (!m_.gpus.empty() && m_.gpus.size() < proc_gpus_) {
    warn(fmt::format("the kernel module knows {} but only {} visible here",
                     plural(proc_gpus_, "GPU"), plural(m_.gpus.size(), "GPU is")));
  }
}

void Detector::compare_nvml_and_cuda() {
  if (!nvml_ok_ || !ev_.cuda_ok) return;
  const LibReport& n = *nvml_;
  const LibReport& c = *cuda_;
  if (n.cuda_version && c.cuda_version && *n.cuda_version != *c.cuda_version) {
    auto nv = gpu::CudaVersion::from_driver_api(*n.cuda_version);
    auto cv = gpu::CudaVersion::from_driver_api(*c.cuda_version);
    if (nv && cv) {
      warn(
          fmt::format("NVML and libcuda disagree on the CUDA version: NVML {}, libcuda {} (the "
                      "ceiling is libcuda's, which counts a forward-compatibility package)",
                      nv->to_string(), cv->to_string()));
    }
  }
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  if (n.gpus.size() != c.gpus.size()) {
    if (cvd != nullptr) {
      warn(fmt::format("CUDA_VISIBLE_DEVICES='{}' shows CUDA {} of the {} NVML lists", cvd,
                       plural(c.gpus.size(), "GPU"), n.gpus.size()));
    } else {
      warn(fmt::format("NVML and libcuda disagree on the number of GPUs: NVML {}, libcuda {}",
                       n.gpus.size(), c.gpus.size()));
    }
    return;
  }
  // The same GPUs, matched by UUID where both have one, else by sorted capability.
  std::vector<std::string> diffs;
  for (const auto& cg : c.gpus) {
    for (const auto& ng : n.gpus) {
      if (cg.uuid.empty() || cg.uuid != ng.uuid) continue;
      if (cc_of(cg) != cc_of(ng)) {
        diffs.push_back(fmt::format("{}: NVML {}, libcuda {}", ng.uuid,
                                    cc_of(ng) ? cc_of(ng)->to_string() : "unknown",
                                    cc_of(cg) ? cc_of(cg)->to_string() : "unknown"));
      }
    }
  }
  auto sorted_ccs = [](const LibReport& r) {
    std::vector<std::string> v;
    for (const auto& g : r.gpus)
      v.push_back(cc_of(g) ? cc_of(g)->to_string() : "unknown");
    std::sort(v.begin(), v.end());
    return v;
  };
  if (diffs.empty() && sorted_ccs(n) != sorted_ccs(c)) {
    diffs.push_back(
        fmt::format("NVML {}, libcuda {}", join(sorted_ccs(n), ", "), join(sorted_ccs(c), ", ")));
  }
  if (!diffs.empty()) {
    warn(fmt::format("NVML and libcuda disagree on the GPU architectures: {}", join(diffs, "; ")));
  }
}

}  // namespace gpulock::probe::detail

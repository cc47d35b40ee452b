// The probe's parsers of system text (probe/src/machine_sources.h and cuda_versions.h):
// /sys/module/nvidia/version, /proc/driver/nvidia/version, a driver library's file name,
// nvidia-smi's CSV output, torch/version.py, and the driver, CUDA and compute-capability
// versions inside them. Properties: each version prints to text that parses back equal.
#include <fmt/format.h>

#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/probe/environment.h"

#include "fuzz_check.h"
#include "machine_sources.h"

using namespace gpulock::probe;
namespace gpu = gpulock::gpu;

namespace {

void check_driver(const gpu::DriverVersion& v) {
  auto again = gpu::DriverVersion::parse(v.to_string());
  FUZZ_CHECK(again.has_value() && *again == v, fmt::format("driver '{}'", v.to_string()));
  FUZZ_CHECK(!v.parts().empty() && v.parts().size() <= 4,
             fmt::format("driver '{}'", v.to_string()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = gpulock::fuzz::as_text(data, size);
  if (auto v = detail::parse_sysfs_version(text)) check_driver(*v);
  if (auto v = detail::parse_procfs_version(text)) check_driver(*v);
  if (auto v = detail::version_from_library_file(text)) check_driver(*v);
  if (auto v = gpu::DriverVersion::parse(text)) check_driver(*v);
  for (bool with_cc : {false, true}) {
    if (auto gpus = detail::parse_nvidia_smi(text, with_cc)) {
      for (const auto& g : *gpus) {
        check_driver(g.driver);
        if (g.compute_capability) {
          auto cc = gpu::ComputeCapability::parse(g.compute_capability->dotted());
          FUZZ_CHECK(cc.has_value() && *cc == *g.compute_capability,
                     g.compute_capability->dotted());
        }
      }
    }
  }
  if (auto c = gpu::CudaVersion::parse(text)) {
    auto again = gpu::CudaVersion::parse(c->to_string());
    FUZZ_CHECK(again.has_value() && *again == *c, fmt::format("cuda '{}'", c->to_string()));
  }
  if (auto cc = gpu::ComputeCapability::parse(text)) {
    auto a = gpu::ComputeCapability::parse(cc->to_string());
    auto b = gpu::ComputeCapability::parse(cc->dotted());
    FUZZ_CHECK(a.has_value() && *a == *cc && b.has_value() && *b == *cc,
               fmt::format("compute capability '{}' / '{}'", cc->to_string(), cc->dotted()));
  }
  bool found = false;
  (void)parse_torch_version_py_cuda(text, &found);
  (void)detail::first_line(text);
  return 0;
}

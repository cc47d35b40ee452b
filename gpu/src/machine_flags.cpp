// The one parser of a described machine (machine_flags.h).
#include "gpulock/gpu/machine_flags.h"

#include <algorithm>

#include "gpulock/core/text.h"

namespace gpulock::gpu {

core::Result<std::vector<ComputeCapability>> parse_gpu_archs(std::string_view text) {
  std::vector<ComputeCapability> archs;
  std::string_view rest = text;
  for (;;) {
    std::size_t comma = rest.find(',');
    auto cc = ComputeCapability::parse(core::trim(rest.substr(0, comma), " \t"));
    if (!cc) return std::unexpected(cc.error());
    archs.push_back(*cc);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  return archs;
}

std::expected<MachineSpec, MachineFlagError> parse_machine(const MachineFlags& flags) {
  auto fail = [](MachineField field, core::Error error) {
    return std::unexpected(MachineFlagError{field, std::move(error)});
  };
  MachineSpec spec;
  std::string_view driver = core::trim(flags.driver, " \t");
  if (driver == "none") {
    spec.driver = DriverSpec::none();
  } else if (!driver.empty() && driver != "auto") {
    auto v = DriverVersion::parse(driver);
    if (!v) {
      return fail(
          MachineField::Driver,
          v.error().with_hint("give a driver version like 550.54.14, or 'none' for no GPU"));
    }
    spec.driver = DriverSpec::of(*v);
  }
  if (!flags.cuda_ceiling.empty()) {
    auto c = CudaVersion::parse(core::trim(flags.cuda_ceiling, " \t"));
    if (!c) return fail(MachineField::CudaCeiling, c.error());
    spec.ceiling = *c;
  }
  if (!flags.gpu_arch.empty()) {
    auto a = parse_gpu_archs(flags.gpu_arch);
    if (!a) return fail(MachineField::GpuArch, a.error());
    spec.archs = std::move(*a);
  }
  return spec;
}

}  // namespace gpulock::gpu

// A lock's GPU facts for the fit rule (gpu_facts.h).
#include "gpulock/lock/gpu_facts.h"

namespace gpulock::lock {

gpu::LockFacts gpu_facts(const Lock& lock) {
  gpu::LockFacts facts;
  const GpulockTool* tool = lock.gpulock ? &*lock.gpulock : nullptr;
  if (tool && tool->target) {
    facts.platforms = tool->target->platforms;
    if (facts.platforms.empty() && !tool->target->platform.empty())
      facts.platforms.push_back(tool->target->platform);
    if (!facts.platforms.empty()) {
      if (auto p = gpu::platform_of_tag(facts.platforms.front())) facts.cpu = p->cpu;
    }
  }
  if (tool && tool->gpu) {
    const GpulockGpu& g = *tool->gpu;
    facts.gpu_line = g.line.line;
    facts.cuda = g.cuda;
    facts.min_driver = g.min_driver;
    facts.compat = g.compat.value_or(gpu::CudaCompat::Strict);
    facts.cuda_builds = facts.cuda.has_value() || (g.variant && *g.variant != "cpu");
    if (g.variant) facts.build_cuda = gpu::cuda_of_variant_label(*g.variant);
  }
  for (const auto& p : lock.packages) {
    if (!p.version) continue;
    auto v = core::Version::parse(*p.version);
    if (!v) continue;
    facts.packages.push_back(gpu::LockedPackage{p.name, *v, p.line.line});
  }
  return facts;
}

}  // namespace gpulock::lock

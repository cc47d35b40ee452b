// check --all-targets' comparison of a declared target with its lock's record (app/targets.h
// target_differences): the ceiling and the GPUs compare as values, however they are spelled.
#include <catch2/catch.hpp>

#include "gpulock/app/targets.h"

using namespace gpulock;

namespace {

lock::Lock lock_made_for(const char* ceiling, std::vector<const char*> archs) {
  lock::Lock lk;
  lock::GpulockTool tool;
  lock::GpulockTarget target;
  target.python = "3.11";
  target.platform = "manylinux_2_28_x86_64";
  tool.target = target;
  lock::GpulockGpu g;
  g.driver = *gpu::DriverSpec::parse("550.54.14");
  g.cuda_ceiling = *gpu::CudaVersion::parse(ceiling);
  for (const char* a : archs)
    g.archs.push_back(*gpu::ComputeCapability::parse(a));
  tool.gpu = g;
  lk.gpulock = tool;
  return lk;
}

app::TargetSpec declared(std::string ceiling, std::vector<std::string> archs) {
  app::TargetSpec t;
  t.name = "a100";
  t.python_version = "3.11";
  t.pythons = {"3.11"};
  t.platforms = {"manylinux_2_28_x86_64"};
  t.driver = *gpu::DriverSpec::parse("550.54.14");
  t.cuda_ceiling = std::move(ceiling);
  t.gpu_archs = std::move(archs);
  return t;
}

}  // namespace

TEST_CASE("a declared GPU spelled 8.0 is the lock's sm_80, a ceiling 12 is 12.0", "[targets]") {
  const auto lk = lock_made_for("12.0", {"sm_80", "sm_90"});
  CHECK(app::target_differences(declared("12", {"8.0", "sm_90"}), lk).empty());
  CHECK(app::target_differences(declared("12.0", {"sm_80", "9.0"}), lk).empty());
}

TEST_CASE("another GPU, another ceiling or a value that does not parse is a difference",
          "[targets]") {
  const auto lk = lock_made_for("12.4", {"sm_80"});
  auto arch = app::target_differences(declared("12.4", {"8.6"}), lk);
  REQUIRE(arch.size() == 1);
  CHECK(arch[0] == "declares gpu-arch [8.6], the lock was made for [sm_80]");
  auto ceiling = app::target_differences(declared("12.6", {"sm_80"}), lk);
  REQUIRE(ceiling.size() == 1);
  CHECK(ceiling[0] == "declares cuda-ceiling 12.6, the lock was made for 12.4");
  CHECK(app::target_differences(declared("12.4", {"sm_80", "sm_90"}), lk).size() == 1);
  CHECK(app::target_differences(declared("12.4", {"ampere"}), lk).size() == 1);
}

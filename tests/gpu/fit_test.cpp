// The fit rule (gpu/fit.h, issue 43): unit tests on values, no lock files.
#include "gpulock/gpu/fit.h"

#include <catch2/catch.hpp>

using namespace gpulock::gpu;

namespace {

gpulock::core::Version v(std::string_view text) {
  auto r = gpulock::core::Version::parse(text);
  REQUIRE(r);
  return *r;
}

// A lock of one torch build for CUDA `cuda` needing `min_driver`, for manylinux x86_64.
LockFacts torch_lock(std::string_view torch, std::string_view cuda, std::string_view min_driver) {
  LockFacts lock;
  lock.platforms = {"manylinux_2_28_x86_64"};
  lock.cuda = *CudaVersion::parse(cuda);
  lock.min_driver = *DriverVersion::parse(min_driver);
  lock.cuda_builds = true;
  lock.cpu = "x86_64";
  lock.packages.push_back({"torch", v(torch), 12});
  return lock;
}

Machine machine(std::string_view driver, std::vector<std::string_view> archs) {
  Machine m;
  m.platform = Platform{"linux", "x86_64"};
  m.driver = *DriverVersion::parse(driver);
  m.ceiling = cuda_ceiling_for_driver(*m.driver);
  for (auto a : archs)
    m.archs.push_back(*ComputeCapability::parse(a));
  return m;
}

}  // namespace

TEST_CASE("platform_of_tag reads the OS and CPU of a wheel platform tag", "[gpu][fit]") {
  CHECK(platform_of_tag("manylinux_2_28_x86_64") == Platform{"linux", "x86_64"});
  CHECK(platform_of_tag("manylinux2014_aarch64") == Platform{"linux", "aarch64"});
  CHECK(platform_of_tag("musllinux_1_2_aarch64") == Platform{"linux", "aarch64"});
  CHECK(platform_of_tag("linux_x86_64") == Platform{"linux", "x86_64"});
  CHECK(platform_of_tag("macosx_11_0_arm64") == Platform{"macos", "arm64"});
  CHECK(platform_of_tag("win_amd64") == Platform{"windows", "x86_64"});
  CHECK_FALSE(platform_of_tag("any"));
  CHECK_FALSE(platform_of_tag("manylinux_2_28"));
}

TEST_CASE("a lock fits when the driver runs its CUDA and every GPU has kernels", "[gpu][fit]") {
  // torch 2.9 cu126: 5.0;6.0;7.0;7.5;8.0;8.6;9.0 (shared/data/pytorch-gpu-wheels.json).
  const auto lock = torch_lock("2.9.0+cu126", "12.6", "560.28.03");
  auto fit = lock_fits(lock, machine("560.35.03", {"sm_61", "sm_86"}));
  CHECK(fit.fits);
  CHECK(fit.cuda_lock);
  CHECK(fit.reasons.empty());
  CHECK(fit.unknown.empty());

  SECTION("a driver below the lock's minimum") {
    auto old = lock_fits(lock, machine("550.54.15", {"sm_86"}));
    REQUIRE(old.reasons.size() == 1);
    CHECK(old.reasons[0].problem == FitProblem::DriverBelow);
    CHECK(old.reasons[0].expected == "560.28.03");
    CHECK(old.reasons[0].actual == "550.54.15");
  }
  SECTION("a GPU without kernels: Blackwell on a build up to 9.0 without PTX") {
    auto b200 = lock_fits(lock, machine("570.26", {"sm_100", "sm_90"}));
    REQUIRE(b200.reasons.size() == 1);
    CHECK(b200.reasons[0].problem == FitProblem::NoKernels);
    CHECK(b200.reasons[0].subject == "sm_100");
    CHECK(b200.reasons[0].package == "torch");
    CHECK(b200.reasons[0].line == 12);
  }
  SECTION("PTX runs on any newer GPU: cu130's 12.0+PTX on a 12.1 GPU") {
    auto cu130 = torch_lock("2.9.0+cu130", "13.0", "580.65.06");
    CHECK(lock_fits(cu130, machine("580.65.06", {"sm_121"})).fits);
    CHECK_FALSE(lock_fits(cu130, machine("580.65.06", {"sm_70"})).fits);
  }
}

TEST_CASE("the ceiling under --cuda-compat minor is the CUDA major", "[gpu][fit]") {
  auto lock = torch_lock("2.9.0+cu128", "12.8", "525.60.13");
  auto strict = lock;
  strict.min_driver.reset();
  auto refused = lock_fits(strict, machine("535.104.05", {"sm_80"}));
  REQUIRE(refused.reasons.size() == 1);
  CHECK(refused.reasons[0].problem == FitProblem::CeilingBelow);
  CHECK(refused.reasons[0].expected == "12.8");
  CHECK(refused.reasons[0].actual == "12.2");
  lock.compat = CudaCompat::Minor;
  CHECK(lock_fits(lock, machine("535.104.05", {"sm_80"})).fits);
}

TEST_CASE("the GPUs a lock was made for are a record: only kernels count", "[gpu][fit]") {
  // Made on sm_89 (recorded, not a fact the fit reads); an sm_86 machine runs its 8.6 SASS.
  auto lock = torch_lock("2.9.0+cu128", "12.8", "570.26");
  CHECK(lock_fits(lock, machine("570.124.06", {"sm_86"})).fits);
}

TEST_CASE("cuDNN 9.11 and newer refuse GPUs below 7.5", "[gpu][fit]") {
  auto lock = torch_lock("2.9.0+cu126", "12.6", "560.28.03");
  lock.packages.push_back({"nvidia-cudnn-cu12", v("9.13.0.50"), 40});
  auto fit = lock_fits(lock, machine("580.95.05", {"sm_61"}));
  REQUIRE(fit.reasons.size() == 1);
  CHECK(fit.reasons[0].problem == FitProblem::CudnnArch);
  CHECK(fit.reasons[0].expected == ">= 7.5");
  CHECK(fit.reasons[0].line == 40);
  lock.packages.back().version = v("9.10.2.21");
  CHECK(lock_fits(lock, machine("580.95.05", {"sm_61"})).fits);
}

TEST_CASE("facts the machine lacks are unknown, and the verdict says what it assumed",
          "[gpu][fit]") {
  const auto lock = torch_lock("2.9.0+cu126", "12.6", "560.28.03");
  Machine m = machine("560.35.03", {});
  m.platform.reset();
  auto fit = lock_fits(lock, m);
  CHECK(fit.fits);
  REQUIRE(fit.unknown.size() == 2);
  CHECK(fit.unknown[0] ==
        "CPU architecture unknown: assumed to be one the lock is for (manylinux_2_28_x86_64)");
  CHECK(fit.unknown[1] == "GPU architectures unknown here: not compared with the locked builds");
}

TEST_CASE("the platform, the driver and no GPU", "[gpu][fit]") {
  auto lock = torch_lock("2.9.0+cu130", "13.0", "580.65.06");
  lock.platforms = {"manylinux_2_28_aarch64"};
  auto fit = lock_fits(lock, machine("580.65.06", {"sm_90"}));
  REQUIRE_FALSE(fit.reasons.empty());
  CHECK(fit.reasons[0].problem == FitProblem::Platform);
  CHECK(fit.reasons[0].actual == "linux x86_64");

  Machine none;
  none.no_gpu = true;
  auto cpu_only = lock_fits(torch_lock("2.9.0+cu130", "13.0", "580.65.06"), none);
  REQUIRE(cpu_only.reasons.size() == 1);
  CHECK(cpu_only.reasons[0].problem == FitProblem::NoDriver);

  LockFacts cpu_lock;
  cpu_lock.packages.push_back({"torch", v("2.9.0+cpu"), 3});
  CHECK(lock_fits(cpu_lock, none).fits);
  CHECK_FALSE(lock_fits(cpu_lock, none).cuda_lock);
}

TEST_CASE("other GPU packages: a stacks row, else CUDA 13's floor", "[gpu][fit]") {
  // CuPy for CUDA 13 (cupy-cuda13x) outside the torch family: CUDA 13 builds start at 7.5.
  LockFacts lock;
  lock.cuda = CudaVersion{13, 0};
  lock.cuda_builds = true;
  lock.packages.push_back({"cupy-cuda13x", v("13.6.0"), 7});
  auto fit = lock_fits(lock, machine("580.65.06", {"sm_70"}));
  REQUIRE(fit.reasons.size() == 1);
  CHECK(fit.reasons[0].problem == FitProblem::NoKernels);
  CHECK(fit.reasons[0].package == "cupy-cuda13x");
  CHECK(lock_fits(lock, machine("580.65.06", {"sm_75"})).fits);
}

TEST_CASE("the package that raised the lock's CUDA above its build's is named", "[gpu][fit]") {
  // A Pascal lock: torch cu126 (kernels for 6.0) with an unpinned cuBLAS from CUDA 12.9.
  auto lock = torch_lock("2.9.0+cu126", "12.9", "575.51.03");
  lock.build_cuda = CudaVersion{12, 6};
  lock.packages.push_back({"nvidia-cublas-cu12", v("12.9.1.4"), 20});
  lock.packages.push_back({"nvidia-cudnn-cu12", v("9.10.2.21"), 30});
  const auto* raised = cuda_raised_by(lock);
  REQUIRE(raised != nullptr);
  CHECK(raised->name == "nvidia-cublas-cu12");
  CHECK(lock_fits(lock, machine("580.65.06", {"sm_61"})).fits);
  lock.cuda = CudaVersion{12, 6};
  CHECK(cuda_raised_by(lock) == nullptr);
}

TEST_CASE("the driver branches that can drive a GPU family", "[gpu][fit]") {
  // shared/data/gpu-names.md: Blackwell from R570, Hopper from R520, R580 the last for Maxwell,
  // Pascal and Volta, R470 the last for Kepler.
  auto cc = [](std::string_view t) { return *ComputeCapability::parse(t); };
  auto drv = [](std::string_view t) { return *DriverVersion::parse(t); };
  CHECK(branch_cannot_drive(cc("sm_120"), drv("560.35.03")) ==
        "Blackwell GPUs (sm_120) need driver branch R570 or later, and this driver is R560");
  CHECK_FALSE(branch_cannot_drive(cc("sm_120"), drv("570.26")));
  CHECK_FALSE(branch_cannot_drive(cc("sm_100"), drv("610.43.02")));
  CHECK(branch_cannot_drive(cc("sm_61"), drv("590.44.01")) ==
        "R580 is the last driver branch for Pascal GPUs (sm_61), and this driver is R590");
  CHECK_FALSE(branch_cannot_drive(cc("sm_70"), drv("580.95.05")));
  CHECK(branch_cannot_drive(cc("sm_90"), drv("515.43.04")).has_value());
  CHECK(branch_cannot_drive(cc("sm_37"), drv("525.60.13")).has_value());
  CHECK_FALSE(branch_cannot_drive(cc("sm_75"), drv("610.43.02")));
  CHECK_FALSE(branch_cannot_drive(cc("sm_89"), drv("525.60.13")));
}

TEST_CASE("an arch hint names the driver the lowest build with kernels needs", "[gpu][fit]") {
  GpuContext m;
  m.driver = *DriverVersion::parse("560.35.03");
  m.ceiling = CudaVersion{12, 6};
  m.archs = {ComputeCapability{12, 0}};
  GpuPolicy policy(m, "x86_64");
  // torch 2.13's builds with sm_120 kernels (shared/data: cu129 and cu130 carry 12.0).
  auto builds = policy.builds_with_kernels_for(*gpulock::core::Version::parse("2.13.0"),
                                               ComputeCapability{12, 0});
  REQUIRE(builds.size() == 2);
  CHECK(policy.arch_driver_note(ComputeCapability{12, 0}, builds) ==
        "the lowest, CUDA 12.9, needs a driver >= 575.51.03 (yours is 560.35.03); Blackwell GPUs "
        "(sm_120) need driver branch R570 or later, and this driver is R560");
  GpuContext newer = m;
  newer.driver = *DriverVersion::parse("580.65.06");
  CHECK_FALSE(GpuPolicy(newer, "x86_64").arch_driver_note(ComputeCapability{12, 0}, builds));
}

TEST_CASE("a driver hint for an unpinned request also names the newest version's build",
          "[gpu][fit]") {
  GpuContext m;
  m.driver = *DriverVersion::parse("535.104.05");
  m.ceiling = CudaVersion{12, 2};
  GpuPolicy policy(m, "x86_64");
  const auto newest = v("2.13.0+cu126");
  // NVIDIA's table: CUDA 12.4 needs 550.54.14, 12.6 560.28.03.
  CHECK(policy.driver_needed_hint("torch", CudaVersion{12, 4}, {newest, CudaVersion{12, 6}}) ==
        "torch's CUDA 12.4 builds need a driver >= 550.54.14, and torch 2.13.0 (the newest) a "
        "driver >= 560.28.03 for its CUDA 12.6 build (run `gpulock probe --machine` to see "
        "yours)");
  // The newest version's lowest build is the lowest of all: one driver, said once.
  CHECK(policy.driver_needed_hint("torch", CudaVersion{12, 6}, {newest, CudaVersion{12, 6}}) ==
        policy.driver_needed_hint("torch", CudaVersion{12, 6}));
}

#include "gpulock/gpu/gpu_policy.h"

#include <catch2/catch.hpp>

#include "parse_support.h"

using namespace gpulock;
using namespace app_test;
using gpu::BuildKind;
using gpu::ComputeCapability;
using gpu::CudaVersion;

TEST_CASE("local labels give the CUDA of a build, never PEP 440 label order", "[app][gpu]") {
  auto b = gpu::classify_build(v("2.5.1+cu124"));
  CHECK(b.kind == gpu::BuildKind::Cuda);
  REQUIRE(b.cuda);
  CHECK(b.cuda->to_string() == "12.4");
  CHECK(gpu::classify_build(v("1.2.0+cu92")).cuda->to_string() == "9.2");
  CHECK(gpu::classify_build(v("2.11.0+cu130")).cuda->to_string() == "13.0");
  // PEP 440 sorts cu92 above cu130; the CUDA order is the reverse.
  CHECK(v("1.0+cu92") > v("1.0+cu130"));
  CHECK(*gpu::classify_build(v("1.0+cu92")).cuda < *gpu::classify_build(v("1.0+cu130")).cuda);
  CHECK(gpu::classify_build(v("2.5.1+cpu")).kind == gpu::BuildKind::Cpu);
  CHECK(gpu::classify_build(v("2.5.1+rocm6.2")).kind == gpu::BuildKind::Rocm);
  CHECK(gpu::classify_build(v("2.5.1")).kind == gpu::BuildKind::Unlabeled);
  CHECK(gpu::classify_build(v("2.5.1+xpu")).kind == gpu::BuildKind::Other);
  CHECK(gpu::variant_name(*gpu::classify_build(v("2.7.0.dev20250116+cu126")).cuda) == "cu126");
}

TEST_CASE("CUDA from nvidia-cuda-runtime or cuda-toolkit pins", "[app][gpu]") {
  std::vector<core::Requirement> reqs;
  for (auto text : {"filelock", "nvidia-cuda-nvrtc-cu12==12.4.127; platform_system == 'Linux'",
                    "nvidia-cuda-runtime-cu12==12.4.127; platform_system == 'Linux'"}) {
    auto r = core::Requirement::parse(text);
    REQUIRE(r.has_value());
    reqs.push_back(*r);
  }
  REQUIRE(gpu::cuda_from_dependencies(reqs));
  CHECK(gpu::cuda_from_dependencies(reqs)->to_string() == "12.4");

  std::vector<core::Requirement> toolkit{
      *core::Requirement::parse("cuda-toolkit[cublas,cudart]==13.0.2")};
  CHECK(gpu::cuda_from_dependencies(toolkit)->to_string() == "13.0");
  std::vector<core::Requirement> none{*core::Requirement::parse("nvidia-cuda-runtime-cu12>=12")};
  CHECK_FALSE(gpu::cuda_from_dependencies(none));

  CHECK(
      gpu::cuda_needed_by_runtime_package("nvidia-cuda-runtime-cu12", v("12.6.77"))->to_string() ==
      "12.6");
  CHECK(gpu::cuda_needed_by_runtime_package("nvidia-cuda-runtime", v("13.0.48"))->to_string() ==
        "13.0");
  CHECK_FALSE(gpu::cuda_needed_by_runtime_package("nvidia-cudnn-cu12", v("9.1.0.70")));
}

TEST_CASE("torch family and CUDA-linked members", "[app][gpu]") {
  CHECK(gpu::is_torch_family("torch"));
  CHECK(gpu::is_torch_family("pytorch-triton"));
  CHECK(gpu::is_torch_family("xformers"));
  CHECK_FALSE(gpu::is_torch_family("numpy"));
  CHECK_FALSE(gpu::is_torch_family("nvidia-cudnn-cu12"));
  CHECK(gpu::is_cuda_linked("torchvision"));
  CHECK_FALSE(gpu::is_cuda_linked("triton"));
  CHECK_FALSE(gpu::is_cuda_linked("pytorch-triton"));
}

TEST_CASE("compute capabilities parse in both spellings", "[app][gpu]") {
  CHECK(cc("sm_61").to_string() == "sm_61");
  CHECK(cc("6.1") == cc("sm_61"));
  CHECK(cc("sm_120").major == 12);
  CHECK(cc("sm_120").minor == 0);
  CHECK_FALSE(gpu::ComputeCapability::parse("sm_").has_value());
  CHECK_FALSE(gpu::ComputeCapability::parse("sm_6x").has_value());
  CHECK(gpu::CudaVersion::parse("12.4.127")->to_string() == "12.4");
}

TEST_CASE("arch lists: cubins run on later GPUs of the same major, PTX on any later GPU",
          "[app][gpu]") {
  // Pascal: only cu126 builds of recent releases carry 6.0 (runs on 6.1 by same-major
  // compatibility).
  auto cu126 = gpu::torch_arch_list(v("2.13.0"), {12, 6}, "x86_64");
  REQUIRE(cu126);
  CHECK(gpu::arch_list_runs_on(*cu126, cc("sm_61")));
  CHECK_FALSE(gpu::arch_list_runs_on(*cu126, cc("sm_120")));
  auto cu130 = gpu::torch_arch_list(v("2.13.0"), {13, 0}, "x86_64");
  REQUIRE(cu130);
  CHECK_FALSE(gpu::arch_list_runs_on(*cu130, cc("sm_61")));
  CHECK(gpu::arch_list_runs_on(*cu130, cc("sm_120")));
  CHECK(gpu::arch_list_runs_on(*cu130, cc("sm_89")));   // 8.6 cubins run on 8.9
  CHECK(gpu::arch_list_runs_on(*cu130, cc("sm_121")));  // 12.0 cubin, same major
  // 12.0+PTX JIT-compiles for a later major.
  CHECK(gpu::arch_list_runs_on(*cu130, gpu::ComputeCapability{13, 0}));
  // 2.8.0 cu128 on PyPI has no PTX and no 12.x beyond 12.0.
  auto cu128_28 = gpu::torch_arch_list(v("2.8.0"), {12, 8}, "x86_64");
  REQUIRE(cu128_28);
  CHECK_FALSE(gpu::arch_list_runs_on(*cu128_28, cc("sm_70")));
  CHECK(gpu::describe_arch_list(*cu130) == "sm_75, sm_80, sm_86, sm_90, sm_100, sm_120+PTX");
  // Nightlies use the entry of their release line.
  CHECK(gpu::torch_arch_list(v("2.15.0.dev20260530+cu130"), {13, 0}, "x86_64"));
  // No entry: the caller allows and warns.
  CHECK_FALSE(gpu::torch_arch_list(v("2.13.0"), {13, 2}, "x86_64"));
  CHECK(gpu::torch_arch_list(v("2.5.1"), {12, 4}, "aarch64")->cubins.size() == 1);
}

TEST_CASE("cuDNN 9.11 and newer need sm_75", "[app][gpu]") {
  CHECK_FALSE(gpu::cudnn_min_capability(v("9.10.2.21")));
  REQUIRE(gpu::cudnn_min_capability(v("9.11.0.98")));
  CHECK(gpu::cudnn_min_capability(v("9.20.0.48"))->to_string() == "sm_75");
}

TEST_CASE("which CUDA builds of a torch release carry kernels for a GPU", "[app][gpu]") {
  auto names = [](const std::vector<gpu::CudaVersion>& builds) {
    std::string out;
    for (const auto& b : builds)
      out += (out.empty() ? "" : " ") + gpu::variant_name(b);
    return out;
  };
  // A GTX 1080 Ti: recent releases carry 6.x kernels only in their cu126 builds.
  CHECK(names(gpu::torch_cuda_builds_running_on(v("2.13.0+cu130"), cc("sm_61"), "x86_64")) ==
        "cu126");
  CHECK(names(gpu::torch_cuda_builds_running_on(v("2.8.0"), cc("sm_61"), "x86_64")) == "cu126");
  // 2.4: every CUDA build has 6.0.
  CHECK(names(gpu::torch_cuda_builds_running_on(v("2.4.1"), cc("sm_61"), "x86_64")) ==
        "cu118 cu121 cu124");
  // An RTX 5090 (sm_120) on 2.9 - 2.11: cu128 cubins, cu129/cu130 12.0+PTX.
  CHECK(names(gpu::torch_cuda_builds_running_on(v("2.11.0"), cc("sm_120"), "x86_64")) ==
        "cu128 cu129 cu130");
  CHECK(names(gpu::torch_cuda_builds_running_on(v("2.13.0"), cc("sm_120"), "x86_64")) ==
        "cu129 cu130");
  // aarch64 rows are separate; no table entry at all: empty.
  CHECK(names(gpu::torch_cuda_builds_running_on(v("2.13.0"), cc("sm_61"), "aarch64")).empty());
  CHECK(gpu::torch_cuda_builds_running_on(v("1.13.1"), cc("sm_80"), "x86_64").empty());
}

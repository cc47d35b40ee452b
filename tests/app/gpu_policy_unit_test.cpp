// GpuPolicy, the GPU policy as one pure unit (issue 21): from a candidate's facts and the machine,
// the solver edges, the reasons a candidate cannot be used and the words, with exact texts.

#include <catch2/catch.hpp>

#include "gpulock/gpu/gpu_policy.h"

#include "parse_support.h"

using namespace gpulock;
using namespace app_test;
using gpu::ComputeCapability;
using gpu::CudaVersion;
using gpu::GpuContext;
using gpu::GpuPolicy;
using resolver::UnavailableKind;

namespace {

// A machine with driver `driver` (CUDA ceiling `ceiling`) and GPUs of capabilities `archs`.
gpu::GpuContext machine(std::string_view driver, std::string_view ceiling,
                        std::vector<std::string_view> archs,
                        gpu::CudaCompat compat = gpu::CudaCompat::Strict) {
  gpu::GpuContext m;
  auto d = gpu::DriverVersion::parse(driver);
  REQUIRE(d.has_value());
  m.driver = *d;
  m.ceiling = cuda(ceiling);
  for (auto a : archs)
    m.archs.push_back(cc(a));
  m.compat = compat;
  return m;
}

std::vector<core::Requirement> reqs(std::initializer_list<std::string_view> texts) {
  std::vector<core::Requirement> out;
  for (auto t : texts) {
    auto r = core::Requirement::parse(t);
    REQUIRE(r.has_value());
    out.push_back(*r);
  }
  return out;
}

// The edges as "name<specifier>", in the order the policy gives them.
std::vector<std::string> edges(const gpu::GpuFacts& facts) {
  std::vector<std::string> out;
  for (const auto& d : facts.dependencies)
    out.push_back(d.to_string());
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("GpuPolicy: a +cu130 torch on a driver whose ceiling is 12.4", "[app][gpu][policy]") {
  gpu::GpuPolicy policy(machine("550.54.14", "12.4", {"8.6"}), "x86_64");
  auto version = v("2.9.0+cu130");
  auto facts = policy.facts({"torch", version});
  CHECK(edges(facts) == Strings{"__cuda_variant==13.0", "__cuda>=13.0"});
  CHECK_FALSE(facts.unavailable);  // 8.6 is in its arch list: the ceiling alone decides, as an edge
  REQUIRE(facts.need);
  CHECK(facts.need->cuda.to_string() == "13.0");
  CHECK(facts.warning.empty());

  // From a torch variant above the ceiling (--torch-backend auto): unavailable, one wording.
  auto r = policy.above_ceiling(gpu::classify_build(version));
  CHECK(r.kind == UnavailableKind::CudaTooNew);
  CHECK(r.message == "needs a newer CUDA than your driver 550.54.14 runs (CUDA <= 12.4)");
  CHECK(r.fields == std::vector<std::pair<std::string, std::string>>{{"cuda", "13.0"}});

  CHECK_FALSE(policy.allows(cuda("13.0")));
  CHECK(policy.allows(cuda("12.4")));
  CHECK(policy.ceiling_text() == "your driver 550.54.14 supports CUDA <= 12.4");
  CHECK(policy.needs_cuda_text(cuda("13.0")) ==
        "needs CUDA 13.0 and your driver 550.54.14 supports CUDA <= 12.4");
  CHECK(policy.virtual_hints("__cuda") == Strings{"a newer CUDA build needs a driver >= 555.42.02 "
                                                  "(run `gpulock probe --machine` to see yours)"});
  CHECK(policy.virtual_hints("__cuda_variant").empty());
  CHECK(policy.driver_needed_hint("torch", cuda("13.0")) ==
        "torch's CUDA 13.0 builds need a driver >= 580.65.06 (run `gpulock probe --machine` to see "
        "yours)");

  auto ceiling = policy.virtual_candidates("__cuda");
  REQUIRE(ceiling);
  REQUIRE(ceiling->candidates.size() == 1);
  CHECK(ceiling->candidates[0].version.to_string() == "12.4");
  CHECK_FALSE(policy.virtual_candidates("__python"));
}

TEST_CASE("GpuPolicy: an sm_61 GPU and torch arch lists", "[app][gpu][policy]") {
  gpu::GpuPolicy policy(machine("570.86.15", "12.8", {"6.1"}), "x86_64");

  SECTION("the table's list for torch 2.8 cu128 lacks 6.1") {
    auto facts = policy.facts({"torch", v("2.8.0+cu128")});
    REQUIRE(facts.unavailable);
    CHECK(facts.unavailable->kind == UnavailableKind::GpuArchMissing);
    CHECK(facts.unavailable->message ==
          "has no kernels for your GPU's sm_61 (its CUDA 12.8 build carries sm_75, sm_80, sm_86, "
          "sm_90, sm_100, sm_120)");
    CHECK(facts.unavailable->fields ==
          std::vector<std::pair<std::string, std::string>>{{"arch", "sm_61"}, {"cuda", "12.8"}});
    CHECK_FALSE(facts.archs_assumed);
    // The edges stay: the solver sees them whether or not the build is usable.
    CHECK(edges(facts) == Strings{"__cuda_variant==12.8", "__cuda>=12.8"});
    CHECK_FALSE(policy.runs_on_every_gpu(v("2.8.0+cu128"), cuda("12.8")));
    CHECK(policy.runs_on_every_gpu(v("2.8.0+cu126"), cuda("12.6")));
  }
  SECTION("which builds of the release have kernels for it") {
    auto builds = policy.builds_with_kernels_for(v("2.8.0"), cc("6.1"));
    REQUIRE(builds.size() == 1);
    CHECK(builds[0].to_string() == "12.6");
    CHECK(gpu::GpuPolicy::arch_fix_hint("torch 2.8", cc("6.1"), builds) ==
          "torch 2.8 has kernels for your GPU's sm_61 only in variant cu126");
    std::vector<gpu::CudaVersion> two{cuda("12.4"), cuda("12.6")};
    CHECK(gpu::GpuPolicy::arch_fix_hint("torch 2.6", cc("6.1"), two) ==
          "torch 2.6 has kernels for your GPU's sm_61 only in variants cu124, cu126");
    CHECK(gpu::GpuPolicy::arch_fix_hint("torch 2.9", cc("3.5"), {}) ==
          "no CUDA build of torch 2.9 has kernels for your GPU's sm_35; an older release may");
  }
  SECTION("a list given with the facts replaces the table's") {
    auto cubins =
        gpu::torch_arch_list(v("2.6.0"), cuda("12.6"), "x86_64");  // 5.0 ... 9.0: 6.0 runs 6.1
    REQUIRE(cubins);
    CHECK_FALSE(policy.facts({"torch", v("2.8.0+cu128"), {}, *cubins}).unavailable);
    gpu::ArchList ptx_only{{cc("7.0")}, cc("7.0"), "test", false};
    auto facts = policy.facts({"torch", v("2.6.0+cu126"), {}, ptx_only});
    REQUIRE(facts.unavailable);
    CHECK(facts.unavailable->message ==
          "has no kernels for your GPU's sm_61 (its CUDA 12.6 build carries sm_70+PTX)");
  }
  SECTION("a release the table does not know: bounded by what its CUDA can build, with a warning") {
    gpu::GpuPolicy kepler(machine("470.57.02", "11.4", {"3.7"}), "x86_64");
    auto facts = kepler.facts({"torch", v("3.0.0+cu128")});
    REQUIRE(facts.unavailable);
    CHECK(facts.unavailable->message ==
          "has no kernels for your GPU's sm_37 (no arch list is known for it, and CUDA 12.8 cannot "
          "build for sm_37)");
    CHECK(facts.archs_assumed);
    CHECK(facts.warning ==
          "no GPU architecture list is known for torch 3.0.0 (CUDA 12.8); assumed: kernels for "
          "what CUDA 12.8 can "
          "build, no PTX");
  }
  SECTION("only torch is checked against arch lists") {
    CHECK_FALSE(policy.facts({"torchvision", v("0.23.0+cu128")}).unavailable);
  }
}

TEST_CASE("GpuPolicy: no GPU (driver none) and no driver found", "[app][gpu][policy]") {
  gpu::GpuContext none;
  none.no_gpu = true;
  gpu::GpuPolicy policy(none, "x86_64");
  CHECK(edges(policy.facts({"torch", v("2.5.1+cu124")})) ==
        Strings{"__cuda_variant==12.4", "__cuda>=0"});
  CHECK(edges(policy.facts({"torchvision", v("0.20.1+cpu")})) == Strings{"__cuda_variant==0"});
  CHECK(edges(policy.facts({"filelock", v("3.16.1")})).empty());
  CHECK(policy.ceiling_text() == "--driver none means no GPU");
  CHECK(policy.needs_cuda_text(cuda("12.4")) == "needs CUDA 12.4 and --driver none means no GPU");
  CHECK_FALSE(policy.allows(cuda("9.0")));
  REQUIRE(policy.virtual_candidates("__cuda"));
  CHECK(policy.virtual_candidates("__cuda")->candidates.empty());
  CHECK(policy.virtual_hints("__cuda") ==
        Strings{"CUDA builds need a GPU: to lock for a GPU machine, add --driver VERSION with the "
                "version `gpulock "
                "probe --machine` prints there"});

  gpu::GpuPolicy unknown(gpu::GpuContext{}, "x86_64");
  CHECK(unknown.ceiling_text() == "no NVIDIA driver was found");
  CHECK(edges(unknown.facts({"torch", v("2.5.1+cu124")})) ==
        Strings{"__cuda_variant==12.4", "__cuda>=0"});
  CHECK(unknown.virtual_hints("__cuda").empty());
}

TEST_CASE("GpuPolicy: minor-version compatibility bounds the CUDA major only",
          "[app][gpu][policy]") {
  gpu::GpuPolicy policy(machine("550.54.14", "12.4", {"8.6"}, gpu::CudaCompat::Minor), "x86_64");
  CHECK(edges(policy.facts({"torch", v("2.6.0+cu126")})) ==
        Strings{"__cuda_variant==12.6", "__cuda>=12.0"});
  CHECK(policy.allows(cuda("12.8")));
  CHECK_FALSE(policy.allows(cuda("13.0")));
  CHECK(policy.ceiling_text() ==
        "your driver 550.54.14 supports CUDA 12.x (minor-version compatibility)");
  CHECK(policy.above_ceiling(gpu::classify_build(v("2.9.0+cu130"))).message ==
        "needs a newer CUDA than your driver 550.54.14 runs (CUDA 12.x)");
  CHECK(policy.virtual_hints("__cuda").empty());  // a newer driver is not the only way
}

TEST_CASE("GpuPolicy: a cuDNN >= 9.11 candidate is unavailable below sm_75", "[app][gpu][policy]") {
  gpu::GpuPolicy volta(machine("570.86.15", "12.8", {"7.0"}), "x86_64");
  auto r = volta.candidate_unavailable("nvidia-cudnn-cu12", v("9.11.0.98"));
  REQUIRE(r);
  CHECK(r->kind == UnavailableKind::GpuArchMissing);
  CHECK(r->message == "needs sm_75 or newer and your GPU is sm_70");
  CHECK(r->fields == std::vector<std::pair<std::string, std::string>>{{"arch", "sm_70"}});
  CHECK_FALSE(volta.candidate_unavailable("nvidia-cudnn-cu12", v("9.10.2.21")));
  CHECK_FALSE(volta.candidate_unavailable("nvidia-cublas-cu12", v("12.8.4.1")));
  gpu::GpuPolicy ampere(machine("570.86.15", "12.8", {"8.6"}), "x86_64");
  CHECK_FALSE(ampere.candidate_unavailable("nvidia-cudnn-cu12", v("9.11.0.98")));
  gpu::GpuPolicy none_detected(machine("570.86.15", "12.8", {}), "x86_64");
  CHECK_FALSE(none_detected.candidate_unavailable("nvidia-cudnn-cu13", v("9.13.0.50")));
}

TEST_CASE("GpuPolicy: nvidia-* pins and names give __cuda and __cuda_major edges",
          "[app][gpu][policy]") {
  gpu::GpuPolicy policy(machine("550.54.14", "12.4", {"8.6"}), "x86_64");
  // PyPI torch: no label, its CUDA from the runtime pin.
  auto pins = reqs({"filelock", "nvidia-cuda-runtime-cu12==12.4.127; platform_system == 'Linux'",
                    "nvidia-cudnn-cu12==9.1.0.70"});
  auto torch = policy.facts({"torch", v("2.5.1"), pins});
  CHECK(edges(torch) == Strings{"__cuda>=12.4"});
  REQUIRE(torch.need);
  CHECK(torch.need->minor_exact);
  // cuDNN names its CUDA major only; the runtime its release.
  CHECK(edges(policy.facts({"nvidia-cudnn-cu12", v("9.1.0.70")})) ==
        Strings{"__cuda_major==12", "__cuda>=12.0"});
  CHECK(edges(policy.facts({"nvidia-cuda-runtime-cu12", v("12.6.77")})) ==
        Strings{"__cuda_major==12", "__cuda>=12.6"});
  CHECK(edges(policy.facts({"nvidia-cublas", v("13.0.0.19")})) ==
        Strings{"__cuda_major==13", "__cuda>=13.0"});
  CHECK(edges(policy.facts({"cuda-bindings", v("13.0.1")})) == Strings{"__cuda>=13.0"});
  CHECK(edges(policy.facts({"cuda-toolkit", v("12.6.3")})) == Strings{"__cuda>=12.6"});
  CHECK(edges(policy.facts({"numpy", v("2.1.0")})).empty());
  auto need = gpu::GpuPolicy::cuda_need("torch", v("2.5.1"), pins);
  REQUIRE(need);
  CHECK(need->cuda.to_string() == "12.4");
  // A label wins over pins.
  CHECK(gpu::GpuPolicy::cuda_need("torch", v("2.5.1+cu121"), pins)->cuda.to_string() == "12.1");

  // A CUDA X.Y variant uses CUDA X libraries.
  auto variant = policy.virtual_dependencies("__cuda_variant", v("12.4"));
  REQUIRE(variant);
  REQUIRE(variant->dependencies.size() == 1);
  CHECK(variant->dependencies[0].to_string() == "__cuda_major==12");
  CHECK(policy.virtual_dependencies("__cuda_variant", v("0.0"))->dependencies.empty());
  CHECK_FALSE(policy.virtual_dependencies("__python", v("3.12")));
}

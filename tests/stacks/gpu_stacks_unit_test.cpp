// The GPU stacks table (gpu/data/gpu_stacks.txt) and the GPU policy's data-driven model (issue
// 23): a wheel's CUDA need from its label, pins, name, required libraries or release; arch lists
// by package; the CUDA 13 floor; placeholders; coupled labels; one owner per import package.
// Pure: no index, no binary.

#include <catch2/catch.hpp>

#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/gpu/gpu_stacks.h"
#include "gpulock/probe/environment.h"
#include "gpulock/probe/load_probe.h"

using namespace gpulock;
using gpu::GpuContext;
using gpu::GpuPolicy;
using resolver::UnavailableKind;

namespace {

core::Version v(std::string_view text) {
  auto r = core::Version::parse(text);
  REQUIRE(r.has_value());
  return *r;
}

gpu::GpuContext machine(std::string_view driver, std::string_view ceiling,
                        std::vector<std::string_view> archs) {
  gpu::GpuContext m;
  auto d = gpu::DriverVersion::parse(driver);
  REQUIRE(d.has_value());
  m.driver = *d;
  auto c = gpu::CudaVersion::parse(ceiling);
  REQUIRE(c.has_value());
  m.ceiling = *c;
  for (auto a : archs) {
    auto cc = gpu::ComputeCapability::parse(a);
    REQUIRE(cc.has_value());
    m.archs.push_back(*cc);
  }
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

std::vector<std::string> edges(const gpu::GpuFacts& facts) {
  std::vector<std::string> out;
  for (const auto& d : facts.dependencies)
    out.push_back(d.to_string());
  return out;
}

std::string need_text(std::string_view package, std::string_view version,
                      std::initializer_list<std::string_view> requires_dist = {}) {
  auto rd = reqs(requires_dist);
  auto need = gpu::GpuPolicy::cuda_need(package, v(version), rd);
  if (!need) return "none";
  return need->cuda.to_string() + (need->minor_exact ? "" : " (major)");
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("gpu stacks: the compiled-in table parses", "[stacks][table]") {
  auto parsed = gpu::GpuStacks::parse(gpu::gpu_stacks_text());
  INFO((parsed ? std::string() : parsed.error().to_string()));
  REQUIRE(parsed.has_value());
  CHECK(parsed->need_by_name.size() == gpu::gpu_stacks().need_by_name.size());
  CHECK_FALSE(parsed->archs.empty());
  CHECK(parsed->arch_floor(13).has_value());
  CHECK(gpu::gpu_stacks().shared_dir_of("nvidia-cudnn-cu12")->dir == "nvidia/cudnn/lib");
  CHECK(gpu::gpu_stacks().shared_dir_of("nvidia-cublas-cu12") == nullptr);
  auto bad = gpu::GpuStacks::parse("need-name cupy-cuda12x twelve\n");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message == "gpu_stacks.txt line 1: expected a CUDA major");
  auto unknown = gpu::GpuStacks::parse("# c\n\nnot-a-row x\n");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message == "gpu_stacks.txt line 3: cannot read 'not-a-row x'");
}

TEST_CASE("gpu stacks: a wheel's CUDA need, in order", "[stacks][need]") {
  // The local label first, then the runtime / cuda-toolkit pins (as for PyPI torch).
  CHECK(need_text("torch", "2.8.0+cu126") == "12.6");
  CHECK(need_text("torch", "2.8.0", {"nvidia-cuda-runtime-cu12==12.8.90"}) == "12.8");
  CHECK(need_text("torch", "2.11.0", {"cuda-toolkit[cudart]==13.0.2"}) == "13.0");
  // Coupled labels: flash-attn's CUDA major, PyG's CUDA X.Y, vLLM's +cu129.
  CHECK(need_text("flash-attn", "2.8.3+cu12torch2.8cxx11abitrue") == "12.0 (major)");
  CHECK(need_text("torch-scatter", "2.1.2+pt211cu128") == "12.8");
  CHECK(need_text("vllm", "0.23.0+cu129") == "12.9");
  // The name (cupy, JAX plugins, TensorRT), nvidia-* as before.
  CHECK(need_text("cupy-cuda12x", "14.2.0") == "12.0 (major)");
  CHECK(need_text("cupy-cuda13x", "14.2.0") == "13.0 (major)");
  CHECK(need_text("jax-cuda13-plugin", "0.7.2") == "13.0 (major)");
  CHECK(need_text("tensorrt-cu13-libs", "10.13.3.9") == "13.0 (major)");
  CHECK(need_text("nvidia-cudnn-cu12", "9.10.2.21") == "12.0 (major)");
  CHECK(need_text("nvidia-cublas", "13.1.0.3") == "13.0 (major)");
  // The CUDA major of the nvidia-* wheels it requires (when they agree).
  CHECK(need_text("some-gpu-lib", "1.0", {"nvidia-cudnn-cu13==9.19.0.56", "nvidia-cublas"}) ==
        "13.0 (major)");
  CHECK(need_text("some-gpu-lib", "1.0", {"nvidia-cudnn-cu12", "nvidia-cublas"}) == "none");
  // Releases by CUDA major (onnxruntime-gpu: 1.19 - 1.26 CUDA 12, 1.29+ CUDA 13).
  CHECK(need_text("onnxruntime-gpu", "1.26.0") == "12.0 (major)");
  CHECK(need_text("onnxruntime-gpu", "1.30.0") == "13.0 (major)");
  CHECK(need_text("onnxruntime-gpu", "1.27.0") == "none");
  // Nothing: CPU builds, plain packages.
  CHECK(need_text("torch", "2.8.0+cpu") == "none");
  CHECK(need_text("numpy", "2.1.3") == "none");
}

TEST_CASE("gpu stacks: arch lists by package and the CUDA 13 floor", "[stacks][archs]") {
  SECTION("jax[cuda13] on a V100 (sm_70) with driver 580") {
    gpu::GpuPolicy policy(machine("580.65.06", "13.0", {"7.0"}), "x86_64");
    auto version = v("0.7.2");
    auto facts = policy.facts({"jax-cuda13-plugin", version});
    REQUIRE(facts.unavailable.has_value());
    CHECK(facts.unavailable->kind == UnavailableKind::GpuArchMissing);
    CHECK(facts.unavailable->message ==
          "has no kernels for your GPU's sm_70 (its CUDA 13 build carries sm_75, sm_80, sm_90, "
          "sm_100, sm_110, PTX sm_120)");
    CHECK(edges(facts) == Strings{"__cuda>=13.0"});
    auto cuda12 = v("0.7.2");
    CHECK_FALSE(policy.facts({"jax-cuda12-plugin", cuda12}).unavailable.has_value());
  }
  SECTION("a CUDA 13 package without an arch row: the sm_75 floor") {
    gpu::GpuPolicy policy(machine("580.65.06", "13.0", {"7.0"}), "x86_64");
    auto version = v("1.30.0");
    auto facts = policy.facts({"onnxruntime-gpu", version});
    REQUIRE(facts.unavailable.has_value());
    CHECK(facts.unavailable->message ==
          "has no kernels for your GPU's sm_70 (CUDA 13 builds start at sm_75)");
    gpu::GpuPolicy turing(machine("580.65.06", "13.0", {"7.5"}), "x86_64");
    CHECK_FALSE(turing.facts({"onnxruntime-gpu", version}).unavailable.has_value());
  }
  SECTION("flash-attn 2.x needs sm_80") {
    gpu::GpuPolicy policy(machine("570.86.10", "12.8", {"7.0"}), "x86_64");
    auto version = v("2.8.3+cu12torch2.8cxx11abitrue");
    auto facts = policy.facts({"flash-attn", version});
    REQUIRE(facts.unavailable.has_value());
    CHECK(facts.unavailable->message ==
          "has no kernels for your GPU's sm_70 (its CUDA 12 build carries sm_80, sm_90, sm_100, "
          "sm_110, sm_120+PTX)");
  }
}

TEST_CASE("gpu stacks: coupled builds and import packages as solver edges", "[stacks][edges]") {
  gpu::GpuPolicy policy(machine("575.51.03", "12.9", {}), "x86_64");
  auto fa = v("2.8.3+cu12torch2.8cxx11abitrue");
  CHECK(edges(policy.facts({"flash-attn", fa})) ==
        Strings{"__cuda>=12.0", "torch==2.8.*", "__cuda_major==12"});
  auto pyg = v("2.1.2+pt211cu128");
  CHECK(edges(policy.facts({"torch-scatter", pyg})) ==
        Strings{"__cuda>=12.8", "torch==2.11.*", "__cuda_variant==12.8"});
  auto vllm = v("0.23.0+cu129");
  CHECK(edges(policy.facts({"vllm", vllm})) == Strings{"__cuda>=12.9", "__cuda_variant==12.9"});
  auto cupy = v("14.2.0");
  CHECK(edges(policy.facts({"cupy-cuda12x", cupy})) == Strings{"__cuda>=12.0", "__import_cupy==3"});
  CHECK(edges(policy.facts({"cupy-cuda13x", cupy})) == Strings{"__cuda>=13.0", "__import_cupy==4"});
  auto import = policy.virtual_candidates("__import_cupy");
  REQUIRE(import.has_value());
  CHECK(import->candidates.size() == 4);
}

TEST_CASE("gpu stacks: placeholders and coupled labels", "[stacks][labels]") {
  CHECK(gpu::placeholder_real_name("nvidia-cuda-runtime-cu13", v("0.0.1")) ==
        "nvidia-cuda-runtime");
  CHECK(gpu::placeholder_real_name("nvidia-cuda-nvrtc-cu13", v("0.0.1")) == "nvidia-cuda-nvrtc");
  CHECK_FALSE(gpu::placeholder_real_name("nvidia-cuda-runtime-cu12", v("0.0.1")).has_value());
  CHECK_FALSE(gpu::placeholder_real_name("nvidia-cudnn-cu13", v("9.19.0.56")).has_value());
  auto fa = gpu::parse_coupled_label("cu{M}torch{X.Y}", v("2.6.3+cu123torch2.4cxx11abifalse"));
  REQUIRE(fa.has_value());
  CHECK(fa->torch_release->to_string() == "2.4");
  CHECK(fa->cuda->to_string() == "12.3");
  CHECK_FALSE(gpu::parse_coupled_label("pt{X}{Y}cu{NNN}", v("2.1.2+cpu")).has_value());
  auto old = gpu::parse_coupled_label("pt{X}{Y}cu{NNN}", v("2.1.2+pt26cu124"));
  REQUIRE(old.has_value());
  CHECK(old->torch_release->to_string() == "2.6");
  CHECK(old->cuda_major == 12);
}

TEST_CASE("gpu stacks: find-links pages follow the resolved torch build", "[stacks][find-links]") {
  const auto& t = gpu::gpu_stacks();
  // PyG: the page's file name names the build.
  CHECK(t.follow_find_links("https://data.pyg.org/whl/torch-2.11.0+cu128.html", "2.11.0+cu130") ==
        "https://data.pyg.org/whl/torch-2.11.0+cu130.html");
  CHECK(t.follow_find_links("https://data.pyg.org/whl/torch-2.11.0%2Bcu128.html", "2.10.0+cpu") ==
        "https://data.pyg.org/whl/torch-2.10.0+cpu.html");
  CHECK_FALSE(
      t.follow_find_links("https://data.pyg.org/whl/torch-2.11.0+cu130.html", "2.11.0+cu130"));
  // OpenMMLab: the label and torch's version (or X.Y) are directories.
  CHECK(t.follow_find_links("https://download.openmmlab.com/mmcv/dist/cu121/torch2.1.0/index.html",
                            "2.4.1+cu124") ==
        "https://download.openmmlab.com/mmcv/dist/cu124/torch2.4.1/index.html");
  CHECK(t.follow_find_links("https://download.openmmlab.com/mmcv/dist/cpu/torch2.1/index.html",
                            "2.4.1+cu124") ==
        "https://download.openmmlab.com/mmcv/dist/cu124/torch2.4/index.html");
  CHECK_FALSE(t.follow_find_links(
      "https://download.openmmlab.com/mmcv/dist/cu124/torch2.4/index.html", "2.4.1+cu124"));
  // Not a page of one torch build, or no build to follow.
  CHECK_FALSE(t.follow_find_links("https://example.org/wheels/index.html", "2.4.1+cu124"));
  CHECK_FALSE(t.follow_find_links("/opt/wheels", "2.4.1+cu124"));
  CHECK_FALSE(t.follow_find_links("https://data.pyg.org/whl/torch-2.11.0+cu128.html", "2.11.0"));
  // Adding a form is adding a row; a form without the label is refused.
  auto own = gpu::GpuStacks::parse("find-links wheels/{L}/pt{XY}/\n");
  REQUIRE(own.has_value());
  CHECK(own->follow_find_links("file:///srv/wheels/cu118/pt2.0/", "2.5.1+cu121") ==
        "file:///srv/wheels/cu121/pt2.5/");
  auto bad = gpu::GpuStacks::parse("find-links torch-{V}.html\n");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message == "gpu_stacks.txt line 1: a find-links form needs {L}");
}

TEST_CASE("gpu stacks: the shared-directory sentence", "[stacks][words]") {
  gpu::SharedDirConflict c{"nvidia/cudnn/lib",
                           {"nvidia-cudnn-cu12", 12, "jax-cuda12-plugin[with-cuda]"},
                           {"nvidia-cudnn-cu13", 13, "torch"}};
  CHECK(gpu::shared_dir_text(c) ==
        "nvidia-cudnn-cu12 (CUDA 12, for jax-cuda12-plugin[with-cuda]) and nvidia-cudnn-cu13 "
        "(CUDA 13, for torch) both install nvidia/cudnn/lib: one CUDA major and one owner per "
        "library directory, so they cannot share an environment.");
}

TEST_CASE("gpu stacks: the load probe wants one CUDA major among nvidia-* libraries",
          "[stacks][probe]") {
  probe::PythonEnvironment env;
  probe::InstalledDistribution cu12;
  cu12.name = "nvidia-cudnn-cu12";
  cu12.version = "9.10.2.21";
  probe::InstalledDistribution cu13;
  cu13.name = "nvidia-cudnn-cu13";
  cu13.version = "9.19.0.56";
  probe::InstalledDistribution cublas;  // unsuffixed: CUDA 13 by where its files go
  cublas.name = "nvidia-cublas";
  cublas.version = "13.1.0.3";
  cublas.libraries = {"nvidia/cu13/lib/libcublas.so.13"};
  auto mixed = [](const std::vector<probe::Finding>& findings) -> const probe::Finding* {
    for (const auto& f : findings) {
      if (f.id == "mixed-cuda-majors") return &f;
    }
    return nullptr;
  };
  probe::LoadReport report;
  env.distributions = {cublas, cu13};
  CHECK(mixed(probe::assess_load(env, report)) == nullptr);
  env.distributions = {cublas, cu12, cu13};
  auto findings = probe::assess_load(env, report);
  const auto* f = mixed(findings);
  REQUIRE(f != nullptr);
  CHECK(f->severity == probe::Severity::Fail);
  CHECK(f->subject == "nvidia-cublas");
  CHECK(f->message ==
        "libraries of two CUDA majors are installed: nvidia-cudnn-cu12 9.10.2.21 (CUDA 12) and "
        "nvidia-cublas 13.1.0.3 (CUDA 13); wheels of one library from both majors overwrite "
        "each other's nvidia/<lib>/lib files");
}

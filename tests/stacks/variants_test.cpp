// PEP 825 wheel variants (issue 23; shared/data/gpu-stacks.md §7 and scenarios 13-15 of §9) as
// pure units: labels in file names, `*-variants.json` in its dialects, and variant selection in
// PEP 825's order with gpulock's policy on top (strict ceiling, every GPU's arch, no silent
// null). The same scenarios end to end, through the catalog and the lock: variants_e2e_test.cpp.

#include "gpulock/index/variants.h"

#include <catch2/catch.hpp>

#include "gpulock/catalog/variant_select.h"

using namespace gpulock;
using catalog::VariantPolicy;
using gpu::GpuContext;

namespace {

// torch-2.10.0-variants.json as PyTorch published it (wheelnext draft v0.0.3; VREPACK), the
// intel/amd variants trimmed to one value each.
constexpr std::string_view kTorch210Draft = R"({
 "$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
 "default-priorities": {"namespace": ["nvidia", "intel", "amd", "priority"]},
 "providers": {"nvidia": {"plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
                          "requires": ["nvidia-variant-provider>=0.0.2,<1.0.0"]},
               "priority": {"install-time": false, "requires": []}},
 "static-properties": {"priority": {"order": ["1", "2", "3"]}},
 "variants": {
  "null": {},
  "cuda12.6": {"nvidia": {"cuda_version_lower_bound": ["12.0"],
               "sm_arch": ["50_real", "60_real", "70_real", "75_real", "80_real", "86_real", "90_real"]},
               "priority": {"order": ["3"]}},
  "cuda12.8": {"nvidia": {"cuda_version_lower_bound": ["12.0"],
               "sm_arch": ["70_real", "75_real", "80_real", "86_real", "90_real", "100_real", "120_real"]},
               "priority": {"order": ["2"]}},
  "cuda13.0": {"nvidia": {"cuda_version_lower_bound": ["13.0"],
               "sm_arch": ["75_real", "80_real", "86_real", "90_real", "100_real", "120_real", "120_virtual"]},
               "priority": {"order": ["1"]}},
  "xpu": {"intel": {"device_ip": ["12.55.8"]}}}})";

// The same release's metadata in PEP 825's dialect (no providers: no static priority).
constexpr std::string_view kTorch210Pep825 = R"({
 "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
 "default-priorities": {"namespace": ["nvidia"]},
 "variants": {
  "null": {},
  "cuda12.8": {"nvidia": {"cuda_version_lower_bound": ["12.0"], "sm_arch": ["70_real", "90_real"]}},
  "cuda13.0": {"nvidia": {"cuda_version_lower_bound": ["13.0"], "sm_arch": ["75_real", "90_real"]}}}})";

index::VariantsJson parse(std::string_view text) {
  auto r = index::parse_variants_json(text, "torch-2.10.0-variants.json");
  INFO((r ? std::string() : r.error().to_string()));
  REQUIRE(r.has_value());
  return *r;
}

gpu::GpuContext machine(std::string_view driver, std::string_view ceiling,
                        std::vector<std::string_view> archs,
                        gpu::CudaCompat compat = gpu::CudaCompat::Strict) {
  gpu::GpuContext m;
  m.driver = *gpu::DriverVersion::parse(driver);
  m.ceiling = *gpu::CudaVersion::parse(ceiling);
  for (auto a : archs)
    m.archs.push_back(*gpu::ComputeCapability::parse(a));
  m.compat = compat;
  return m;
}

const std::vector<std::string> kLabels = {"cuda12.6", "cuda12.8", "cuda13.0", "null", "xpu"};
using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("variants: labels in wheel file names (PEP 825)", "[stacks][variants]") {
  auto label = [](std::string_view f) -> std::string {
    auto r = index::split_variant_label(f);
    REQUIRE(r.has_value());
    return *r ? (*r)->label + " " + (*r)->base_filename : std::string("none");
  };
  CHECK(label("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl") ==
        "x86_64_v3 numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64.whl");
  CHECK(label("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-null.whl") ==
        "null numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64.whl");
  CHECK(label("numpy-2.3.2-1-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl") ==
        "x86_64_v3 numpy-2.3.2-1-cp313-cp313t-musllinux_1_2_x86_64.whl");
  CHECK(label("torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64-cu129.whl") ==
        "cu129 torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64.whl");
  // A build tag starts with a digit; five parts have no label; longer than 16 is fine.
  CHECK(label("nvidia_cudnn_cu11-8.5.0.96-2-py3-none-manylinux1_x86_64.whl") == "none");
  CHECK(label("torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl") == "none");
  CHECK(label("x-1.0-py3-none-any-a_label_longer_than_sixteen.whl") ==
        "a_label_longer_than_sixteen x-1.0-py3-none-any.whl");
  auto bad = index::split_variant_label("x-1.0-py3-none-any-Cuda.whl");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message == "variant label 'Cuda' is not [0-9a-z_.]+ (PEP 825)");
}

TEST_CASE("stacks 15: two variant-metadata dialects, an unknown major rejected",
          "[stacks][variants][scenario]") {
  auto draft = parse(kTorch210Draft);
  CHECK(draft.dialect == index::VariantDialect::WheelnextDraft);
  CHECK(draft.namespace_priorities == Strings{"nvidia", "intel", "amd", "priority"});
  CHECK(draft.static_properties.at("priority").at("order") == Strings{"1", "2", "3"});
  CHECK(draft.variants.at("null").empty());
  auto pep825 = parse(kTorch210Pep825);
  CHECK(pep825.dialect == index::VariantDialect::Pep825);
  CHECK(pep825.variants.size() == 3);
  // Each source's metadata is used for its own wheels (PEP 825: labels from two sources do not
  // mean the same): the draft's cuda12.8 has sm_100, the other's does not.
  CHECK(draft.variants.at("cuda12.8").at("nvidia").at("sm_arch").size() == 7);
  CHECK(pep825.variants.at("cuda12.8").at("nvidia").at("sm_arch").size() == 2);
  auto v2 = index::parse_variants_json(
      R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v2.0.0.json",
          "default-priorities": {"namespace": []}, "variants": {}})",
      "x-variants.json");
  REQUIRE_FALSE(v2.has_value());
  CHECK(v2.error().to_string() ==
        "x-variants.json: unsupported variant metadata version 2.0.0 (PEP 825 requires rejecting "
        "an unknown major)");
  auto extra_key = index::parse_variants_json(
      R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
          "providers": {}, "variants": {}})",
      "x-variants.json");
  REQUIRE_FALSE(extra_key.has_value());
  CHECK(extra_key.error().message == "'providers' is not a key of pep825 variant metadata");
  // A wheel whose label the metadata lacks is incompatible.
  auto s =
      catalog::select_variant(pep825, {"cuda12.9", "cuda12.8"},
                              machine("580.65.06", "13.0", {"9.0"}), VariantPolicy::Gpulock, true);
  CHECK(s.rejected.at("cuda12.9") == "its label is not in the variant metadata");
  CHECK(s.chosen == "cuda12.8");
}

TEST_CASE("stacks 13: variant selection under the strict ceiling", "[stacks][variants][scenario]") {
  auto meta = parse(kTorch210Draft);
  SECTION("PEP 825's order with the NVIDIA provider's semantics: cuda12.8") {
    auto s = catalog::select_variant(meta, kLabels, machine("550.54.14", "12.4", {"9.0"}),
                                     VariantPolicy::Pep825, true);
    CHECK(s.order == Strings{"cuda12.8", "cuda12.6"});
    CHECK(s.chosen == "cuda12.8");
    CHECK(s.rejected.at("cuda13.0") ==
          "needs nvidia :: cuda_version_lower_bound :: 13.0, which this machine does not support");
    CHECK(s.rejected.at("xpu") == "needs intel :: device_ip, which this machine does not have");
  }
  SECTION("gpulock, strict: nothing fits, and null is not taken silently") {
    auto s = catalog::select_variant(meta, kLabels, machine("550.54.14", "12.4", {"9.0"}),
                                     VariantPolicy::Gpulock, true);
    CHECK(s.chosen.empty());
    CHECK(
        s.problem ==
        "no variant that fits this machine (cuda12.6 was built with CUDA 12.6, above your driver's "
        "CUDA 12.4 (strict ceiling; --cuda-compat minor allows it); cuda12.8 was built with "
        "CUDA 12.8, above your driver's CUDA 12.4 (strict ceiling; --cuda-compat minor allows "
        "it); cuda13.0 needs nvidia :: cuda_version_lower_bound :: 13.0, which this machine "
        "does not support; xpu needs intel :: device_ip, which this machine does not have); "
        "the null variant (no GPU code) is not chosen silently when a GPU was asked for");
    auto cpu = catalog::select_variant(meta, kLabels, machine("550.54.14", "12.4", {"9.0"}),
                                       VariantPolicy::Gpulock, false);
    CHECK(cpu.chosen == "null");
  }
  SECTION("gpulock, --cuda-compat minor: cuda12.8, with the properties the machine supports") {
    auto s = catalog::select_variant(meta, kLabels,
                                     machine("550.54.14", "12.4", {"9.0"}, gpu::CudaCompat::Minor),
                                     VariantPolicy::Gpulock, true);
    CHECK(s.chosen == "cuda12.8");
    CHECK(s.properties == Strings{"nvidia :: cuda_version_lower_bound :: 12.0",
                                  "nvidia :: sm_arch :: 90_real", "priority :: order :: 2"});
  }
}

TEST_CASE("stacks 14: variants on a mixed H100 + V100 host", "[stacks][variants][scenario]") {
  auto meta = parse(kTorch210Draft);
  auto host = machine("580.65.06", "13.0", {"9.0", "7.0"});
  // The NVIDIA provider looks at the highest GPU only: cuda13.0, which lacks 70_real.
  auto nvp = catalog::select_variant(meta, kLabels, host, VariantPolicy::Pep825, true);
  CHECK(nvp.chosen == "cuda13.0");
  // gpulock wants kernels for every GPU.
  auto s = catalog::select_variant(meta, kLabels, host, VariantPolicy::Gpulock, true);
  CHECK(s.chosen == "cuda12.8");
  CHECK(s.order == Strings{"cuda12.8", "cuda12.6"});
  CHECK(s.rejected.at("cuda13.0") ==
        "has no kernels for your GPU's sm_70 (sm_arch 75_real, 80_real, 86_real, 90_real, "
        "100_real, 120_real, 120_virtual)");
}

TEST_CASE("variants: the NVIDIA provider's values from gpulock's detection", "[stacks][variants]") {
  auto m = machine("565.57.01", "12.7", {"8.9"});
  auto lower = catalog::nvidia_feature_values("cuda_version_lower_bound", m);
  REQUIRE(lower.size() > 10);
  CHECK(Strings(lower.begin(), lower.begin() + 10) ==
        Strings{"12.7", "12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0", "12", "11.20"});
  CHECK(lower.back() == "11");
  auto upper = catalog::nvidia_feature_values("cuda_version_upper_bound", m);
  CHECK(upper.front() == "15.20");
  CHECK(Strings(upper.end() - 3, upper.end()) == Strings{"12.10", "12.9", "12.8"});
  CHECK(catalog::nvidia_feature_values("sm_arch", m) ==
        Strings{"89_real", "88_real", "87_real", "86_real", "85_real", "84_real", "83_real",
                "82_real", "81_real", "80_real", "80_virtual"});
  gpu::GpuContext none;
  none.no_gpu = true;
  CHECK(catalog::nvidia_feature_values("sm_arch", none).empty());
  CHECK(gpu::cuda_of_variant_label("cuda12.8")->to_string() == "12.8");
  CHECK(gpu::cuda_of_variant_label("cu129")->to_string() == "12.9");
  CHECK_FALSE(gpu::cuda_of_variant_label("null").has_value());
}

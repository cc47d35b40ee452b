// The wheel-content rules (issue 44 item 2): what a cuDNN wheel's file list leaves against the
// cuDNN file table (gpu/data/cudnn_files.txt). File lists as NVIDIA's wheels have them
// (shared/data/wheel-contents.md §1.2: the eight cuDNN 9 files; 9.20.0.48 without
// libcudnn_engines_tensor_ir.so.9, pytorch/pytorch#187824; 9.21 with it, RMLT-280).
#include "gpulock/gpu/wheel_rules.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/gpu/library_rules.h"

using gpulock::core::Version;
using gpulock::gpu::has_wheel_rules;
using gpulock::gpu::wheel_hazards;

namespace {

std::vector<std::string> cudnn9(const std::string& dir, bool tensor_ir) {
  std::vector<std::string> out;
  for (const char* n :
       {"libcudnn.so.9", "libcudnn_adv.so.9", "libcudnn_cnn.so.9",
        "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
        "libcudnn_graph.so.9", "libcudnn_heuristic.so.9", "libcudnn_ops.so.9"})
    out.push_back(dir + n);
  if (tensor_ir) out.push_back(dir + "libcudnn_engines_tensor_ir.so.9");
  return out;
}

Version v(const char* text) {
  return Version::parse(text).value();
}

}  // namespace

TEST_CASE("the rules judge cuDNN wheels only", "[gpu][wheel_rules]") {
  CHECK(has_wheel_rules("nvidia-cudnn-cu12"));
  CHECK(has_wheel_rules("nvidia-cudnn-cu13"));
  CHECK_FALSE(has_wheel_rules("nvidia-cudnn"));
  CHECK_FALSE(has_wheel_rules("nvidia-cudnn-cu1x"));
  CHECK_FALSE(has_wheel_rules("nvidia-cublas-cu12"));
  CHECK(wheel_hazards("nvidia-cublas-cu12", v("12.4.5.8"), {}).empty());
}

TEST_CASE("cuDNN 9.20.0.48 ships no engines_tensor_ir, which its graph library loads",
          "[gpu][wheel_rules]") {
  const auto files = cudnn9("nvidia/cudnn/lib/", false);
  auto h = wheel_hazards("nvidia-cudnn-cu13", v("9.20.0.48"), files);
  REQUIRE(h.size() == 1);
  CHECK(h[0].file == "libcudnn_engines_tensor_ir.so.9");
  CHECK(h[0].loaded_by == "libcudnn_graph.so.9");
  CHECK_FALSE(h[0].release_ships);
  CHECK(h[0].sources.find("PT-188892") != std::string::npos);
  CHECK(h[0].text() ==
        "ships no libcudnn_engines_tensor_ir.so.9, which its libcudnn_graph.so.9 loads by name: "
        "another release's copy on the library path would be loaded "
        "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH at the first convolution)");
  // The same files at the CUDA 13 layout (nvidia/cu13/lib) are the same wheel.
  CHECK(wheel_hazards("nvidia-cudnn-cu13", v("9.20.0.48"), cudnn9("nvidia/cu13/lib/", false)) == h);
}

TEST_CASE("complete cuDNN wheels have no hazard, an incomplete one has", "[gpu][wheel_rules]") {
  CHECK(wheel_hazards("nvidia-cudnn-cu13", v("9.19.0.56"), cudnn9("nvidia/cudnn/lib/", false))
            .empty());
  CHECK(wheel_hazards("nvidia-cudnn-cu12", v("9.1.0.70"), cudnn9("nvidia/cudnn/lib/", false))
            .empty());
  CHECK(wheel_hazards("nvidia-cudnn-cu13", v("9.21.0.82"), cudnn9("nvidia/cudnn/lib/", true))
            .empty());
  // 9.21 ships engines_tensor_ir: a 9.21 wheel without it is incomplete.
  auto h = wheel_hazards("nvidia-cudnn-cu13", v("9.21.0.82"), cudnn9("nvidia/cudnn/lib/", false));
  REQUIRE(h.size() == 1);
  CHECK(h[0].release_ships);
  CHECK(
      h[0].text().starts_with("ships no libcudnn_engines_tensor_ir.so.9, which its release "
                              "ships and its libcudnn_graph.so.9 loads by name"));
  // A sub-library the shim loads, missing.
  auto files = cudnn9("nvidia/cudnn/lib/", false);
  files.erase(files.begin() + 1);  // libcudnn_adv.so.9
  h = wheel_hazards("nvidia-cudnn-cu12", v("9.1.0.70"), files);
  REQUIRE(h.size() == 1);
  CHECK(h[0].file == "libcudnn_adv.so.9");
  CHECK(h[0].loaded_by == "libcudnn.so.9");
}

TEST_CASE("a wheel without the cuDNN loader is not judged", "[gpu][wheel_rules]") {
  // A placeholder or a wheel of only Python files: not a cuDNN build.
  CHECK(wheel_hazards("nvidia-cudnn-cu13", v("9.20.0.48"), {}).empty());
  CHECK(wheel_hazards("nvidia-cudnn-cu13", v("9.20.0.48"),
                      std::vector<std::string>{"nvidia/cudnn/lib/libcudnn_graph.so.9"})
            .empty());
  // A file named like the loader but in a path component is not it.
  CHECK(wheel_hazards("nvidia-cudnn-cu13", v("9.20.0.48"),
                      std::vector<std::string>{"nvidia/libcudnn.so.9/readme"})
            .empty());
}

// Issue 44 item 2: version floors between library families (gpu/data/library_rules.txt).
TEST_CASE("library rules: nvJitLink floors of the libraries that link it", "[gpu][files]") {
  using gpulock::gpu::library_conflicts;
  using gpulock::gpu::LibraryRules;
  auto v = [](const char* text) { return *gpulock::core::Version::parse(text); };

  auto parsed = LibraryRules::parse(gpulock::gpu::library_rules_text());
  REQUIRE(parsed.has_value());
  CHECK(parsed->links.size() == 18);

  // CUDA 12.4's cuSPARSE: nvJitLink >= 12.4, with the reason and its sources.
  auto rules = library_conflicts("nvidia-cusparse-cu12", v("12.3.1.170"));
  REQUIRE(rules.size() == 1);
  CHECK(rules[0].name == "nvidia-nvjitlink-cu12");
  CHECK(gpulock::resolver::specifier_text(rules[0].allowed) == ">=12.4");
  CHECK(rules[0].reason ==
        "its libcusparse.so.12 is built with CUDA 12.4 and links nvJitLink 12.4's symbols, so an "
        "older libnvJitLink fails at load with an undefined symbol");
  // A version between two releases takes the older floor; one above the newest row, the newest.
  CHECK(gpulock::resolver::specifier_text(
            library_conflicts("nvidia-cusparse-cu12", v("12.2.0.1"))[0].allowed) == ">=12.1");
  CHECK(gpulock::resolver::specifier_text(
            library_conflicts("nvidia-cusparse-cu12", v("12.4.1.24"))[0].allowed) == ">=12.4");
  // CUDA 12.6, 12.8 and 12.9 builds (torch 2.7.0 cu126, 2.7 cu128, 2.8.0 cu129 pin sets).
  CHECK(gpulock::resolver::specifier_text(
            library_conflicts("nvidia-cusparse-cu12", v("12.5.4.2"))[0].allowed) == ">=12.6");
  CHECK(gpulock::resolver::specifier_text(
            library_conflicts("nvidia-cufft-cu12", v("11.3.3.83"))[0].allowed) == ">=12.8");
  CHECK(gpulock::resolver::specifier_text(
            library_conflicts("nvidia-cusolver-cu12", v("11.7.5.82"))[0].allowed) == ">=12.9");
  auto later = library_conflicts("nvidia-cusparse-cu12", v("12.6.0.1"));
  CHECK(gpulock::resolver::specifier_text(later[0].allowed) == ">=12.9");
  CHECK(later[0].reason ==
        "its libcusparse.so.12 is built with CUDA 12.9 or later and links that CUDA's nvJitLink "
        "symbols, so a libnvJitLink older than 12.9 fails at load with an undefined symbol");
  CHECK(gpulock::resolver::specifier_text(
            library_conflicts("nvidia-cusparse", v("12.6.3.3"))[0].allowed) == ">=13.0");
  // Below every row, and a package without rows: none.
  CHECK(library_conflicts("nvidia-cusparse-cu12", v("12.0.0")).empty());
  CHECK(library_conflicts("nvidia-nvjitlink-cu12", v("12.4.127")).empty());
  CHECK(library_conflicts("nvidia-cufft-cu12", v("11.2.1.3"))[0].name == "nvidia-nvjitlink-cu12");
}

TEST_CASE("library rules: a table that does not parse names its line", "[gpu][files]") {
  using gpulock::gpu::LibraryRules;
  CHECK(LibraryRules::parse("links a 1.0 12.4 b libb.so.1 K\nsource K somewhere\n").has_value());
  auto unknown = LibraryRules::parse("# comment\nneeds a 1.0 12.4 b libb.so.1 K\n");
  REQUIRE(!unknown);
  CHECK(unknown.error().message.starts_with("library_rules.txt line 2: expected `links"));
  auto version = LibraryRules::parse("links a one 12.4 b libb.so.1 K\nsource K x\n");
  REQUIRE(!version);
  CHECK(version.error().message.starts_with("library_rules.txt line 1: FROM:"));
  auto cuda = LibraryRules::parse("links a 1.0 12 b libb.so.1 K\nsource K x\n");
  REQUIRE(!cuda);
  CHECK(cuda.error().message == "library_rules.txt line 1: CUDA: expected MAJOR.MINOR");
  auto source = LibraryRules::parse("links a 1.0 12.4 b libb.so.1 K,L\nsource K x\n");
  REQUIRE(!source);
  CHECK(source.error().message == "library_rules.txt line 1: source L has no `source` row");
  CHECK(LibraryRules::parse("preloads a w.so d/lib f.so p raises K\nsource K x\n").has_value());
  auto effect = LibraryRules::parse("preloads a w.so d/lib f.so p maybe K\nsource K x\n");
  REQUIRE(!effect);
  CHECK(effect.error().message == "library_rules.txt line 1: ON_MISSING is raises or ignored");
}

// Issue 44 item 2: torch's preload list and JAX's plugin's list satisfiable from the set
// (gpu/data/library_rules.txt `preloads` rows).
TEST_CASE("library rules: a file torch or JAX loads that no wheel of the set ships",
          "[gpu][files]") {
  using gpulock::gpu::preload_gaps;
  using gpulock::gpu::SetWheel;
  auto parsed = gpulock::gpu::LibraryRules::parse(gpulock::gpu::library_rules_text());
  REQUIRE(parsed.has_value());
  // torch's 16 required entries; JAX's 11 per CUDA major.
  CHECK(parsed->preloads.size() == 16 + 11 + 11);

  const std::vector<std::string> torch_slim = {"torch/lib/libtorch_cuda.so", "torch/lib/libc10.so"};
  const std::vector<std::string> torch_fat = {"torch/lib/libtorch_cuda.so",
                                              "torch/lib/libcusparseLt.so.0"};
  const std::vector<std::string> lt_ok = {"nvidia/cusparselt/lib/libcusparseLt.so.0"};
  const std::vector<std::string> lt_empty = {};
  const std::vector<std::string> lt_elsewhere = {"nvidia/cusparselt/libcusparseLt.so.0"};

  // The provider ships the file where torch looks: nothing.
  std::vector<SetWheel> ok = {{"torch", "2.9.0", torch_slim, true},
                              {"nvidia-cusparselt-cu12", "0.7.1", lt_ok}};
  CHECK(preload_gaps(ok).empty());

  // It ships none: one gap, on torch and the provider, with what fails.
  std::vector<SetWheel> empty = {{"torch", "2.9.0", torch_slim, true},
                                 {"nvidia-cusparselt-cu12", "0.8.0", lt_empty}};
  auto gaps = preload_gaps(empty);
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].loader == 0);
  CHECK(gaps[0].provider == 1);
  CHECK(gaps[0].reason ==
        "nvidia-cusparselt-cu12 0.8.0 ships no libcusparseLt.so.*[0-9], which torch loads from "
        "nvidia/cusparselt/lib, nvidia/cu*/lib or cusparselt/lib when it is imported (its preload "
        "list), and no other wheel of the set ships it: `import torch` raises ValueError");
  // A copy outside the directories torch looks in does not count.
  std::vector<SetWheel> elsewhere = {{"torch", "2.9.0", torch_slim, true},
                                     {"nvidia-cusparselt-cu12", "0.8.0", lt_elsewhere}};
  CHECK(preload_gaps(elsewhere).size() == 1);
  // Another wheel of the set ships it: nothing.
  std::vector<SetWheel> other = {{"torch", "2.9.0", torch_slim, true},
                                 {"nvidia-cusparselt-cu12", "0.8.0", lt_empty},
                                 {"some-bundle", "1.0", lt_ok}};
  CHECK(preload_gaps(other).empty());
  // A torch wheel bundling its own copy loads that one: nothing.
  std::vector<SetWheel> fat = {{"torch", "2.9.0", torch_fat, true},
                               {"nvidia-cusparselt-cu12", "0.8.0", lt_empty}};
  CHECK(preload_gaps(fat).empty());
  // No provider in the set (torch's requirements did not ask for one), or no torch: nothing.
  std::vector<SetWheel> no_provider = {{"torch", "2.9.0", torch_slim, true}};
  CHECK(preload_gaps(no_provider).empty());
  // A torch wheel that is not a CUDA build (no libtorch_cuda.so: the caller says `loads` false)
  // runs no CUDA preload.
  std::vector<SetWheel> not_cuda = {{"torch", "2.9.0", torch_slim, false},
                                    {"nvidia-cusparselt-cu12", "0.8.0", lt_empty}};
  CHECK(preload_gaps(not_cuda).empty());
  CHECK(gpulock::gpu::preload_marker("torch", "torch/lib/libtorch_cuda.so"));
  CHECK_FALSE(gpulock::gpu::preload_marker("torch", "torch/lib/libtorch_cpu.so"));
  CHECK_FALSE(gpulock::gpu::preload_marker("torch", "torch/__init__.py"));
  CHECK(gpulock::gpu::preload_marker("jax-cuda13-plugin", "jax_cuda13_plugin/_cuda.so"));
  CHECK_FALSE(gpulock::gpu::preload_marker("jax-cuda13-plugin", "jax_cuda13_plugin/__init__.py"));
  CHECK_FALSE(gpulock::gpu::preload_marker("numpy", "numpy/core/_multiarray_umath.so"));
  CHECK(gpulock::gpu::is_preload_loader("torch"));
  CHECK_FALSE(gpulock::gpu::is_preload_loader("torchvision"));
  std::vector<SetWheel> no_torch = {{"nvidia-cusparselt-cu12", "0.8.0", lt_empty}};
  CHECK(preload_gaps(no_torch).empty());

  // JAX's CUDA 13 plugin swallows the failure: the words say what happens instead.
  const std::vector<std::string> plugin = {"jax_plugins/xla_cuda13/xla_cuda_plugin.so"};
  const std::vector<std::string> cudnn_ok = {"nvidia/cudnn/lib/libcudnn.so.9",
                                             "nvidia/cudnn/lib/libcudnn_graph.so.9"};
  const std::vector<std::string> cudnn_without_shim = {"nvidia/cudnn/lib/libcudnn_graph.so.9"};
  std::vector<SetWheel> jax_ok = {{"jax-cuda13-plugin", "0.8.0", plugin, true},
                                  {"nvidia-cudnn-cu13", "9.21.0.82", cudnn_ok}};
  CHECK(preload_gaps(jax_ok).empty());
  std::vector<SetWheel> jax_gap = {{"jax-cuda13-plugin", "0.8.0", plugin, true},
                                   {"nvidia-cudnn-cu13", "9.21.0.82", cudnn_without_shim}};
  auto jax = preload_gaps(jax_gap);
  REQUIRE(jax.size() == 1);
  CHECK(jax[0].reason ==
        "nvidia-cudnn-cu13 9.21.0.82 ships no libcudnn.so.9, which jax-cuda13-plugin loads from "
        "nvidia/cudnn/lib when it is imported, ignoring a failure, and no other wheel of the set "
        "ships it: another copy on the library path is loaded, or none");
}

// Issue 44 item 2: companions a library loads by name from the set (cuDNN's libnvrtc and
// libcublasLt, gpu/data/library_rules.txt `needs` rows).
TEST_CASE("library rules: a companion cuDNN loads by name that the set lacks", "[gpu][files]") {
  using gpulock::gpu::companion_gaps;
  using gpulock::gpu::SetWheel;
  auto parsed = gpulock::gpu::LibraryRules::parse(gpulock::gpu::library_rules_text());
  REQUIRE(parsed.has_value());
  CHECK(parsed->needs.size() == 4);
  const std::vector<std::string> cudnn = {"nvidia/cudnn/lib/libcudnn.so.9"};
  const std::vector<std::string> cublas = {"nvidia/cublas/lib/libcublasLt.so.12"};
  const std::vector<std::string> nvrtc_elsewhere = {"vendor/lib/libnvrtc.so.12"};
  const std::vector<std::string> none = {};
  CHECK(gpulock::gpu::preload_marker("nvidia-cudnn-cu12", "nvidia/cudnn/lib/libcudnn.so.9"));

  // cuBLAS present, NVRTC absent: one gap, for libnvrtc.so.12.
  std::vector<SetWheel> without = {{"nvidia-cudnn-cu12", "9.1.0.70", cudnn, true},
                                   {"nvidia-cublas-cu12", "12.4.5.8", cublas}};
  auto gaps = companion_gaps(without);
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].loader == 0);
  CHECK(gaps[0].row->file == "libnvrtc.so.12");
  CHECK(gaps[0].reason ==
        "loads libnvrtc.so.12 by name (its libraries dlopen it when they need it), and the set "
        "has no nvidia-cuda-nvrtc-cu12 and no other wheel shipping it: the machine's copy is "
        "loaded, or the load fails");
  // The provider in the set (its files are taken on trust), or another wheel shipping the file:
  // nothing.
  std::vector<SetWheel> provider = {{"nvidia-cudnn-cu12", "9.1.0.70", cudnn, true},
                                    {"nvidia-cublas-cu12", "12.4.5.8", cublas},
                                    {"nvidia-cuda-nvrtc-cu12", "12.4.127", none}};
  CHECK(companion_gaps(provider).empty());
  std::vector<SetWheel> other = {{"nvidia-cudnn-cu12", "9.1.0.70", cudnn, true},
                                 {"nvidia-cublas-cu12", "12.4.5.8", cublas},
                                 {"vendor-cuda", "1.0", nvrtc_elsewhere}};
  CHECK(companion_gaps(other).empty());
  // Neither cuBLAS nor NVRTC: two gaps. A cuDNN wheel that ships no libcudnn.so.9 (`loads`
  // false): none.
  std::vector<SetWheel> alone = {{"nvidia-cudnn-cu12", "9.1.0.70", cudnn, true}};
  CHECK(companion_gaps(alone).size() == 2);
  std::vector<SetWheel> stand_in = {{"nvidia-cudnn-cu12", "9.1.0.70", none, false}};
  CHECK(companion_gaps(stand_in).empty());
}

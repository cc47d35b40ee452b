// The lockable scenarios of shared/data/gpu-stacks.md §9 (issue 23), end to end: the real
// gpulock binary against the 'gpu-stacks' fixture variant, each asserting the exact outcome and
// the exact explanation. (`--ceiling=strict|minor` there is `--cuda-compat`.)

#include "stacks_support.h"

using namespace stacks_test;

namespace {

const std::vector<std::string> kH100 = {"--driver", "580.65.06", "--gpu-arch", "sm_90", "-q"};

std::vector<std::string> with(std::vector<std::string> args,
                              const std::vector<std::string>& machine = kH100) {
  args.insert(args.end(), machine.begin(), machine.end());
  return args;
}

// A failed resolve: exit 1, and exactly this stderr.
void expect_no_solution(const std::vector<std::string>& args, const std::string& err) {
  Run r = resolve(args);
  INFO(describe(r));
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(normalize(r.err) == err);
}

// A resolve that locks: exit 0; the lock's text.
std::string expect_lock(const std::vector<std::string>& args) {
  Run r = resolve(args);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  return r.out;
}

std::string command_of(const std::vector<std::string>& args, const std::string& extra) {
  std::string out = "gpulock resolve";
  for (const auto& a : args) {
    bool plain = a.find_first_of("[]' ") == std::string::npos;
    out += " " + (plain ? a : "'" + a + "'");
  }
  return out +
         " --python-version 3.12 --platform manylinux_2_28_x86_64 --index-url "
         "http://INDEX/simple/ --torch-index-base http://INDEX/whl --cache-dir WORK/cache -o - " +
         extra;
}

}  // namespace

TEST_CASE("stacks 1: TensorFlow 2.19's cuDNN pin against torch 2.8's", "[stacks][scenario]") {
  expect_no_solution(
      with({"torch==2.8.0", "tensorflow[and-cuda]==2.19.0"}),
      "error: no solution: torch 2.8.0 and tensorflow[and-cuda] 2.19.0 need different versions "
      "of the same CUDA libraries: nvidia-cudnn-cu12 ==9.10.2.21 (torch 2.8.0) vs ==9.3.0.75 "
      "(tensorflow[and-cuda] 2.19.0); they also disagree on nvidia-cuda-nvrtc-cu12, "
      "nvidia-cuda-runtime-cu12, nvidia-cuda-cupti-cu12, nvidia-cublas-cu12, nvidia-cufft-cu12, "
      "nvidia-curand-cu12, nvidia-cusolver-cu12, nvidia-cusparse-cu12, nvidia-nccl-cu12, "
      "nvidia-nvjitlink-cu12\n"
      "  Because torch==2.8.0 depends on nvidia-nvjitlink-cu12==12.8.93 and "
      "tensorflow[and-cuda]==2.19.0 depends on nvidia-nvjitlink-cu12==12.5.82, torch==2.8.0 and "
      "tensorflow[and-cuda]==2.19.0 are incompatible.\n"
      "  And because you require both torch==2.8.0 and tensorflow[and-cuda]==2.19.0, version "
      "solving failed.\n");
}

TEST_CASE("stacks 2: TensorFlow 2.21's ranges accept torch 2.8's pins", "[stacks][scenario]") {
  std::string lock = expect_lock(with({"torch==2.8.0", "tensorflow[and-cuda]==2.21.0"}));
  CHECK(locked(lock, "tensorflow") == "2.21.0");
  CHECK(locked(lock, "nvidia-cudnn-cu12") == "9.10.2.21");
  CHECK(locked(lock, "nvidia-cublas-cu12") == "12.8.4.1");
  CHECK(lock.find("name = \"nvidia-cudnn-cu13\"") == std::string::npos);
}

TEST_CASE("stacks 3: JAX's cuDNN floor against torch 2.7.1's pin", "[stacks][scenario]") {
  expect_no_solution(
      with({"torch==2.7.1", "jax[cuda12]==0.7.2"}),
      "error: no solution: torch 2.7.1 and jax-cuda12-plugin[with-cuda] 0.7.2 need different "
      "versions of the same CUDA libraries: nvidia-cudnn-cu12 ==9.5.1.17 (torch 2.7.1) vs "
      ">=9.8,<10.0 (jax-cuda12-plugin[with-cuda] 0.7.2)\n"
      "  Because torch==2.7.1 depends on nvidia-cudnn-cu12==9.5.1.17 and "
      "jax-cuda12-plugin[with-cuda] depends on nvidia-cudnn-cu12>=9.8,<10.0, torch==2.7.1 and "
      "jax-cuda12-plugin[with-cuda] are incompatible.\n"
      "  And because jax[cuda12] depends on jax-cuda12-plugin[with-cuda]>=0.7.2,<=0.7.2, "
      "torch==2.7.1 and jax[cuda12] are incompatible.\n"
      "  And because you require both torch==2.7.1 and jax[cuda12]==0.7.2, version solving "
      "failed.\n");
}

TEST_CASE("stacks 4: CUDA 12 and CUDA 13 cuDNN in one environment", "[stacks][scenario]") {
  auto args = with({"torch==2.11.0", "jax[cuda12]"});
  expect_no_solution(
      args,
      "error: no solution: nvidia-cudnn-cu12 (CUDA 12, for jax-cuda12-plugin[with-cuda]) and "
      "nvidia-cudnn-cu13 (CUDA 13, for torch) both install nvidia/cudnn/lib: one CUDA major and "
      "one owner per library directory, so they cannot share an environment\n"
      "  Because torch==2.11.0 depends on nvidia-cudnn-cu13==9.19.0.56 and "
      "nvidia-cudnn-cu13==9.19.0.56 uses CUDA 13 libraries, torch==2.11.0 requires CUDA 13 "
      "libraries.\n"
      "  And because nvidia-cuda-nvcc-cu12==12.9.86 uses CUDA 12 libraries, torch==2.11.0 and "
      "nvidia-cuda-nvcc-cu12==12.9.86 are incompatible.\n"
      "  And because jax[cuda12] depends on jax-cuda12-plugin[with-cuda]>=0.7.2,<=0.7.2 and "
      "jax-cuda12-plugin[with-cuda] depends on nvidia-cuda-nvcc-cu12>=12.6.85, torch==2.11.0 "
      "and jax[cuda12] are incompatible.\n"
      "  And because you require both torch==2.11.0 and jax[cuda12], version solving failed.\n"
      "hint: torch from /whl/cu129: `" +
          command_of(args, "--torch-backend cu129") +
          "` locks torch 2.11.0+cu129\n"
          "hint: for CUDA 13 libraries throughout: jax[cuda13]\n");
}

TEST_CASE("stacks: jax[cuda12] with torch from the variant indexes", "[stacks][scenario]") {
  // One set whose cuDNN satisfies both: a CUDA 12 torch build, never the cu130 one.
  std::string lock = expect_lock(with({"jax[cuda12]", "torch", "--torch-backend", "auto"}));
  CHECK(locked(lock, "torch") == "2.12.1+cu126");
  CHECK(locked(lock, "jax") == "0.7.2");
  CHECK(locked(lock, "nvidia-cudnn-cu12") == "9.10.2.21");
  CHECK(lock.find("name = \"nvidia-cudnn-cu13\"") == std::string::npos);
}

TEST_CASE("stacks 5: the driver's ceiling decides the CUDA major", "[stacks][scenario]") {
  expect_no_solution(
      with({"jax[cuda13]"}, {"--driver", "570.86.10", "--gpu-arch", "sm_90", "-q"}),
      "error: no solution: jax-cuda13-plugin needs CUDA >= 13.0 and your driver 570.86.10 "
      "supports CUDA <= 12.8, and jax[cuda13] needs jax-cuda13-plugin\n"
      "  Because jax-cuda13-plugin needs CUDA >= 13.0 and your driver 570.86.10 supports CUDA "
      "<= 12.8, jax-cuda13-plugin cannot be used.\n"
      "  And because you require jax[cuda13] and jax[cuda13] depends on "
      "jax-cuda13-plugin>=0.7.2,<=0.7.2, version solving failed.\n"
      "hint: CUDA 13 wheels need a driver >= 580.65.06 and your ceiling is 12.8; for CUDA 12 "
      "wheels: jax[cuda12]\n");
  std::string lock =
      expect_lock(with({"jax[cuda12]"}, {"--driver", "570.86.10", "--gpu-arch", "sm_90", "-q"}));
  CHECK(locked(lock, "jax-cuda12-plugin") == "0.7.2");
}

TEST_CASE("stacks 6: CUDA 13's sm_75 floor on a V100", "[stacks][scenario]") {
  const std::vector<std::string> v100 = {"--driver", "580.65.06", "--gpu-arch", "sm_70", "-q"};
  expect_no_solution(
      with({"jax[cuda13]"}, v100),
      "error: no solution: jax-cuda13-plugin has no kernels for your GPU's sm_70 (its CUDA 13 "
      "build carries sm_75, sm_80, sm_90, sm_100, sm_110, PTX sm_120), and jax[cuda13] needs "
      "jax-cuda13-plugin\n"
      "  Because jax[cuda13] depends on jax-cuda13-plugin>=0.7.2,<=0.7.2 and jax-cuda13-plugin "
      "has no kernels for your GPU's sm_70 (its CUDA 13 build carries sm_75, sm_80, sm_90, "
      "sm_100, sm_110, PTX sm_120), jax[cuda13] cannot be used.\n"
      "  And because you require jax[cuda13], version solving failed.\n"
      "hint: CUDA 13 wheels start at sm_75; for CUDA 12 wheels: jax[cuda12]\n");
  std::string lock = expect_lock(with({"jax[cuda12]"}, v100));
  CHECK(locked(lock, "jax-cuda12-plugin") == "0.7.2");
}

TEST_CASE("stacks 7: a placeholder dependency", "[stacks][scenario]") {
  expect_no_solution(
      with({"tensorrt==10.13.3.9"}),
      "error: no solution: nvidia-cuda-runtime-cu13 is a placeholder (an empty sdist); the CUDA "
      "13 package is nvidia-cuda-runtime, and tensorrt==10.13.3.9 needs "
      "nvidia-cuda-runtime-cu13\n"
      "  Because tensorrt==10.13.3.9 depends on tensorrt-cu13==10.13.3.9 and tensorrt-cu13 "
      "depends on tensorrt-cu13-libs==10.13.3.9, tensorrt==10.13.3.9 requires "
      "tensorrt-cu13-libs==10.13.3.9.\n"
      "  And because tensorrt-cu13-libs depends on nvidia-cuda-runtime-cu13, "
      "tensorrt==10.13.3.9 requires nvidia-cuda-runtime-cu13.\n"
      "  And because nvidia-cuda-runtime-cu13 is a placeholder (an empty sdist); the CUDA 13 "
      "package is nvidia-cuda-runtime and you require tensorrt==10.13.3.9, version solving "
      "failed.\n"
      "hint: nvidia-cuda-runtime-cu13 is a placeholder; the CUDA 13 package is "
      "nvidia-cuda-runtime\n");
}

TEST_CASE("stacks 8: CuPy's cuda-toolkit meta-package and its import package",
          "[stacks][scenario]") {
  std::string lock = expect_lock(with({"cupy-cuda12x[ctk]", "torch==2.8.0"}));
  CHECK(locked(lock, "cuda-toolkit") == "12.8.1");
  CHECK(locked(lock, "nvidia-cublas-cu12") == "12.8.4.1");
  expect_no_solution(
      with({"cupy-cuda12x[ctk]", "cupy-cuda13x", "torch==2.8.0"}),
      "error: no solution: cupy-cuda12x and cupy-cuda13x both provide the import package "
      "`cupy`, and only one of them can be installed\n"
      "  Because cupy-cuda12x installs the import package cupy and cupy-cuda13x installs the "
      "import package cupy, cupy-cuda12x and cupy-cuda13x are incompatible.\n"
      "  And because you require both cupy-cuda12x and cupy-cuda13x, version solving failed.\n");
}

TEST_CASE("stacks 9: flash-attn's torch tuple", "[stacks][scenario]") {
  std::string url = stacks().http_url() +
                    "/direct/flash-attn/"
                    "flash_attn-2.8.3%2Bcu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl";
  expect_no_solution(with({"flash-attn @ " + url, "torch==2.9.1"}),
                     "error: no solution: flash-attn needs torch==2.8.*, and you require "
                     "torch==2.9.1\n"
                     "  Because you require flash-attn and flash-attn depends on torch==2.8.*, "
                     "torch==2.8.* must be used.\n"
                     "  And because you require torch==2.9.1, version solving failed.\n");
  // With torch 2.8: locked under the file name's version (METADATA says 2.8.3).
  std::string lock = expect_lock(with({"flash-attn @ " + url, "torch==2.8.0"}));
  CHECK(locked(lock, "flash-attn") == "2.8.3+cu12torch2.8cxx11abitrue");
  CHECK(locked(lock, "torch") == "2.8.0");
}

TEST_CASE("stacks 10: vLLM's torch from the cu129 variant", "[stacks][scenario]") {
  const std::vector<std::string> driver575 = {"--driver", "575.51.03", "--gpu-arch", "sm_90", "-q"};
  std::string lock = expect_lock(with({"vllm==0.23.0", "--torch-backend", "auto"}, driver575));
  CHECK(locked(lock, "torch") == "2.11.0+cu129");
  CHECK(locked(lock, "vllm") == "0.23.0");
  CHECK(lock.find("name = \"nvidia-cudnn-cu13\"") == std::string::npos);
  // PyPI alone has only the CUDA 13 build, above the 12.9 ceiling: said, never locked.
  expect_no_solution(with({"vllm==0.23.0"}, driver575),
                     "error: no solution: torch==2.11.0 needs CUDA >= 13.0 and your driver "
                     "575.51.03 supports CUDA <= 12.9, and vllm==0.23.0 needs torch\n"
                     "  Because torch==2.11.0 needs CUDA >= 13.0 and your driver 575.51.03 "
                     "supports CUDA <= 12.9, torch==2.11.0 cannot be used.\n"
                     "  And because you require vllm==0.23.0 and vllm depends on torch==2.11.0, "
                     "version solving failed.\n"
                     "hint: CUDA 13 wheels need a driver >= 580.65.06 and your ceiling is 12.9\n");
}

TEST_CASE("stacks 11: PyG's find-links wheels follow torch's build", "[stacks][scenario]") {
  std::string page = stacks().http_url() + "/pyg/torch-2.11.0+cu128.html";
  std::string lock = expect_lock(
      with({"torch==2.11.0+cu128", "torch-scatter", "-f", page, "--torch-backend", "cu128"}));
  CHECK(locked(lock, "torch-scatter") == "2.1.2+pt211cu128");
  CHECK(locked(lock, "torch") == "2.11.0+cu128");
  // torch 2.11.0 from PyPI is a CUDA 13 build: the cu128 page's wheels do not fit it, so the
  // page follows torch (torch-2.11.0+cu130.html), said in one warning.
  Run followed = resolve({"torch==2.11.0", "torch-scatter", "-f", page, "--driver", "580.65.06",
                          "--gpu-arch", "sm_90"});
  INFO(describe(followed));
  REQUIRE(followed.status == 0);
  CHECK(locked(followed.out, "torch-scatter") == "2.1.2+pt211cu130");
  CHECK(locked(followed.out, "torch") == "2.11.0");
  CHECK(
      normalize(followed.err)
          .find(
              "warning: --find-links http://INDEX/pyg/torch-2.11.0+cu128.html is for another torch "
              "build than torch 2.11.0+cu130: read http://INDEX/pyg/torch-2.11.0+cu130.html "
              "instead (its wheels are built for one torch build)\n") != std::string::npos);
  // No page for that build (PyG publishes none for CPU torch here): reported, never another
  // build's wheels.
  Run none = resolve(
      {"torch==2.11.0", "torch-scatter", "-f", page, "--torch-backend", "cpu", "--driver", "none"});
  INFO(describe(none));
  CHECK(none.status == 1);
  CHECK(normalize(none.err) ==
        "warning: --find-links http://INDEX/pyg/torch-2.11.0+cu128.html is for another torch "
        "build than torch 2.11.0+cpu: read http://INDEX/pyg/torch-2.11.0+cpu.html instead (its "
        "wheels are built for one torch build)\n"
        "error: no solution: 'torch-scatter' is not on http://INDEX/simple/, "
        "http://INDEX/pyg/torch-2.11.0+cpu.html\n"
        "  Because you require torch-scatter and there are no versions of torch-scatter, version "
        "solving failed.\n");
  std::string cu130 = stacks().http_url() + "/pyg/torch-2.11.0+cu130.html";
  lock = expect_lock(with({"torch==2.11.0", "torch-scatter", "-f", cu130}));
  CHECK(locked(lock, "torch-scatter") == "2.1.2+pt211cu130");
}

TEST_CASE("stacks 12: xformers' exact torch pin and its floor", "[stacks][scenario]") {
  expect_no_solution(with({"xformers==0.0.33", "torch==2.9.1"}),
                     "error: no solution: xformers==0.0.33 needs torch==2.9.0, and you require "
                     "torch==2.9.1\n"
                     "  Because you require xformers==0.0.33 and xformers==0.0.33 depends on "
                     "torch==2.9.0, torch==2.9.0 must be used.\n"
                     "  And because you require torch==2.9.1, version solving failed.\n");
  std::string lock = expect_lock(with({"xformers==0.0.35", "torch==2.12.0"}));
  CHECK(locked(lock, "xformers") == "0.0.35");
  CHECK(locked(lock, "torch") == "2.12.0");
}

TEST_CASE("stacks: TensorRT for CUDA 12, a stack added as data only", "[stacks][scenario]") {
  std::string lock = expect_lock(
      with({"tensorrt==10.8.0.43"}, {"--driver", "570.86.10", "--gpu-arch", "sm_90", "-q"}));
  CHECK(locked(lock, "tensorrt-cu12-libs") == "10.8.0.43");
  CHECK(locked(lock, "nvidia-cuda-runtime-cu12") == "12.8.90");
  expect_no_solution(
      with({"tensorrt==10.8.0.43", "torch==2.11.0"}),
      "error: no solution: nvidia-cudnn-cu13==9.19.0.56 uses CUDA 13 libraries and "
      "nvidia-cuda-runtime-cu12 uses CUDA 12 libraries\n"
      "  Because torch==2.11.0 depends on nvidia-cudnn-cu13==9.19.0.56 and "
      "nvidia-cudnn-cu13==9.19.0.56 uses CUDA 13 libraries, torch==2.11.0 requires CUDA 13 "
      "libraries.\n"
      "  And because tensorrt-cu12-libs depends on nvidia-cuda-runtime-cu12 and "
      "nvidia-cuda-runtime-cu12 uses CUDA 12 libraries, torch==2.11.0 and tensorrt-cu12-libs are "
      "incompatible.\n"
      "  And because tensorrt==10.8.0.43 depends on tensorrt-cu12==10.8.0.43 and tensorrt-cu12 "
      "depends on tensorrt-cu12-libs==10.8.0.43, torch==2.11.0 and tensorrt==10.8.0.43 are "
      "incompatible.\n"
      "  And because you require both tensorrt==10.8.0.43 and torch==2.11.0, version solving "
      "failed.\n");
}

TEST_CASE("stacks 4, 5, 6 for ONNX Runtime and CuPy", "[stacks][scenario]") {
  // ORT 1.26 is a CUDA 12 build (the table's releases by major); torch 2.11.0 is CUDA 13.
  auto ort = with({"torch==2.11.0", "onnxruntime-gpu[cuda,cudnn]==1.26.0"});
  expect_no_solution(
      ort,
      "error: no solution: nvidia-cudnn-cu12 (CUDA 12, for onnxruntime-gpu[cudnn]) and "
      "nvidia-cudnn-cu13 (CUDA 13, for torch) both install nvidia/cudnn/lib: one CUDA major and "
      "one owner per library directory, so they cannot share an environment\n"
      "  Because torch==2.11.0 depends on nvidia-cudnn-cu13==9.19.0.56 and "
      "nvidia-cudnn-cu13==9.19.0.56 uses CUDA 13 libraries, torch==2.11.0 requires CUDA 13 "
      "libraries.\n"
      "  And because onnxruntime-gpu[cuda]==1.26.0 depends on nvidia-cuda-nvrtc-cu12~=12.0 and "
      "nvidia-cuda-nvrtc-cu12 uses CUDA 12 libraries, torch==2.11.0 and "
      "onnxruntime-gpu[cuda]==1.26.0 are incompatible.\n"
      "  And because you require both torch==2.11.0 and onnxruntime-gpu[cuda]==1.26.0, version "
      "solving failed.\n"
      "hint: torch from /whl/cu129: `" +
          command_of(ort, "--torch-backend cu129") + "` locks torch 2.11.0+cu129\n");
  expect_no_solution(
      with({"cupy-cuda13x[ctk]"}, {"--driver", "570.86.10", "--gpu-arch", "sm_90", "-q"}),
      "error: no solution: cupy-cuda13x needs CUDA >= 13.0 and your driver 570.86.10 supports "
      "CUDA <= 12.8\n"
      "  Because cupy-cuda13x needs CUDA >= 13.0 and your driver 570.86.10 supports CUDA <= "
      "12.8, cupy-cuda13x cannot be used.\n"
      "  And because you require cupy-cuda13x, version solving failed.\n"
      "hint: CUDA 13 wheels need a driver >= 580.65.06 and your ceiling is 12.8; for CUDA 12 "
      "wheels: cupy-cuda12x[ctk]\n");
  // ORT 1.29+ is CUDA 13 (the table's releases): the fix is the CUDA 12 releases, and the driver
  // named is CUDA 13's, not the next CUDA 12 minor's.
  expect_no_solution(
      with({"onnxruntime-gpu[cuda,cudnn]>=1.29"},
           {"--driver", "570.86.10", "--gpu-arch", "sm_90", "-q"}),
      "error: no solution: onnxruntime-gpu==1.30.0 needs CUDA >= 13.0 and your driver 570.86.10 "
      "supports CUDA <= 12.8\n"
      "  Because onnxruntime-gpu==1.30.0 needs CUDA >= 13.0 and your driver 570.86.10 supports "
      "CUDA <= 12.8, onnxruntime-gpu==1.30.0 cannot be used.\n"
      "  And because you require onnxruntime-gpu>=1.29, version solving failed.\n"
      "hint: CUDA 13 wheels need a driver >= 580.65.06 and your ceiling is 12.8; for CUDA 12 "
      "wheels: onnxruntime-gpu>=1.19,<1.27\n");
  expect_no_solution(
      with({"cupy-cuda13x"}, {"--driver", "580.65.06", "--gpu-arch", "sm_70", "-q"}),
      "error: no solution: cupy-cuda13x has no kernels for your GPU's sm_70 (its CUDA 13 build "
      "carries sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120+PTX)\n"
      "  Because you require cupy-cuda13x and cupy-cuda13x has no kernels for your GPU's sm_70 "
      "(its CUDA 13 build carries sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120+PTX), "
      "version solving failed.\n"
      "hint: CUDA 13 wheels start at sm_75; for CUDA 12 wheels: cupy-cuda12x\n");
}

TEST_CASE("stacks 10: a +cu129 vLLM never with a CUDA 13 torch", "[stacks][scenario]") {
  std::vector<std::string> index = {
      "--index", "vllm=" + stacks().http_url() + "/vllm/0.23.0/cu129/", "--index-for", "vllm=vllm"};
  std::vector<std::string> args = {"vllm==0.23.0+cu129"};
  args.insert(args.end(), index.begin(), index.end());
  // torch 2.11.0 from PyPI is the CUDA 13 build.
  expect_no_solution(
      with(args),
      "error: no solution: the CUDA 12.9 variant uses CUDA 12 libraries and "
      "nvidia-cudnn-cu13==9.19.0.56 uses CUDA 13 libraries\n"
      "  Because the CUDA 12.9 variant uses CUDA 12 libraries and nvidia-cudnn-cu13==9.19.0.56 "
      "uses CUDA 13 libraries, the CUDA 12.9 variant and nvidia-cudnn-cu13==9.19.0.56 are "
      "incompatible.\n"
      "  And because vllm depends on torch==2.11.0 and torch==2.11.0 depends on "
      "nvidia-cudnn-cu13==9.19.0.56, the CUDA 12.9 variant and vllm are incompatible.\n"
      "  And because you require vllm==0.23.0+cu129 and vllm is a CUDA 12.9 build, version "
      "solving failed.\n");
  // From the variant indexes, the driver would run cu130, but the label asks for cu129.
  args.insert(args.end(), {"--torch-backend", "auto"});
  std::string lock = expect_lock(with(args));
  CHECK(locked(lock, "torch") == "2.11.0+cu129");
  CHECK(locked(lock, "vllm") == "0.23.0+cu129");
}

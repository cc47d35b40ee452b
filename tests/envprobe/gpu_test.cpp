// On a machine with an NVIDIA GPU (label gpu; `ctest --preset gpu`): the kernel check with the
// real cuDNN 9 and CUDA runtime of /usr/local/cuda, laid out as wheels (nvidia/cudnn/lib and
// nvidia/cu13/lib are links to the toolkit's library directory).
#include <unistd.h>

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "cli_runner.h"

namespace fs = std::filesystem;

namespace {

using gpulock::test::run_shell;
using Result = gpulock::test::RunResult;

Result run(const std::string& command) {
  return run_shell(command);
}

}  // namespace

TEST_CASE("the kernel check runs a convolution through the real cuDNN on the GPU",
          "[envprobe][gpu]") {
  const fs::path lib = "/usr/local/cuda/lib64";
  REQUIRE(fs::exists(lib / "libcudnn.so.9"));
  std::string t = (fs::temp_directory_path() / "gpulock-gpu-XXXXXX").string();
  REQUIRE(::mkdtemp(t.data()) != nullptr);
  const fs::path site = t;
  for (const char* folder : {"cudnn", "cu13"}) {
    fs::create_directories(site / "nvidia" / folder);
    fs::create_symlink(lib, site / "nvidia" / folder / "lib");
  }
  const std::string probe =
      std::string(GPULOCK_EXE) + " probe --site-packages '" + site.string() + "'";
  Result kernels = run(probe + " --run-kernels --json");
  INFO(kernels.out);
  CHECK(kernels.status == 0);
  CHECK(kernels.out.find("\"gpu_usable\": true") != std::string::npos);
  CHECK(kernels.out.find("\"result_correct\": true") != std::string::npos);
  CHECK(kernels.out.find("\"id\": \"kernel-ok\"") != std::string::npos);
  CHECK(kernels.out.find("\"function\": \"cudnnConvolutionForward\"") != std::string::npos);
  Result text = run(probe + " --run-kernels");
  INFO(text.out);
  CHECK(text.out.find("kernel check  passed: 1x3x8x8 convolution, result correct") !=
        std::string::npos);
  Result handle = run(probe);
  CHECK(handle.status == 0);
  CHECK(handle.out.find("cudnnCreate   CUDNN_STATUS_SUCCESS") != std::string::npos);
  fs::remove_all(site);
}

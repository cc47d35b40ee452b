// Reading an installed environment (probe/environment.h): dist-info METADATA and RECORD, the
// wheel library directories, torch's build facts.
#include "gpulock/probe/environment.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "test_files.h"

namespace fs = std::filesystem;
using namespace gpulock::probe;

namespace {

struct Site : gpulock::test::TempDir {
  Site() : TempDir(fs::temp_directory_path(), "gpulock-site-") {}
  void write(const fs::path& rel, const std::string& text) const {
    gpulock::test::write_file(path() / rel, text);
  }
};

}  // namespace

TEST_CASE("distributions, RECORD libraries and torch's facts", "[envprobe][environment]") {
  Site s;
  s.write("torch-2.5.1+cu124.dist-info/METADATA",
          "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\n"
          "Requires-Dist: filelock\n"
          "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"\n\nbody\n");
  s.write("torch-2.5.1+cu124.dist-info/RECORD",
          "torch/__init__.py,sha256=x,1\ntorch/lib/libtorch.so,,\n\"torch/lib/odd,name.so.1\",,\n"
          "torch/version.py,,\n");
  s.write("torch/version.py", "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n");
  s.write("nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA",
          "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n");
  s.write("nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD",
          "nvidia/cudnn/lib/libcudnn.so.9,sha256=a,1\r\nnvidia/cudnn/include/cudnn.h,,\r\n"
          "nvidia/cudnn/__init__.py,,\r\n");
  s.write("nvidia/cudnn/lib/libcudnn.so.9", "x");
  s.write("nvidia/cu13/lib/libcudart.so.13", "x");
  s.write("nvidia/notalib/__init__.py", "");
  // Broken ones: no Version (ignored), a METADATA the strict parser refuses (kept, warned).
  s.write("broken-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: broken\n");
  s.write("Loose_Pkg-1.0.dist-info/METADATA", "Name: Loose_Pkg\nVersion: 1.0\n");

  auto env = scan_environment({s.path()});
  REQUIRE(env.has_value());
  REQUIRE(env->distributions.size() == 3);
  CHECK(env->distributions[0].name == "loose-pkg");
  const auto* torch = env->find("torch");
  REQUIRE(torch != nullptr);
  CHECK(torch->libraries ==
        std::vector<std::string>{"torch/lib/libtorch.so", "torch/lib/odd,name.so.1"});
  REQUIRE(env->torch.has_value());
  CHECK(env->torch->version == "2.5.1+cu124");
  CHECK(env->torch->cuda == "12.4");
  CHECK(env->torch->cudnn_package == "nvidia-cudnn-cu12");
  CHECK(env->torch->cudnn_pin == "9.1.0.70");
  REQUIRE(env->library_dirs.size() == 2);
  CHECK(env->library_dirs[0].folder == "cu13");
  CHECK(env->library_dirs[1].folder == "cudnn");
  const auto* owner = env->owner_of(s.path() / "nvidia/cudnn/lib/../lib/libcudnn.so.9");
  REQUIRE(owner != nullptr);
  CHECK(owner->name == "nvidia-cudnn-cu12");
  CHECK(env->owner_of(s.path() / "nvidia/cu13/lib/libcudart.so.13") == nullptr);
  CHECK(env->contains(s.path() / "nvidia/cu13/lib/libcudart.so.13"));
  CHECK_FALSE(env->contains("/usr/lib/libc.so.6"));
  CHECK(env->warnings.size() == 2);
}

TEST_CASE("the first site-packages wins for a distribution installed twice",
          "[envprobe][environment]") {
  Site a, b;
  a.write("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n");
  b.write("pkg-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 2.0\n");
  auto env = scan_environment({a.path(), b.path()});
  REQUIRE(env.has_value());
  CHECK(env->find("pkg")->version == "1.0");
  CHECK(env->warnings.size() == 1);
  CHECK_FALSE(env->torch.has_value());
  CHECK_FALSE(scan_environment({a.path() / "missing"}).has_value());
}

TEST_CASE("torch/version.py cuda values", "[envprobe][environment]") {
  bool found = false;
  CHECK(parse_torch_version_py_cuda("cuda = '12.4'\n", &found) == "12.4");
  CHECK(found);
  CHECK(parse_torch_version_py_cuda("cuda: Optional[str] = \"13.0\"\n") == "13.0");
  CHECK_FALSE(parse_torch_version_py_cuda("cuda = None\n", &found).has_value());
  CHECK(found);
  CHECK_FALSE(parse_torch_version_py_cuda("hip = None\ncudnn = '9'\n", &found).has_value());
  CHECK_FALSE(found);
}

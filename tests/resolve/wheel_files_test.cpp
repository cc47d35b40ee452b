// Issue 44: the lock proves the files. The fixture's cuDNN wheels carry real member names (the
// fake libraries of fixtures/fake_cudnn, which copy NVIDIA's file lists,
// shared/data/wheel-contents.md §1.2): nvidia-cudnn-cu13 9.19.0.56 is complete, 9.20.0.48 lacks
// libcudnn_engines_tensor_ir.so.9, which its libcudnn_graph.so.9 loads (pytorch/pytorch#187824).
#include "gpulock/lock/wheel_files.h"

#include "resolve_support.h"

using namespace resolve_test;

namespace {

const gpulock::lock::WheelFiles* record_of(const gpulock::lock::Lock& lock,
                                           const std::string& package,
                                           gpulock::lock::WheelFilesMap& holder) {
  const auto* p = find_package(lock, package);
  REQUIRE(p != nullptr);
  auto files = gpulock::lock::wheel_files(*p);
  REQUIRE(files.has_value());
  holder = std::move(*files);
  REQUIRE(holder.size() == 1);
  return &holder.begin()->second;
}

}  // namespace

TEST_CASE("resolve skips a cuDNN wheel whose own files leave a hazard unless it is pinned",
          "[resolve][gpu][files]") {
  fs::path dir = fresh_dir("cudnn-hazard");
  Options o;
  o.cwd = dir;
  const std::string hazard =
      "ships no libcudnn_engines_tensor_ir.so.9, which its libcudnn_graph.so.9 loads by name: "
      "another release's copy on the library path would be loaded "
      "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH at the first convolution)";

  // Unpinned: the newest, 9.20.0.48, is passed over (PEP 592's yanked semantics) for 9.19.0.56,
  // and --explain says why. (With NVRTC, which cuDNN dlopens and its wheel does not require: see
  // the companion test below.)
  Run r = resolve({"nvidia-cudnn-cu13", "nvidia-cuda-nvrtc", "--driver", "580.65.06", "--explain",
                   "-o", "pylock.toml"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(lock_versions(dir / "pylock.toml").at("nvidia-cudnn-cu13") == "9.19.0.56");
  CHECK(r.out.find("  skipped nvidia-cudnn-cu13 9.20.0.48: " + hazard +
                   " (used only when pinned with ==)\n") != std::string::npos);
  CHECK(r.err.find("warning:") == std::string::npos);
  gpulock::lock::WheelFilesMap held;
  const auto* rec = record_of(read_lock(dir / "pylock.toml"), "nvidia-cudnn-cu13", held);
  CHECK(rec->shared_libraries.size() == 8);
  CHECK(rec->missing_libraries.empty());

  // A range (>=9.20) that only the hazardous wheel meets: no solution, and the explanation says
  // what the wheel lacks instead of "yanked".
  Run range = resolve({"nvidia-cudnn-cu13>=9.20", "--driver", "580.65.06", "-o", "range.toml"}, o);
  INFO(describe(range));
  CHECK(range.status == 1);
  CHECK(range.err.find(hazard) != std::string::npos);
  CHECK(range.err.find("is yanked") == std::string::npos);

  // Pinned exactly by the user: locked, with a warning naming the wheel, the file and the
  // failure, and the hazard recorded in the lock.
  Run pinned = resolve({"nvidia-cudnn-cu13==9.20.0.48", "nvidia-cuda-nvrtc", "--driver",
                        "580.65.06", "-o", "pinned.toml"},
                       o);
  INFO(describe(pinned));
  REQUIRE(pinned.status == 0);
  CHECK(lock_versions(dir / "pinned.toml").at("nvidia-cudnn-cu13") == "9.20.0.48");
  CHECK(pinned.err.find(
            "warning: nvidia-cudnn-cu13 9.20.0.48 "
            "(nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl) " +
            hazard +
            "; it is locked because your requirement nvidia-cudnn-cu13==9.20.0.48 pins it "
            "exactly, and the lock records the missing libcudnn_engines_tensor_ir.so.9\n") !=
        std::string::npos);
  rec = record_of(read_lock(dir / "pinned.toml"), "nvidia-cudnn-cu13", held);
  CHECK(rec->missing_libraries == std::vector<std::string>{"libcudnn_engines_tensor_ir.so.9"});
  CHECK(rec->shared_libraries.size() == 8);

  // Pinned by torch 2.12.1+cu130: torch stays (the hazard never moves another package's
  // version), and the warning names the pin.
  o.setuptools_from_pypi = true;
  Run torch = resolve(
      {"torch==2.12.1", "--torch-backend", "cu130", "--driver", "580.65.06", "-o", "torch.toml"},
      o);
  INFO(describe(torch));
  REQUIRE(torch.status == 0);
  auto versions = lock_versions(dir / "torch.toml");
  CHECK(versions.at("torch") == "2.12.1+cu130");
  CHECK(versions.at("nvidia-cudnn-cu13") == "9.20.0.48");
  CHECK(torch.err.find("; it is locked because torch 2.12.1+cu130 "
                       "(nvidia-cudnn-cu13==9.20.0.48) pins it exactly") != std::string::npos);
}

// Issue 44 item 2, "companions a library loads from the set": cuDNN dlopens libcublasLt and
// libnvrtc (gpu/data/library_rules.txt `needs` rows, from NVIDIA's cuDNN build-and-run page), and
// nvidia-cudnn-cu13 requires only nvidia-cublas. A set without NVRTC is locked with a warning and
// the file recorded as missing; with it, nothing is said.
TEST_CASE("a cuDNN set without the NVRTC cuDNN loads by name is locked with a warning",
          "[resolve][gpu][files]") {
  fs::path dir = fresh_dir("cudnn-companion");
  Options o;
  o.cwd = dir;
  Run alone =
      resolve({"nvidia-cudnn-cu13==9.19.0.56", "--driver", "580.65.06", "-o", "alone.toml"}, o);
  INFO(describe(alone));
  REQUIRE(alone.status == 0);
  CHECK(alone.err.find(
            "warning: nvidia-cudnn-cu13 9.19.0.56 "
            "(nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl) loads "
            "libnvrtc.so.13 by name (its libraries dlopen it when they need it), and the set has "
            "no nvidia-cuda-nvrtc and no other wheel shipping it: the machine's copy is loaded, "
            "or the load fails; the lock records the missing libnvrtc.so.13\n") !=
        std::string::npos);
  // cuBLAS comes with cuDNN's own requirement: nothing said of libcublasLt.
  CHECK(alone.err.find("libcublasLt") == std::string::npos);
  gpulock::lock::WheelFilesMap held;
  const auto* rec = record_of(read_lock(dir / "alone.toml"), "nvidia-cudnn-cu13", held);
  REQUIRE(rec != nullptr);
  CHECK(rec->missing_libraries == std::vector<std::string>{"libnvrtc.so.13"});

  Run with = resolve({"nvidia-cudnn-cu13==9.19.0.56", "nvidia-cuda-nvrtc", "--driver", "580.65.06",
                      "-o", "with.toml"},
                     o);
  INFO(describe(with));
  REQUIRE(with.status == 0);
  CHECK(with.err.find("warning:") == std::string::npos);
  rec = record_of(read_lock(dir / "with.toml"), "nvidia-cudnn-cu13", held);
  REQUIRE(rec != nullptr);
  CHECK(rec->missing_libraries.empty());
}

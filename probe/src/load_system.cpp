// The probe's plan for stacks that take CUDA from the system instead of wheels (issue 23): JAX's
// `cuda12-local` / `cuda13-local` extras install `jax-cudaNN-plugin` without the
// `nvidia-*-cuNN` wheels, and the plugin dlopens the CUDA runtime, cuBLAS and cuDNN by soname
// (shared/data/gpu-stacks.md §1). The probe is where those system libraries are verified: where
// the loader finds each soname (LD_LIBRARY_PATH, the ld.so cache, the system directories) and
// the version its file name carries. Files only: nothing is loaded.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "load_probe_impl.h"

namespace gpulock::probe::detail {

namespace {

// "libcudart.so.13.0.96" -> "13.0.96" (what follows ".so." in a file of that soname), else
// nullopt.
std::optional<VersionRead> version_from_name(const std::string& real_path,
                                             const std::string& soname) {
  std::string file = std::filesystem::path(real_path).filename().string();
  auto so = file.find(".so.");
  if (!file.starts_with(soname) || file.size() <= soname.size() || so == std::string::npos)
    return std::nullopt;
  return VersionRead{file.substr(so + 4), "file name"};
}

}  // namespace

void Probe::plan_system_libraries() {
  for (const auto& d : env_.distributions) {
    for (unsigned major : {12U, 13U}) {
      if (d.name != fmt::format("jax-cuda{}-plugin", major)) continue;
      // With the wheels (`jax[cudaNN]`), the plugin finds them in site-packages; without any of
      // them, it takes the system's.
      const std::string wheel = fmt::format("nvidia-cudnn-cu{}", major);
      bool wheels = std::any_of(env_.distributions.begin(), env_.distributions.end(),
                                [&](const InstalledDistribution& o) { return o.name == wheel; });
      if (wheels) continue;
      report_.system_stacks.push_back(fmt::format("{} {}", d.name, d.version));
      for (const std::string& soname :
           {fmt::format("libcudart.so.{}", major), fmt::format("libcublas.so.{}", major),
            std::string("libcudnn.so.9")}) {
        LibraryReport lib;
        lib.soname = soname;
        lib.name = soname.substr(3, soname.find('.') - 3);
        lib.loaded_by = fmt::format("{} {}", d.name, d.version);
        auto hit = loader_.find(soname, "", nullptr);
        if (hit) {
          lib.path = hit->path;
          std::error_code ec;
          auto real = std::filesystem::canonical(hit->path, ec);
          lib.real_path = ec ? hit->path : real.string();
          lib.found_via = hit->via;
          lib.search_entry = hit->entry;
          lib.version = version_from_name(*lib.real_path, soname);
          lib.load = LoadOutcome::NotRun;
        } else {
          lib.load = LoadOutcome::NotFound;
        }
        report_.system_libraries.push_back(std::move(lib));
      }
    }
  }
}

}  // namespace gpulock::probe::detail

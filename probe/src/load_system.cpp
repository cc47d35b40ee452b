// The probe's plan for stacks that take CUDA from the system instead of wheels (issue 23): JAX's
// `cuda12-local` / `cuda13-local` extras install `jax-cudaNN-plugin` without the
// `nvidia-*-cuNN` wheels, and the plugin dlopens the CUDA runtime, cuBLAS and cuDNN by soname
// (shared/data/gpu-stacks.md §1). The probe is where those system libraries are verified: where
// the loader finds each soname (LD_LIBRARY_PATH, the ld.so cache, the system directories) and
// the version its file name carries. Every other stack's shared objects (CuPy, JAX's plugin with
// the wheels, TensorFlow, ...) are read too: where the loader finds, from each of them, the CUDA
// libraries it links or reaches into the environment's wheel directories for. Files only: nothing
// is loaded here (the child loads the wheels' libraries themselves as torch's preloads).
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
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

// A CUDA library's soname ("libcudart.so.12", "libcublasLt.so.13"): the libraries the nvidia-*
// wheels ship, by prefix; never the driver's (libcuda.so.1, libnvidia-ml.so.1), which come from
// the system by design.
bool is_cuda_library(std::string_view soname) {
  static constexpr std::string_view kPrefixes[] = {
      "libcudart.so.",     "libcublas.so.",     "libcublasLt.so.",     "libcudnn.so.",
      "libnccl.so.",       "libcufft.so.",      "libcurand.so.",       "libcusolver.so.",
      "libcusparse.so.",   "libnvrtc.so.",      "libnvJitLink.so.",    "libcupti.so.",
      "libnvToolsExt.so.", "libcusparseLt.so.", "libnvshmem_host.so.", "libcufile.so.",
      "libnvjpeg.so.",     "libnvinfer.so."};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view p) { return soname.starts_with(p); });
}

}  // namespace

void Probe::plan_stack_libraries() {
  // The sonames the environment's nvidia-* wheels ship (RECORD), with the file and its wheel.
  struct Shipped {
    std::string path;
    const InstalledDistribution* wheel;
  };
  std::map<std::string, Shipped, std::less<>> shipped;
  for (const auto& d : env_.distributions) {
    if (!d.name.starts_with("nvidia-")) continue;
    for (const auto& rel : d.libraries) {
      std::string name = basename_of(rel);
      // cuDNN's sub-libraries are loaded by libcudnn itself (checked from there).
      if (name.find(".so.") == std::string::npos || name.starts_with("libcudnn_")) continue;
      shipped.try_emplace(name, Shipped{(d.site_packages / rel).string(), &d});
    }
  }
  constexpr std::size_t kMaxObjects = 4096;  // bounds the reading of a huge environment
  std::size_t objects = 0;
  // One entry per stack and soname; an object that finds it outside replaces one that does not.
  std::map<std::pair<std::string, std::string>, LibraryReport> found;
  for (const auto& d : env_.distributions) {
    // torch's libraries are opened by path first (its preloads, planned above); the wheels are
    // what is looked for.
    if (d.name.starts_with("nvidia-") || d.name == "torch") continue;
    for (const auto& rel : d.libraries) {
      if (++objects > kMaxObjects) break;
      const std::string path = (d.site_packages / rel).string();
      auto elf = detail::read_elf(path);
      if (!elf || !elf->compatible) continue;
      const std::string origin = dirname_of(path);
      // The directories the object's RPATH/RUNPATH lead to, canonical.
      std::set<std::string> route;
      for (const auto* list : {&elf->rpath, &elf->runpath}) {
        if (!*list) continue;
        for (const auto& entry : detail::split_path_list(**list)) {
          if (auto dir = detail::expand_origin(entry, origin)) route.insert(canonical(*dir));
        }
      }
      std::vector<std::pair<std::string, bool>> wanted;  // soname, DT_NEEDED
      for (const auto& n : elf->needed) {
        if (is_cuda_library(n) || shipped.contains(n)) wanted.emplace_back(n, true);
      }
      for (const auto& entry : shipped) {
        // (Not a structured binding: clang 14 cannot capture one in a lambda.)
        const std::string& name = entry.first;
        bool linked = std::any_of(wanted.begin(), wanted.end(),
                                  [&](const auto& w) { return w.first == name; });
        if (!linked && route.contains(canonical(dirname_of(entry.second.path))))
          wanted.emplace_back(name, false);
      }
      for (const auto& [soname, needed] : wanted) {
        LibraryReport lib;
        lib.soname = soname;
        lib.loaded_by = fmt::format("{} {} ({})", d.display_name.empty() ? d.name : d.display_name,
                                    d.version, rel);
        lib.required = needed;
        if (auto it = shipped.find(soname); it != shipped.end()) {
          lib.wheel_dir = dirname_of(it->second.path);
          lib.name = basename_of(dirname_of(lib.wheel_dir));  // "cuda_runtime"
          lib.owner = owner_text(it->second.wheel);
          lib.in_wheel_dir = route.contains(canonical(lib.wheel_dir));
        }
        if (auto hit = loader_.find(soname, path, &*elf)) {
          lib.path = hit->path;
          lib.real_path = canonical(hit->path);
          lib.found_via = hit->via;
          lib.search_entry = hit->entry;
          lib.inside_environment = env_.contains(*lib.real_path);
          if (lib.inside_environment) lib.owner = owner_text(env_.owner_of(*lib.real_path));
          lib.version = version_from_name(*lib.real_path, soname);
        } else {
          lib.load = LoadOutcome::NotFound;
        }
        auto key = std::make_pair(lib.loaded_by.substr(0, lib.loaded_by.find(" (")), soname);
        auto at = found.find(key);
        bool worse = at != found.end() && at->second.inside_environment && !lib.inside_environment;
        if (at == found.end()) {
          found.emplace(key, std::move(lib));
        } else if (worse) {
          at->second = std::move(lib);
        }
      }
    }
  }
  for (auto& [key, lib] : found)
    report_.stack_libraries.push_back(std::move(lib));
}

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

// Step 1 of the load probe (load_probe_impl.h), in gpulock's process and from files alone: the
// loader's search (LD_LIBRARY_PATH, LD_PRELOAD, the ld.so cache), the libraries torch preloads,
// and cuDNN's sub-libraries with where the loader finds each from the library that loads it.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <system_error>

#include <fmt/format.h>
#include <sys/stat.h>

#include "elf_file.h"
#include "ld_cache.h"
#include "load_probe_impl.h"

namespace gpulock::probe::detail {
namespace fs = std::filesystem;

namespace {

// torch/__init__.py `_preload_cuda_deps` (torch 2.7 - 2.13): (lib folder, file pattern
// "<prefix>*[0-9]"), in order; libcublasLt before libcublas so that a system cublasLt is not
// picked up through libcublas's RUNPATH (shared/research/standards-and-peers.md §C).
struct PreloadSpec {
  std::string_view folder;
  std::string_view prefix;
};
constexpr PreloadSpec kTorchPreloads[] = {
    {"cublas", "libcublasLt.so."},
    {"cublas", "libcublas.so."},
    {"cudnn", "libcudnn.so."},
    {"cuda_nvrtc", "libnvrtc.so."},
    {"cuda_nvrtc", "libnvrtc-builtins.so."},
    {"cuda_runtime", "libcudart.so."},
    {"cuda_cupti", "libcupti.so."},
    {"cufft", "libcufft.so."},
    {"curand", "libcurand.so."},
    {"nvjitlink", "libnvJitLink.so."},
    {"cusparse", "libcusparse.so."},
    {"cusparselt", "libcusparseLt.so."},
    {"cusolver", "libcusolver.so."},
    {"nccl", "libnccl.so."},
    {"nvshmem", "libnvshmem_host.so."},
    {"cufile", "libcufile.so."},
    {"nvtx", "libnvToolsExt.so."},
};

const std::vector<std::string> kVersionFunctions = {"cudnnGetVersion", "cudnnGetCudartVersion",
                                                    "cudnnGetMaxDeviceVersion"};

bool is_regular_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

void Probe::setup_loader() {
  char buf[4096];
  if (::getcwd(buf, sizeof buf) != nullptr) loader_.cwd = buf;
  loader_.ld_library_path = detail::split_path_list(options_.ld_library_path, ":;");
  report_.ld_library_path = loader_.ld_library_path;
  for (auto& e : detail::split_path_list(options_.ld_preload, ": \t")) {
    if (!e.empty()) report_.ld_preload.push_back(std::move(e));
  }
  if (std::any_of(loader_.ld_library_path.begin(), loader_.ld_library_path.end(),
                  [](const std::string& e) { return e.empty(); })) {
    report_.warnings.push_back(
        "LD_LIBRARY_PATH has an empty entry, which the loader reads as the current directory");
  }
  report_.ld_cache = options_.ld_cache;
  if (auto cache = detail::LdCache::read(options_.ld_cache)) {
    loader_.cache = std::move(*cache);
    report_.ld_cache_read = true;
  } else {
    report_.warnings.push_back(
        fmt::format("the ld.so cache could not be read ({}); the "
                    "prediction leaves it out",
                    cache.error().to_string()));
  }
  loader_.system_dirs =
      options_.system_dirs.empty() ? detail::default_system_dirs() : options_.system_dirs;
}

// The CUDA majors whose `nvidia/cuNN/lib` torch searches: torch.version.cuda's, or every
// cuNN folder present when torch does not say.
std::vector<std::string> Probe::cuda_folders() const {
  std::vector<std::string> out;
  if (env_.torch && env_.torch->cuda) {
    auto dot = env_.torch->cuda->find('.');
    out.push_back("cu" + env_.torch->cuda->substr(0, dot));
    return out;
  }
  for (const auto& d : env_.library_dirs) {
    if (d.folder.size() > 2 && d.folder.starts_with("cu") &&
        std::all_of(d.folder.begin() + 2, d.folder.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
        std::find(out.begin(), out.end(), d.folder) == out.end()) {
      out.push_back(d.folder);
    }
  }
  return out;
}

void Probe::plan_preloads() {
  const auto cu_folders = cuda_folders();
  for (const auto& spec : kTorchPreloads) {
    std::optional<std::string> found;
    for (const auto& site : env_.site_packages) {
      std::vector<std::string> dirs = {(site / "nvidia" / spec.folder / "lib").string()};
      for (const auto& cu : cu_folders)
        dirs.push_back((site / "nvidia" / cu / "lib").string());
      for (const auto& dir : dirs) {
        std::vector<std::string> matches;
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
          std::string name = it->path().filename().string();
          if (name.starts_with(spec.prefix) && name.size() > spec.prefix.size() &&
              std::isdigit(static_cast<unsigned char>(name.back()))) {
            matches.push_back(it->path().string());
          }
        }
        if (!matches.empty()) {
          std::sort(matches.begin(), matches.end());
          found = matches.front();
          break;
        }
      }
      if (found) break;
    }
    if (!found) continue;
    LibraryReport lib;
    lib.soname = basename_of(*found);
    lib.name = std::string(spec.folder);
    lib.in_wheel_dir = true;
    lib.wheel_dir = dirname_of(*found);
    lib.path = *found;
    lib.real_path = canonical(*found);
    lib.found_via = FoundVia::AbsolutePath;
    lib.inside_environment = env_.contains(*found);
    lib.owner = owner_text(env_.owner_of(*found));
    if (spec.folder == "cudnn" && plan_.cudnn_index < 0) {
      plan_.cudnn_index = static_cast<int>(report_.preloads.size());
      report_.cudnn_found = true;
      report_.cudnn_library = *found;
      if (const auto* owner = env_.owner_of(*found)) {
        report_.cudnn_distribution = owner->display_name;
        report_.cudnn_distribution_version = owner->version;
      }
    }
    if (spec.prefix == "libcudart.so." && plan_.cudart.empty()) plan_.cudart = *found;
    plan_.preloads.push_back(*found);
    report_.preloads.push_back(std::move(lib));
  }
  plan_.run_kernels = options_.run_kernels;
  report_.kernels.requested = options_.run_kernels;
  report_.kernels.cudart = plan_.cudart;
}

void Probe::plan_sublibraries() {
  if (!report_.cudnn_found) return;
  const std::string& shim = report_.cudnn_library;
  const std::string dir = dirname_of(shim);
  const std::string shim_name = basename_of(shim);
  std::uint32_t major = 0;
  {
    auto at = shim_name.find(".so.");
    std::string rest = shim_name.substr(at + 4);
    std::from_chars(rest.data(), rest.data() + rest.size(), major);
  }
  // The files the owning wheel's RECORD lists next to libcudnn, and those in the directory
  // itself (a directory copied by hand, a conda or vendored layout has no RECORD that lists its
  // files, and a file copied into a wheel's directory is in none).
  std::vector<std::string> recorded, present;
  const auto* owner = env_.owner_of(shim);
  if (owner != nullptr && owner->has_record) {
    const std::string canon_dir = canonical(dir);
    for (const auto& rel : owner->libraries) {
      std::string p = (owner->site_packages / rel).string();
      if (canonical(dirname_of(p)) == canon_dir) recorded.push_back(basename_of(rel));
    }
  }
  {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (!name.starts_with("libcudnn")) continue;
      present.push_back(name);
      // The files the loader asks for by soname (not the toolkit's unversioned links).
      if (name.ends_with(fmt::format(".so.{}", major)) && env_.owner_of(it->path()) == nullptr)
        report_.cudnn_unrecorded.push_back(name);
    }
    std::sort(present.begin(), present.end());
    std::sort(report_.cudnn_unrecorded.begin(), report_.cudnn_unrecorded.end());
  }
  // The version to plan with: the files' own (the version object libcudnn_graph, ops or adv
  // exports), else the owning cuDNN wheel's, else the major alone.
  std::optional<CudnnVersion> version;
  for (const auto& [sub, symbol] :
       {std::pair<std::string, std::string>{"graph", "cudnn_graph_version"},
        {"ops", "cudnn_ops_infer_version"},
        {"adv", "cudnn_adv_infer_version"}}) {
    const std::string file = fmt::format("libcudnn_{}.so.{}", sub, major);
    auto bytes = detail::read_symbol_bytes(join(dir, file), symbol, 4);
    auto v = bytes ? CudnnVersion::from_symbol_bytes(*bytes) : std::nullopt;
    if (v && v->major == major) {
      version = v;
      report_.cudnn_plan_version =
          VersionRead{v->to_string(), fmt::format("{} of {}", symbol, file)};
      break;
    }
  }
  if (!version && owner != nullptr && owner->name.starts_with("nvidia-cudnn-")) {
    auto v = CudnnVersion::from_text(owner->version);
    if (v && v->major == major) {
      version = v;
      report_.cudnn_plan_version =
          VersionRead{v->to_string(), fmt::format("the version of {}", owner_text(owner))};
    }
  }
  if (!version) version = CudnnVersion{major, 0, 0};

  auto subs = cudnn_sublibraries(*version, recorded, present);
  // Libraries libcudnn loads first: the graph library's location decides its RUNPATH origin.
  std::stable_partition(subs.begin(), subs.end(),
                        [&](const CudnnSublibrary& s) { return s.loaded_by == shim_name; });

  auto shim_elf = detail::read_elf(shim);
  std::map<std::string, std::pair<std::string, std::optional<ElfInfo>>> callers;
  callers[shim_name] = {shim, shim_elf ? std::optional<ElfInfo>(*shim_elf) : std::nullopt};

  for (const auto& s : subs) {
    LibraryReport lib;
    lib.soname = s.soname;
    lib.name = s.name;
    lib.loaded_by = s.loaded_by;
    lib.required = s.required;
    lib.table_source = s.source;
    lib.shipped_since = s.shipped_since;
    lib.recorded = std::find(recorded.begin(), recorded.end(), s.soname) != recorded.end();
    lib.wheel_dir = dir;
    lib.in_wheel_dir = is_regular_file(join(dir, s.soname));
    auto caller = callers.find(s.loaded_by);
    if (caller == callers.end()) {
      // The library that loads it was not found itself: nothing loads this one.
      lib.load = LoadOutcome::NotFound;
      lib.error = fmt::format("{} is not found, so nothing loads it", s.loaded_by);
    } else {
      const ElfInfo* elf = caller->second.second ? &*caller->second.second : nullptr;
      if (auto hit = loader_.find(s.soname, caller->second.first, elf)) {
        lib.path = hit->path;
        lib.real_path = canonical(hit->path);
        lib.found_via = hit->via;
        lib.search_entry = hit->entry;
        lib.inside_environment = env_.contains(hit->path);
        lib.owner = owner_text(env_.owner_of(hit->path));
        auto lib_elf = detail::read_elf(hit->path);
        callers[s.soname] = {hit->path, lib_elf ? std::optional<ElfInfo>(*lib_elf) : std::nullopt};
      } else {
        lib.load = LoadOutcome::NotFound;
      }
    }
    detail::ChildSublibrary child;
    if (lib.path) child.path = *lib.path;
    child.version_symbols = cudnn_version_symbols(s.name);
    plan_.sublibraries.push_back(std::move(child));
    report_.sublibraries.push_back(std::move(lib));
  }
  plan_.version_functions = kVersionFunctions;
  plan_.check_functions = cudnn_version_check_functions(major);
  for (const auto& fn : kVersionFunctions)
    report_.calls.push_back({fn, LoadOutcome::NotRun, {}, {}});
  for (const auto& fn : plan_.check_functions) {
    report_.version_checks.push_back({fn, LoadOutcome::NotRun, {}, {}});
  }
}

}  // namespace gpulock::probe::detail

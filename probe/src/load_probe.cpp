#include "gpulock/probe/load_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/probe/machine.h"
#include "gpulock/sys/process.h"

#include "elf_file.h"
#include "ld_cache.h"
#include "load_child.h"
#include "loader_search.h"

namespace gpulock::probe {
namespace fs = std::filesystem;
using detail::ElfInfo;

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

std::string canonical(const std::string& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p : c.string();
}

std::string dirname_of(const std::string& p) {
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string basename_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool is_regular_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string join(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

// "9.1.0" from "libcudnn_ops.so.9.1.0" (three or more numbers after ".so.").
std::optional<std::string> version_from_file_name(const std::string& path) {
  std::string file = basename_of(path);
  auto at = file.find(".so.");
  if (at == std::string::npos) return std::nullopt;
  std::string rest = file.substr(at + 4);
  if (rest.empty() || std::count(rest.begin(), rest.end(), '.') < 2) return std::nullopt;
  if (rest.find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
  return rest;
}

std::string owner_text(const InstalledDistribution* d) {
  return d == nullptr ? std::string() : fmt::format("{} {}", d->display_name, d->version);
}

std::optional<std::int64_t> to_int(const std::string& s) {
  std::int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return fmt::format("{} s", ms.count() / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(ms.count()) / 1000.0);
}

// Sub-library name from a file name: "libcudnn_ops.so.9" -> "ops"; "" for libcudnn itself.
std::optional<std::string> cudnn_part(const std::string& path) {
  std::string file = basename_of(path);
  if (!file.starts_with("libcudnn")) return std::nullopt;
  auto so = file.find(".so");
  if (so == std::string::npos) return std::nullopt;
  if (file.compare(0, 9, "libcudnn_") == 0) return file.substr(9, so - 9);
  return std::string();
}

// The probe's work, in one object for the planning, the child runs and the reading of results.
class Probe {
 public:
  Probe(const PythonEnvironment& env, const LoadProbeOptions& options)
      : env_(env), options_(options) {}

  LoadReport run() {
    setup_loader();
    plan_preloads();
    plan_sublibraries();
    if (!plan_.preloads.empty() || !plan_.sublibraries.empty()) run_children();
    fill_versions();
    return std::move(report_);
  }

 private:
  void setup_loader() {
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
  std::vector<std::string> cuda_folders() const {
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

  void plan_preloads() {
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

  void plan_sublibraries() {
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
    // The version to plan with: the owning wheel's, else libcudnn_graph's own, else the major.
    std::optional<CudnnVersion> version;
    if (!report_.cudnn_distribution_version.empty()) {
      version = CudnnVersion::from_text(report_.cudnn_distribution_version);
    }
    if (!version) {
      if (auto bytes = detail::read_symbol_bytes(
              join(dir, fmt::format("libcudnn_graph.so.{}", major)), "cudnn_graph_version", 4)) {
        version = CudnnVersion::from_symbol_bytes(*bytes);
      }
    }
    if (!version || version->major != major) version = CudnnVersion{major, 0, 0};

    // The files the wheel lists next to libcudnn (RECORD), else those in the directory.
    std::vector<std::string> listed;
    const auto* owner = env_.owner_of(shim);
    if (owner != nullptr && owner->has_record) {
      const std::string canon_dir = canonical(dir);
      for (const auto& rel : owner->libraries) {
        std::string p = (owner->site_packages / rel).string();
        if (canonical(dirname_of(p)) == canon_dir) listed.push_back(basename_of(rel));
      }
    } else {
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        listed.push_back(it->path().filename().string());
      }
      std::sort(listed.begin(), listed.end());
    }
    auto subs = cudnn_sublibraries(*version, listed);
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
          callers[s.soname] = {hit->path,
                               lib_elf ? std::optional<ElfInfo>(*lib_elf) : std::nullopt};
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

  CudnnCall* call_named(std::vector<CudnnCall>& calls, const std::string& fn) {
    for (auto& c : calls) {
      if (c.function == fn) return &c;
    }
    return nullptr;
  }

  std::optional<std::size_t> index_field(const std::string& text, std::size_t size) {
    auto v = to_int(text);
    if (!v || *v < 0 || static_cast<std::size_t>(*v) >= size) return std::nullopt;
    return static_cast<std::size_t>(*v);
  }

  // Applies one protocol line of a run.
  void apply(const std::vector<std::string>& f) {
    const std::string& tag = f[0];
    auto at = [&](std::size_t i) -> const std::string& {
      static const std::string empty;
      return i < f.size() ? f[i] : empty;
    };
    if (tag == "preload") {
      if (auto i = index_field(at(1), report_.preloads.size())) {
        auto& lib = report_.preloads[*i];
        lib.load = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
        lib.error = at(3);
      }
    } else if (tag == "call") {
      if (auto* c = call_named(report_.calls, at(1))) {
        c->outcome = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
        c->value = to_int(at(3));
        c->detail = at(2) == "ok" ? "" : "the function is not exported";
      }
    } else if (tag == "check") {
      if (auto* c = call_named(report_.version_checks, at(1))) {
        c->outcome = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
        c->value = to_int(at(3));
        c->detail = c->value ? cudnn_status_name(static_cast<int>(*c->value))
                             : "the function is not exported";
      }
    } else if (tag == "create") {
      CudnnCall c{"cudnnCreate", LoadOutcome::Ok, to_int(at(1)), {}};
      if (at(1) == "absent") {
        c.outcome = LoadOutcome::Failed;
        c.detail = "the function is not exported";
      } else if (c.value) {
        c.detail = cudnn_status_name(static_cast<int>(*c.value));
        report_.kernels.gpu_usable = *c.value == 0;
        if (*c.value != 0) {
          report_.kernels.reason = fmt::format("cudnnCreate returned {}", c.detail);
          if (!at(2).empty()) report_.kernels.reason += fmt::format(" ({})", at(2));
        }
      }
      report_.kernels.steps.push_back(std::move(c));
    } else if (tag == "kstep") {
      CudnnCall c{at(1), LoadOutcome::Ok, to_int(at(2)), at(3)};
      if (!c.value || *c.value != 0) c.outcome = LoadOutcome::Failed;
      if (c.value && *c.value > 0 && at(1).starts_with("cudnn")) {
        c.detail = cudnn_status_name(static_cast<int>(*c.value));
      } else if (c.value && *c.value == 0 && at(1).starts_with("cudnn")) {
        c.detail = cudnn_status_name(0);
      }
      report_.kernels.steps.push_back(std::move(c));
    } else if (tag == "kresult") {
      report_.kernels.result_correct = at(1) == "ok";
      if (at(1) != "ok")
        report_.kernels.reason = fmt::format("the convolution gave {}, not 27", at(2));
    } else if (tag == "map") {
      MappedLibrary m;
      m.path = at(3);
      m.inside_environment = env_.contains(m.path);
      m.owner = owner_text(env_.owner_of(m.path));
      report_.mapped.push_back(std::move(m));
    } else if (tag == "lib") {
      if (auto j = index_field(at(1), report_.sublibraries.size())) {
        auto& lib = report_.sublibraries[*j];
        lib.load = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
        lib.error = at(3);
      }
    } else if (tag == "libver") {
      if (auto j = index_field(at(1), report_.sublibraries.size())) {
        report_.sublibraries[*j].version = VersionRead{at(2), at(3)};
      }
    }
  }

  // Records a crash or hang in the step with this key.
  void mark(const std::string& key, const std::string& text, LoadOutcome outcome,
            const std::string& detail) {
    auto suffix = [&](std::string_view prefix) -> std::optional<std::string> {
      if (!key.starts_with(prefix)) return std::nullopt;
      return key.substr(prefix.size());
    };
    if (auto i = suffix("preload:")) {
      if (auto n = index_field(*i, report_.preloads.size())) {
        report_.preloads[*n].load = outcome;
        report_.preloads[*n].error = detail;
      }
    } else if (auto fn = suffix("call:")) {
      if (auto* c = call_named(report_.calls, *fn)) {
        c->outcome = outcome;
        c->detail = detail;
      }
    } else if (auto cf = suffix("check:")) {
      if (auto* c = call_named(report_.version_checks, *cf)) {
        c->outcome = outcome;
        c->detail = detail;
      }
    } else if (key == "create" || key.starts_with("kernel:")) {
      report_.kernels.steps.push_back(
          {key == "create" ? std::string("cudnnCreate") : text, outcome, std::nullopt, detail});
      if (key == "create") report_.kernels.reason = fmt::format("cudnnCreate {}", detail);
    } else if (auto j = suffix("lib:")) {
      if (auto n = index_field(*j, report_.sublibraries.size())) {
        report_.sublibraries[*n].load = outcome;
        report_.sublibraries[*n].error = detail;
      }
    }
  }

  void run_children() {
    constexpr int kMaxRuns = 4;
    for (int run = 0; run < kMaxRuns; ++run) {
      // Each run starts from a clean slate except for what earlier runs marked as crashed.
      reset_for_run();
      detail::ChildPlan plan = plan_;
      plan.skip = skip_;
      auto child = sys::ChildProcess::fork_call([&plan](int fd) { detail::run_child(plan, fd); });
      if (!child) {
        report_.runs.push_back({LoadOutcome::Failed, "", child.error().message});
        return;
      }
      auto results = sys::wait_all({&*child}, options_.timeout);
      const auto& result = results.front();
      std::string last_key, last_text;
      bool done = false;
      std::size_t start = 0;
      const std::string& out = result.out;
      while (start < out.size()) {
        auto nl = out.find('\n', start);
        if (nl == std::string::npos) break;  // a torn last line
        auto fields = detail::split_fields(std::string_view(out).substr(start, nl - start));
        start = nl + 1;
        if (fields.empty()) continue;
        if (fields[0] == "step" && fields.size() >= 3) {
          last_key = fields[1];
          last_text = fields[2];
        } else if (fields[0] == "done") {
          done = true;
        } else {
          apply(fields);
        }
      }
      // The last step key is the kernel's group key for skipping.
      std::string skip_key = last_key.starts_with("kernel:") ? "kernel" : last_key;
      ChildRun r;
      if (result.end == sys::ChildResult::End::TimedOut) {
        r = {LoadOutcome::TimedOut, last_text,
             fmt::format("no answer after {}; killed", seconds_text(options_.timeout))};
      } else if (result.end == sys::ChildResult::End::Signaled) {
        r = {LoadOutcome::Crashed, last_text,
             fmt::format("died of {}", sys::signal_name(result.code))};
      } else if (!done || result.code != 0) {
        r = {LoadOutcome::Failed, last_text,
             fmt::format("exited with status {}", result.code)};
      } else {
        r = {LoadOutcome::Ok, "", ""};
      }
      if (r.outcome != LoadOutcome::Ok) {
        std::string detail_text = r.detail;
        if (auto tail = last_lines(result.err, 3); !tail.empty()) detail_text += ": " + tail;
        crashes_.push_back({last_key, last_text, r.outcome, detail_text});
      }
      for (const auto& c : crashes_)
        mark(c.key, c.text, c.outcome, c.detail);
      report_.runs.push_back(std::move(r));
      if (report_.runs.back().outcome == LoadOutcome::Ok) return;
      if (last_key.empty() || skip_.contains(skip_key)) return;  // no progress possible
      skip_.insert(skip_key);
    }
  }

  static std::string last_lines(const std::string& text, std::size_t n) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
      auto nl = text.find('\n', start);
      std::string line =
          text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if (!line.empty()) lines.push_back(line);
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    std::string out;
    for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
      out += (out.empty() ? "" : " | ") + lines[i];
    }
    return out;
  }

  void reset_for_run() {
    for (auto& l : report_.preloads) {
      l.load = LoadOutcome::NotRun;
      l.error.clear();
    }
    for (auto& l : report_.sublibraries) {
      if (l.path) {
        l.load = LoadOutcome::NotRun;
        l.error.clear();
      }
      l.version.reset();
    }
    for (auto& c : report_.calls)
      c = {c.function, LoadOutcome::NotRun, {}, {}};
    for (auto& c : report_.version_checks)
      c = {c.function, LoadOutcome::NotRun, {}, {}};
    report_.kernels.steps.clear();
    report_.kernels.gpu_usable = false;
    report_.kernels.reason.clear();
    report_.kernels.result_correct.reset();
    report_.mapped.clear();
  }

  // Version of a file that did not report one while loaded: its own symbol read from the file,
  // the version in its file name, the wheel that owns it, or the cuDNN next to it.
  std::optional<VersionRead> version_of_file(const std::string& path, const std::string& part,
                                             bool is_cudnn) {
    const std::string real = canonical(path);
    if (!part.empty()) {
      for (const auto& sym : cudnn_version_symbols(part)) {
        if (auto bytes = detail::read_symbol_bytes(real, sym, 4)) {
          if (auto v = CudnnVersion::from_symbol_bytes(*bytes)) {
            return VersionRead{v->to_string(), sym + " (read from the file)"};
          }
        }
      }
    }
    if (auto v = version_from_file_name(real)) return VersionRead{*v, "file name"};
    if (const auto* owner = env_.owner_of(path)) {
      // A cuDNN file has its release's three-part version; the wheel adds a fourth part.
      std::string text = owner->version;
      if (is_cudnn) {
        if (auto v = CudnnVersion::from_text(owner->version)) text = v->to_string();
      }
      return VersionRead{text, fmt::format("RECORD of {} {}", owner->display_name, owner->version)};
    }
    const std::string file = basename_of(path);
    const auto so = file.find(".so.");
    if (!part.empty() && part != "graph" && so != std::string::npos) {
      const std::string graph_major = file.substr(so + 4, file.find('.', so + 4) - (so + 4));
      std::string sibling = join(dirname_of(real), "libcudnn_graph.so." + graph_major);
      if (auto bytes = detail::read_symbol_bytes(sibling, "cudnn_graph_version", 4)) {
        if (auto v = CudnnVersion::from_symbol_bytes(*bytes)) {
          return VersionRead{
              v->to_string(),
              fmt::format("cuDNN in the same directory (libcudnn_graph.so.{})", graph_major)};
        }
      }
    }
    return std::nullopt;
  }

  void fill_versions() {
    for (const auto& c : report_.calls) {
      if (c.outcome != LoadOutcome::Ok || !c.value) continue;
      auto v = static_cast<std::uint64_t>(*c.value);
      if (c.function == "cudnnGetVersion") {
        report_.cudnn_version_raw = v;
        report_.cudnn_version = CudnnVersion::from_runtime(v);
      } else if (c.function == "cudnnGetCudartVersion") {
        report_.cudart_version_raw = v;
      } else if (c.function == "cudnnGetMaxDeviceVersion") {
        report_.max_device_version_raw = v;
      }
    }
    std::map<std::string, VersionRead> by_real_path;
    for (auto& lib : report_.preloads) {
      if (plan_.cudnn_index >= 0 &&
          &lib == &report_.preloads[static_cast<std::size_t>(plan_.cudnn_index)] &&
          report_.cudnn_version) {
        lib.version = VersionRead{report_.cudnn_version->to_string(), "cudnnGetVersion"};
      } else if (lib.path) {
        lib.version = version_of_file(*lib.path, cudnn_part(*lib.path).value_or(""),
                                      cudnn_part(*lib.path).has_value());
      }
      if (lib.version && lib.real_path) by_real_path[*lib.real_path] = *lib.version;
    }
    for (auto& lib : report_.sublibraries) {
      if (!lib.path) continue;
      if (!lib.version) lib.version = version_of_file(*lib.path, lib.name, true);
      if (lib.version && lib.real_path) by_real_path[*lib.real_path] = *lib.version;
    }
    for (auto& m : report_.mapped) {
      auto it = by_real_path.find(m.path);
      if (it != by_real_path.end()) {
        m.version = it->second;
      } else {
        m.version = version_of_file(m.path, cudnn_part(m.path).value_or(""),
                                    cudnn_part(m.path).has_value());
      }
    }
    std::sort(report_.mapped.begin(), report_.mapped.end(),
              [](const MappedLibrary& a, const MappedLibrary& b) {
                return std::pair(!a.inside_environment, a.path) <
                       std::pair(!b.inside_environment, b.path);
              });
    // What libcudnn itself mapped for each sub-library, when it is not the planned file.
    for (auto& lib : report_.sublibraries) {
      const std::string prefix = fmt::format("libcudnn_{}.so", lib.name);
      for (const auto& m : report_.mapped) {
        if (!basename_of(m.path).starts_with(prefix)) continue;
        if (!lib.real_path || *lib.real_path != m.path) lib.actually_mapped = m.path;
        break;
      }
    }
  }

  struct Crash {
    std::string key, text;
    LoadOutcome outcome;
    std::string detail;
  };

  const PythonEnvironment& env_;
  const LoadProbeOptions& options_;
  detail::LoaderSearch loader_;
  detail::ChildPlan plan_;
  std::set<std::string> skip_;
  std::vector<Crash> crashes_;
  LoadReport report_;
};

}  // namespace

std::string_view found_via_name(FoundVia via) noexcept {
  switch (via) {
    case FoundVia::AbsolutePath:
      return "absolute path";
    case FoundVia::Rpath:
      return "RPATH";
    case FoundVia::LdLibraryPath:
      return "LD_LIBRARY_PATH";
    case FoundVia::Runpath:
      return "RUNPATH";
    case FoundVia::LdCache:
      return "ld.so cache";
    case FoundVia::SystemDir:
      return "system directory";
  }
  return "?";
}

std::string_view found_via_id(FoundVia via) noexcept {
  switch (via) {
    case FoundVia::AbsolutePath:
      return "absolute-path";
    case FoundVia::Rpath:
      return "rpath";
    case FoundVia::LdLibraryPath:
      return "ld-library-path";
    case FoundVia::Runpath:
      return "runpath";
    case FoundVia::LdCache:
      return "ld-cache";
    case FoundVia::SystemDir:
      return "system-dir";
  }
  return "?";
}

std::string_view load_outcome_name(LoadOutcome outcome) noexcept {
  switch (outcome) {
    case LoadOutcome::Ok:
      return "ok";
    case LoadOutcome::Failed:
      return "failed";
    case LoadOutcome::NotFound:
      return "not-found";
    case LoadOutcome::Crashed:
      return "crashed";
    case LoadOutcome::TimedOut:
      return "timeout";
    case LoadOutcome::NotRun:
      return "not-run";
  }
  return "?";
}

std::string_view severity_name(Severity s) noexcept {
  switch (s) {
    case Severity::Fail:
      return "fail";
    case Severity::Warn:
      return "warn";
    case Severity::Info:
      return "info";
  }
  return "?";
}

core::Result<LoadProbeOptions> load_probe_options_from_env() {
  LoadProbeOptions options;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) options.ld_library_path = llp;
  if (const char* pre = std::getenv("LD_PRELOAD")) options.ld_preload = pre;
  auto timeout = probe_timeout_from_env();
  if (!timeout) return std::unexpected(timeout.error());
  if (*timeout) options.timeout = **timeout;
  return options;
}

LoadReport run_load_probe(const PythonEnvironment& env, const LoadProbeOptions& options) {
  return Probe(env, options).run();
}

}  // namespace gpulock::probe

// The environment's own verdict lines (load_probe.h `assess_load`): one member function of
// Assessment (assess_impl.h) for each kind of finding, called in the order the findings are
// reported; cuDNN's sub-libraries are assess_cudnn.cpp's.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "assess_impl.h"

namespace gpulock::probe::detail {

std::string dir_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// The loader's message without the path it starts with when that is the path already named
// ("/x/libcudnn_cnn.so.9: undefined symbol: f" -> "undefined symbol: f").
std::string loader_error(const LibraryReport& lib) {
  if (lib.path && lib.error.starts_with(*lib.path + ": ")) {
    return lib.error.substr(lib.path->size() + 2);
  }
  return lib.error;
}

// The LD_PRELOAD entry that names `mapped` (a path from /proc/self/maps): the same file, or, for
// an entry without a slash (which the loader looks up like a DT_NEEDED name), the same file name.
std::optional<std::string> preloaded_by(const LoadReport& report, const std::string& mapped) {
  namespace fs = std::filesystem;
  for (const auto& entry : report.ld_preload) {
    if (entry.find('/') == std::string::npos) {
      if (fs::path(mapped).filename() == entry) return entry;
      continue;
    }
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(entry, ec);
    if (entry == mapped || (!ec && canonical == fs::path(mapped))) return entry;
  }
  return std::nullopt;
}

std::string join_path(const std::string& dir, const std::string& file) {
  return dir.empty() ? file : dir + "/" + file;
}

std::string version_suffix(const std::optional<VersionRead>& v) {
  return v ? fmt::format(" ({})", v->text) : " (version unknown)";
}

// Where the other stacks' shared objects find the CUDA libraries they link or reach into the
// environment for (issue 23): from the environment (one info line per stack), shadowed by a file
// outside it, or nowhere.
void Assessment::stack_libraries() {
  std::map<std::string, std::vector<std::string>> inside;  // stack -> sonames
  for (const auto& lib : report.stack_libraries) {
    const std::string stack = lib.loaded_by.substr(0, lib.loaded_by.find(" ("));
    const std::string object = lib.loaded_by.substr(stack.size());  // " (cupy/x.so)"
    if (!lib.path) {
      add("stack-library-missing", Severity::Fail, lib.soname,
          fmt::format("{}{} {} {}, and the loader finds it nowhere{}", stack, object,
                      lib.required ? "links" : "loads", lib.soname,
                      lib.owner.empty() ? std::string()
                                        : fmt::format(" ({} lists it in {}, but the file is gone)",
                                                      lib.owner, lib.wheel_dir)),
          lib.owner.empty()
              ? fmt::format("install the nvidia-* wheel that ships {} (the CUDA extra of {}), or "
                            "lock the stack with gpulock so that the lock names it",
                            lib.soname, stack.substr(0, stack.find(' ')))
              : fmt::format("reinstall {} (`gpulock install`)", lib.owner));
      continue;
    }
    if (lib.inside_environment) {
      inside[stack].push_back(lib.soname);
      continue;
    }
    const std::string via =
        std::string(found_via_name(lib.found_via.value_or(FoundVia::SystemDir)));
    const std::string where =
        lib.search_entry.empty() ? via : fmt::format("{} {}", via, lib.search_entry);
    if (lib.owner.empty()) {
      add("stack-library-system", Severity::Warn, lib.soname,
          fmt::format("{}{} links {}, which no wheel of the environment ships: the loader takes "
                      "{}{} ({})",
                      stack, object, lib.soname, lib.real_path.value_or(*lib.path),
                      version_suffix(lib.version), where),
          fmt::format("its version is not in the lock: add the CUDA extra of {} so that a wheel "
                      "ships {}",
                      stack.substr(0, stack.find(' ')), lib.soname));
      continue;
    }
    std::string hint;
    switch (lib.found_via.value_or(FoundVia::SystemDir)) {
      case FoundVia::LdLibraryPath:
        hint = fmt::format(
            "LD_LIBRARY_PATH lists {}, which the loader searches before the RUNPATH that leads "
            "to the wheel's {}: remove it from LD_LIBRARY_PATH",
            lib.search_entry, lib.wheel_dir);
        break;
      case FoundVia::Rpath:
      case FoundVia::Runpath:
        hint = fmt::format("its {} entry {} leads outside the environment first: reinstall {}", via,
                           lib.search_entry, stack.substr(0, stack.find(' ')));
        break;
      default:
        hint = fmt::format(
            "nothing leads the loader from {} to the wheel's {}: it takes the system's copy "
            "unless another import loads the wheel's first; import torch (or the stack's own "
            "preload) first, or remove the system copy from the loader's path",
            stack.substr(0, stack.find(' ')), lib.wheel_dir);
    }
    // With an RPATH/RUNPATH entry to the wheel's directory the object means the wheel's copy:
    // another file wins, a fail. Without one, which copy it gets depends on what loaded first.
    add("stack-library-outside", lib.in_wheel_dir ? Severity::Fail : Severity::Warn, lib.soname,
        fmt::format("{}{} {} {} from {}{} through {}, not the environment's {} ({})", stack, object,
                    lib.required ? "links" : "loads", lib.soname, lib.real_path.value_or(*lib.path),
                    version_suffix(lib.version), where, join_path(lib.wheel_dir, lib.soname),
                    lib.owner),
        hint);
  }
  for (const auto& [stack, sonames] : inside) {
    add("stack-libraries", Severity::Info, stack,
        fmt::format("{} finds {} in the environment", stack, fmt::join(sonames, ", ")), "");
  }
}

// A stack that takes CUDA from the system (JAX's -local extras, issue 23): each library it
// dlopens must be found by the loader; where it was found, and its version, is said once per
// stack.
void Assessment::system_libraries() {
  std::map<std::string, std::vector<const LibraryReport*>> by_stack;
  for (const auto& lib : report.system_libraries)
    by_stack[lib.loaded_by].push_back(&lib);
  for (const auto& [stack, libs] : by_stack) {
    std::vector<std::string> found, missing;
    for (const auto* lib : libs) {
      if (!lib->path) {
        missing.push_back(lib->soname);
        continue;
      }
      found.push_back(fmt::format("{} {} ({}{})", lib->soname, lib->real_path.value_or(*lib->path),
                                  found_via_name(lib->found_via.value_or(FoundVia::SystemDir)),
                                  lib->version ? ", " + lib->version->text : std::string()));
    }
    const std::string major = stack.substr(8, stack.find('-', 8) - 8);  // "jax-cuda12-plugin"
    if (!missing.empty()) {
      add("system-cuda-missing", Severity::Fail, stack,
          fmt::format("{} takes CUDA {} from the system (jax[cuda{}-local]), and the loader "
                      "finds no {}",
                      stack, major, major, fmt::join(missing, ", ")),
          fmt::format("install CUDA {} and cuDNN 9 on the system (on LD_LIBRARY_PATH or in the "
                      "ld.so cache), or use the wheels: jax[cuda{}]",
                      major, major));
    } else {
      add("system-cuda", Severity::Info, stack,
          fmt::format("{} takes CUDA {} from the system: {}", stack, major, fmt::join(found, "; ")),
          "");
    }
  }
}

// The CUDA major of an installed nvidia-* wheel (issue 23): its `-cu11`/`-cu12`/`-cu13` suffix,
// or 13 for an unsuffixed one whose RECORD installs into `nvidia/cu13/` (CUDA 13's toolkit
// wheels); nullopt otherwise.
std::optional<unsigned> installed_cuda_major(const InstalledDistribution& d) {
  if (!d.name.starts_with("nvidia-")) return std::nullopt;
  for (unsigned major : {11U, 12U, 13U}) {
    if (d.name.ends_with(fmt::format("-cu{}", major))) return major;
  }
  for (const auto& lib : d.libraries) {
    if (lib.starts_with("nvidia/cu13/")) return 13U;
  }
  return std::nullopt;
}

// One CUDA major among the nvidia-* libraries of the environment (issue 23): a CUDA 12 and a
// CUDA 13 cuDNN (or NCCL) install the same nvidia/<lib>/lib files, and the loser's libraries
// are overwritten; the other majors' wheels are named.
void Assessment::cuda_majors() {
  std::map<unsigned, const InstalledDistribution*> first_of;
  for (const auto& d : env.distributions) {
    if (auto major = installed_cuda_major(d)) first_of.try_emplace(*major, &d);
  }
  if (first_of.size() < 2) return;
  std::string names;
  for (const auto& [major, d] : first_of) {
    names +=
        fmt::format("{}{} {} (CUDA {})", names.empty() ? "" : " and ", d->name, d->version, major);
  }
  add("mixed-cuda-majors", Severity::Fail, first_of.rbegin()->second->name,
      fmt::format("libraries of two CUDA majors are installed: {}; wheels of one library from "
                  "both majors overwrite each other's nvidia/<lib>/lib files",
                  names),
      "lock one CUDA major for every stack (gpulock resolve refuses a mixed set) and reinstall "
      "into a fresh environment");
}

// The probe process itself.
void Assessment::probe_runs() {
  for (const auto& run : report.runs) {
    if (run.outcome == LoadOutcome::Ok) continue;
    const std::string where =
        run.step.empty() ? std::string("before its first step") : "while " + run.step;
    if (run.outcome == LoadOutcome::TimedOut) {
      add("probe-hung", Severity::Fail, run.step,
          fmt::format("The probe process hung {} ({}).", where, run.detail),
          "a library hangs when loaded or called here; run the same step under a debugger or "
          "with LD_DEBUG=libs, or raise GPULOCK_PROBE_TIMEOUT_MS if the machine is only slow");
    } else if (run.outcome == LoadOutcome::Crashed) {
      add("probe-crashed", Severity::Fail, run.step,
          fmt::format("The probe process crashed {} ({}).", where, run.detail),
          "the library crashes when loaded or called; reinstall the wheel that owns it, and check "
          "LD_LIBRARY_PATH for libraries it might pick up");
    } else {
      add("probe-failed", Severity::Fail, run.step,
          fmt::format("The probe process failed {} ({}).", where, run.detail),
          "a library ended the process; reinstall the wheel that owns it");
    }
  }
}

// Is there a cuDNN at all?
void Assessment::cudnn_presence() {
  if (!report.cudnn_found) {
    const InstalledDistribution* installed = nullptr;
    for (const auto& d : env.distributions) {
      if (d.name.starts_with("nvidia-cudnn-")) {
        installed = &d;
        break;
      }
    }
    if (installed != nullptr) {
      std::string listed;
      for (const auto& lib : installed->libraries) {
        auto slash = lib.rfind('/');
        std::string file = slash == std::string::npos ? lib : lib.substr(slash + 1);
        if (file.starts_with("libcudnn.so.")) listed = lib;
      }
      add("cudnn-library-missing", Severity::Fail, installed->name,
          fmt::format("{} {} is installed but {} is missing from {}.", installed->display_name,
                      installed->version, listed.empty() ? "libcudnn.so" : listed,
                      installed->site_packages.string()),
          fmt::format("reinstall it: `gpulock install`, or `pip install --force-reinstall "
                      "--no-deps {}=={}`",
                      installed->name, installed->version));
    } else if (env.torch && env.torch->cudnn_pin) {
      add("cudnn-not-installed", Severity::Fail, *env.torch->cudnn_package,
          fmt::format("torch {} needs {}=={}, which is not installed.", env.torch->version,
                      *env.torch->cudnn_package, *env.torch->cudnn_pin),
          "install the lock with `gpulock install`, or the pin with pip");
    } else {
      add("no-cudnn", Severity::Info, "",
          "No cuDNN wheel is installed here, so there is no cuDNN to load.", "");
    }
  }
}

// Preloads that do not load (crashes and hangs are reported above).
void Assessment::failed_preloads() {
  for (const auto& lib : report.preloads) {
    if (lib.load != LoadOutcome::Failed) continue;
    add("load-failed", Severity::Fail, lib.soname,
        fmt::format("{} does not load from {}: {}.", lib.soname, lib.path.value_or("?"),
                    loader_error(lib)),
        lib.owner.empty()
            ? std::string("reinstall the wheel that provides it")
            : fmt::format("reinstall {} and check that its dependencies are installed", lib.owner));
  }
}

// cuDNN's version functions that libcudnn does not export.
void Assessment::failed_calls() {
  for (const auto& c : report.calls) {
    if (c.outcome != LoadOutcome::Failed) continue;
    // Only cudnnGetVersion is in every cuDNN; the other two are newer.
    const bool essential = c.function == "cudnnGetVersion";
    add("cudnn-call-failed", essential ? Severity::Fail : Severity::Info, c.function,
        fmt::format("{} is not exported by {}.", c.function, report.cudnn_library),
        essential ? "this is not a cuDNN library gpulock knows; reinstall the cuDNN wheel" : "");
  }
}

// What libcudnn's own version checks said.
void Assessment::version_checks() {
  for (const auto& c : report.version_checks) {
    if (c.outcome != LoadOutcome::Ok || !c.value || *c.value == 0) continue;
    add("version-check", Severity::Fail, c.function,
        fmt::format("{} returned {}.", c.function, c.detail),
        *c.value == 1002 ? "a sub-library of another cuDNN release is loaded: see the lines about "
                           "where each library comes from"
                         : "a sub-library cannot be loaded: see the lines about where each "
                           "library comes from");
  }
}

// Anything else of cuDNN/CUDA mapped from outside.
void Assessment::mapped_outside() {
  for (const auto& m : report.mapped) {
    if (m.inside_environment || named.contains(m.path)) continue;
    if (auto entry = preloaded_by(report, m.path)) {
      add("mapped-outside", Severity::Fail, m.path,
          fmt::format("{}{} is mapped in the probe process because LD_PRELOAD lists {}, but it is "
                      "not part of the environment.",
                      m.path, version_suffix(m.version), *entry),
          fmt::format("LD_PRELOAD makes every process load {} before the environment's own "
                      "libraries, and a later lookup by soname takes it: remove it from "
                      "LD_PRELOAD",
                      *entry));
      continue;
    }
    add("mapped-outside", Severity::Fail, m.path,
        fmt::format("{}{} is mapped in the probe process but is not part of the environment.",
                    m.path, version_suffix(m.version)),
        "a library loads it by name from a system location; check LD_LIBRARY_PATH and the "
        "ld.so cache, or install the wheel that provides it");
  }
}

// torch's cuDNN rule (torch/backends/cudnn/__init__.py): same major, runtime minor >= the
// minor it was built with (the nvidia-cudnn-* version its wheel pins).
void Assessment::torch_rule() {
  if (env.torch && env.torch->cudnn_pin && cudnn) {
    auto built = CudnnVersion::from_text(*env.torch->cudnn_pin);
    if (built && (built->major != cudnn->major || cudnn->minor < built->minor)) {
      add("cudnn-version-rule", Severity::Fail, "torch",
          fmt::format("torch {} was built against cuDNN {}.{} (it pins {}=={}) but cuDNN {} "
                      "loads: torch needs the same major version and a minor version of at "
                      "least {}.{}.",
                      env.torch->version, built->major, built->minor, *env.torch->cudnn_package,
                      *env.torch->cudnn_pin, cudnn->to_string(), built->major, built->minor),
          fmt::format("install {}=={} (`gpulock install` installs the lock's pins)",
                      *env.torch->cudnn_package, *env.torch->cudnn_pin));
    }
  }
}

// The GPU.
void Assessment::gpu() {
  if (report.cudnn_found && !report.runs.empty()) {
    const auto& k = report.kernels;
    bool create_ran = std::any_of(k.steps.begin(), k.steps.end(), [](const CudnnCall& c) {
      return c.function == "cudnnCreate" && c.outcome == LoadOutcome::Ok;
    });
    if (create_ran && !k.gpu_usable) {
      add("no-gpu", Severity::Info, "",
          fmt::format("No GPU is usable here ({}), so the kernel check was not possible; this is "
                      "not a fault of the environment.",
                      k.reason),
          "run `gpulock probe --run-kernels` on a machine with an NVIDIA GPU to run a convolution");
    } else if (k.gpu_usable && k.requested) {
      auto bad = std::find_if(k.steps.begin(), k.steps.end(),
                              [](const CudnnCall& c) { return c.outcome != LoadOutcome::Ok; });
      if (bad != k.steps.end()) {
        add("kernel-failed", Severity::Fail, bad->function,
            fmt::format(
                "The kernel check failed: {} returned {}.", bad->function,
                bad->detail.empty() ? std::string(load_outcome_name(bad->outcome)) : bad->detail),
            "cuDNN loads but cannot run a convolution on this GPU; check the driver and the GPU "
            "architecture lines");
      } else if (k.result_correct && !*k.result_correct) {
        add("kernel-wrong", Severity::Fail, "cudnnConvolutionForward",
            fmt::format("The kernel check ran but {}.", k.reason),
            "the GPU computed a wrong result; check the driver and the GPU");
      } else if (k.result_correct) {
        add("kernel-ok", Severity::Info, "",
            "A 1x3x8x8 convolution ran on the GPU through cuDNN and gave the right result.", "");
      }
    } else if (k.gpu_usable) {
      add("gpu", Severity::Info, "", "cuDNN created a handle on the GPU.",
          "`gpulock probe --run-kernels` also runs a convolution");
    }
  }
}

}  // namespace gpulock::probe::detail

namespace gpulock::probe {

std::vector<Finding> assess_load(const PythonEnvironment& env, const LoadReport& report) {
  const std::string dist =
      report.cudnn_distribution.empty()
          ? std::string()
          : fmt::format("{} {}", report.cudnn_distribution, report.cudnn_distribution_version);
  std::optional<CudnnVersion> cudnn = report.cudnn_version;
  if (!cudnn && !report.cudnn_distribution_version.empty()) {
    cudnn = CudnnVersion::from_text(report.cudnn_distribution_version);
  }

  detail::Assessment a{env, report, dist, cudnn, {}, {}};
  a.probe_runs();
  a.cudnn_presence();
  a.failed_preloads();
  a.failed_calls();
  a.sublibraries();
  a.version_checks();
  a.mapped_outside();
  a.torch_rule();
  a.gpu();
  a.cuda_majors();
  a.system_libraries();
  a.stack_libraries();
  // Each finding once (issue 41 item 6): two checks that reach the same file and cause say it
  // in the same words.
  std::vector<Finding> out;
  for (auto& f : a.out) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const Finding& o) {
      return o.id == f.id && o.subject == f.subject && o.message == f.message && o.hint == f.hint;
    });
    if (!seen) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpulock::probe

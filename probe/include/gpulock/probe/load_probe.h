#pragma once
/// @file
/// The post-install load probe (DESIGN.md §Probe; issue "Post-install: `gpulock install` and the
/// cuDNN/CUDA load probe"): what really loads when torch imports and cuDNN runs, checked in a
/// child process so that a library that crashes or hangs becomes a reported failure.
///
/// Steps, each recorded:
///  1. Plan (in gpulock's process, reading files only): the libraries torch preloads from the
///     environment's wheel directories, in torch's order (torch/__init__.py
///     `_preload_cuda_deps`; standards-and-peers.md §C), with `libcudnn.so.N` among them; the
///     sub-libraries that cuDNN version ships (cudnn.h); and for each sub-library, where the
///     dynamic loader finds it *from the point of view of the library that dlopens it*
///     (libcudnn for graph/ops/cnn/adv, libcudnn_graph for the engines and heuristic):
///     DT_RPATH of the caller when it has no DT_RUNPATH, then `LD_LIBRARY_PATH`, then the
///     caller's DT_RUNPATH (`$ORIGIN` = the directory it was opened from), then the ld.so cache
///     (/etc/ld.so.cache, as `ldconfig -p` lists it), then the system directories (glibc
///     elf/dl-load.c `_dl_map_object`). gpulock never dlopens a sub-library by bare soname: its
///     own search path is not libcudnn's.
///  2. Child process (forked, with a deadline): dlopen each preload by absolute path
///     (RTLD_NOW | RTLD_LOCAL, as ctypes.CDLL does), call `cudnnGetVersion`,
///     `cudnnGetCudartVersion`, `cudnnGetMaxDeviceVersion` and the version checks (which make
///     libcudnn load its sub-libraries itself), `cudnnCreate` (and with `run_kernels` a 1x3x8x8
///     convolution forward on buffers from the environment's libcudart), then list the cuDNN,
///     CUDA runtime, cuBLAS and NCCL files mapped (/proc/self/maps), then dlopen each planned
///     sub-library file by absolute path and read its version. A step that crashes or hangs is
///     recorded and the child is run again without it (at most four runs).
///  3. Assessment: findings (verdict lines) for what the environment says about itself; the
///     lock and the machine are compared by the app (app/probe_env.h).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/probe/cudnn.h"
#include "gpulock/probe/environment.h"

namespace gpulock::probe {

struct LoadProbeOptions {
  bool run_kernels = false;
  /// Deadline for each child run (`GPULOCK_PROBE_TIMEOUT_MS`).
  std::chrono::milliseconds timeout{30000};
  /// `LD_LIBRARY_PATH` as this process was started with (a forked child's loader uses that).
  std::string ld_library_path;
  /// `LD_PRELOAD` as this process was started with (the child inherits it: its loader maps those
  /// files first, and a later lookup by soname finds them already loaded).
  std::string ld_preload;
  /// The ld.so cache file.
  std::string ld_cache = "/etc/ld.so.cache";
  /// The loader's trusted system directories; empty: glibc's for this architecture
  /// (`ld.so --list-diagnostics` `path.system_dirs`: /lib/<triplet>/, /usr/lib/<triplet>/,
  /// /lib/, /usr/lib/).
  std::vector<std::string> system_dirs;
};

/// Options from the environment: `LD_LIBRARY_PATH`, `LD_PRELOAD`, `GPULOCK_PROBE_TIMEOUT_MS`
/// (1-600000).
/// Errors: Usage (a bad timeout value).
[[nodiscard]] core::Result<LoadProbeOptions> load_probe_options_from_env();

/// How the loader finds a library.
enum class FoundVia : std::uint8_t {
  AbsolutePath,   ///< opened by its path (torch's preloads)
  Rpath,          ///< DT_RPATH of the loading library
  LdLibraryPath,  ///< the LD_LIBRARY_PATH environment variable
  Runpath,        ///< DT_RUNPATH of the loading library
  LdCache,        ///< /etc/ld.so.cache (ldconfig)
  SystemDir,      ///< a trusted system directory
};

/// "absolute path", "RPATH", "LD_LIBRARY_PATH", "RUNPATH", "ld.so cache", "system directory".
[[nodiscard]] std::string_view found_via_name(FoundVia via) noexcept;
/// "absolute-path", "rpath", "ld-library-path", "runpath", "ld-cache", "system-dir" (JSON).
[[nodiscard]] std::string_view found_via_id(FoundVia via) noexcept;

/// Where the dynamic loader takes `soname` from when a library whose own directory lacks it (a
/// wheel that does not ship it) loads it by bare name: LD_LIBRARY_PATH, then the ld.so cache,
/// then the system directories, as `options` describe them (loader_search.h; no RPATH or
/// RUNPATH of the caller is followed). nullopt when none of them has it. Reads files only.
struct LibraryCopy {
  std::string path;  ///< the file the loader would open
  FoundVia via = FoundVia::SystemDir;
  std::string entry;  ///< the LD_LIBRARY_PATH entry as written, or the cache
};
[[nodiscard]] std::optional<LibraryCopy> find_library_copy(const std::string& soname,
                                                           const LoadProbeOptions& options);

/// What happened when a step ran in the child.
enum class LoadOutcome : std::uint8_t {
  Ok,        ///< loaded / returned
  Failed,    ///< dlopen failed (the loader's message is kept) or the symbol is absent
  NotFound,  ///< the loader would not find the file at all
  Crashed,   ///< the child died in this step (a signal)
  TimedOut,  ///< the child hung in this step and was killed
  NotRun,    ///< not attempted (an earlier step made it impossible)
};

/// "ok", "failed", "not-found", "crashed", "timeout", "not-run".
[[nodiscard]] std::string_view load_outcome_name(LoadOutcome outcome) noexcept;

/// A version with where it was read.
struct VersionRead {
  std::string text;    ///< "9.1.0", "9.1.0.70"
  std::string source;  ///< "cudnnGetVersion", "cudnn_graph_version", "RECORD of ...", ...
};

/// One library the probe loaded or looked for.
struct LibraryReport {
  std::string soname;        ///< "libcudnn_ops.so.9"
  std::string name;          ///< sub-library name ("ops") or preload folder ("cublas")
  std::string loaded_by;     ///< soname of the library that dlopens it; empty for preloads
  bool required = true;      ///< false: the version does not ship it but the loader looks for it
  std::string table_source;  ///< sub-libraries: where the table row comes from
  /// Sub-libraries: the first cuDNN version that ships it ("9.21"; cudnn_files.txt), if known.
  std::string shipped_since;
  /// Sub-libraries: the RECORD of the wheel that owns libcudnn lists this file.
  bool recorded = false;
  /// The environment's wheel directory of this library has the file.
  bool in_wheel_dir = false;
  std::string wheel_dir;                 ///< that directory (the cuDNN lib dir for sub-libraries)
  std::optional<std::string> path;       ///< where the loader finds it (as opened)
  std::optional<std::string> real_path;  ///< canonical
  std::optional<FoundVia> found_via;
  std::string search_entry;  ///< the matching LD_LIBRARY_PATH/RUNPATH entry, as written
  bool inside_environment = false;
  std::string owner;  ///< "nvidia-cudnn-cu12 9.1.0.70" when a RECORD lists it
  std::optional<VersionRead> version;
  LoadOutcome load = LoadOutcome::NotRun;
  std::string error;  ///< the loader's message, or how the child ended
  /// The file libcudnn itself mapped for this soname (from /proc/self/maps), when different
  /// from `real_path`: the plan disagrees with the loader.
  std::optional<std::string> actually_mapped;
};

/// One call into libcudnn.
struct CudnnCall {
  std::string function;
  LoadOutcome outcome = LoadOutcome::NotRun;
  std::optional<std::int64_t> value;  ///< return value (a version number or a status code)
  std::string detail;                 ///< a status name, or how the child ended
};

/// A file from /proc/self/maps.
struct MappedLibrary {
  std::string path;
  bool inside_environment = false;
  std::string owner;
  std::optional<VersionRead> version;
};

/// The kernel check (`cudnnCreate`, and with --run-kernels a convolution).
struct KernelReport {
  bool requested = false;  ///< --run-kernels
  /// True when cudnnCreate succeeded: a GPU cuDNN can use.
  bool gpu_usable = false;
  /// Why there is no usable GPU (cudnnCreate's status and cuDNN's last error), when not usable.
  std::string reason;
  std::vector<CudnnCall> steps;        ///< cudnnCreate, cudaMalloc, cudnnConvolutionForward, ...
  std::optional<bool> result_correct;  ///< the convolution's output matched the expected value
  std::string cudart;                  ///< the libcudart used for buffers
};

/// How one child run ended.
struct ChildRun {
  LoadOutcome outcome = LoadOutcome::Ok;  ///< Ok, Crashed, TimedOut, Failed
  std::string step;                       ///< the step it was in when it crashed or hung
  std::string detail;                     ///< "SIGSEGV", "killed after 30 s", exit status
};

struct LoadReport {
  bool cudnn_found = false;        ///< a libcudnn.so.N in a wheel directory
  std::string cudnn_library;       ///< its path
  std::string cudnn_distribution;  ///< "nvidia-cudnn-cu12" (owner per RECORD), may be empty
  std::string cudnn_distribution_version;
  std::optional<CudnnVersion> cudnn_version;  ///< cudnnGetVersion
  std::optional<std::uint64_t> cudnn_version_raw;
  /// The cuDNN version the sub-libraries were planned with (cudnn_files.txt rows) and where it
  /// was read: a version object of the directory's own files ("cudnn_graph_version of
  /// libcudnn_graph.so.9"), else the owning nvidia-cudnn wheel's version; nullopt: the major
  /// alone (the rows every version of that major has).
  std::optional<VersionRead> cudnn_plan_version;
  /// Files of libcudnn's directory named by their soname (`libcudnn*.so.N`) that no installed
  /// distribution's RECORD lists: copied by hand, a conda or vendored layout. The plan reads the
  /// directory itself for them.
  std::vector<std::string> cudnn_unrecorded;
  std::optional<std::uint64_t> cudart_version_raw;      ///< cudnnGetCudartVersion
  std::optional<std::uint64_t> max_device_version_raw;  ///< cudnnGetMaxDeviceVersion
  std::vector<CudnnCall> calls;                         ///< the three version functions
  std::vector<CudnnCall> version_checks;                ///< cudnn*VersionCheck
  std::vector<LibraryReport> preloads;                  ///< torch's order
  std::vector<LibraryReport> sublibraries;
  std::vector<MappedLibrary> mapped;  ///< after cuDNN's own loading, before the probe's
  KernelReport kernels;
  std::vector<ChildRun> runs;
  std::vector<std::string> ld_library_path;  ///< entries
  std::vector<std::string> ld_preload;       ///< entries (separated by spaces or colons)
  std::string ld_cache;
  bool ld_cache_read = false;
  /// Stacks that take CUDA from the system, not from wheels (JAX's `cuda12-local` extras:
  /// "jax-cuda12-plugin 0.7.2" without nvidia-cudnn-cu12), and where the loader finds each
  /// library they dlopen by soname (`loaded_by` names the stack; NotFound when nowhere).
  std::vector<std::string> system_stacks;
  std::vector<LibraryReport> system_libraries;
  /// Every other stack's shared objects (CuPy, JAX's plugin with the wheels, TensorFlow, ONNX
  /// Runtime, ...; issue 23): for each CUDA library one of them links (DT_NEEDED) or reaches
  /// through an RPATH/RUNPATH entry into an environment's `nvidia/<lib>/lib`, where the loader
  /// finds it from that object. `loaded_by` is "cupy-cuda12x 13.6.0 (cupy/_core/x.so)", `owner`
  /// the environment's wheel that ships the soname, `wheel_dir` its directory, `required` true
  /// for DT_NEEDED, `in_wheel_dir` whether an RPATH/RUNPATH entry leads to that directory.
  std::vector<LibraryReport> stack_libraries;
  std::vector<std::string> warnings;
};

/// Runs the probe. Never fails: every problem is part of the report.
[[nodiscard]] LoadReport run_load_probe(const PythonEnvironment& env,
                                        const LoadProbeOptions& options);

/// How bad a finding is.
enum class Severity : std::uint8_t { Fail, Warn, Info };
/// "fail", "warn", "info".
[[nodiscard]] std::string_view severity_name(Severity s) noexcept;

/// One verdict line: a sentence and a hint.
struct Finding {
  std::string id;  ///< stable: "outside-environment", "sublibrary-missing", ...
  Severity severity = Severity::Fail;
  std::string subject;  ///< the library or package it concerns
  std::string message;  ///< one sentence
  std::string hint;     ///< what to do
};

/// Findings about the environment's own consistency: libraries from outside the environment
/// (with the cause), sub-libraries missing from the wheel, loads that failed, crashes and hangs,
/// failed version checks, cuDNN's version rule against torch's pin (same major, runtime
/// minor >= the pinned minor), and whether a GPU was usable (info).
[[nodiscard]] std::vector<Finding> assess_load(const PythonEnvironment& env,
                                               const LoadReport& report);

}  // namespace gpulock::probe

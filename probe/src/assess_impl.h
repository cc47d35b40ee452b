#pragma once
// The load probe's assessment (load_probe.h `assess_load`), private to probe/src: what one
// assessment shares, and the text helpers of its parts. Its parts, one file each:
//   assess.cpp        assess_load and its order; the probe runs, libcudnn itself, the preloads,
//                     the version checks, files mapped from outside, torch's cuDNN rule, the GPU,
//                     CUDA majors, the other stacks
//   assess_cudnn.cpp  cuDNN's sub-libraries against the cuDNN file table (cudnn_files.txt)

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpulock/probe/load_probe.h"

namespace gpulock::probe::detail {

/// "/a/b" of "/a/b/c"; "." without a slash.
[[nodiscard]] std::string dir_of(const std::string& p);
/// The loader's message without the path it starts with when that is the path already named
/// ("/x/libcudnn_cnn.so.9: undefined symbol: f" -> "undefined symbol: f").
[[nodiscard]] std::string loader_error(const LibraryReport& lib);
/// The LD_PRELOAD entry that names `mapped` (a path from /proc/self/maps): the same file, or,
/// for an entry without a slash (which the loader looks up like a DT_NEEDED name), the same file
/// name.
[[nodiscard]] std::optional<std::string> preloaded_by(const LoadReport& report,
                                                      const std::string& mapped);
/// `dir` + "/" + `file`; `file` when `dir` is empty.
[[nodiscard]] std::string join_path(const std::string& dir, const std::string& file);
/// " (9.1.0)", or " (version unknown)".
[[nodiscard]] std::string version_suffix(const std::optional<VersionRead>& v);

// One assessment: its inputs, what the findings share, and the findings so far, in order.
struct Assessment {
  const PythonEnvironment& env;
  const LoadReport& report;
  std::string dist;                   // "<cuDNN wheel> <version>", or "" when none owns libcudnn
  std::optional<CudnnVersion> cudnn;  // the cuDNN that loads (else the wheel's version)
  std::set<std::string> named;        // real paths that a sub-library finding names already
  std::vector<Finding> out;

  void add(std::string id, Severity sev, std::string subject, std::string message,
           std::string hint) {
    out.push_back({std::move(id), sev, std::move(subject), std::move(message), std::move(hint)});
  }

  void probe_runs();
  void cudnn_presence();
  void failed_preloads();
  void failed_calls();
  void sublibraries();
  void unrecorded();
  bool not_shipped(const LibraryReport& lib);
  [[nodiscard]] std::string restore(const LibraryReport& lib) const;
  void version_checks();
  void mapped_outside();
  void torch_rule();
  void gpu();
  void cuda_majors();
  void system_libraries();
  void stack_libraries();
};

}  // namespace gpulock::probe::detail

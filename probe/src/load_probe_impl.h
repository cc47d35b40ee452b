#pragma once
// The load probe's work (load_probe.h), private to probe/src: one object for the planning, the
// child runs and the reading of results, and the path helpers its parts share. Its parts, one
// file each:
//   load_probe.cpp     run_load_probe and the order of the steps; names; options
//   load_plan.cpp      1. the plan: the loader's setup, torch's preloads, cuDNN's sub-libraries
//   load_runs.cpp      2. the child runs: reading the protocol (load_child.h), crashes and hangs
//   load_versions.cpp  the versions of the files planned and mapped
//   load_paths.cpp     paths as text, and the distribution that owns a file
// The assessment (assess_load) is in assess.cpp.

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpulock/probe/load_probe.h"

#include "load_child.h"
#include "loader_search.h"

namespace gpulock::probe::detail {

/// `p` made canonical (weakly: the file need not exist); `p` itself when that fails.
[[nodiscard]] std::string canonical(const std::string& p);
/// "/a/b" from "/a/b/c"; "." without a slash, "/" for a file in the root.
[[nodiscard]] std::string dirname_of(const std::string& p);
/// "c" from "/a/b/c".
[[nodiscard]] std::string basename_of(const std::string& p);
/// `dir` + "/" + `file` (one slash); `file` when `dir` is empty.
[[nodiscard]] std::string join(const std::string& dir, const std::string& file);
/// "nvidia-cudnn-cu12 9.1.0.70" for the distribution that owns a file; "" for none.
[[nodiscard]] std::string owner_text(const InstalledDistribution* d);

// The probe's work, in one object for the planning, the child runs and the reading of results.
class Probe {
 public:
  Probe(const PythonEnvironment& env, const LoadProbeOptions& options)
      : env_(env), options_(options) {}

  LoadReport run();

 private:
  // load_plan.cpp: 1. the plan.
  void setup_loader();
  std::vector<std::string> cuda_folders() const;
  void plan_preloads();
  void plan_sublibraries();
  // load_system.cpp: stacks that take CUDA from the system (JAX's -local extras), and where the
  // other stacks' shared objects find the environment's CUDA libraries.
  void plan_system_libraries();
  void plan_stack_libraries();

  // load_runs.cpp: 2. the child runs.
  CudnnCall* call_named(std::vector<CudnnCall>& calls, const std::string& fn);
  std::optional<std::size_t> index_field(const std::string& text, std::size_t size);
  void apply(const std::vector<std::string>& f);
  void mark(const std::string& key, const std::string& text, LoadOutcome outcome,
            const std::string& detail);
  void run_children();
  static std::string last_lines(const std::string& text, std::size_t n);
  void reset_for_run();

  // load_versions.cpp: the versions of the files.
  std::optional<VersionRead> version_of_file(const std::string& path, const std::string& part,
                                             bool is_cudnn);
  void fill_versions();

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

}  // namespace gpulock::probe::detail

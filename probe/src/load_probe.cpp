// The load probe (load_probe.h): run_load_probe runs the steps in order (load_probe_impl.h lists
// the file of each); here also the names of the report's enums and the options from the
// environment.
#include "gpulock/probe/load_probe.h"

#include <cstdlib>

#include "gpulock/probe/machine.h"

#include "load_probe_impl.h"

namespace gpulock::probe {

namespace detail {

LoadReport Probe::run() {
  setup_loader();
  plan_preloads();
  plan_sublibraries();
  plan_system_libraries();
  plan_stack_libraries();
  if (!plan_.preloads.empty() || !plan_.sublibraries.empty()) run_children();
  fill_versions();
  return std::move(report_);
}

}  // namespace detail

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
  return detail::Probe(env, options).run();
}

}  // namespace gpulock::probe

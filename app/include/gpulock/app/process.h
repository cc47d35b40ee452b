#pragma once
/// @file
/// Running other programs from workflows (an interpreter asked for its values, pip): argv only,
/// never a shell; stdin is /dev/null; a deadline kills the program's whole process group.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::app {

struct ProgramResult {
  bool timed_out = false;
  int exit_code = 0;    ///< the exit status, or 128 + signal when killed by a signal
  int signal = 0;       ///< the signal that ended it, 0 if none
  std::string out;      ///< stdout (when captured), at most 16 MiB
  std::string err;      ///< stderr (when captured), at most 16 MiB
};

struct ProgramOptions {
  std::chrono::milliseconds timeout{60'000};  ///< 0: no deadline
  /// Called with each chunk of stdout/stderr as it arrives instead of capturing it (pip's
  /// progress streamed to the user). Empty: capture into ProgramResult.
  std::function<void(std::string_view chunk, bool is_stderr)> on_output;
  /// Extra environment entries "NAME=value" added to (or replacing in) the current environment.
  std::vector<std::string> env;
};

/// Runs `argv` (argv[0] looked up on PATH unless it contains '/'). Errors: Io when the program
/// cannot be started (not found, not executable), naming it.
[[nodiscard]] core::Result<ProgramResult> run_program(const std::vector<std::string>& argv,
                                                      const ProgramOptions& options = {});

}  // namespace gpulock::app

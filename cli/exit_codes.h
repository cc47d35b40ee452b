#pragma once
/// @file
/// Process exit codes (DESIGN.md §Commands). Every non-zero exit prints one `error:` line.

#include "gpulock/core/error.h"

namespace gpulock::cli {

class Terminal;

enum ExitCode : int {
  kExitSuccess = 0,
  kExitFinding = 1,       ///< no solution, drift found, probe verdict failed, locks differ
  kExitUsage = 2,         ///< unknown flag or command, bad flag value
  kExitInvalidInput = 3,  ///< a requirement's text, requirements file, pyproject, lockfile
  kExitNetwork = 4,       ///< index or network failure, hash mismatch
  kExitInternal = 70,     ///< a bug
  kExitIo = 74,           ///< a local file could not be read or written (sysexits EX_IOERR)
  kExitInterrupted = 130,
};

/// The exit code for an error of this kind.
[[nodiscard]] int exit_code_for(core::ErrorCode code) noexcept;

/// How a command fails on an error: prints it (`error:` line, context, hints; terminal.h) and
/// returns its exit code.
[[nodiscard]] int report_error(Terminal& term, const core::Error& error);

}  // namespace gpulock::cli

#pragma once
/// @file
/// Complete `gpulock` commands for hints (issue 16 item 8): a hint that names a command gives it
/// whole, every flag of the run it came from, so that following it repeats that run with one
/// change. The run's command line is the one the CLI recorded (`ResolveRequest::command_line`,
/// the lock's header `command`): "gpulock" and its arguments, each shell-quoted.

#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/command_line.h"

namespace gpulock::app {

// Quoting, splitting and editing a command line are core's (core/command_line.h); what a
// command means for this machine is app's.
using core::command_with;
using core::FlagEdit;
using core::shell_quote;
using core::split_command;

/// The edits that turn a lock's resolve command into one for the machine it runs on: the
/// driver detected (`--driver auto`), no `--cuda-ceiling` or `--gpu-arch` of another machine
/// (relock_here also turns a `--torch-backend cuXYZ` into `auto`).
[[nodiscard]] std::vector<FlagEdit> for_this_machine();

/// For a hint: "`<lock_command for this machine>`", or, when the lock records no command, words
/// that say what to run.
[[nodiscard]] std::string relock_here(std::string_view lock_command);

/// For a hint: "`<a target lock's command, over every target>`" (`--all-targets` instead of any
/// `--target NAME`; the indexes and inputs the locks were made with kept), or "`gpulock resolve
/// --all-targets`" when the lock records no command.
[[nodiscard]] std::string relock_all_targets(std::string_view lock_command);

}  // namespace gpulock::app

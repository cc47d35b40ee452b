#pragma once
/// @file
/// Complete `gpulock` commands for hints (issue 16 item 8): a hint that names a command gives it
/// whole, every flag of the run it came from, so that following it repeats that run with one
/// change. The run's command line is the one the CLI recorded (`ResolveRequest::command_line`,
/// the lock's header `command`): "gpulock" and its arguments, each shell-quoted.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::app {

/// `arg` as one shell word: as it is when it holds only characters the shell leaves alone,
/// else in single quotes.
[[nodiscard]] std::string shell_quote(std::string_view arg);

/// The words of a command line that shell_quote wrote (plain words, '...' with '\'' inside),
/// program name included. Other shell syntax is not interpreted.
[[nodiscard]] std::vector<std::string> split_command(std::string_view line);

/// One change to a command: `--flag value` (value "" for a flag without one). Set removes the
/// flag's earlier occurrences (`--flag V`, `--flag=V`) and appends it; Add appends it; Remove
/// only removes it (with its value, when `value` is not empty).
struct FlagEdit {
  enum class Op { Set, Add, Remove };
  std::string flag;
  std::string value;
  Op op = Op::Set;
};

/// The edits that turn a lock's resolve command into one for the machine it runs on: the
/// driver detected (`--driver auto`), no `--cuda-ceiling` or `--gpu-arch` of another machine
/// (relock_here also turns a `--torch-backend cuXYZ` into `auto`).
[[nodiscard]] std::vector<FlagEdit> for_this_machine();

/// For a hint: "`<lock_command for this machine>`", or, when the lock records no command, words
/// that say what to run.
[[nodiscard]] std::string relock_here(std::string_view lock_command);

/// `line` (a recorded command line) with `edits` applied, shell-quoted. An empty `line` gives
/// the edits alone ("--torch-backend cu126"), for callers that have no command line.
[[nodiscard]] std::string command_with(std::string_view line, std::span<const FlagEdit> edits);

}  // namespace gpulock::app

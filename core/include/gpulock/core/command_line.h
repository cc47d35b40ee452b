#pragma once
/// @file
/// Command lines as text (issue 16 item 8): shell-quoting words, splitting a recorded command
/// line back into them, and applying flag edits (`FlagEdit`) to it. A hint that names a command
/// gives it whole, as the run's recorded command line with the fix applied. Pure: no I/O.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::core {

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

/// `line` (a recorded command line) with `edits` applied, shell-quoted. An empty `line` gives
/// the edits alone ("--torch-backend cu126"), for callers that have no command line.
[[nodiscard]] std::string command_with(std::string_view line, std::span<const FlagEdit> edits);

}  // namespace gpulock::core

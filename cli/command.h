#pragma once
/// @file
/// The command table. Each `cmd_*.cpp` registers one command at static-initialization time:
///
///   const bool registered = register_command({"diff", "Compare two locks", 60, &setup});
///
/// `setup` adds the command's options to its CLI11 subcommand and returns the function that
/// runs it after parsing; that function returns the process exit code (exit_codes.h).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "terminal.h"

namespace gpulock::cli {

/// What every command gets: the terminal and the global flags.
struct Context {
  Terminal& term;
  /// The command as typed, shell-quoted where needed ("gpulock resolve torch --driver 550.54.14"),
  /// for the lock's header comment.
  std::string command_line;
};

using RunFn = std::function<int(Context&)>;

struct CommandInfo {
  std::string_view name;
  std::string_view summary;
  int order = 100;  ///< position in `gpulock --help`
  RunFn (*setup)(CLI::App& sub) = nullptr;
};

/// Adds a command to the table; returns true so it can initialize a static.
bool register_command(const CommandInfo& info);

/// Every registered command, sorted by `order`.
[[nodiscard]] std::vector<CommandInfo> registered_commands();

}  // namespace gpulock::cli

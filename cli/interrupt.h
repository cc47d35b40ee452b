#pragma once
/// @file
/// SIGINT and SIGTERM: the run ends within a second with one `error: interrupted` line and exit
/// 130. The handler only writes to a pipe; a thread reading it cancels every index client (their
/// transfers abort, so the command unwinds through its normal error path, removing its temporary
/// files and leaving the old lock and the cache as they were). When the command has not returned
/// within kInterruptGrace (a long solve, a blocking system call), the thread prints the line,
/// removes this process's temporary files and calls _exit(130).

#include <chrono>

namespace gpulock::cli {

inline constexpr std::chrono::milliseconds kInterruptGrace{800};

/// Installs the handlers and starts the thread. Call once, first thing in main().
void install_interrupt_handler();
/// True once SIGINT or SIGTERM arrived.
[[nodiscard]] bool interrupted_by_signal() noexcept;
/// True for the first caller only: whoever prints `error: interrupted` (so it appears once).
[[nodiscard]] bool claim_interrupt_report() noexcept;
/// The command returned: the thread's forced exit is no longer needed.
void command_finished();

}  // namespace gpulock::cli

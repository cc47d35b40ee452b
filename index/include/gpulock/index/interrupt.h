#pragma once
/// @file
/// Process-wide interruption for the CLI's SIGINT/SIGTERM handling (the library installs no
/// signal handler): cancel every live IndexClient at once, and, as a last resort before a
/// forced exit, remove the temporary files this process is writing.

namespace gpulock::index {

/// Marks the process interrupted and cancels every IndexClient alive now (their transfers in
/// flight abort, later calls fail with Cancelled); clients created afterwards start cancelled.
/// Thread-safe; not async-signal-safe (call it from a thread, not a signal handler).
void interrupt_all_clients();

/// True once interrupt_all_clients() was called.
[[nodiscard]] bool interrupted() noexcept;

/// Removes every temporary file this process has open in a cache (downloads in <cache>/partial/,
/// entries being written) and its owner lock file. For a forced exit (_exit) only: files in use
/// by threads still running vanish under them. Thread-safe.
void remove_temporary_files() noexcept;

}  // namespace gpulock::index

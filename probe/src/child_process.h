#pragma once
// Child processes with a deadline, for everything that may hang or crash: driver libraries run
// in a forked child (no exec), programs (nvidia-smi) are spawned. Each child runs in its own
// process group so that a timeout kills what it started too (a shell script's `sleep`).
// Reusable by the load probe (cuDNN) of this module.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "gpulock/core/error.h"

namespace gpulock::probe::detail {

/// How a child ended, with everything it wrote.
struct ChildResult {
  enum class End { Exited, Signaled, TimedOut };
  End end = End::Exited;
  int code = 0;     ///< exit status (Exited) or signal number (Signaled)
  std::string out;  ///< the protocol pipe (forked) or stdout (program), at most 1 MiB
  std::string err;  ///< stderr (and a forked child's stdout), at most 1 MiB
};

/// A started child. Move-only; a child still running when destroyed is killed and reaped.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  /// Forks; the child runs `body(fd)`, which reports by writing to `fd`, then `_exit(0)`s.
  /// Errors: Internal (pipe or fork failed).
  [[nodiscard]] static core::Result<ChildProcess> fork_call(
      const std::function<void(int fd)>& body);

  /// Spawns `path` with `argv` (argv[0] included) and the current environment.
  /// Errors: Io (the program could not be started).
  [[nodiscard]] static core::Result<ChildProcess> spawn(const std::string& path,
                                                        const std::vector<std::string>& argv);

 private:
  friend std::vector<ChildResult> wait_all(std::vector<ChildProcess*> children,
                                           std::chrono::milliseconds timeout);
  void kill_and_reap();
  void close_fds();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
};

/// Reads every child's output until all have ended or `timeout` has passed, then kills those
/// still running (their whole process group). Results in the order of `children`.
[[nodiscard]] std::vector<ChildResult> wait_all(std::vector<ChildProcess*> children,
                                                std::chrono::milliseconds timeout);

/// The first executable `name` on PATH (or `name` itself if it contains a '/').
[[nodiscard]] std::optional<std::string> find_on_path(const std::string& name);

/// "SIGSEGV" for 11; "signal N" otherwise.
[[nodiscard]] std::string signal_name(int signal);

/// Writes all of `text` to `fd`, retrying on EINTR; for the forked child's reports.
void write_all(int fd, std::string_view text) noexcept;

}  // namespace gpulock::probe::detail

#pragma once
/// @file
/// Child processes with a deadline, for everything that may hang or crash: driver libraries run
/// in a forked child (no exec), programs (nvidia-smi, an interpreter, pip) are spawned with argv
/// only, never a shell, and stdin from /dev/null. Each child runs in its own process group so
/// that a timeout kills what it started too (a shell script's `sleep`).

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "gpulock/core/error.h"

namespace gpulock::sys {

/// A timeout that never expires.
inline constexpr std::chrono::milliseconds kNoTimeout = std::chrono::milliseconds::max();

/// How a child ended, with everything it wrote.
struct ChildResult {
  enum class End { Exited, Signaled, TimedOut };
  End end = End::Exited;
  int code = 0;     ///< exit status (Exited) or signal number (Signaled)
  std::string out;  ///< the protocol pipe (forked) or stdout (program), capped (WaitOptions)
  std::string err;  ///< stderr (and a forked child's stdout), capped likewise
};

struct WaitOptions;
struct ProgramOptions;
struct ProgramResult;

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

  /// Spawns `path` with `argv` (argv[0] included) and the current environment, with `env`'s
  /// "NAME=value" entries added or replacing. Errors: Io (the program could not be started),
  /// located at `path`.
  [[nodiscard]] static core::Result<ChildProcess> spawn(const std::string& path,
                                                        const std::vector<std::string>& argv,
                                                        const std::vector<std::string>& env = {});

 private:
  friend std::vector<ChildResult> wait_all(std::vector<ChildProcess*> children,
                                           const WaitOptions& options);
  friend core::Result<ProgramResult> run_program(const std::vector<std::string>& argv,
                                                 const ProgramOptions& options);
  static int start(const std::string& path, const std::vector<std::string>& argv,
                   const std::vector<std::string>& env, ChildProcess& out);
  void adopt(pid_t pid, int out_fd, int err_fd) noexcept;  // a started child's pipes
  void kill_and_reap();
  void close_fds();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
};

struct WaitOptions {
  std::chrono::milliseconds timeout = kNoTimeout;
  /// At most this many bytes of each stream are kept.
  std::size_t max_output = std::size_t{1} << 20;
  /// Called with each chunk as it arrives (child index, chunk, stderr?) instead of keeping it.
  std::function<void(std::size_t child, std::string_view chunk, bool is_stderr)> on_output;
};

/// Reads every child's output until all have ended or the timeout has passed, then kills those
/// still running (their whole process group). Results in the order of `children`.
[[nodiscard]] std::vector<ChildResult> wait_all(std::vector<ChildProcess*> children,
                                                const WaitOptions& options);
/// The same with a timeout and the default 1 MiB cap.
[[nodiscard]] std::vector<ChildResult> wait_all(std::vector<ChildProcess*> children,
                                                std::chrono::milliseconds timeout);

struct ProgramResult {
  bool timed_out = false;
  int exit_code = 0;  ///< the exit status, or 128 + signal when killed by a signal
  int signal = 0;     ///< the signal that ended it, 0 if none
  std::string out;    ///< stdout (when captured), at most 16 MiB
  std::string err;    ///< stderr (when captured), at most 16 MiB
};

struct ProgramOptions {
  std::chrono::milliseconds timeout{60'000};  ///< 0: no deadline
  /// Called with each chunk of stdout/stderr as it arrives instead of capturing it (pip's
  /// progress streamed to the user). Empty: capture into ProgramResult.
  std::function<void(std::string_view chunk, bool is_stderr)> on_output;
  /// Extra environment entries "NAME=value" added to (or replacing in) the current environment.
  std::vector<std::string> env;
};

/// Runs `argv` (argv[0] looked up on PATH unless it contains '/') to its end or the timeout.
/// Errors: Io when the program cannot be started (not found, not executable), naming it.
[[nodiscard]] core::Result<ProgramResult> run_program(const std::vector<std::string>& argv,
                                                      const ProgramOptions& options = {});

/// The first executable `name` on PATH (or `name` itself if it contains a '/').
[[nodiscard]] std::optional<std::string> find_on_path(const std::string& name);

/// "SIGSEGV" for 11; "signal N" otherwise.
[[nodiscard]] std::string signal_name(int signal);

/// Writes all of `text` to `fd`, retrying on EINTR; for a forked child's reports.
void write_all(int fd, std::string_view text) noexcept;

}  // namespace gpulock::sys

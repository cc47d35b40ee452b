#pragma once
// One sync of an environment at a time (issue 40): `gpulock install` holds an exclusive flock on
// `<prefix>/.gpulock-lock` for the whole sync (its PID written in it), `check --env` and
// `probe` a shared one while they read. A second sync waits for the first (bounded), never
// touching its journal; readers say a sync is in progress instead of reporting its half state.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "gpulock/core/error.h"

namespace gpulock::install {

inline constexpr std::string_view kEnvLockFile = ".gpulock-lock";

class EnvLock {
 public:
  EnvLock() = default;
  EnvLock(EnvLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  EnvLock& operator=(EnvLock&& other) noexcept;
  EnvLock(const EnvLock&) = delete;
  EnvLock& operator=(const EnvLock&) = delete;
  ~EnvLock();

  /// Takes the environment's lock: exclusive (a sync; the file is created, the PID written) or
  /// shared (a reader; nothing when the file does not exist). Waits up to `wait` for a holder,
  /// calling `on_wait` once with a line naming it. Errors: Io (exit 74) naming the holder's PID
  /// when it is still held after `wait` (zero: at once), or the file cannot be opened.
  [[nodiscard]] static core::Result<EnvLock> acquire(
      const std::filesystem::path& prefix, bool exclusive, std::chrono::milliseconds wait,
      const std::function<void(const std::string&)>& on_wait = {});

  [[nodiscard]] bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace gpulock::install

#include "gpulock/install/env_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <sys/file.h>

namespace gpulock::install {
namespace fs = std::filesystem;
namespace {

// The holder's PID as it wrote it ("" when unknown).
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  if (text.size() > 9) return {};
  for (char c : text) {
    if (c < '0' || c > '9') return {};
  }
  return text;
}

}  // namespace

EnvLock& EnvLock::operator=(EnvLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

EnvLock::~EnvLock() {
  if (fd_ >= 0) ::close(fd_);
}

core::Result<EnvLock> EnvLock::acquire(const fs::path& prefix, bool exclusive,
                                       std::chrono::milliseconds wait,
                                       const std::function<void(const std::string&)>& on_wait) {
  const fs::path file = prefix / std::string(kEnvLockFile);
  EnvLock lock;
  lock.fd_ = ::open(file.c_str(),
                    (exclusive ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock.fd_ < 0) {
    if (!exclusive && (errno == ENOENT || errno == EACCES)) return EnvLock();
    return std::unexpected(core::make_error(
        core::ErrorCode::Io,
        fmt::format("cannot open the environment's lock file: {}", std::strerror(errno)),
        file.string()));
  }
  const int op = exclusive ? LOCK_EX : LOCK_SH;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  bool told = false;
  while (::flock(lock.fd_, op | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      return std::unexpected(core::make_error(
          core::ErrorCode::Io, fmt::format("cannot lock the environment: {}", std::strerror(errno)),
          file.string()));
    }
    // The PID in the file is the last sync's: named when that process still runs (a reader
    // holding the lock shared writes none).
    std::string pid = holder_of(lock.fd_);
    if (!pid.empty() && ::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH)
      pid.clear();
    const std::string who =
        pid.empty() ? "another gpulock run" : "another gpulock run (PID " + pid + ")";
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::unexpected(core::make_error(
          core::ErrorCode::Io,
          fmt::format(
              "{} is syncing the environment {}{}", who, prefix.string(),
              wait.count() == 0
                  ? ""
                  : fmt::format("; waited {} s",
                                std::chrono::duration_cast<std::chrono::seconds>(wait).count())),
          file.string()));
    }
    if (!told && on_wait) {
      on_wait(fmt::format("waiting for {}, which is syncing {}", who, prefix.string()));
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (exclusive) {
    const std::string pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(lock.fd_, 0) == 0) (void)::pwrite(lock.fd_, pid.data(), pid.size(), 0);
  }
  return lock;
}

}  // namespace gpulock::install

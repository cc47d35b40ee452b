#include "gpulock/sys/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char** environ;

namespace gpulock::sys {
namespace {

constexpr std::size_t kMaxProgramOutput = std::size_t{16} << 20;

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what is available into `into` (at most `cap` bytes kept) or hands it to `sink`;
// returns false at end of file or on a hard error.
template <class Sink>
bool drain(int fd, std::string& into, std::size_t cap, const Sink& sink) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      std::string_view chunk(buffer, static_cast<std::size_t>(n));
      if (!sink(chunk)) {
        std::size_t room = cap - std::min(cap, into.size());
        into.append(chunk.substr(0, room));
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

void set_nonblocking(int fd) noexcept {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// The current environment with `extra`'s "NAME=value" entries added or replacing, in order.
std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> entries;
  std::vector<std::string> order;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (entries.emplace(key, entry).second) order.push_back(key);
  }
  for (const auto& entry : extra) {
    std::string key = entry.substr(0, entry.find('='));
    if (entries.insert_or_assign(key, entry).second) order.push_back(key);
  }
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const auto& key : order)
    out.push_back(entries[key]);
  return out;
}

core::Error pipe_error() {
  return core::fail(core::ErrorCode::Internal,
                    fmt::format("cannot create a pipe: {}", std::strerror(errno)))
      .error();
}

}  // namespace

void write_all(int fd, std::string_view text) noexcept {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), out_fd_(other.out_fd_), err_fd_(other.err_fd_), reaped_(other.reaped_) {
  other.pid_ = -1;
  other.out_fd_ = other.err_fd_ = -1;
  other.reaped_ = true;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    close_fds();
    pid_ = other.pid_;
    out_fd_ = other.out_fd_;
    err_fd_ = other.err_fd_;
    reaped_ = other.reaped_;
    other.pid_ = -1;
    other.out_fd_ = other.err_fd_ = -1;
    other.reaped_ = true;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  kill_and_reap();
  close_fds();
}

void ChildProcess::close_fds() {
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void ChildProcess::adopt(pid_t pid, int out_fd, int err_fd) noexcept {
  pid_ = pid;
  out_fd_ = out_fd;
  err_fd_ = err_fd;
  set_nonblocking(out_fd_);
  set_nonblocking(err_fd_);
}

void ChildProcess::kill_and_reap() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(-pid_, SIGKILL);  // the group: whatever the child started
  ::kill(pid_, SIGKILL);   // in case it had not yet made its group
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

core::Result<ChildProcess> ChildProcess::fork_call(const std::function<void(int fd)>& body) {
  int report[2];
  int err[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return std::unexpected(pipe_error());
  if (::pipe2(err, O_CLOEXEC) != 0) {
    auto e = pipe_error();
    ::close(report[0]);
    ::close(report[1]);
    return std::unexpected(std::move(e));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {report[0], report[1], err[0], err[1]})
      ::close(fd);
    return core::fail(core::ErrorCode::Internal, fmt::format("cannot fork: {}", std::strerror(e)));
  }
  if (pid == 0) {
    // The child: its own process group, stdout and stderr into the err pipe, no stdin. Only
    // `_exit` leaves it, so the parent's atexit handlers and buffers are never run twice.
    ::setpgid(0, 0);
    ::close(report[0]);
    ::close(err[0]);
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(err[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    try {
      body(report[1]);
    } catch (...) {
      ::_exit(70);
    }
    ::_exit(0);
  }
  ::setpgid(pid, pid);  // also from the parent, so a kill right away reaches the group
  ::close(report[1]);
  ::close(err[1]);
  ChildProcess child;
  child.adopt(pid, report[0], err[0]);
  return child;
}

// posix_spawn's error number (0: started), or -1 when a pipe could not be made.
int ChildProcess::start(const std::string& path, const std::vector<std::string>& argv,
                        const std::vector<std::string>& env, ChildProcess& child) {
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return -1;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  if (!env.empty()) {
    env_strings = merged_environment(env);
    for (auto& e : env_strings)
      envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, args.data(),
                         env.empty() ? environ : envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return rc;
  }
  child.adopt(pid, out[0], err[0]);
  return 0;
}

core::Result<ChildProcess> ChildProcess::spawn(const std::string& path,
                                               const std::vector<std::string>& argv,
                                               const std::vector<std::string>& env) {
  ChildProcess child;
  int rc = start(path, argv, env, child);
  if (rc < 0) return std::unexpected(pipe_error());
  if (rc != 0) {
    return core::fail_at(core::ErrorCode::Io, fmt::format("cannot run it: {}", std::strerror(rc)),
                         path);
  }
  return child;
}

std::vector<ChildResult> wait_all(std::vector<ChildProcess*> children,
                                  std::chrono::milliseconds timeout) {
  WaitOptions options;
  options.timeout = timeout;
  return wait_all(std::move(children), options);
}

std::vector<ChildResult> wait_all(std::vector<ChildProcess*> children, const WaitOptions& options) {
  using Clock = std::chrono::steady_clock;
  const bool forever = options.timeout == kNoTimeout;
  const auto deadline = forever ? Clock::time_point::max() : Clock::now() + options.timeout;
  std::vector<ChildResult> results(children.size());

  // Read until every pipe is closed (each child has exited or closed them) or time is up.
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<std::size_t, bool>> owners;  // child, is_err
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (children[i]->out_fd_ >= 0) {
        fds.push_back({children[i]->out_fd_, POLLIN, 0});
        owners.emplace_back(i, false);
      }
      if (children[i]->err_fd_ >= 0) {
        fds.push_back({children[i]->err_fd_, POLLIN, 0});
        owners.emplace_back(i, true);
      }
    }
    if (fds.empty()) break;
    int wait_ms = -1;
    if (!forever) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) break;
      wait_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1 << 30));
    }
    int n = ::poll(fds.data(), fds.size(), wait_ms);
    if (n < 0 && errno != EINTR) break;
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      auto [i, is_err] = owners[k];
      ChildProcess& c = *children[i];
      int& fd = is_err ? c.err_fd_ : c.out_fd_;
      auto sink = [&, i = i, is_err = is_err](std::string_view chunk) {
        if (!options.on_output) return false;
        options.on_output(i, chunk, is_err);
        return true;
      };
      if (!drain(fd, is_err ? results[i].err : results[i].out, options.max_output, sink)) {
        close_fd(fd);
      }
    }
  }

  for (std::size_t i = 0; i < children.size(); ++i) {
    ChildProcess& c = *children[i];
    bool timed_out = c.out_fd_ >= 0 || c.err_fd_ >= 0;
    int status = 0;
    // Pipes closed: the child is exiting; give it until the deadline to be reaped.
    while (!timed_out && !c.reaped_) {
      pid_t r = ::waitpid(c.pid_, &status, forever ? 0 : WNOHANG);
      if (r == c.pid_) {
        c.reaped_ = true;
        // Whatever it left running in its group goes too.
        ::kill(-c.pid_, SIGKILL);
        break;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        c.reaped_ = true;
        status = 0;
        break;
      }
      if (Clock::now() >= deadline) {
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (timed_out) {
      c.kill_and_reap();
      results[i].end = ChildResult::End::TimedOut;
    } else if (WIFSIGNALED(status)) {
      results[i].end = ChildResult::End::Signaled;
      results[i].code = WTERMSIG(status);
    } else {
      results[i].end = ChildResult::End::Exited;
      results[i].code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    }
    c.close_fds();
  }
  return results;
}

core::Result<ProgramResult> run_program(const std::vector<std::string>& argv,
                                        const ProgramOptions& options) {
  if (argv.empty()) return core::fail(core::ErrorCode::Internal, "run_program: empty argv");
  auto cannot_run = [&](int err) {
    return core::fail(
        core::ErrorCode::Io,
        fmt::format("cannot run {}: {}", core::quote_for_message(argv[0]), std::strerror(err)));
  };
  std::string path = argv[0];
  if (path.find('/') == std::string::npos) {
    auto found = find_on_path(path);
    if (!found) return cannot_run(ENOENT);
    path = std::move(*found);
  }
  ChildProcess child;
  int rc = ChildProcess::start(path, argv, options.env, child);
  if (rc < 0) return std::unexpected(pipe_error());
  if (rc != 0) return cannot_run(rc);

  WaitOptions wait;
  wait.timeout = options.timeout.count() > 0 ? options.timeout : kNoTimeout;
  wait.max_output = kMaxProgramOutput;
  if (options.on_output) {
    wait.on_output = [&](std::size_t, std::string_view chunk, bool is_stderr) {
      options.on_output(chunk, is_stderr);
    };
  }
  ChildResult r = std::move(wait_all({&child}, wait).front());
  ProgramResult result;
  result.out = std::move(r.out);
  result.err = std::move(r.err);
  switch (r.end) {
    case ChildResult::End::Exited:
      result.exit_code = r.code;
      break;
    case ChildResult::End::Signaled:
      result.signal = r.code;
      result.exit_code = 128 + r.code;
      break;
    case ChildResult::End::TimedOut:
      result.timed_out = true;
      result.signal = SIGKILL;
      result.exit_code = 128 + SIGKILL;
      break;
  }
  return result;
}

std::optional<std::string> find_on_path(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    std::size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    default:
      return fmt::format("signal {}", signal);
  }
}

}  // namespace gpulock::sys

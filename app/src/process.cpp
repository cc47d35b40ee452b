#include "gpulock/app/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>

extern char** environ;

namespace gpulock::app {
namespace {

constexpr std::size_t kMaxCapture = 16u << 20;

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

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
  for (const auto& key : order) out.push_back(entries[key]);
  return out;
}

}  // namespace

core::Result<ProgramResult> run_program(const std::vector<std::string>& argv, const ProgramOptions& options) {
  if (argv.empty()) return core::fail(core::ErrorCode::Internal, "run_program: empty argv");
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return core::fail(core::ErrorCode::Io, "pipe failed");
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return core::fail(core::ErrorCode::Io, "pipe failed");
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.fd, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so that a timeout kills whatever it started too.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto env_strings = merged_environment(options.env);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return core::fail(core::ErrorCode::Io,
                      fmt::format("cannot run {}: {}", core::quote_for_message(argv[0]), std::strerror(rc)));
  }
  out_write.close();
  err_write.close();

  ProgramResult result;
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  bool out_open = true, err_open = true;
  char buffer[65536];
  while (out_open || err_open) {
    int wait_ms = -1;
    if (options.timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    pollfd fds[2] = {{out_read.fd, POLLIN, 0}, {err_read.fd, POLLIN, 0}};
    int n = ::poll(fds, 2, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      bool& open = i == 0 ? out_open : err_open;
      if (!open || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        open = false;
        continue;
      }
      std::string_view chunk(buffer, static_cast<std::size_t>(got));
      if (options.on_output) {
        options.on_output(chunk, i == 1);
      } else {
        std::string& into = i == 0 ? result.out : result.err;
        if (into.size() < kMaxCapture) into.append(chunk.substr(0, kMaxCapture - into.size()));
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  }
  return result;
}

}  // namespace gpulock::app

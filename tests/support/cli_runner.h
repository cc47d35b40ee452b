// Test support: running programs (the real gpulock binary, python3, pip, readelf) and capturing
// their exit status, stdout and stderr. Header-only, standard library and POSIX only (no
// gpulock, no Catch2), so any module's tests can use it.
//
//   auto r = gpulock::test::run_process({GPULOCK_EXE, "probe", "--json"}, env);  // exact env
//   auto s = gpulock::test::run_shell("cd dir && NO_COLOR=1 gpulock diff a b");  // /bin/sh
//   r.status, r.out, r.err
//
// A program that cannot be started at all (no pipe, no fork) throws std::runtime_error: the
// test fails.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "test_files.h"

namespace gpulock::test {

/// Environment variables, NAME -> value.
using Env = std::map<std::string, std::string>;

/// What a finished program left: its exit status (128 + N when killed by signal N) and output.
struct RunResult {
  int status = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// "exit N", then stdout and stderr, for INFO() when a run did not do what a test expects.
inline std::string describe(const RunResult& r) {
  return "exit " + std::to_string(r.status) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

/// Quotes a string for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

/// `base` with the entries of `extra` added, replacing those of the same name.
inline Env merge_env(Env base, const Env& extra) {
  for (const auto& [k, v] : extra)
    base[k] = v;
  return base;
}

struct RunOptions {
  std::filesystem::path cwd{};  ///< where it runs; empty: this process's directory
  int timeout_s = 0;            ///< when > 0, killed (SIGKILL, status 137) after this many seconds
};

namespace detail {

// Issue 43 "done when": every `hint:` line that a gpulock command printed during the tests, with
// a gpulock command in it, is kept for tests/support/hints_run.py (ctest `hints_run`, which
// runs each and checks that it works and that the finding is gone): under the build's
// hint-log/ (GPULOCK_BINARY_DIR, cleared by ctest `hints_clear`), one directory per run: argv
// and env (NUL-separated), stdout, stderr, the exit status, the directory it ran in and a copy
// of that directory's files as they were (`cwd/`, its subdirectories linked), so a hint's
// relative paths name what the test had then.
// The hinted commands run at once, while the test's servers and files are there.
#ifdef GPULOCK_BINARY_DIR
inline constexpr const char* kHintLogDir = GPULOCK_BINARY_DIR "/hint-log";
#else
inline constexpr const char* kHintLogDir = nullptr;
#endif

inline bool prints_command_hint(const std::string& text) {
  for (std::size_t at = text.find("hint:"); at != std::string::npos;
       at = text.find("hint:", at + 5)) {
    std::size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.find("`gpulock ") != std::string::npos || line.find(": gpulock ") != std::string::npos)
      return true;
  }
  return false;
}

inline void keep_hints(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env,
                       const std::filesystem::path& cwd, int status, const std::string& out,
                       const std::string& err) {
  namespace fs = std::filesystem;
  if (kHintLogDir == nullptr || argv.empty() || fs::path(argv[0]).filename() != "gpulock") return;
  if (!prints_command_hint(err) && !prints_command_hint(out)) return;
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  const fs::path dir =
      fs::path(kHintLogDir) / (std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir, ec);
  if (ec) return;
  auto put = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary | std::ios::trunc) << text;
  };
  std::string a;
  for (const auto& s : argv)
    a.append(s).push_back('\0');
  put("argv", a);
  std::string e;
  for (const auto& [k, v] : env)
    e.append(k).append(1, '=').append(v).push_back('\0');
  put("env", e);
  put("stdout", out);
  put("stderr", err);
  put("status", std::to_string(status));
  const fs::path from = cwd.empty() ? fs::current_path(ec) : cwd;
  put("dir", from.string());
  // The directory's own files as they are now (small ones copied, big ones hard-linked), its
  // subdirectories linked (a test's work directory holds every cache: a hint reads them).
  fs::create_directories(dir / "cwd", ec);
  for (auto it = fs::directory_iterator(from, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const fs::path to = dir / "cwd" / it->path().filename();
    std::error_code step;
    if (it->is_symlink(step)) {
      fs::copy_symlink(it->path(), to, step);
    } else if (it->is_directory(step)) {
      fs::create_directory_symlink(it->path(), to, step);
    } else if (it->is_regular_file(step)) {
      const bool small = it->file_size(step) < (1u << 20);
      if (!small) fs::create_hard_link(it->path(), to, step);
      if (small || step) {
        step.clear();
        fs::copy_file(it->path(), to, step);
      }
    }
  }
  // Run while the servers and files the test made are there (tests/support/hints_run.py
  // --run-record writes `result.json` beside the record; ctest `hints_run` reads them all).
#ifdef GPULOCK_SOURCE_DIR
  const std::string command =
      "/usr/bin/python3 " GPULOCK_SOURCE_DIR "/tests/support/hints_run.py --run-record " +
      shell_quote(dir.string()) + " --gpulock " + shell_quote(argv[0]) + " >/dev/null 2>&1";
  [[maybe_unused]] int status_of_run = std::system(command.c_str());
#endif
}

}  // namespace detail

/// Runs `argv` (argv[0] is a path: no PATH search) with exactly `env`, nothing inherited, stdin
/// from /dev/null, capturing stdout and stderr through pipes. Exit status 126 when `cwd` cannot
/// be entered, 127 when the program cannot be executed.
inline RunResult run_process(const std::vector<std::string>& argv, const Env& env,
                             const RunOptions& options = {}) {
  if (argv.empty()) throw std::runtime_error("run_process: no program");
  int out[2];
  int err[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0) throw std::runtime_error("run_process: pipe failed");
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args)
    argp.push_back(a.data());
  argp.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("run_process: fork failed for " + argv[0]);
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(err[0]);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::execve(argp[0], argp.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  RunResult r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open = 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
  bool killed = false;
  while (open > 0) {
    int wait_ms = -1;
    if (options.timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 && !killed) {
        ::kill(pid, SIGKILL);
        killed = true;
      }
      wait_ms = killed ? 1000 : static_cast<int>(std::max<long long>(1, left.count()));
    }
    if (::poll(fds, 2, wait_ms) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[8192];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  detail::keep_hints(argv, env, options.cwd, r.status, r.out, r.err);
  return r;
}

/// A /bin/sh command prefix running the rest of the command line on a pseudo-terminal (Python's
/// pty.spawn; stdin, stdout and stderr are the terminal) and exiting with its status. The
/// terminal turns "\n" into "\r\n".
inline std::string on_pseudo_terminal() {
  return "/usr/bin/python3 -c 'import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)'";
}

/// Runs `command` with /bin/sh (std::system) in this process's environment and directory,
/// stdin from /dev/null, capturing stdout and stderr through temporary files (removed
/// afterwards), so a daemon the command starts cannot hold the capture open.
inline RunResult run_shell(const std::string& command) {
  TempDir capture(std::filesystem::temp_directory_path(), "gpulock-run-");
  const auto out = capture / "stdout";
  const auto err = capture / "stderr";
  const std::string full = "( " + command + " ) >" + shell_quote(out.string()) + " 2>" +
                           shell_quote(err.string()) + " </dev/null";
  const int status = std::system(full.c_str());
  RunResult r;
  r.status = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

}  // namespace gpulock::test

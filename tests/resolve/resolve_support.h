// Shared helpers of the `gpulock resolve` end-to-end tests: run the real gpulock binary against
// the loopback servers (ctest fixture `servers`) with a hermetic environment, read the lock it
// wrote, compare output with golden files (tests/resolve/golden/; regenerate with
// GPULOCK_UPDATE_GOLDEN=1).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/lock/lockfile.h"
#include "test_servers.h"

namespace resolve_test {

namespace fs = std::filesystem;

inline const std::string kExe = GPULOCK_EXE;
inline const fs::path kGoldenDir = RESOLVE_GOLDEN_DIR;
inline const fs::path kWorkDir = RESOLVE_WORK_DIR;
inline const fs::path kScriptDir = RESOLVE_SCRIPT_DIR;

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

using Env = std::map<std::string, std::string>;

// Runs `argv` in `cwd` with exactly `env` (nothing inherited), stdin from /dev/null, capturing
// stdout and stderr. Killed after `timeout_s` seconds (status 137).
inline Run run(const std::vector<std::string>& argv, const Env& env, const fs::path& cwd = {},
               int timeout_s = 120) {
  int out[2];
  int err[2];
  REQUIRE(::pipe(out) == 0);
  REQUIRE(::pipe(err) == 0);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(err[0]);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execve(argp[0], argp.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  Run r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open = 2;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool killed = false;
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    int rc = ::poll(fds, 2, killed ? 1000 : static_cast<int>(std::max<long long>(1, left.count())));
    if (rc < 0 && errno != EINTR) break;
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
  return r;
}

inline const gpulock::test::ServersEnv& servers() { return gpulock::test::shared_servers(); }

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// A fresh, empty directory for one test case.
inline fs::path fresh_dir(const std::string& name) {
  fs::path dir = kWorkDir / name;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
}

// The index cache every test shares (the tests are not about caching; a warm cache keeps the
// suite fast). Tests of a private server use their own.
inline fs::path shared_cache() { return kWorkDir / "cache"; }

// An empty fake root: machine detection (GPULOCK_TEST_ROOT, hermetic) finds no driver, no
// libraries and no nvidia-smi even on a GPU machine.
inline fs::path empty_root() {
  fs::path root = kWorkDir / "empty-root";
  fs::create_directories(root / "bin");
  return root;
}

inline Env base_env() {
  return {{"PATH", (empty_root() / "bin").string()},
          {"HOME", kWorkDir.string()},
          {"NO_COLOR", "1"},
          {"GPULOCK_TEST_ROOT", empty_root().string()},
          {"GPULOCK_PROBE_TIMEOUT_MS", "2000"}};
}

struct Options {
  std::string python = "3.11";
  std::string platform = "manylinux_2_28_x86_64";
  std::string index_url;  // default: the shared servers' PYPI_URL ("-" for none)
  std::string torch_index_base;  // default: the shared servers' TORCH_INDEX_BASE
  fs::path cache;                // default: shared_cache()
  fs::path cwd;
  Env env;  // added to base_env()
};

// `gpulock resolve ARGS` with the target, indexes and cache filled in from `o`.
inline Run resolve(const std::vector<std::string>& args, const Options& o = {}) {
  std::vector<std::string> argv = {kExe, "resolve"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--python-version", o.python, "--platform", o.platform});
  std::string index = o.index_url.empty() ? servers().pypi_url() : o.index_url;
  if (index != "-") argv.insert(argv.end(), {"--index-url", index});
  argv.insert(argv.end(), {"--torch-index-base", o.torch_index_base.empty() ? servers().torch_index_base()
                                                                           : o.torch_index_base});
  argv.insert(argv.end(), {"--cache-dir", (o.cache.empty() ? shared_cache() : o.cache).string()});
  Env env = base_env();
  for (const auto& [k, v] : o.env) env[k] = v;
  return run(argv, env, o.cwd.empty() ? kWorkDir : o.cwd);
}

// name -> version of a lock file (read and validated by lock/'s PEP 751 reader).
inline std::map<std::string, std::string> lock_versions(const fs::path& path) {
  auto lock = gpulock::lock::read_lock_file(path);
  INFO(path.string());
  REQUIRE(lock.has_value());
  std::map<std::string, std::string> out;
  for (const auto& p : lock->lock.packages) out[p.name] = p.version.value_or("");
  return out;
}

inline gpulock::lock::Lock read_lock(const fs::path& path) {
  auto lock = gpulock::lock::read_lock_file(path);
  INFO(path.string() << (lock ? "" : ": " + lock.error().to_string()));
  REQUIRE(lock.has_value());
  return lock->lock;
}

// Output with the volatile parts replaced: the servers' URL, the work dir, millisecond figures.
inline std::string normalize(std::string text) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (std::size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
      text.replace(pos, from.size(), to);
    }
  };
  replace_all(servers().http_url(), "http://INDEX");
  replace_all(kWorkDir.string(), "WORK");
  text = std::regex_replace(text, std::regex(R"(in \d+ ms)"), "in N ms");
  return text;
}

// A --report JSON with run-dependent numbers (timings, request counts) zeroed. The writer puts
// one field per line, so this is a line filter.
inline std::string normalize_report(const std::string& json) {
  std::istringstream in(normalize(json));
  std::string line, out;
  bool volatile_block = false;
  static const std::regex number(R"(^(\s*"[a-z-]+": )-?[0-9][0-9.eE+-]*(,?)$)");
  while (std::getline(in, line)) {
    if (line.find("\"timings-ms\": {") != std::string::npos || line.find("\"requests\": {") != std::string::npos) {
      volatile_block = true;
    } else if (volatile_block && line.find('}') != std::string::npos) {
      volatile_block = false;
    } else if (volatile_block) {
      line = std::regex_replace(line, number, "$010$2");
    }
    out += line + "\n";
  }
  return out;
}

// Compares `actual` with golden/<name>; GPULOCK_UPDATE_GOLDEN=1 rewrites the file instead.
inline void check_golden(const std::string& name, const std::string& actual) {
  fs::path file = kGoldenDir / name;
  const char* update = std::getenv("GPULOCK_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    write_file(file, actual);
    WARN("updated " << file.string());
    return;
  }
  INFO("golden file " << file.string() << " (GPULOCK_UPDATE_GOLDEN=1 regenerates it)");
  REQUIRE(fs::exists(file));
  CHECK(read_file(file) == actual);
}

inline std::string describe(const Run& r) {
  return "exit " + std::to_string(r.status) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

// Runs tests/resolve/declared_closure.py on a lock: the nvidia-*/cuda-* set its torch wheel
// declares, closed over the locked wheels' METADATA. Returns its stdout; fails on a mismatch.
inline std::string declared_closure(const fs::path& lock, const std::string& python = "3.11") {
  Run r = run({"/usr/bin/python3", (kScriptDir / "declared_closure.py").string(), "--lock", lock.string(),
               "--index-root", servers().index_root().string(), "--http-url", servers().http_url(), "--python",
               python},
              {{"PATH", "/usr/bin:/bin"}});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  return r.out;
}

}  // namespace resolve_test

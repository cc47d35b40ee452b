// Shared helpers of the `gpulock resolve` end-to-end tests: run the real gpulock binary against
// the loopback servers (ctest fixture `servers`) with a hermetic environment, read the lock it
// wrote, compare output with golden files (tests/resolve/golden/; regenerate with
// GPULOCK_UPDATE_GOLDEN=1).
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/lock/lockfile.h"

#include "cli_runner.h"
#include "golden.h"
#include "test_servers.h"

namespace resolve_test {

namespace fs = std::filesystem;

inline const std::string kExe = GPULOCK_EXE;
inline const fs::path kGoldenDir = RESOLVE_GOLDEN_DIR;
inline const fs::path kWorkDir = RESOLVE_WORK_DIR;
inline const fs::path kScriptDir = RESOLVE_SCRIPT_DIR;

using Run = gpulock::test::RunResult;
using gpulock::test::describe;
using gpulock::test::Env;
using gpulock::test::read_file;
using gpulock::test::replace_all;
using gpulock::test::write_file;

// Runs `argv` in `cwd` with exactly `env` (nothing inherited), stdin from /dev/null, capturing
// stdout and stderr. Killed after `timeout_s` seconds (status 137).
inline Run run(const std::vector<std::string>& argv, const Env& env, const fs::path& cwd = {},
               int timeout_s = 120) {
  return gpulock::test::run_process(argv, env, {.cwd = cwd, .timeout_s = timeout_s});
}

inline const gpulock::test::ServersEnv& servers() {
  return gpulock::test::shared_servers();
}

// A fresh, empty directory for one test case.
inline fs::path fresh_dir(const std::string& name) {
  return gpulock::test::fresh_directory(kWorkDir / name);
}

// The index cache every test shares (the tests are not about caching; a warm cache keeps the
// suite fast). Tests of a private server use their own.
inline fs::path shared_cache() {
  return kWorkDir / "cache";
}

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
  std::string index_url;         // default: the shared servers' PYPI_URL ("-" for none)
  std::string torch_index_base;  // default: the shared servers' TORCH_INDEX_BASE
  fs::path cache;                // default: shared_cache()
  fs::path cwd;
  Env env;  // added to base_env()
  // The fixture's torch indexes mirror setuptools 70.2.0 only, and torch 2.13 and the nightlies
  // need >= 77.0.3: under first-index for every name (issue 17) they cannot be used unless
  // setuptools comes from the PyPI-like index. Tests about variants, not sources, set this:
  // `--index pypi=<index> --index-for setuptools=pypi`.
  bool setuptools_from_pypi = false;
};

// The argv of `gpulock resolve ARGS` with the target, indexes and cache filled in from `o`.
inline std::vector<std::string> resolve_argv(const std::vector<std::string>& args,
                                             const Options& o = {}) {
  std::vector<std::string> argv = {kExe, "resolve"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--python-version", o.python, "--platform", o.platform});
  std::string index = o.index_url.empty() ? servers().pypi_url() : o.index_url;
  if (index != "-") argv.insert(argv.end(), {"--index-url", index});
  if (o.setuptools_from_pypi)
    argv.insert(argv.end(), {"--index", "pypi=" + index, "--index-for", "setuptools=pypi"});
  argv.insert(argv.end(),
              {"--torch-index-base",
               o.torch_index_base.empty() ? servers().torch_index_base() : o.torch_index_base});
  argv.insert(argv.end(), {"--cache-dir", (o.cache.empty() ? shared_cache() : o.cache).string()});
  return argv;
}

inline Env env_of(const Options& o) {
  Env env = base_env();
  for (const auto& [k, v] : o.env)
    env[k] = v;
  return env;
}

// `gpulock resolve ARGS` with the target, indexes and cache filled in from `o`.
inline Run resolve(const std::vector<std::string>& args, const Options& o = {}) {
  return run(resolve_argv(args, o), env_of(o), o.cwd.empty() ? kWorkDir : o.cwd);
}

// The complete command a hint gives (issue 16 item 8) for the run `resolve(args, o)` with
// `extra` appended: "gpulock resolve ARGS ... EXTRA", as the binary records its command line
// (a word with other characters than [A-Za-z0-9-_./=:,+@%] in single quotes).
inline std::string hint_command(const std::vector<std::string>& args, const Options& o,
                                const std::vector<std::string>& extra) {
  auto argv = resolve_argv(args, o);
  argv.front() = "gpulock";
  // A flag the hint sets replaces the run's own (`--driver auto` -> `--driver none`); the flags
  // that add a value (--index, --index-for, --upgrade-package) are only added.
  for (std::size_t i = 0; i + 1 < extra.size(); i += 2) {
    const std::string& flag = extra[i];
    if (flag == "--index" || flag == "--index-for" || flag == "--upgrade-package") continue;
    for (std::size_t j = 0; j + 1 < argv.size();) {
      if (argv[j] == flag) {
        argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(j),
                   argv.begin() + static_cast<std::ptrdiff_t>(j) + 2);
      } else {
        ++j;
      }
    }
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::string out;
  for (const auto& a : argv) {
    bool plain = std::all_of(a.begin(), a.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    out += (out.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return out;
}

// The command between the first pair of backticks of `hint` that starts with `gpulock `, run
// as the user would run it (same environment and directory as `o`'s runs). Fails the test when
// there is none.
inline Run run_hint(const std::string& hint, const Options& o) {
  std::size_t at = hint.find("`gpulock ");
  INFO(hint);
  REQUIRE(at != std::string::npos);
  std::size_t end = hint.find('`', at + 1);
  REQUIRE(end != std::string::npos);
  std::string command = hint.substr(at + 1, end - at - 1);
  // Words: plain, or in single quotes with '\'' inside (how gpulock quotes).
  std::vector<std::string> argv;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == ' ') {
      if (in_word) argv.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      std::size_t close = command.find('\'', i + 1);
      REQUIRE(close != std::string::npos);
      word += command.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) argv.push_back(word);
  REQUIRE(argv.size() >= 2);
  argv.front() = kExe;
  return run(argv, env_of(o), o.cwd.empty() ? kWorkDir : o.cwd);
}

// The warning for a machine described by `flag` ("--driver 550.54.14", "--cuda-ceiling 12.4")
// without --gpu-arch (issue 16), as its own stderr line.
inline std::string no_arch_warning(const std::string& flag) {
  return "warning: " + flag +
         " without --gpu-arch: builds are not checked against any GPU (`gpulock probe --machine` "
         "on that machine "
         "prints its archs)\n";
}

// The lock written at `path`, read back (the test stops when it does not read).
inline gpulock::lock::Lock lock_at(const fs::path& path) {
  auto lock = gpulock::lock::parse_lock(read_file(path), path.string());
  INFO(path);
  REQUIRE(lock.has_value());
  return lock->lock;
}

// The version of `name` in a lock's text (`-o -` output), or "" when it has none.
inline std::string locked_version(const std::string& lock_text, const std::string& name) {
  auto lock = gpulock::lock::parse_lock(lock_text, "-");
  INFO(lock_text);
  REQUIRE(lock.has_value());
  for (const auto& p : lock->lock.packages) {
    if (p.name == name) return p.version.value_or("");
  }
  return {};
}

// The `hint:` line of `err` that contains `needle` ("" when none).
inline std::string hint_line(const std::string& err, const std::string& needle) {
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("hint:") && line.find(needle) != std::string::npos) return line;
  }
  return {};
}

// name -> version of a lock file (read and validated by lock/'s PEP 751 reader).
inline std::map<std::string, std::string> lock_versions(const fs::path& path) {
  auto lock = gpulock::lock::read_lock_file(path);
  INFO(path.string());
  REQUIRE(lock.has_value());
  std::map<std::string, std::string> out;
  for (const auto& p : lock->lock.packages)
    out[p.name] = p.version.value_or("");
  return out;
}

// The locked package `name`, or null.
inline const gpulock::lock::Package* find_package(const gpulock::lock::Lock& lock,
                                                  const std::string& name) {
  for (const auto& p : lock.packages) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

inline gpulock::lock::Lock read_lock(const fs::path& path) {
  auto lock = gpulock::lock::read_lock_file(path);
  INFO(path.string() << (lock ? "" : ": " + lock.error().to_string()));
  REQUIRE(lock.has_value());
  return lock->lock;
}

// A [tool.gpulock.gpu] value as the lock prints it; "" when absent.
template <class T>
std::string gpu_text(const std::optional<T>& v) {
  if (!v) return "";
  if constexpr (std::is_enum_v<T>) {
    return std::string(gpulock::gpu::cuda_compat_name(*v));
  } else {
    return v->to_string();
  }
}
inline std::vector<std::string> gpu_text(const std::vector<gpulock::gpu::ComputeCapability>& v) {
  std::vector<std::string> out;
  for (const auto& a : v)
    out.push_back(a.to_string());
  return out;
}

// Output with the volatile parts replaced: the servers' URL, the work dir, millisecond figures.
inline std::string normalize(std::string text) {
  text = replace_all(text, servers().http_url(), "http://INDEX");
  text = replace_all(text, kWorkDir.string(), "WORK");
  text = std::regex_replace(text, std::regex(R"(in \d+ ms)"), "in N ms");
  return text;
}

// A --report JSON with run-dependent numbers (timings, request counts) zeroed. The writer puts
// one field per line, so this is a line filter.
inline std::string normalize_report(const std::string& json) {
  std::istringstream in(normalize(json));
  std::string line, out;
  bool volatile_block = false;
  static const std::regex number(R"(^(\s*"[a-z_]+": )-?[0-9][0-9.eE+-]*(,?)$)");
  while (std::getline(in, line)) {
    if (line.find("\"timings_ms\": {") != std::string::npos ||
        line.find("\"requests\": {") != std::string::npos) {
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

// `gpulock resolve ARGS -o -` that must fail: its exit status and its whole stderr (normalized:
// the error:, explanation and hint: lines) must be exactly `status` and `err`.
inline Run expect_resolve_error(std::vector<std::string> args, const Options& o, int status,
                                const std::string& err) {
  args.insert(args.end(), {"-o", "-"});
  Run r = resolve(args, o);
  INFO(describe(r));
  CHECK(r.status == status);
  CHECK(normalize(r.err) == err);
  return r;
}

// Compares `actual` with golden/<name>; GPULOCK_UPDATE_GOLDEN=1 rewrites the file instead.
inline void check_golden(const std::string& name, const std::string& actual) {
  GPULOCK_CHECK_GOLDEN(kGoldenDir / name, actual);
}

// Runs tests/resolve/declared_closure.py on a lock: the nvidia-*/cuda-* set its torch wheel
// declares, closed over the locked wheels' METADATA. Returns its stdout; fails on a mismatch.
inline std::string declared_closure(const fs::path& lock, const std::string& python = "3.11") {
  Run r = run({"/usr/bin/python3", (kScriptDir / "declared_closure.py").string(), "--lock",
               lock.string(), "--index-root", servers().index_root().string(), "--http-url",
               servers().http_url(), "--python", python},
              {{"PATH", "/usr/bin:/bin"}});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  return r.out;
}

}  // namespace resolve_test

// Shared helpers of the `gpulock resolve` end-to-end tests: run the real gpulock binary against
// the loopback servers (ctest fixture `servers`) with a hermetic environment, read the lock it
// wrote, compare output with golden files (tests/resolve/golden/; regenerate with
// GPULOCK_UPDATE_GOLDEN=1).
#pragma once

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
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

inline const gpulock::test::ServersEnv& servers() { return gpulock::test::shared_servers(); }

// A fresh, empty directory for one test case.
inline fs::path fresh_dir(const std::string& name) { return gpulock::test::fresh_directory(kWorkDir / name); }

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
  // The fixture's torch indexes mirror setuptools 70.2.0 only, and torch 2.13 and the nightlies
  // need >= 77.0.3: under first-index for every name (issue 17) they cannot be used unless
  // setuptools comes from the PyPI-like index. Tests about variants, not sources, set this:
  // `--index pypi=<index> --index-for setuptools=pypi`.
  bool setuptools_from_pypi = false;
};

// `gpulock resolve ARGS` with the target, indexes and cache filled in from `o`.
inline Run resolve(const std::vector<std::string>& args, const Options& o = {}) {
  std::vector<std::string> argv = {kExe, "resolve"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--python-version", o.python, "--platform", o.platform});
  std::string index = o.index_url.empty() ? servers().pypi_url() : o.index_url;
  if (index != "-") argv.insert(argv.end(), {"--index-url", index});
  if (o.setuptools_from_pypi) argv.insert(argv.end(), {"--index", "pypi=" + index, "--index-for", "setuptools=pypi"});
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

// The locked package `name`, or null.
inline const gpulock::lock::Package* find_package(const gpulock::lock::Lock& lock, const std::string& name) {
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
  Run r = run({"/usr/bin/python3", (kScriptDir / "declared_closure.py").string(), "--lock", lock.string(),
               "--index-root", servers().index_root().string(), "--http-url", servers().http_url(), "--python",
               python},
              {{"PATH", "/usr/bin:/bin"}});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  return r.out;
}

}  // namespace resolve_test

// Helpers for the `gpulock check` tests: running commands, work directories, reading a lock's
// lines (independently of gpulock's reader), golden files.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "golden.h"
#include "test_files.h"
#include "test_servers.h"

namespace check_test {

namespace fs = std::filesystem;
using gpulock::test::read_file;
using gpulock::test::replace_all;
using gpulock::test::run_shell;
using gpulock::test::shell_quote;
using gpulock::test::write_file;
using Run = gpulock::test::RunResult;

// Lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    out.push_back(line);
  return out;
}

// A test's own directory (emptied first), cache and environment.
class Workdir {
 public:
  explicit Workdir(const std::string& name)
      : dir_(gpulock::test::fresh_directory(fs::path(CHECK_WORK_DIR) / name)) {}
  const fs::path& dir() const { return dir_; }
  fs::path operator/(const std::string& rel) const { return dir_ / rel; }

  // No configuration from the machine running the tests (issue 26): pip's, uv's and gpulock's
  // variables unset, no user or pip files.
  static constexpr const char* kNoConfiguration =
      "-u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_FIND_LINKS -u PIP_PRE -u UV_DEFAULT_INDEX "
      "-u UV_INDEX_URL -u UV_INDEX -u UV_EXTRA_INDEX_URL -u UV_FIND_LINKS -u UV_INDEX_STRATEGY "
      "-u UV_TORCH_BACKEND -u UV_EXCLUDE_NEWER -u UV_PRERELEASE -u GPULOCK_INDEX_URL "
      "-u GPULOCK_EXTRA_INDEX_URL -u GPULOCK_FIND_LINKS -u GPULOCK_INDEX -u GPULOCK_INDEX_FOR "
      "-u GPULOCK_INDEX_STRATEGY -u GPULOCK_TORCH_BACKEND -u GPULOCK_TORCH_INDEX_BASE "
      "-u GPULOCK_NIGHTLY -u GPULOCK_EXCLUDE_NEWER -u GPULOCK_PRERELEASE -u GPULOCK_CUDA_COMPAT "
      "-u GPULOCK_PYTHON_VERSION -u GPULOCK_PLATFORM -u GPULOCK_MIRROR PIP_CONFIG_FILE=/dev/null "
      "XDG_CONFIG_HOME=/nonexistent";
  // gpulock run in this directory with a clean environment: no virtualenv, no colour, its own
  // cache, and the machine described by `machine_env` ("GPULOCK_DRIVER=550.54.14 ..."), never
  // detected (so a GPU on the test machine cannot change a result).
  Run gpulock(const std::string& args,
              const std::string& machine_env = "GPULOCK_DRIVER=none") const {
    std::string cmd = "cd " + shell_quote(dir_.string()) +
                      " && env -u VIRTUAL_ENV -u GPULOCK_CUDA_CEILING -u " +
                      "GPULOCK_GPU_ARCH -u GPULOCK_DRIVER " + kNoConfiguration +
                      " NO_COLOR=1 GPULOCK_HTTP_RETRIES=0 GPULOCK_CACHE_DIR=" +
                      shell_quote((dir_ / "cache").string()) + " " + machine_env + " " +
                      shell_quote(GPULOCK_EXE) + " " + args;
    return run_shell(cmd);
  }
  Run shell(const std::string& command) const {
    return run_shell("cd " + shell_quote(dir_.string()) + " && " + command);
  }

 private:
  fs::path dir_;
};

// What a lock says, read line by line (not with gpulock's reader).
struct LockedPackage {
  std::string name, version;
  std::size_t line = 0;        // `[[packages]]`
  std::size_t wheel_line = 0;  // the first wheel's inline table
  std::string wheel;           // its file name
  std::string sha256;
};

inline std::string quoted_value(const std::string& line, const std::string& key) {
  auto at = line.find(key + " = \"");
  if (at == std::string::npos) return {};
  auto start = at + key.size() + 4;
  return line.substr(start, line.find('"', start) - start);
}

struct LockScan {
  std::map<std::string, LockedPackage> packages;
  std::map<std::string, std::size_t> tables;  // "[tool.gpulock.gpu]" -> line
  std::vector<std::string> lines;

  const LockedPackage& at(const std::string& name) const {
    auto it = packages.find(name);
    if (it == packages.end()) throw std::runtime_error("the lock has no package " + name);
    return it->second;
  }
  std::size_t table(const std::string& header) const {
    auto it = tables.find(header);
    if (it == tables.end()) throw std::runtime_error("the lock has no table " + header);
    return it->second;
  }
  // `key = "value"` inside the table `header`.
  std::string value(const std::string& header, const std::string& key) const {
    for (std::size_t i = table(header); i < lines.size(); ++i) {
      if (i > table(header) && lines[i].starts_with("[")) break;
      if (lines[i].starts_with(key + " = ")) return quoted_value(lines[i], key);
    }
    throw std::runtime_error("no " + key + " in " + header);
  }
};

inline LockScan scan_lock(const fs::path& path) {
  LockScan s;
  s.lines = lines_of(read_file(path));
  s.lines.insert(s.lines.begin(), "");  // 1-based
  LockedPackage* cur = nullptr;
  LockedPackage pending;
  for (std::size_t i = 1; i < s.lines.size(); ++i) {
    const auto& l = s.lines[i];
    if (l == "[[packages]]") {
      pending = LockedPackage{};
      pending.line = i;
      cur = &pending;
      continue;
    }
    if (l.starts_with("[")) {
      s.tables.emplace(l, i);
      cur = nullptr;
      continue;
    }
    if (cur == nullptr) continue;
    if (l.starts_with("name = ")) {
      cur->name = quoted_value(l, "name");
      s.packages[cur->name] = *cur;
      cur = &s.packages[cur->name];
    } else if (l.starts_with("version = ")) {
      cur->version = quoted_value(l, "version");
    } else if (l.starts_with("  { ") && cur->wheel_line == 0) {
      cur->wheel_line = i;
      std::string url = quoted_value(l, "url");
      std::string name = quoted_value(l, "name");
      if (name.empty()) {
        name = url.substr(url.rfind('/') + 1);
        for (std::size_t p; (p = name.find("%2B")) != std::string::npos;)
          name.replace(p, 3, "+");
      }
      cur->wheel = name;
      auto sha = l.find("sha256 = \"");
      if (sha != std::string::npos) cur->sha256 = l.substr(sha + 10, 64);
    }
  }
  return s;
}

// The lowercase hex sha256 of a file, from coreutils' sha256sum.
inline std::string sha256_of(const fs::path& file) {
  auto r = run_shell("sha256sum " + shell_quote(file.string()));
  if (r.status != 0 || r.out.size() < 64)
    throw std::runtime_error("sha256sum failed for " + file.string());
  return r.out.substr(0, 64);
}

// Compares with golden/<name>, or writes it when GPULOCK_UPDATE_GOLDEN is set.
inline void check_golden(const std::string& name, const std::string& actual) {
  GPULOCK_CHECK_GOLDEN(fs::path(CHECK_GOLDEN_DIR) / name, actual);
}

// The independent reader (tests/lock/check_pylock.py: Python's tomllib + packaging) accepts the
// lock `gpulock resolve` wrote: every lock these tests make is a valid PEP 751 file.
inline void check_lock_independently(const fs::path& lock) {
  auto r =
      run_shell("/usr/bin/python3 " +
                shell_quote((gpulock::test::source_dir() / "tests/lock/check_pylock.py").string()) +
                " " + shell_quote(lock.string()));
  INFO("check_pylock.py " << lock << ": " << r.out << r.err);
  CHECK(r.status == 0);
}

// The arguments of `gpulock resolve` that point it at the fixture index on `http_url`.
inline std::string fixture_indexes(const std::string& http_url) {
  return "--index-url " + http_url + "/simple/ --torch-index-base " + http_url + "/whl";
}

// Flags that take torch's ordinary dependencies from the PyPI-like index, as every lock did
// before first-index held for every name (issue 17): the nightly torch index serves older
// copies of them (and setuptools 70.2.0, which the nightlies cannot use). The drift tests
// change those packages' files on PyPI.
inline std::string pypi_pins(const std::string& http_url) {
  std::string out = " --index pypi=" + http_url + "/simple/";
  for (const char* name : {"filelock", "fsspec", "jinja2", "markupsafe", "mpmath", "networkx",
                           "setuptools", "sympy", "typing-extensions"}) {
    out += std::string(" --index-for ") + name + "=pypi";
  }
  return out + " ";
}

inline constexpr const char* kTarget = "--python-version 3.11 --platform manylinux_2_28_x86_64";

}  // namespace check_test

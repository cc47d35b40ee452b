#pragma once
// Helpers for the lock/ tests: fixture paths, temporary directories, reading files, running
// commands, and the independent tomllib check every written lock goes through.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>

namespace lock_test {

namespace fs = std::filesystem;

inline fs::path fixtures() {
  return fs::path(GPULOCK_SOURCE_DIR) / "fixtures" / "locks";
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// A fresh directory under /tmp (mode 0755, so a test can drop privileges and still reach it),
/// removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpulock-lock-test-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    REQUIRE(made != nullptr);
    path_ = made;
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

/// Single-quoted for /bin/sh.
inline std::string sh_quote(const std::string& s) {
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

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

/// Runs a shell command, capturing stdout and stderr through files in `dir`.
inline RunResult run(const std::string& command, const fs::path& dir) {
  const fs::path out = dir / ".stdout";
  const fs::path err = dir / ".stderr";
  const std::string full = command + " >" + sh_quote(out.string()) + " 2>" + sh_quote(err.string());
  const int status = std::system(full.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

/// The independent reader: Python's tomllib (+ packaging when available) checks PEP 751.
inline void check_with_tomllib(const fs::path& file) {
  TempDir scratch;
  const std::string cmd =
      "/usr/bin/python3 " +
      sh_quote(std::string(GPULOCK_SOURCE_DIR) + "/tests/lock/check_pylock.py") + " " +
      sh_quote(file.string());
  const RunResult r = run(cmd, scratch.path());
  INFO("tomllib check of " << file << ": " << r.err);
  CHECK(r.exit_code == 0);
}

/// Writes `text` to a temporary file and checks it with the independent reader.
inline void check_text_with_tomllib(const std::string& text) {
  TempDir dir;
  spit(dir / "pylock.toml", text);
  check_with_tomllib(dir / "pylock.toml");
}

}  // namespace lock_test

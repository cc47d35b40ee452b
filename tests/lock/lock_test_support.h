#pragma once
// Helpers for the lock/ tests: fixture paths, fixture locks and packages, and the independent
// tomllib check every written lock goes through. Files, scratch directories and running
// commands come from tests/support (test_files.h, cli_runner.h).
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/lock/lockfile.h"

#include "cli_runner.h"
#include "test_files.h"

namespace lock_test {

namespace fs = std::filesystem;
using gpulock::test::directory_names;
using gpulock::test::read_file;
using gpulock::test::run_shell;
using gpulock::test::RunResult;
using gpulock::test::shell_quote;
using gpulock::test::TempDir;
using gpulock::test::write_file;

inline fs::path fixtures() {
  return fs::path(GPULOCK_SOURCE_DIR) / "fixtures" / "locks";
}

/// The lock in `path` as gpulock's reader reads it; the test stops when it cannot.
inline gpulock::lock::Lock read_lock(const fs::path& path) {
  auto file = gpulock::lock::read_lock_file(path);
  INFO(path.string() << (file ? "" : ": " + file.error().to_string()));
  REQUIRE(file.has_value());
  return file->lock;
}

/// A package of one pure-Python wheel on example.org, whose sha256 is `hash_digit` 64 times.
inline gpulock::lock::Package wheel_package(std::string name, std::string version,
                                            char hash_digit) {
  gpulock::lock::Package p;
  p.name = std::move(name);
  p.version = std::move(version);
  gpulock::lock::FileEntry w;
  w.name = p.name + "-" + *p.version + "-py3-none-any.whl";
  w.url = "https://example.org/" + *w.name;
  w.hashes.emplace("sha256", std::string(64, hash_digit));
  p.wheels = std::vector<gpulock::lock::FileEntry>{w};
  return p;
}

/// The independent reader: Python's tomllib (+ packaging when available) checks PEP 751.
inline void check_with_tomllib(const fs::path& file) {
  const std::string cmd =
      "/usr/bin/python3 " +
      shell_quote(std::string(GPULOCK_SOURCE_DIR) + "/tests/lock/check_pylock.py") + " " +
      shell_quote(file.string());
  const RunResult r = run_shell(cmd);
  INFO("tomllib check of " << file << ": " << r.err);
  CHECK(r.status == 0);
}

/// Writes `text` to a temporary file and checks it with the independent reader.
inline void check_text_with_tomllib(const std::string& text) {
  TempDir dir;
  write_file(dir / "pylock.toml", text);
  check_with_tomllib(dir / "pylock.toml");
}

/// Locks that miss a hash where PEP 751 requires one: an archive and a wheel without the key, and
/// a wheel whose table is empty, with the line and message the reader gives
/// (reader_errors_test.cpp for the library, cli_test.cpp for `gpulock export`).
struct MissingHashCase {
  std::string text;
  std::size_t line;
  std::string message;
};
inline std::vector<MissingHashCase> missing_hash_cases() {
  const std::string head = "lock-version = \"1.0\"\ncreated-by = \"test\"\n\n[[packages]]\n";
  return {

      {head +
           "name = \"a\"\nversion = \"1.0\"\narchive = { url = \"https://example.org/a-1.0.zip\" "
           "}\n",
       7, "in the archive of package 'a' has no 'hashes' (PEP 751 requires at least one hash)"},
      {head + "name = \"a\"\nversion = \"1.0\"\nwheels = [\n  { url = "
              "\"https://example.org/a-1.0-py3-none-any.whl\", size = 1 },\n]\n",
       8, "in wheel 1 of package 'a' has no 'hashes' (PEP 751 requires at least one hash)"},
      {head + "name = \"a\"\nversion = \"1.0\"\n\n[[packages.wheels]]\nurl = "
              "\"https://example.org/a-1.0-py3-none-any.whl\"\n\n[packages.wheels.hashes]\n",
       11, "in wheel 1 of package 'a' has an empty 'hashes' table"},
  };
}

}  // namespace lock_test

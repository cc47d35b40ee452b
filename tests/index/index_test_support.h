#pragma once
// Helpers shared by the index tests: generated test wheels, scratch directories, file access.

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>

#include <sys/file.h>

#include "test_files.h"

namespace index_test {

// The index tests' names for the shared file helpers (tests/support/test_files.h).
inline std::string read_text(const std::string& path) {
  return gpulock::test::read_file(path);
}
inline void write_text(const std::string& path, const std::string& text) {
  gpulock::test::write_file(path, text);
}

/// The directory make_test_wheels.py writes (generated once; an flock serializes the test
/// processes ctest runs in parallel, a stamp holding the script's hash skips regeneration).
inline const std::string& wheels_dir() {
  static std::string dir;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string work = INDEX_TEST_WORK_DIR;
    std::filesystem::create_directories(work);
    dir = work + "/test-wheels";
    std::string script = read_text(INDEX_MAKE_WHEELS);
    std::string stamp = std::to_string(std::hash<std::string>{}(script));
    int lock = ::open((work + "/test-wheels.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) ::flock(lock, LOCK_EX);
    if (read_text(dir + "/stamp") != stamp) {
      std::filesystem::remove_all(dir);
      std::string cmd = std::string("/usr/bin/python3 '") + INDEX_MAKE_WHEELS + "' '" + dir + "'";
      if (std::system(cmd.c_str()) != 0) throw std::runtime_error("make_test_wheels.py failed");
      write_text(dir + "/stamp", stamp);
    }
    if (lock >= 0) ::close(lock);
  });
  return dir;
}

/// A fresh, empty directory under the work dir, unique to this process and name.
inline std::string scratch_dir(const std::string& name) {
  return gpulock::test::fresh_directory(std::string(INDEX_TEST_WORK_DIR) + "/scratch-" +
                                        std::to_string(::getpid()) + "-" + name)
      .string();
}

}  // namespace index_test

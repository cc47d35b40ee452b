// Test support: golden files, the expected output of a command kept in the source tree next to
// its tests. GPULOCK_UPDATE_GOLDEN=1 (any non-empty value) rewrites them from the actual output
// instead of comparing, e.g. `GPULOCK_UPDATE_GOLDEN=1 ctest -R probe`; review the diff after.
// Header-only, standard library only; GPULOCK_CHECK_GOLDEN expands to Catch2 assertions, so it
// is for Catch2 tests.
//
//   GPULOCK_CHECK_GOLDEN(fs::path(PROBE_GOLDEN_DIR) / "no_driver.txt", normalized_output);
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_files.h"

namespace gpulock::test {

/// Whether GPULOCK_UPDATE_GOLDEN asks for golden files to be rewritten.
inline bool update_golden_requested() {
  const char* update = std::getenv("GPULOCK_UPDATE_GOLDEN");
  return update != nullptr && *update != '\0';
}

/// A golden file read for a comparison, or rewritten with `actual` when that was asked for.
struct GoldenFile {
  std::filesystem::path path;
  bool updated = false;  ///< rewritten (GPULOCK_UPDATE_GOLDEN): nothing to compare
  bool exists = false;
  std::string expected;  ///< its content

  std::string note() const {
    return "golden file " + path.string() + " (GPULOCK_UPDATE_GOLDEN=1 rewrites it)";
  }
};

inline GoldenFile golden_file(const std::filesystem::path& path, const std::string& actual) {
  GoldenFile g;
  g.path = path;
  if (update_golden_requested()) {
    write_file(path, actual);
    g.updated = true;
    return g;
  }
  g.exists = std::filesystem::exists(path);
  g.expected = read_file(path);
  return g;
}

}  // namespace gpulock::test

/// Compares `actual_text` (a std::string) with the golden file at `golden_path`: the file must
/// exist and hold exactly `actual`. With GPULOCK_UPDATE_GOLDEN set, rewrites the file and warns
/// instead.
#define GPULOCK_CHECK_GOLDEN(golden_path, actual_text)                       \
  do {                                                                       \
    const std::string gpulock_golden_actual_ = (actual_text);                \
    const ::gpulock::test::GoldenFile gpulock_golden_ =                      \
        ::gpulock::test::golden_file((golden_path), gpulock_golden_actual_); \
    if (gpulock_golden_.updated) {                                           \
      WARN("updated " << gpulock_golden_.path.string());                     \
    } else {                                                                 \
      INFO(gpulock_golden_.note());                                          \
      REQUIRE(gpulock_golden_.exists);                                       \
      CHECK(gpulock_golden_actual_ == gpulock_golden_.expected);             \
    }                                                                        \
  } while (false)

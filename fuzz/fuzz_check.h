#pragma once
// Shared by the harnesses: a property check that reports the input's parse and aborts (libFuzzer
// then saves the input as a crash), and the input as text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace gpulock::fuzz {

/// The fuzzer's bytes as a string_view.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void property_failed(const char* file, int line, const char* what,
                                         const std::string& detail) {
  std::fprintf(stderr, "%s:%d: property failed: %s\n  %s\n", file, line, what, detail.c_str());
  std::abort();
}

}  // namespace gpulock::fuzz

/// FUZZ_CHECK(condition, detail): abort with `detail` (a std::string expression, evaluated only
/// on failure) when `condition` is false.
#define FUZZ_CHECK(cond, detail)                                                        \
  do {                                                                                  \
    if (!(cond)) ::gpulock::fuzz::property_failed(__FILE__, __LINE__, #cond, (detail)); \
  } while (0)

// PEP 508 environment markers (core/marker.h). Properties: the printed text parses back to a
// marker that prints the same, mentions `extra` the same, and evaluates the same (value or
// error) in a few environments.
#include "gpulock/core/marker.h"

#include <fmt/format.h>

#include "fuzz_check.h"

using gpulock::core::Environment;
using gpulock::core::Marker;

namespace {

std::string outcome(const gpulock::core::Result<bool>& r) {
  return r ? (*r ? "true" : "false") : "error: " + r.error().message;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = gpulock::fuzz::as_text(data, size);
  auto marker = Marker::parse(text);
  if (!marker) return 0;
  std::string printed = marker->to_string();
  static const Environment envs[] = {
      Environment::linux_cpython("3.11", "x86_64"),
      Environment::linux_cpython("3.9", "aarch64", "3.9.18"),
      [] {
        Environment e = Environment::linux_cpython("3.13", "x86_64");
        e.sys_platform = "win32";
        e.os_name = "nt";
        e.extras = {"gpu", "test"};
        e.dependency_groups = {"dev"};
        return e;
      }(),
  };
  std::vector<std::string> before;
  for (const Environment& env : envs) {
    before.push_back(outcome(marker->evaluate(env)));
    before.push_back(outcome(marker->evaluate(env, "gpu")));
  }
  if (marker->empty()) return 0;
  auto again = Marker::parse(printed);
  FUZZ_CHECK(again.has_value(), fmt::format("'{}' prints as '{}', which does not parse: {}", text,
                                            printed, again ? "" : again.error().message));
  FUZZ_CHECK(again->to_string() == printed,
             fmt::format("'{}' -> '{}' -> '{}'", text, printed, again->to_string()));
  FUZZ_CHECK(again->mentions_extra() == marker->mentions_extra(), fmt::format("'{}'", text));
  std::size_t i = 0;
  for (const Environment& env : envs) {
    for (std::string_view extra : {std::string_view{}, std::string_view{"gpu"}}) {
      std::string after = outcome(again->evaluate(env, extra));
      FUZZ_CHECK(after == before[i],
                 fmt::format("'{}' evaluates to {} before printing, {} after ('{}')", text,
                             before[i], after, printed));
      ++i;
    }
  }
  return 0;
}

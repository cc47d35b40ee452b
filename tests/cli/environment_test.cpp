// One rule for every environment variable gpulock reads: an empty value counts as unset, and a
// value it cannot use is `error: invalid value for NAME: ...` with exit 2, for the index's
// variables (GPULOCK_HTTP_*, GPULOCK_MAX_*, GPULOCK_CONCURRENT_DOWNLOADS) as for probe's.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"

using gpulock::test::describe;
using gpulock::test::Env;
using gpulock::test::RunResult;

namespace {

Env plain_env() {
  return {{"PATH", "/usr/bin:/bin"}, {"NO_COLOR", "1"}, {"HOME", "/nonexistent"}};
}

RunResult gpulock_run(std::vector<std::string> args, const Env& env) {
  args.insert(args.begin(), GPULOCK_EXE);
  return gpulock::test::run_process(args, env);
}

}  // namespace

TEST_CASE(
    "a malformed GPULOCK_HTTP_* variable is a usage error naming it, for every command "
    "that talks to an index",
    "[cli][env]") {
  const std::vector<std::vector<std::string>> commands = {
      {"resolve", "six", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
       "--driver", "none", "--index-url", "file:///nonexistent/", "-o", "-"},
      {"index", "show", "six", "--index-url", "file:///nonexistent/"},
  };
  struct Bad {
    const char* name;
    const char* value;
    const char* expected;
  };
  const Bad bad[] = {
      {"GPULOCK_HTTP_TIMEOUT", "soon", "seconds above 0, e.g. 30 or 2.5"},
      {"GPULOCK_HTTP_RETRIES", "three", "a number of retries, 0-10000"},
      {"GPULOCK_CONCURRENT_DOWNLOADS", "0", "a number of transfers, 1-10000"},
      {"GPULOCK_MAX_PAGE_SIZE", "1X", "a size such as 1G, 512M or 1048576"},
  };
  for (const auto& args : commands) {
    for (const auto& b : bad) {
      Env env = plain_env();
      env[b.name] = b.value;
      auto r = gpulock_run(args, env);
      INFO(args[0] << " with " << b.name << "=" << b.value << "\n" << describe(r));
      CHECK(r.status == 2);
      CHECK(r.err == std::string("error: invalid value for ") + b.name + ": '" + b.value +
                         "' (expected " + b.expected + ")\n");
    }
  }
  // Empty counts as unset: the command goes on (and fails later, on the missing index).
  Env empty = plain_env();
  empty["GPULOCK_HTTP_TIMEOUT"] = "";
  auto r = gpulock_run(commands[1], empty);
  INFO(describe(r));
  CHECK(r.status != 2);
}

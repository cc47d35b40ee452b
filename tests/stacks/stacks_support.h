// Helpers of the GPU stacks end-to-end tests (issue 23): the real gpulock binary against the
// 'gpu-stacks' fixture variant (fixtures/variants/gpu-stacks.json), served by one private nginx
// that the cases share, with a hermetic environment (no driver, no GPU unless a flag says so).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "test_files.h"
#include "test_servers.h"

namespace stacks_test {

namespace fs = std::filesystem;
using Run = gpulock::test::RunResult;
using gpulock::test::describe;
using gpulock::test::replace_all;

inline const fs::path kWorkDir = STACKS_WORK_DIR;

inline const gpulock::test::ServersEnv& stacks() {
  static gpulock::test::PrivateServers server(
      gpulock::test::PrivateServerOptions{.root = STACKS_INDEX, .copy = false});
  return server.env();
}

inline gpulock::test::Env env() {
  fs::path root = kWorkDir / "empty-root";
  fs::create_directories(root / "bin");
  return {{"PATH", (root / "bin").string()},
          {"HOME", kWorkDir.string()},
          {"NO_COLOR", "1"},
          {"GPULOCK_TEST_ROOT", root.string()},
          {"GPULOCK_PROBE_TIMEOUT_MS", "2000"}};
}

// `gpulock resolve ARGS -o -` for CPython 3.12 on manylinux_2_28_x86_64 against the stacks index
// (PyPI-like tree and PyTorch-like tree), with one shared cache.
inline Run resolve(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {GPULOCK_EXE, "resolve"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(),
              {"--python-version", "3.12", "--platform", "manylinux_2_28_x86_64", "--index-url",
               stacks().pypi_url(), "--torch-index-base", stacks().torch_index_base(),
               "--cache-dir", (kWorkDir / "cache").string(), "-o", "-"});
  fs::create_directories(kWorkDir);
  return gpulock::test::run_process(argv, env(), {.cwd = kWorkDir, .timeout_s = 120});
}

// Output with the server's URL and the work dir replaced.
inline std::string normalize(std::string text) {
  text = replace_all(text, stacks().http_url(), "http://INDEX");
  return replace_all(text, kWorkDir.string(), "WORK");
}

// `name = "X"` followed by `version = "V"` in a lock's text: V, or "" when X is not locked.
inline std::string locked(const std::string& lock, const std::string& name) {
  std::string key = "name = \"" + name + "\"\nversion = \"";
  auto at = lock.find(key);
  if (at == std::string::npos) return {};
  at += key.size();
  return lock.substr(at, lock.find('"', at) - at);
}

}  // namespace stacks_test

#pragma once
// Runs one of the reference scripts in tests/core (pypa/packaging under Debian's
// /usr/bin/python3) with `input` lines on stdin and returns its output lines.

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "test_files.h"

namespace gpulock::test {

inline std::vector<std::string> run_python_reference(const std::string& script,
                                                     const std::vector<std::string>& input) {
  const TempDir dir(std::filesystem::temp_directory_path(), "gpulock-ref-");
  std::string text;
  for (const auto& line : input)
    text += line + '\n';
  write_file(dir / "input.txt", text);
  const std::string command = std::string("/usr/bin/python3 ") + GPULOCK_SOURCE_DIR +
                              "/tests/core/" + script + " < " +
                              shell_quote((dir / "input.txt").string());
  const RunResult r = run_shell(command);
  INFO("command: " << command << "\n" << r.err);
  REQUIRE(r.status == 0);
  const std::string& output = r.out;
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t nl = output.find('\n', pos);
    if (nl == std::string::npos) nl = output.size();
    lines.push_back(output.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

}  // namespace gpulock::test

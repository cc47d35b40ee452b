#pragma once
// Runs one of the reference scripts in tests/core (pypa/packaging under Debian's
// /usr/bin/python3) with `input` lines on stdin and returns its output lines.

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace gpulock::test {

inline std::vector<std::string> run_python_reference(const std::string& script,
                                                     const std::vector<std::string>& input) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path in = fs::temp_directory_path() / ("gpulock-ref-" + std::to_string(::getpid()) +
                                                   "-" + std::to_string(counter++) + ".txt");
  {
    std::ofstream f(in, std::ios::binary);
    for (const auto& line : input)
      f << line << '\n';
  }
  const std::string command = std::string("/usr/bin/python3 ") + GPULOCK_SOURCE_DIR +
                              "/tests/core/" + script + " < " + in.string();
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  std::array<char, 65536> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0)
    output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  std::error_code ignored;
  fs::remove(in, ignored);
  INFO("command: " << command);
  REQUIRE(status == 0);
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

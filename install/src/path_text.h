#pragma once
// Paths as text where the std::filesystem passes cost (20,000 files of a torch-sized install).
#include <filesystem>
#include <string>

namespace gpulock::install::detail {

// `path` relative to `dir`: the text after "dir/" when it starts so (a directory iterator's
// paths do), else lexically_relative's answer.
inline std::string below(const std::filesystem::path& path, const std::filesystem::path& dir) {
  const std::string& p = path.native();
  const std::string& d = dir.native();
  if (p.size() > d.size() + 1 && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/')
    return p.substr(d.size() + 1);
  return path.lexically_relative(dir).generic_string();
}

}  // namespace gpulock::install::detail

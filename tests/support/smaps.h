#pragma once
// The kernel's flags for the mapping that holds an address (/proc/self/smaps VmFlags, e.g.
// "rd wr mr mw me ac hg"; "hg" is madvise(MADV_HUGEPAGE)); empty when no mapping holds it.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace gpulock::test {

inline std::string vm_flags_at(const void* p) {
  auto address = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' &&
        line.find(':') > line.find(' ')) {
      inside = begin <= address && address < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8);
  }
  return {};
}

inline bool has_vm_flag(const void* p, const std::string& flag) {
  std::istringstream words(vm_flags_at(p));
  std::string word;
  while (words >> word) {
    if (word == flag) return true;
  }
  return false;
}

}  // namespace gpulock::test

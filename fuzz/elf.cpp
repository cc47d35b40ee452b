// The probe's ELF reader (probe/src/elf_file.h): header, dynamic section (SONAME, NEEDED, RPATH,
// RUNPATH) and a dynamic symbol's bytes, read at offsets with bounds checks. The input is
// written to a memfd and read through /proc/self/fd. Properties: at most 64 symbol bytes, as
// many as asked; RPATH/RUNPATH entries split and expand without crashing.
#include <unistd.h>

#include <fmt/format.h>
#include <sys/mman.h>

#include "elf_file.h"
#include "fuzz_check.h"

using namespace gpulock::probe::detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static int fd = ::memfd_create("fuzz-elf", MFD_CLOEXEC);
  static const std::string path = fmt::format("/proc/self/fd/{}", fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
  if (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  auto info = read_elf(path);
  if (info) {
    for (const auto* list : {&info->rpath, &info->runpath}) {
      if (!*list) continue;
      for (const std::string& entry : split_path_list(**list))
        (void)expand_origin(entry, "/opt/lib");
    }
  }
  for (std::size_t want : {4u, 64u}) {
    if (auto bytes = read_symbol_bytes(path, "cudnn_graph_version", want)) {
      FUZZ_CHECK(bytes->size() == want, fmt::format("asked {} bytes, got {}", want, bytes->size()));
    }
  }
  return 0;
}

#pragma once
// A model of where the dynamic loader finds a library that another library dlopens by bare
// soname (glibc elf/dl-load.c `_dl_map_object`), so that gpulock can say where cuDNN's
// sub-libraries come from without dlopening them by name itself:
//   1. DT_RPATH of the caller, only when the caller has no DT_RUNPATH;
//   2. LD_LIBRARY_PATH (as the process was started);
//   3. DT_RUNPATH of the caller ($ORIGIN = the directory the caller was opened from);
//   4. the ld.so cache;
//   5. the trusted system directories.
// In each directory the loader takes the first file of that name it can open, unless it is an
// ELF object of another class or machine (checked against glibc: tests/envprobe/loader_test.cpp).
// Not modelled: glibc-hwcaps subdirectories, $LIB and $PLATFORM tokens (an entry using them is
// skipped), the executable's own RPATH, and a library of that soname already loaded in the process
// (the loader would reuse it).

#include <optional>
#include <string>
#include <vector>

#include "gpulock/probe/load_probe.h"

#include "elf_file.h"
#include "ld_cache.h"

namespace gpulock::probe::detail {

struct LoaderSearch {
  std::vector<std::string> ld_library_path;  ///< entries as written ("" = current directory)
  std::optional<LdCache> cache;
  std::vector<std::string> system_dirs;
  std::string cwd;  ///< for empty entries

  struct Hit {
    std::string path;  ///< the file as the loader would open it
    FoundVia via = FoundVia::SystemDir;
    std::string entry;  ///< the LD_LIBRARY_PATH / RPATH / RUNPATH entry as written, or the cache
  };

  /// Does the loader take this file (and stop searching)? False when it cannot be opened or is
  /// an ELF object of another class or machine; true otherwise, even for a file that will then
  /// fail to load (not ELF, a directory), as glibc does.
  [[nodiscard]] static bool usable(const std::string& path);

  /// Where `soname` is found when the library at `caller_path` (with ELF facts `caller`, null
  /// when unreadable) dlopens it.
  [[nodiscard]] std::optional<Hit> find(const std::string& soname, const std::string& caller_path,
                                        const ElfInfo* caller) const;
};

/// glibc's trusted directories for this architecture, as `ld.so --list-diagnostics` prints
/// them on Debian (path.system_dirs): /lib/<triplet>/, /usr/lib/<triplet>/, /lib/, /usr/lib/.
[[nodiscard]] std::vector<std::string> default_system_dirs();

}  // namespace gpulock::probe::detail

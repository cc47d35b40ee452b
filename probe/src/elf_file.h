#pragma once
// A small reader for what the dynamic loader looks at in a shared library (ELF, System V gABI
// "Dynamic Section"; glibc elf/dl-load.c): the file's class and machine (a library of another
// class or architecture is skipped by the search), DT_SONAME, DT_NEEDED, DT_RPATH, DT_RUNPATH,
// and the bytes of an exported data symbol (cuDNN's `cudnn_graph_version` and friends), read
// from the file without loading it. Reads with bounds checks at offsets (cuDNN's engine
// libraries are hundreds of MiB): a truncated or hostile file gives an error, never a crash.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::probe::detail {

struct ElfInfo {
  bool is_64 = false;
  std::uint16_t machine = 0;  ///< e_machine (62 = x86-64, 183 = AArch64)
  bool compatible = false;    ///< same class, byte order and machine as this process
  std::string soname;
  std::vector<std::string> needed;
  std::optional<std::string> rpath;    ///< DT_RPATH, unexpanded
  std::optional<std::string> runpath;  ///< DT_RUNPATH, unexpanded
};

/// The ELF class and machine of this process (x86-64: 64-bit, 62).
[[nodiscard]] bool host_elf_is_64() noexcept;
[[nodiscard]] std::uint16_t host_elf_machine() noexcept;

/// Reads the ELF header and the dynamic section. Errors: Io (cannot open), InvalidInput (not
/// an ELF shared object, or malformed; the message says what).
[[nodiscard]] core::Result<ElfInfo> read_elf(const std::string& path);

/// The first `size` (<= 64) bytes of the dynamic symbol `name`'s object, read from the file
/// through .dynsym and the PT_LOAD segment that holds it. nullopt when the file has no such
/// defined symbol or it lies outside the file (.bss).
[[nodiscard]] std::optional<std::vector<unsigned char>> read_symbol_bytes(const std::string& path,
                                                                          const std::string& name,
                                                                          std::size_t size);

/// Expands `$ORIGIN` / `${ORIGIN}` in one RPATH/RUNPATH entry with `origin` (the directory of
/// the object as it was opened, symlinks not resolved, as glibc does). nullopt when the entry
/// uses another token ($LIB, $PLATFORM), which gpulock does not model.
[[nodiscard]] std::optional<std::string> expand_origin(const std::string& entry,
                                                       const std::string& origin);

/// Splits a path list at any of `separators` (glibc: ":;" for LD_LIBRARY_PATH, ":" for
/// RPATH/RUNPATH). Empty entries are kept as "" (glibc searches the current directory for
/// them); an empty list gives no entries.
[[nodiscard]] std::vector<std::string> split_path_list(const std::string& list,
                                                       const char* separators = ":");

}  // namespace gpulock::probe::detail

#pragma once
// The ld.so cache (/etc/ld.so.cache, written by ldconfig): soname -> path for the libraries in
// the directories of /etc/ld.so.conf. The dynamic loader consults it after LD_LIBRARY_PATH and
// the caller's RUNPATH, before the system directories. The format is glibc's
// (sysdeps/generic/dl-cache.h): the "glibc-ld.so.cache1.1" header, then fixed-size entries whose
// strings are offsets from the start of the file; an old "ld.so-1.7.0" table may come first.
// `ldconfig -p` prints the same entries.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::probe::detail {

struct LdCacheEntry {
  std::string soname;
  std::string path;
  std::int32_t flags = 0;   ///< FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 = 0x0303 on x86-64
  std::uint64_t hwcap = 0;  ///< non-zero: a glibc-hwcaps subdirectory entry
};

class LdCache {
 public:
  /// Parses the cache file. Errors: Io (cannot read), InvalidInput (not a cache / truncated).
  [[nodiscard]] static core::Result<LdCache> read(const std::string& path);
  /// Parses cache bytes; `where` names them in errors.
  [[nodiscard]] static core::Result<LdCache> parse(std::string_view bytes,
                                                   const std::string& where);

  /// The path the loader takes for `soname` on this architecture: the first entry for it
  /// without a hwcaps subdirectory, else the first entry. nullopt if none.
  [[nodiscard]] std::optional<std::string> lookup(std::string_view soname) const;

  [[nodiscard]] const std::vector<LdCacheEntry>& entries() const noexcept { return entries_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::vector<LdCacheEntry> entries_;
  std::string path_;
};

/// The flags value of entries usable by this process (0x0303 on x86-64, 0x0a03 on AArch64).
[[nodiscard]] std::int32_t host_cache_flags() noexcept;

}  // namespace gpulock::probe::detail

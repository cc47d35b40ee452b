// The ld.so cache that ldconfig writes and `ldconfig -p` prints (probe/src/ld_cache.h). Property:
// every entry for this process's architecture (flags) is found by lookup().
#include "ld_cache.h"

#include <fmt/format.h>

#include "fuzz_check.h"

using gpulock::probe::detail::LdCache;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto cache = LdCache::parse(gpulock::fuzz::as_text(data, size), "ld.so.cache");
  if (!cache) return 0;
  std::size_t checked = 0;
  for (const auto& e : cache->entries()) {
    if (e.flags != gpulock::probe::detail::host_cache_flags()) continue;
    if (++checked > 64) break;
    auto path = cache->lookup(e.soname);
    FUZZ_CHECK(path.has_value(), fmt::format("entry '{}' not found by lookup", e.soname));
  }
  return 0;
}

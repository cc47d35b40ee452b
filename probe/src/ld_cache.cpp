#include "ld_cache.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace gpulock::probe::detail {
namespace {

constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache";
constexpr std::string_view kNewVersion = "1.1";
constexpr std::size_t kOldEntrySize = 12;  // flags, key, value: 3 x int32
constexpr std::size_t kNewHeaderSize = 48;
constexpr std::size_t kNewEntrySize = 24;  // flags, key, value, osversion, hwcap (u64)

std::uint32_t u32(std::string_view b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
std::uint64_t u64(std::string_view b, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

core::Error cache_error(const std::string& where, std::string what) {
  return core::make_error(core::ErrorCode::InvalidInput, std::move(what), where);
}

}  // namespace

std::int32_t host_cache_flags() noexcept {
  constexpr std::int32_t kElfLibc6 = 0x0003;
#if defined(__x86_64__)
  return kElfLibc6 | 0x0300;  // FLAG_X8664_LIB64
#elif defined(__aarch64__)
  return kElfLibc6 | 0x0a00;  // FLAG_AARCH64_LIB64
#elif defined(__powerpc64__)
  return kElfLibc6 | 0x0500;  // FLAG_POWERPC_LIB64
#else
  return kElfLibc6;
#endif
}

core::Result<LdCache> LdCache::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::unexpected(core::make_error(
        core::ErrorCode::Io, fmt::format("cannot read it: {}", std::strerror(errno)), path));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

core::Result<LdCache> LdCache::parse(std::string_view b, const std::string& where) {
  std::size_t base = 0;
  if (b.starts_with(kOldMagic)) {
    // Old table: magic, nlibs, then entries; the new table follows, 8-byte aligned.
    if (b.size() < kOldMagic.size() + 4)
      return std::unexpected(cache_error(where, "truncated ld.so cache"));
    std::uint32_t n = u32(b, kOldMagic.size());
    std::uint64_t end = kOldMagic.size() + 4 + std::uint64_t{n} * kOldEntrySize;
    base = static_cast<std::size_t>((end + 7) & ~std::uint64_t{7});
    if (base >= b.size())
      return std::unexpected(cache_error(where, "ld.so cache without the new table"));
  }
  std::string_view t = b.substr(base);
  if (!t.starts_with(kNewMagic) || t.size() < kNewHeaderSize ||
      t.substr(kNewMagic.size(), kNewVersion.size()) != kNewVersion) {
    return std::unexpected(cache_error(where, "not a glibc ld.so cache (glibc-ld.so.cache1.1)"));
  }
  const std::uint32_t nlibs = u32(t, 20);
  if (std::uint64_t{nlibs} * kNewEntrySize > t.size() - kNewHeaderSize) {
    return std::unexpected(cache_error(where, "truncated ld.so cache"));
  }
  // String offsets count from the start of the new table (glibc dl-cache.c `cache_data`).
  const std::string_view strings = t;
  auto string_at = [&](std::uint32_t off) -> std::optional<std::string> {
    if (off >= strings.size()) return std::nullopt;
    auto end = strings.find('\0', off);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(strings.substr(off, end - off));
  };
  LdCache cache;
  cache.path_ = where;
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    std::size_t at = kNewHeaderSize + std::size_t{i} * kNewEntrySize;
    LdCacheEntry e;
    e.flags = static_cast<std::int32_t>(u32(t, at));
    auto key = string_at(u32(t, at + 4));
    auto value = string_at(u32(t, at + 8));
    e.hwcap = u64(t, at + 16);
    if (!key || !value)
      return std::unexpected(cache_error(where, "ld.so cache entry out of range"));
    e.soname = std::move(*key);
    e.path = std::move(*value);
    cache.entries_.push_back(std::move(e));
  }
  return cache;
}

std::optional<std::string> LdCache::lookup(std::string_view soname) const {
  const std::int32_t flags = host_cache_flags();
  std::optional<std::string> any;
  for (const auto& e : entries_) {
    if (e.soname != soname || e.flags != flags) continue;
    if (e.hwcap == 0) return e.path;
    if (!any) any = e.path;
  }
  return any;
}

}  // namespace gpulock::probe::detail

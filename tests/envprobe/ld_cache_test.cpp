// The ld.so cache parser against `ldconfig -p` (glibc's own printer of the same file), and on
// small caches written here byte by byte.
#include "ld_cache.h"

#include <cstring>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli_runner.h"

using namespace gpulock::probe::detail;

namespace {

// What `command` (/bin/sh) prints on stdout.
std::string run(const std::string& command) {
  return gpulock::test::run_shell(command).out;
}

// A new-format cache with these entries (flags, soname, path, hwcap).
struct Entry {
  std::int32_t flags;
  std::string soname, path;
  std::uint64_t hwcap = 0;
};
std::string make_cache(const std::vector<Entry>& entries, bool old_prefix = false) {
  std::string header = "glibc-ld.so.cache1.1";
  std::string table;
  std::string strings;
  const std::size_t strings_at = 48 + entries.size() * 24;
  auto add_string = [&](const std::string& s) {
    auto off = static_cast<std::uint32_t>(strings_at + strings.size());
    strings += s;
    strings += '\0';
    return off;
  };
  auto put32 = [](std::string& out, std::uint32_t v) {
    out.append(reinterpret_cast<char*>(&v), 4);
  };
  auto put64 = [](std::string& out, std::uint64_t v) {
    out.append(reinterpret_cast<char*>(&v), 8);
  };
  for (const auto& e : entries) {
    put32(table, static_cast<std::uint32_t>(e.flags));
    put32(table, add_string(e.soname));
    put32(table, add_string(e.path));
    put32(table, 0);
    put64(table, e.hwcap);
  }
  std::string out = header;
  put32(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(strings.size()));
  out += std::string(4, '\0');   // flags + padding
  put32(out, 0);                 // extension offset
  out += std::string(12, '\0');  // unused
  REQUIRE(out.size() == 48);
  out += table + strings;
  if (!old_prefix) return out;
  std::string old = "ld.so-1.7.0";
  put32(old, 0);  // no old entries
  while (old.size() % 8 != 0)
    old += '\0';
  return old + out;
}

}  // namespace

TEST_CASE("the ld.so cache reads as ldconfig -p prints it", "[envprobe][ldcache]") {
  auto cache = LdCache::read("/etc/ld.so.cache");
  REQUIRE(cache.has_value());
  // ldconfig -p: "\tlibfoo.so.1 (libc6,x86-64) => /path"; the x86-64 (or AArch64) entries are
  // the ones this process can use.
  std::set<std::pair<std::string, std::string>> expected;
  std::istringstream in(run("ldconfig -p"));
  std::string line;
  std::regex re(R"(^\s+(\S+) \(([^)]*)\) => (\S+)$)");
  const std::string arch = host_cache_flags() == 0x0303 ? "libc6,x86-64" : "libc6,AArch64";
  std::size_t total = 0;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, re)) continue;
    ++total;
    if (m[2].str().rfind(arch, 0) == 0) expected.emplace(m[1], m[3]);
  }
  REQUIRE(total == cache->entries().size());
  std::set<std::pair<std::string, std::string>> got;
  for (const auto& e : cache->entries()) {
    if (e.flags == host_cache_flags()) got.emplace(e.soname, e.path);
  }
  CHECK(got == expected);
  // The system cuDNN of this machine is in the cache (the premise of the shadowing tests).
  auto cudnn = cache->lookup("libcudnn_ops.so.9");
  REQUIRE(cudnn.has_value());
  CHECK(expected.contains({"libcudnn_ops.so.9", *cudnn}));
  CHECK_FALSE(cache->lookup("libdoes_not_exist.so.1").has_value());
}

TEST_CASE("small caches: flags, hwcaps entries, the old prefix", "[envprobe][ldcache]") {
  const std::int32_t host = host_cache_flags();
  std::vector<Entry> entries = {
      {host, "liba.so.1", "/hwcaps/x86-64-v3/liba.so.1", 1ull << 62},
      {host, "liba.so.1", "/usr/lib/liba.so.1"},
      {0x0003, "libb.so.1", "/lib32/libb.so.1"},  // another architecture
      {host, "libc2.so.1", "/only/hwcaps/libc2.so.1", 1ull << 62},
  };
  for (bool old : {false, true}) {
    INFO("old prefix " << old);
    auto cache = LdCache::parse(make_cache(entries, old), "test");
    REQUIRE(cache.has_value());
    CHECK(cache->entries().size() == 4);
    CHECK(cache->lookup("liba.so.1") == "/usr/lib/liba.so.1");
    CHECK_FALSE(cache->lookup("libb.so.1").has_value());
    CHECK(cache->lookup("libc2.so.1") == "/only/hwcaps/libc2.so.1");
  }
}

TEST_CASE("damaged caches are errors", "[envprobe][ldcache]") {
  std::string good = make_cache({{host_cache_flags(), "liba.so.1", "/usr/lib/liba.so.1"}});
  CHECK_FALSE(LdCache::parse("", "t").has_value());
  CHECK_FALSE(LdCache::parse("glibc-ld.so.cache1.0" + std::string(40, '\0'), "t").has_value());
  CHECK_FALSE(LdCache::parse(good.substr(0, 47), "t").has_value());
  CHECK_FALSE(LdCache::parse(good.substr(0, 60), "t").has_value());  // entry cut off
  std::string bad_offset = good;
  std::uint32_t huge = 0xfffffff0u;
  std::memcpy(bad_offset.data() + 48 + 4, &huge, 4);
  CHECK_FALSE(LdCache::parse(bad_offset, "t").has_value());
  std::string many = good;
  std::uint32_t n = 0x7fffffffu;
  std::memcpy(many.data() + 20, &n, 4);
  CHECK_FALSE(LdCache::parse(many, "t").has_value());
  CHECK_FALSE(LdCache::read("/nonexistent/ld.so.cache").has_value());
}

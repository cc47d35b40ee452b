// Which writes are flushed to disk: the lock (a user's file: fsynced, with its directory) and
// not the index cache's entries, which are checksummed and read as a miss when a crash tore
// them (sys::AtomicWriteOptions::durable). Counted with an LD_PRELOAD shim
// (tests/support/count_fsync.c). Before, every cache entry cost two fsyncs: a fifth of a cold
// multi-target resolve.
#include "resolve_support.h"

using namespace resolve_test;

TEST_CASE("a cold resolve flushes the lock to disk, not the cache entries", "[resolve][cache]") {
  fs::path dir = fresh_dir("durable");
  fs::path log = dir / "fsync.log";
  fs::path cache = dir / "cache";
  Options o;
  o.cache = cache;
  o.cwd = dir;
  o.env = {{"LD_PRELOAD", GPULOCK_COUNT_FSYNC}, {"GPULOCK_TEST_FSYNC_LOG", log.string()}};
  auto argv = resolve_argv({"jinja2", "-o", (dir / "pylock.toml").string()}, o);
  Run r = run(argv, gpulock::test::merge_env(base_env(), o.env), dir);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  REQUIRE(fs::exists(dir / "pylock.toml"));
  // The cache was written: pages and METADATA.
  std::size_t entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache))
    entries += e.is_regular_file() ? 1 : 0;
  CHECK(entries >= 2);
  std::string text = fs::exists(log) ? read_file(log) : std::string();
  INFO(text);
  std::size_t lock_flushes = 0;
  std::size_t cache_flushes = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    if (line.find(cache.string()) != std::string::npos) {
      ++cache_flushes;
    } else if (line.find("pylock.toml") != std::string::npos || line == "fsync " + dir.string()) {
      ++lock_flushes;
    }
  }
  // The lock's temporary file, then its directory.
  CHECK(lock_flushes == 2);
  CHECK(cache_flushes == 0);
}

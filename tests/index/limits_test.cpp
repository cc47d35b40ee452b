// Resource limits that need no server: byte sizes, the environment behind ClientOptions' limits,
// temporary files in <cache>/partial/ (owner locks, stale cleanup), special files in the cache.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "gpulock/index/client.h"

#include "cache.h"
#include "index_test_support.h"
#include "temp_files.h"
#include "test_files.h"

using namespace gpulock;
using namespace gpulock::index;
namespace fs = std::filesystem;

namespace {

using EnvVar = gpulock::test::ScopedEnv;

void touch(const fs::path& p) {
  std::ofstream(p) << "x";
}

}  // namespace

TEST_CASE("parse_byte_size and format_byte_size", "[limits]") {
  CHECK(parse_byte_size("1048576") == std::uint64_t{1} << 20);
  CHECK(parse_byte_size("1G") == std::uint64_t{1} << 30);
  CHECK(parse_byte_size("512MiB") == std::uint64_t{512} << 20);
  CHECK(parse_byte_size("64k") == std::uint64_t{64} << 10);
  CHECK(parse_byte_size("2 GB") == std::uint64_t{2} << 30);
  CHECK_FALSE(parse_byte_size(""));
  CHECK_FALSE(parse_byte_size("0"));
  CHECK_FALSE(parse_byte_size("G"));
  CHECK_FALSE(parse_byte_size("1X"));
  CHECK_FALSE(parse_byte_size("-1"));
  CHECK_FALSE(parse_byte_size("99999999999999999999"));
  CHECK_FALSE(parse_byte_size("17179869184T"));  // overflows
  CHECK(format_byte_size(std::uint64_t{1} << 30) == "1 GiB");
  CHECK(format_byte_size(std::uint64_t{3} << 20) == "3 MiB");
  CHECK(format_byte_size(1000) == "1000 bytes");
}

TEST_CASE("the environment sets the time and size limits", "[limits]") {
  // The machine's own settings (a CI image may set PIP_DEFAULT_TIMEOUT) stay out of this test.
  std::deque<EnvVar> clean;
  for (const char* name :
       {"GPULOCK_HTTP_TIMEOUT", "UV_HTTP_TIMEOUT", "PIP_DEFAULT_TIMEOUT",
        "GPULOCK_HTTP_LOW_SPEED_LIMIT", "GPULOCK_HTTP_LOW_SPEED_TIME", "GPULOCK_HTTP_DEADLINE",
        "GPULOCK_MAX_PAGE_SIZE", "GPULOCK_MAX_DOWNLOAD_SIZE", "GPULOCK_HTTP_MAX_RETRY_DELAY"}) {
    clean.emplace_back(name, nullptr);
  }
  ClientOptions defaults = ClientOptions::from_environment().value();
  CHECK(defaults.low_speed_time == std::chrono::seconds(30));
  CHECK(defaults.floor_bytes == 1024);
  CHECK(defaults.floor_window == std::chrono::seconds(30));
  CHECK(defaults.deadline == std::chrono::seconds(120));
  CHECK(defaults.max_page_bytes == std::uint64_t{256} << 20);

  SECTION("pip's and uv's timeouts, gpulock's first") {
    EnvVar pip("PIP_DEFAULT_TIMEOUT", "7");
    CHECK(ClientOptions::from_environment().value().low_speed_time == std::chrono::seconds(7));
    EnvVar uv("UV_HTTP_TIMEOUT", "5");
    CHECK(ClientOptions::from_environment().value().low_speed_time == std::chrono::seconds(5));
    EnvVar own("GPULOCK_HTTP_TIMEOUT", "2.5");
    CHECK(ClientOptions::from_environment().value().low_speed_time ==
          std::chrono::milliseconds(2500));
  }
  SECTION("floor, deadline, sizes") {
    EnvVar a("GPULOCK_HTTP_LOW_SPEED_LIMIT", "4096");
    EnvVar b("GPULOCK_HTTP_LOW_SPEED_TIME", "3");
    EnvVar c("GPULOCK_HTTP_DEADLINE", "9");
    EnvVar d("GPULOCK_MAX_PAGE_SIZE", "2M");
    EnvVar e("GPULOCK_MAX_DOWNLOAD_SIZE", "");  // empty counts as unset
    ClientOptions o = ClientOptions::from_environment().value();
    CHECK(o.floor_bytes == 4096);
    CHECK(o.floor_window == std::chrono::seconds(3));
    CHECK(o.deadline == std::chrono::seconds(9));
    CHECK(o.max_page_bytes == std::uint64_t{2} << 20);
    CHECK(o.max_download_bytes == defaults.max_download_bytes);
  }
  SECTION("uv's and pip's timeouts are passed over when gpulock cannot use them") {
    EnvVar uv("UV_HTTP_TIMEOUT", "soon");
    EnvVar pip("PIP_DEFAULT_TIMEOUT", "7");
    CHECK(ClientOptions::from_environment().value().low_speed_time == std::chrono::seconds(7));
  }
}

TEST_CASE("a malformed GPULOCK_* variable is a usage error naming it", "[limits]") {
  // The same rule as probe's variables (GPULOCK_DRIVER, GPULOCK_PROBE_TIMEOUT_MS): these used
  // to be ignored silently.
  std::deque<EnvVar> clean;
  for (const char* name :
       {"GPULOCK_HTTP_TIMEOUT", "UV_HTTP_TIMEOUT", "PIP_DEFAULT_TIMEOUT",
        "GPULOCK_HTTP_LOW_SPEED_LIMIT", "GPULOCK_HTTP_LOW_SPEED_TIME", "GPULOCK_HTTP_DEADLINE",
        "GPULOCK_MAX_PAGE_SIZE", "GPULOCK_MAX_DOWNLOAD_SIZE", "GPULOCK_HTTP_MAX_RETRY_DELAY",
        "GPULOCK_HTTP_RETRIES", "GPULOCK_CONCURRENT_DOWNLOADS"}) {
    clean.emplace_back(name, nullptr);
  }
  const std::pair<const char*, const char*> bad[] = {
      {"GPULOCK_HTTP_TIMEOUT", "soon"},       {"GPULOCK_HTTP_TIMEOUT", "0"},
      {"GPULOCK_HTTP_LOW_SPEED_LIMIT", "-1"}, {"GPULOCK_HTTP_LOW_SPEED_TIME", "3s"},
      {"GPULOCK_HTTP_DEADLINE", "x"},         {"GPULOCK_HTTP_MAX_RETRY_DELAY", "-2"},
      {"GPULOCK_MAX_PAGE_SIZE", "1X"},        {"GPULOCK_MAX_DOWNLOAD_SIZE", "nonsense"},
      {"GPULOCK_HTTP_RETRIES", "three"},      {"GPULOCK_HTTP_RETRIES", "-1"},
      {"GPULOCK_CONCURRENT_DOWNLOADS", "0"},
  };
  for (const auto& [name, value] : bad) {
    EnvVar v(name, value);
    auto o = ClientOptions::from_environment();
    INFO(name << "=" << value);
    REQUIRE_FALSE(o);
    CHECK(o.error().code == gpulock::core::ErrorCode::Usage);
    CHECK(o.error().message.starts_with(std::string("invalid value for ") + name + ": '" + value +
                                        "' (expected "));
  }
}

TEST_CASE("temporary files: owned through a held lock, removed when destroyed", "[limits]") {
  fs::path dir = index_test::scratch_dir("temp-own");
  std::string path;
  {
    auto t = detail::make_temp_file(dir.string(), "wheel");
    REQUIRE(t);
    path = t->path();
    CHECK(fs::path(path).filename().string().starts_with(detail::temp_owner() + ".wheel-"));
    CHECK(fs::exists(path));
    // The owner's lock file exists and is held: nobody else can take it.
    fs::path lock = dir / (detail::temp_owner() + ".lock");
    REQUIRE(fs::exists(lock));
    int fd = ::open(lock.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    CHECK(::flock(fd, LOCK_EX | LOCK_NB) != 0);
    ::close(fd);
  }
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("stale temporary files: removed only when their owner is gone or a day old", "[limits]") {
  fs::path dir = index_test::scratch_dir("temp-stale");
  // A killed run: its lock is free.
  touch(dir / "4242-0000beef.lock");
  touch(dir / "4242-0000beef.wheel-aaaaaa");
  // A live run in another process: it holds its lock (a child process holds it here).
  touch(dir / "77-00000001.wheel-bbbbbb");
  int held = ::open((dir / "77-00000001.lock").c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(held >= 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::flock(held, LOCK_EX);
    ::pause();
    ::_exit(0);
  }
  // Owner-less files: a young one stays, an old one goes; files not named like ours stay.
  touch(dir / "88-00000002.wheel-cccccc");
  touch(dir / "99-00000003.wheel-dddddd");
  touch(dir / "someone-elses.txt");
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(dir / "99-00000003.wheel-dddddd", old);
  fs::last_write_time(dir / "someone-elses.txt", old);
  // Wait until the child holds the lock.
  for (int i = 0; i < 200; ++i) {
    int fd = ::open((dir / "77-00000001.lock").c_str(), O_RDONLY);
    bool locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (!locked) ::flock(fd, LOCK_UN);
    ::close(fd);
    if (locked) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(detail::remove_stale_temp_files(dir.string()) == 3);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(held);
  CHECK_FALSE(fs::exists(dir / "4242-0000beef.lock"));
  CHECK_FALSE(fs::exists(dir / "4242-0000beef.wheel-aaaaaa"));
  CHECK(fs::exists(dir / "77-00000001.lock"));
  CHECK(fs::exists(dir / "77-00000001.wheel-bbbbbb"));
  CHECK(fs::exists(dir / "88-00000002.wheel-cccccc"));
  CHECK_FALSE(fs::exists(dir / "99-00000003.wheel-dddddd"));
  CHECK(fs::exists(dir / "someone-elses.txt"));
}

TEST_CASE("a FIFO, a dangling or looping symlink where a cache entry belongs is a miss",
          "[limits]") {
  detail::MetadataEntry entry;
  entry.url = "https://h/demo.whl";
  entry.text = "Metadata-Version: 2.1\nName: demo\nVersion: 1\n";
  for (std::string kind : {"fifo", "dangling", "loop"}) {
    // A cache of one entry: its only regular file is the entry.
    std::string root = index_test::scratch_dir("cache-special-" + kind);
    detail::DiskCache cache(root, true);
    std::string key = "sha256-" + kind;
    REQUIRE(cache.store_metadata(key, entry));
    std::string path;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) path = e.path().string();
    }
    REQUIRE_FALSE(path.empty());
    fs::remove(path);
    if (kind == "fifo") {
      REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
    } else if (kind == "dangling") {
      fs::create_symlink(path + ".missing", path);
    } else {
      fs::create_symlink(fs::path(path).filename(), path);
    }
    auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(cache.load_metadata(key));  // before the fix: a FIFO blocked here forever
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    // Writing the entry again replaces the special file.
    CHECK(cache.store_metadata(key, entry));
    CHECK(cache.load_metadata(key));
  }
}

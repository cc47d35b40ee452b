// The one atomic writer (gpulock/sys/atomic_file.h) as the index cache uses it: missing
// directories made, the temporary file reported while it exists. (Lock files: tests/lock.)
#include "gpulock/sys/atomic_file.h"

#include <unistd.h>
#include <utime.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/wait.h>

namespace fs = std::filesystem;
using gpulock::sys::AtomicWriteOptions;
using gpulock::sys::write_file_atomically;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("gpulock-sys-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("write_file_atomically makes missing directories when asked", "[sys][atomic]") {
  fs::path dir = scratch("mkdir");
  fs::path path = dir / "pages" / "ab" / "entry";
  auto plain = write_file_atomically(path, "x");
  REQUIRE_FALSE(plain);
  CHECK(plain.error().message.find("No such file or directory") != std::string::npos);

  AtomicWriteOptions o;
  o.create_directories = true;
  REQUIRE(write_file_atomically(path, "entry\n", o));
  CHECK(read(path) == "entry\n");
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically reports its temporary file while it exists", "[sys][atomic]") {
  fs::path dir = scratch("temp");
  std::vector<std::pair<std::string, bool>> events;
  AtomicWriteOptions o;
  o.on_temp_file = [&](const std::string& temp, bool exists) {
    events.emplace_back(temp, exists);
    CHECK(fs::exists(temp) == exists);
  };
  REQUIRE(write_file_atomically(dir / "f", "one", o));
  REQUIRE(events.size() == 2);
  CHECK(events[0].second);
  CHECK_FALSE(events[1].second);
  CHECK(events[0].first == events[1].first);
  CHECK(fs::path(events[0].first).parent_path() == dir);

  // A failed replacement (a directory in the way) reports and removes it too.
  events.clear();
  fs::create_directory(dir / "d");
  fs::create_directory(dir / "d" / "inside");
  REQUIRE_FALSE(write_file_atomically(dir / "d", "two", o));
  REQUIRE(events.size() == 2);
  CHECK_FALSE(fs::exists(events[0].first));
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically without durable still replaces the file whole", "[sys][atomic]") {
  fs::path dir = scratch("not-durable");
  fs::path path = dir / "entry";
  AtomicWriteOptions o;
  o.durable = false;
  REQUIRE(write_file_atomically(path, "old", o).has_value());
  REQUIRE(write_file_atomically(path, "new content", o).has_value());
  CHECK(read(path) == "new content");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);  // no temporary file left
}

TEST_CASE("write_file_atomically removes the temporaries of dead writers of that file when asked",
          "[sys][atomic]") {
  fs::path dir = scratch("stale");
  const fs::path path = dir / "pylock.toml";
  // A PID that names no process: a child, reaped.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  auto plant = [&](const std::string& name, bool old) {
    std::ofstream(dir / name) << "partial";
    if (!old) return;
    const utimbuf hour_ago{std::time(nullptr) - 3600, std::time(nullptr) - 3600};
    REQUIRE(::utime((dir / name).c_str(), &hour_ago) == 0);
  };
  const std::string dead = std::to_string(child);
  const std::string stale = ".pylock.toml.tmp-" + dead + "-0-deadbeef";
  const std::vector<std::string> kept = {
      ".pylock.toml.tmp-" + std::to_string(::getppid()) + "-0-cafebabe",  // a live process
      ".pylock.toml.tmp-" + std::to_string(::getpid()) + "-7-cafebabe",   // this one
      ".pylock.toml.tmp-" + dead + "-1-0badf00d",   // younger than this process (planted now)
      ".other.toml.tmp-" + dead + "-0-deadbeef",    // another file's
      ".pylock.toml.tmp-" + dead + "-0-deadbeefx",  // not the temporary's shape
      ".pylock.toml.tmp-0" + dead + "-0-deadbeef",
      "pylock.toml.tmp-" + dead + "-0-deadbeef",
  };
  plant(stale, true);
  for (std::size_t i = 0; i < kept.size(); ++i)
    plant(kept[i], i != 2);
  // A second old: within the file system's timestamp granularity of this process's start (a
  // coarse mtime of a file written now can be a few ms before it; CI saw the 'planted now' one
  // removed), so kept.
  const std::string second_old = ".pylock.toml.tmp-" + dead + "-3-0badf00d";
  plant(second_old, false);
  const utimbuf second_ago{std::time(nullptr) - 1, std::time(nullptr) - 1};
  REQUIRE(::utime((dir / second_old).c_str(), &second_ago) == 0);
  fs::create_directory(dir / (".pylock.toml.tmp-" + dead + "-2-deadbeef"));  // not a file

  // Off by default (cache entries): nothing removed.
  REQUIRE(write_file_atomically(path, "one"));
  CHECK(fs::exists(dir / stale));

  AtomicWriteOptions o;
  o.remove_stale_temporaries = true;
  REQUIRE(write_file_atomically(path, "two", o));
  CHECK(read(path) == "two");
  CHECK_FALSE(fs::exists(dir / stale));
  for (const auto& name : kept) {
    INFO(name);
    CHECK(fs::exists(dir / name));
  }
  CHECK(fs::is_directory(dir / (".pylock.toml.tmp-" + dead + "-2-deadbeef")));
  CHECK(fs::exists(dir / second_old));
  fs::remove_all(dir);
}

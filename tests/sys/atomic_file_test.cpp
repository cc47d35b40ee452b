// The one atomic writer (gpulock/sys/atomic_file.h) as the index cache uses it: missing
// directories made, the temporary file reported while it exists. (Lock files: tests/lock.)
#include "gpulock/sys/atomic_file.h"

#include <grp.h>
#include <signal.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <sys/wait.h>

namespace fs = std::filesystem;
using gpulock::sys::AtomicFileWriter;
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

// The names in `dir`, temporaries included.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Runs `body` in a child process (privileges dropped, limits set there only); its exit status.
int in_child(const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) ::_exit(body());
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
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

TEST_CASE("AtomicFileWriter writes in pieces and fills a header in last", "[sys][atomic]") {
  fs::path dir = scratch("writer");
  const fs::path path = dir / "entry";
  REQUIRE(write_file_atomically(path, "old"));
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  std::vector<std::pair<std::string, bool>> events;
  AtomicWriteOptions o;
  o.durable = false;
  o.on_temp_file = [&](const std::string& temp, bool exists) { events.emplace_back(temp, exists); };
  auto w = AtomicFileWriter::open(path, o);
  REQUIRE(w);
  const std::string temp = w->temp_path();
  CHECK(fs::path(temp).parent_path() == dir);
  REQUIRE(w->write("----"));
  REQUIRE(w->write(""));
  const std::string big(100'000, 'x');
  REQUIRE(w->write(big));
  REQUIRE(w->write("end"));
  REQUIRE(w->write_at(0, "HEAD"));
  REQUIRE(w->write_at(4 + big.size(), "END"));
  // Until the commit the old file stays.
  CHECK(read(path) == "old");
  CHECK(read(temp).size() == 4 + big.size() + 3);
  REQUIRE(w->commit());
  CHECK(read(path) == "HEAD" + big + "END");
  CHECK(w->temp_path().empty());
  // The existing file's mode is kept, and nothing else is left.
  CHECK((fs::status(path).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(listing(dir) == std::vector<std::string>{"entry"});
  REQUIRE(events.size() == 2);
  CHECK(events[0] == std::pair<std::string, bool>{temp, true});
  CHECK(events[1] == std::pair<std::string, bool>{temp, false});
  // Committed: closed.
  auto again = w->write("more");
  REQUIRE_FALSE(again);
  CHECK(again.error().message == "already committed or discarded");
  CHECK_FALSE(w->commit());
  CHECK(read(path) == "HEAD" + big + "END");
  fs::remove_all(dir);
}

TEST_CASE("an AtomicFileWriter destroyed without a commit leaves no file and no temporary",
          "[sys][atomic]") {
  fs::path dir = scratch("writer-discard");
  std::vector<std::pair<std::string, bool>> events;
  AtomicWriteOptions o;
  o.on_temp_file = [&](const std::string& temp, bool exists) { events.emplace_back(temp, exists); };
  {
    auto w = AtomicFileWriter::open(dir / "new", o);
    REQUIRE(w);
    REQUIRE(w->write("partial"));
    CHECK(listing(dir).size() == 1);
  }
  CHECK(listing(dir).empty());
  REQUIRE(events.size() == 2);
  CHECK_FALSE(events[1].second);

  // An existing file is left as it was.
  REQUIRE(write_file_atomically(dir / "kept", "old"));
  {
    auto w = AtomicFileWriter::open(dir / "kept", o);
    REQUIRE(w);
    REQUIRE(w->write("new"));
  }
  CHECK(listing(dir) == std::vector<std::string>{"kept"});
  CHECK(read(dir / "kept") == "old");

  // Moved: the writer that holds the file commits it, the moved-from one removes nothing.
  std::optional<AtomicFileWriter> moved;
  {
    auto w = AtomicFileWriter::open(dir / "moved", o);
    REQUIRE(w);
    REQUIRE(w->write("moved"));
    moved.emplace(std::move(*w));
    CHECK(w->temp_path().empty());
  }
  CHECK(listing(dir).size() == 2);  // kept and the temporary, still there
  REQUIRE(moved->commit());
  CHECK(read(dir / "moved") == "moved");
  // Assigned over: the writer assigned to discards its own temporary first.
  auto a = AtomicFileWriter::open(dir / "a", o);
  auto b = AtomicFileWriter::open(dir / "b", o);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(b->write("b"));
  *a = std::move(*b);
  CHECK(listing(dir).size() == 3);  // kept, moved, b's temporary
  REQUIRE(a->commit());
  CHECK(listing(dir) == std::vector<std::string>{"b", "kept", "moved"});
  CHECK(read(dir / "b") == "b");
  fs::remove_all(dir);
}

TEST_CASE("AtomicFileWriter failures leave the old file and no temporary", "[sys][atomic]") {
  fs::path dir = scratch("writer-fail");
  std::vector<std::pair<std::string, bool>> events;
  AtomicWriteOptions o;
  o.on_temp_file = [&](const std::string& temp, bool exists) { events.emplace_back(temp, exists); };

  // A missing directory: no writer.
  auto missing = AtomicFileWriter::open(dir / "no" / "such" / "f", o);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message ==
        "cannot create a temporary file next to it: No such file or directory");
  CHECK(events.empty());

  // The rename fails (a directory in the way): the commit reports it and removes the temporary.
  fs::create_directories(dir / "d" / "inside");
  auto w = AtomicFileWriter::open(dir / "d", o);
  REQUIRE(w);
  REQUIRE(w->write("two"));
  auto committed = w->commit();
  REQUIRE_FALSE(committed);
  CHECK(committed.error().message.starts_with("cannot replace the file: "));
  CHECK(w->temp_path().empty());
  CHECK(listing(dir) == std::vector<std::string>{"d"});
  REQUIRE(events.size() == 2);
  CHECK_FALSE(events[1].second);

  // A write over the file-size limit (EFBIG), in a child: the old file stays, the writer
  // destroyed leaves nothing.
  REQUIRE(write_file_atomically(dir / "f", "old"));
  int rc = in_child([&] {
    const rlimit limit{100, 100};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
    ::signal(SIGXFSZ, SIG_IGN);
    {
      auto big = AtomicFileWriter::open(dir / "f");
      if (!big) return 11;
      if (!big->write(std::string(60, 'a'))) return 12;
      auto over = big->write(std::string(60, 'b'));
      if (over) return 13;
      if (over.error().message != "cannot write: File too large") return 14;
    }
    return listing(dir) == std::vector<std::string>{"d", "f"} && read(dir / "f") == "old" ? 0 : 15;
  });
  CHECK(rc == 0);

  // A directory it may not write to: root may, so the child drops to nobody first.
  fs::create_directory(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  REQUIRE(write_file_atomically(dir / "ro" / "f", "old"));
  fs::permissions(dir / "ro", fs::perms::owner_write, fs::perm_options::remove);
  rc = in_child([&] {
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
         ::setresuid(65534, 65534, 65534) != 0)) {
      return 10;
    }
    auto ro = AtomicFileWriter::open(dir / "ro" / "f");
    if (ro) return 11;
    return ro.error().message == "cannot create a temporary file next to it: Permission denied"
               ? 0
               : 12;
  });
  CHECK(rc == 0);
  CHECK(listing(dir / "ro") == std::vector<std::string>{"f"});
  CHECK(read(dir / "ro" / "f") == "old");
  fs::remove_all(dir);
}

// Atomic writes: the previous file survives every failure, and no temporary file is left.
#include <signal.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/atomic_file.h"

#include "lock_test_support.h"

using namespace gpulock::lock;
using gpulock::core::ErrorCode;
using gpulock::sys::write_file_atomically;
using lock_test::directory_names;
using lock_test::read_file;
using lock_test::TempDir;
using lock_test::write_file;

namespace {

Lock big_lock(std::size_t packages) {
  Lock lock;
  lock.created_by = "test";
  for (std::size_t i = 0; i < packages; ++i)
    lock.packages.push_back(lock_test::wheel_package("pkg" + std::to_string(i), "1.0", 'a'));
  return lock;
}

}  // namespace

TEST_CASE("write_file_atomically creates and replaces files", "[lock][atomic]") {
  TempDir dir;
  const auto path = dir / "pylock.toml";
  REQUIRE(write_file_atomically(path, "one\n").has_value());
  CHECK(read_file(path) == "one\n");
  ::chmod(path.c_str(), 0640);
  REQUIRE(write_file_atomically(path, "two\n").has_value());
  CHECK(read_file(path) == "two\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);  // an existing file keeps its mode
  CHECK(directory_names(dir.path()) == std::vector<std::string>{"pylock.toml"});

  // A relative path in the current directory works too.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  REQUIRE(write_file_atomically("rel.toml", "three\n").has_value());
  std::filesystem::current_path(cwd);
  CHECK(read_file(dir / "rel.toml") == "three\n");
}

TEST_CASE("a failed rename leaves no temporary file behind", "[lock][atomic]") {
  TempDir dir;
  std::filesystem::create_directory(dir / "pylock.toml");
  write_file(dir / "pylock.toml" / "inside", "x");
  auto s = write_file_atomically(dir / "pylock.toml", "new\n");
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().code == ErrorCode::Io);
  CHECK(s.error().where == (dir / "pylock.toml").string());
  CHECK(s.error().message.find("cannot replace the file") != std::string::npos);
  CHECK(directory_names(dir.path()) == std::vector<std::string>{"pylock.toml"});
  auto missing_dir = write_file_atomically(dir / "no" / "such" / "pylock.toml", "x");
  REQUIRE_FALSE(missing_dir.has_value());
  CHECK(missing_dir.error().message.find("No such file or directory") != std::string::npos);
}

TEST_CASE("a directory the process cannot write keeps the previous lock", "[lock][atomic]") {
  TempDir dir;  // owned by root, mode 0755: user nobody may read but not create files
  const auto helper = dir / "lock_write_helper";
  std::filesystem::copy_file(LOCK_WRITE_HELPER, helper);
  const auto path = dir / "pylock.toml";
  write_file(path, "previous lock\n");
  const auto before = directory_names(dir.path());

  auto r = lock_test::run_shell("setpriv --reuid=nobody --regid=nogroup --clear-groups " +
                                lock_test::shell_quote(helper.string()) + " " +
                                lock_test::shell_quote(path.string()));
  INFO(r.err);
  CHECK(r.status == 74);
  CHECK(r.err == "error: " + path.string() +
                     ": cannot create a temporary file next to it: Permission denied\n");
  CHECK(read_file(path) == "previous lock\n");
  CHECK(directory_names(dir.path()) == before);

  // The same helper as root succeeds, so the failure above came from the privileges.
  auto ok = lock_test::run_shell(lock_test::shell_quote(helper.string()) + " " +
                                 lock_test::shell_quote(path.string()));
  CHECK(ok.status == 0);
  CHECK(read_file(path).find("created-by = \"lock_write_helper\"") != std::string::npos);
  lock_test::check_with_tomllib(path);
}

TEST_CASE("a file-size limit (EFBIG) keeps the previous lock", "[lock][atomic]") {
  TempDir dir;
  const auto path = dir / "pylock.toml";
  write_file(path, "previous lock\n");
  const Lock lock = big_lock(200);
  REQUIRE(to_toml(lock).size() > 4096);

  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // In the child: SIGXFSZ ignored so write() fails with EFBIG instead of killing us.
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = 4096;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    auto s = write_lock_file(path, lock);
    if (s.has_value()) ::_exit(11);
    if (s.error().code != ErrorCode::Io) ::_exit(12);
    if (s.error().message != "cannot write: File too large") ::_exit(13);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_file(path) == "previous lock\n");
  CHECK(directory_names(dir.path()) == std::vector<std::string>{"pylock.toml"});

  // Without the limit the same write succeeds and reads back.
  REQUIRE(write_lock_file(path, lock).has_value());
  auto back = read_lock_file(path);
  REQUIRE(back.has_value());
  CHECK(back->lock.packages.size() == 200);
  lock_test::check_with_tomllib(path);
}

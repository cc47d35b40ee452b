// A local file gpulock cannot reach is `error: ...` and exit 74, never "internal error" and 70:
// the libraries use std::filesystem's error_code overloads only, so a permission problem is an
// error value, not a filesystem_error caught by main. Runs as user nobody when the tests run as
// root (root may enter any directory), from a copy of the binary under the system's temporary
// directory (a checkout under /root would be out of nobody's reach).
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"

namespace fs = std::filesystem;
using gpulock::test::describe;
using gpulock::test::RunResult;
using gpulock::test::shell_quote;

namespace {

// A world-reachable scratch directory holding a copy of gpulock; removed when done.
struct Scratch {
  fs::path dir;
  fs::path exe;
  Scratch() {
    dir = fs::temp_directory_path() / ("gpulock-fs-errors-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms(0755));
    exe = dir / "gpulock";
    fs::copy_file(GPULOCK_EXE, exe);
    fs::permissions(exe, fs::perms(0755));
  }
  ~Scratch() {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      fs::permissions(it->path(), fs::perms(0755), ec);
    }
    fs::remove_all(dir, ec);
  }
};

bool root() {
  return ::geteuid() == 0;
}

// `script` under /bin/sh as an unprivileged user: nobody when root, else this user.
RunResult run_unprivileged(const std::string& script) {
  std::string env = "env -i PATH=/usr/bin:/bin HOME=/nonexistent NO_COLOR=1 ";
  std::string prefix = root() ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  return gpulock::test::run_shell(prefix + env + "sh -c " + shell_quote(script));
}

}  // namespace

TEST_CASE("resolve -o under a directory the user cannot enter: error and exit 74", "[cli][io]") {
  Scratch s;
  fs::path locked = s.dir / "locked";
  fs::create_directories(locked);
  // Root-owned 0700 keeps nobody out; a non-root owner is kept out by mode 0.
  fs::permissions(locked, root() ? fs::perms(0700) : fs::perms::none);
  std::string out = (locked / "sub" / "pylock.toml").string();
  auto r = run_unprivileged(shell_quote(s.exe.string()) +
                            " resolve six --python-version 3.11 --platform manylinux_2_28_x86_64"
                            " --driver none --index-url file:///nonexistent/ -o " +
                            shell_quote(out));
  INFO(describe(r));
  CHECK(r.status == 74);
  CHECK(r.err.starts_with("error: " + out + ": "));
  CHECK(r.err.find("Permission denied") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
}

TEST_CASE("probe in a working directory the user cannot search: error and exit 74", "[cli][io]") {
  // Looking for ./pylock.toml there fails with EACCES; that used to escape as a
  // filesystem_error: "error: internal error: filesystem error: status: Permission denied".
  Scratch s;
  fs::path cwd = s.dir / "cwd";
  fs::create_directories(cwd);
  if (root()) {
    REQUIRE(::chown(cwd.c_str(), 65534, 65534) == 0);
  }
  auto r = run_unprivileged("cd " + shell_quote(cwd.string()) + " && chmod 0 . && exec " +
                            shell_quote(s.exe.string()) + " probe");
  INFO(describe(r));
  CHECK(r.status == 74);
  CHECK(r.err == "error: pylock.toml: cannot look for the lock: Permission denied\n");
}

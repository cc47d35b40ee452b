// Tests of the header-only helpers every module's tests share: cli_runner.h (running programs),
// test_files.h (files, scratch directories) and golden.h (golden files).
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "cli_runner.h"
#include "golden.h"
#include "test_files.h"

namespace fs = std::filesystem;
using gpulock::test::Env;
using gpulock::test::RunResult;
using gpulock::test::ScopedEnv;
using gpulock::test::TempDir;

TEST_CASE("run_process: exit status, stdout and stderr apart", "[support][runner]") {
  RunResult r =
      gpulock::test::run_process({"/bin/sh", "-c", "echo \"$GREETING\"; echo oops >&2; exit 3"},
                                 {{"GREETING", "hello there"}});
  CHECK(r.status == 3);
  CHECK(r.out == "hello there\n");
  CHECK(r.err == "oops\n");
}

TEST_CASE("run_process: exactly the given environment, nothing inherited", "[support][runner]") {
  ScopedEnv leak("GPULOCK_SUPPORT_TEST_LEAK", "leaked");
  RunResult r = gpulock::test::run_process(
      {"/bin/sh", "-c", "echo \"[$GPULOCK_SUPPORT_TEST_LEAK]\""}, {{"OTHER", "1"}});
  CHECK(r.status == 0);
  CHECK(r.out == "[]\n");
}

TEST_CASE("run_process: working directory, stdin, missing program or directory",
          "[support][runner]") {
  TempDir dir;
  RunResult pwd = gpulock::test::run_process({"/bin/pwd"}, {}, {.cwd = dir.path()});
  CHECK(pwd.status == 0);
  CHECK(pwd.out == fs::canonical(dir.path()).string() + "\n");
  // stdin is /dev/null: cat ends at once with nothing.
  RunResult cat = gpulock::test::run_process({"/bin/cat"}, {});
  CHECK(cat.status == 0);
  CHECK(cat.out.empty());
  CHECK(gpulock::test::run_process({"/bin/pwd"}, {}, {.cwd = dir / "missing"}).status == 126);
  CHECK(gpulock::test::run_process({(dir / "no-such-program").string()}, {}).status == 127);
  CHECK_THROWS(gpulock::test::run_process({}, {}));
}

TEST_CASE("run_process: signals and the timeout give 128 + N", "[support][runner]") {
  CHECK(gpulock::test::run_process({"/bin/sh", "-c", "kill -TERM $$"}, {}).status == 128 + 15);
  RunResult slow = gpulock::test::run_process({"/bin/sleep", "60"}, {}, {.timeout_s = 1});
  CHECK(slow.status == 128 + 9);
}

TEST_CASE("run_process: large output on both streams at once", "[support][runner]") {
  // More than a pipe holds on each stream: reading only one of them would deadlock.
  RunResult r = gpulock::test::run_process(
      {"/bin/sh", "-c",
       "i=0; while [ $i -lt 2000 ]; do echo 0123456789012345678901234567890123456789; "
       "echo abcdefghijabcdefghijabcdefghijabcdefghij >&2; i=$((i+1)); done"},
      {{"PATH", "/usr/bin:/bin"}});
  CHECK(r.status == 0);
  CHECK(r.out.size() == 2000u * 41u);
  CHECK(r.err.size() == 2000u * 41u);
}

TEST_CASE("run_shell: /bin/sh in this environment, output captured", "[support][runner]") {
  ScopedEnv var("GPULOCK_SUPPORT_TEST_VAR", "inherited");
  RunResult r = gpulock::test::run_shell(
      "echo \"$GPULOCK_SUPPORT_TEST_VAR\" && cat && echo to-stderr >&2 && exit 5");
  CHECK(r.status == 5);
  CHECK(r.out == "inherited\n");
  CHECK(r.err == "to-stderr\n");
  CHECK(gpulock::test::run_shell("true").status == 0);
}

TEST_CASE("shell_quote: any text reaches the program unchanged", "[support][runner]") {
  for (std::string text : {"plain", "two words", "it's", "\"double\" $HOME `cmd` \\ * ?", ""}) {
    INFO(text);
    RunResult r = gpulock::test::run_shell("printf '%s' " + gpulock::test::shell_quote(text));
    CHECK(r.status == 0);
    CHECK(r.out == text);
  }
}

TEST_CASE("describe and merge_env", "[support][runner]") {
  RunResult r{2, "o\n", "e\n"};
  CHECK(gpulock::test::describe(r) == "exit 2\n--- stdout\no\n--- stderr\ne\n");
  Env merged = gpulock::test::merge_env({{"A", "1"}, {"B", "2"}}, {{"B", "3"}, {"C", "4"}});
  CHECK(merged == Env{{"A", "1"}, {"B", "3"}, {"C", "4"}});
}

TEST_CASE("files: write, read, replace_all, directory names", "[support][files]") {
  TempDir dir;
  gpulock::test::write_file(dir / "a/b/c.txt", "one\n");
  CHECK(gpulock::test::read_file(dir / "a/b/c.txt") == "one\n");
  gpulock::test::write_file(dir / "a/b/c.txt", "2");
  CHECK(gpulock::test::read_file(dir / "a/b/c.txt") == "2");
  CHECK(gpulock::test::read_file(dir / "missing").empty());
  gpulock::test::write_file(dir / "z", "");
  CHECK(gpulock::test::directory_names(dir.path()) == std::vector<std::string>{"a", "z"});

  CHECK(gpulock::test::replace_all("a-b-a", "a", "<A>") == "<A>-b-<A>");
  CHECK(gpulock::test::replace_all("aaa", "a", "aa") == "aaaaaa");  // no rescan of replacements
  CHECK(gpulock::test::replace_all("abc", "", "x") == "abc");
  CHECK(gpulock::test::replace_all("abc", "d", "x") == "abc");
}

TEST_CASE("files: fresh_directory and TempDir", "[support][files]") {
  fs::path kept;
  {
    TempDir dir(fs::temp_directory_path(), "gpulock-support-");
    kept = dir.path();
    CHECK(fs::is_directory(kept));
    CHECK(kept.filename().string().starts_with("gpulock-support-"));
    struct stat st {};
    REQUIRE(::stat(kept.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0755);
    gpulock::test::write_file(dir / "sub/file", "x");
    auto again = gpulock::test::fresh_directory(dir / "sub");
    CHECK(again == dir / "sub");
    CHECK(gpulock::test::directory_names(again).empty());
  }
  CHECK_FALSE(fs::exists(kept));
}

TEST_CASE("golden files: compared, or rewritten when asked", "[support][golden]") {
  TempDir dir;
  const fs::path file = dir / "golden/out.txt";
  {
    ScopedEnv off("GPULOCK_UPDATE_GOLDEN", nullptr);
    CHECK_FALSE(gpulock::test::update_golden_requested());
    auto missing = gpulock::test::golden_file(file, "actual\n");
    CHECK_FALSE(missing.updated);
    CHECK_FALSE(missing.exists);
    CHECK(missing.note().find(file.string()) != std::string::npos);
  }
  {
    ScopedEnv empty("GPULOCK_UPDATE_GOLDEN", "");
    CHECK_FALSE(gpulock::test::update_golden_requested());
  }
  {
    ScopedEnv on("GPULOCK_UPDATE_GOLDEN", "1");
    auto written = gpulock::test::golden_file(file, "actual\n");
    CHECK(written.updated);
    CHECK(gpulock::test::read_file(file) == "actual\n");
  }
  ScopedEnv off("GPULOCK_UPDATE_GOLDEN", nullptr);
  auto same = gpulock::test::golden_file(file, "actual\n");
  CHECK(same.exists);
  CHECK(same.expected == "actual\n");
  GPULOCK_CHECK_GOLDEN(file, std::string("actual\n"));
}

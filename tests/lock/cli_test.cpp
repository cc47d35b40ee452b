// `gpulock export` and `gpulock diff` through the real binary: golden outputs, exit codes, and
// error lines for bad input.
#include <algorithm>

#include "lock_test_support.h"

using lock_test::directory_names;
using lock_test::fixtures;
using lock_test::read_file;
using lock_test::RunResult;
using lock_test::shell_quote;
using lock_test::TempDir;
using lock_test::write_file;

namespace {

// Runs gpulock with `args` from the fixtures directory (so paths in outputs are relative).
RunResult run_gpulock(const std::string& args) {
  return lock_test::run_shell("cd " + shell_quote(fixtures().string()) + " && NO_COLOR=1 " +
                              shell_quote(GPULOCK_EXE) + " " + args);
}

}  // namespace

TEST_CASE("gpulock export writes hashed requirements (golden)", "[lock][cli][export]") {
  auto r = run_gpulock("export --lock gpulock-cu124.toml --format requirements-txt");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out == read_file(fixtures() / "expected" / "export-cu124.txt"));
}

TEST_CASE("gpulock export --all-urls uses the lock's target to pick wheels (golden)",
          "[lock][cli][export]") {
  auto r = run_gpulock("export --lock gpulock-cu124.toml --all-urls");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == read_file(fixtures() / "expected" / "export-cu124-urls.txt"));

  // With an explicit target no wheel of which fits: a usage error naming the package.
  auto mac = run_gpulock(
      "export --lock gpulock-cu124.toml --all-urls --python-version 3.11 "
      "--platform macosx_14_0_arm64");
  CHECK(mac.status == 2);
  CHECK(mac.err.starts_with("error: gpulock-cu124.toml: no wheel of package 'filelock'") ==
        false);  // filelock is py3-none-any: it fits every target
  CHECK(
      mac.err.starts_with("error: gpulock-cu124.toml: no wheel of package 'markupsafe' fits "
                          "the target, and it has no sdist\n"));

  auto half = run_gpulock("export --lock gpulock-cu124.toml --all-urls --python-version 3.11");
  CHECK(half.status == 2);
  CHECK(half.err.starts_with("error: "));
}

TEST_CASE("gpulock export -o writes the file atomically", "[lock][cli][export]") {
  TempDir dir;
  const auto out = dir / "requirements.txt";
  write_file(out, "old\n");
  auto r = run_gpulock("export --lock gpulock-cu124.toml -o " + shell_quote(out.string()));
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(read_file(out) == read_file(fixtures() / "expected" / "export-cu124.txt"));
  CHECK(directory_names(dir.path()) == std::vector<std::string>{"requirements.txt"});
}

TEST_CASE("gpulock export -o into a directory it cannot write keeps the old file",
          "[lock][cli][export]") {
  TempDir dir;  // root-owned, 0755
  const auto exe = dir / "gpulock";
  std::filesystem::copy_file(GPULOCK_EXE, exe);
  std::filesystem::copy_file(fixtures() / "gpulock-cu124.toml", dir / "pylock.toml");
  ::chmod((dir / "pylock.toml").c_str(), 0644);
  write_file(dir / "requirements.txt", "old\n");
  const auto before = directory_names(dir.path());
  auto r = lock_test::run_shell("cd " + shell_quote(dir.path().string()) +
                                " && setpriv --reuid=nobody --regid=nogroup --clear-groups "
                                "./gpulock export -o requirements.txt");
  CHECK(r.status == 74);
  CHECK(r.err ==
        "error: requirements.txt: cannot create a temporary file next to it: Permission denied\n");
  CHECK(read_file(dir / "requirements.txt") == "old\n");
  CHECK(directory_names(dir.path()) == before);
}

TEST_CASE("gpulock export: bad lock files exit 3 with file:line", "[lock][cli][export][bad]") {
  struct Case {
    const char* file;
    const char* first_line;
  };
  const Case cases[] = {
      {"bad/not-toml.toml", "error: bad/not-toml.toml:6:15: not valid TOML: "},
      {"bad/size-bool.toml",
       "error: bad/size-bool.toml:9: 'size' in wheel 2 of package 'a' "
       "must be an integer, not a boolean"},
      {"bad/version-not-string.toml",
       "error: bad/version-not-string.toml:6: 'version' in "
       "package 'a' must be a string, not an integer"},
      {"bad/lock-version-2.toml",
       "error: bad/lock-version-2.toml:2: unsupported lock-version "
       "'2.0': gpulock reads lock-version 1.x"},
      {"bad/missing-hashes.toml",
       "error: bad/missing-hashes.toml:14: in the sdist of package "
       "'b' has no 'hashes' (PEP 751 requires at least one hash)"},
      {"bad/uv-empty-hashes.toml",
       "error: bad/uv-empty-hashes.toml:11: in wheel 1 of package "
       "'torch' has an empty 'hashes' table (PEP 751 requires at "
       "least one hash)"},
      {"bad/upload-time-string.toml",
       "error: bad/upload-time-string.toml:11: 'upload-time' in "
       "wheel 1 of package 'a' must be a TOML date-time"},
  };
  for (const auto& c : cases) {
    auto r = run_gpulock(std::string("export --lock ") + c.file);
    INFO(c.file << "\n" << r.err);
    CHECK(r.status == 3);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with(c.first_line));
  }
}

TEST_CASE("gpulock export: a lock over 64 MB exits 3, a missing one 74, a bad flag 2",
          "[lock][cli][export][bad]") {
  TempDir dir;
  const auto big = dir / "pylock.toml";
  write_file(big, "");
  REQUIRE(::truncate(big.c_str(), 64ll * 1024 * 1024 + 1) == 0);
  auto r = run_gpulock("export --lock " + shell_quote(big.string()));
  CHECK(r.status == 3);
  CHECK(r.err == "error: " + big.string() +
                     ": the lock file is 67108865 bytes; lock files over 64 MB are refused\n");

  auto missing = run_gpulock("export --lock no-such-lock.toml");
  CHECK(missing.status == 74);
  CHECK(missing.err ==
        "error: no-such-lock.toml: cannot open the lock file: No such file or "
        "directory\n");

  auto format = run_gpulock("export --lock gpulock-cu124.toml --format pipfile");
  CHECK(format.status == 2);
  CHECK(format.err.starts_with("error: "));

  auto features = run_gpulock("export --lock gpulock-features.toml");
  CHECK(features.status == 3);
  CHECK(
      features.err.starts_with("error: gpulock-features.toml: the marker of package 'cattrs' "
                               "uses PEP 751's 'extras'"));
}

TEST_CASE("gpulock diff: a table on a terminal-like stdout, exit 1 (golden)", "[lock][cli][diff]") {
  auto r = run_gpulock("diff diff/old.toml diff/new.toml");
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.empty());
  CHECK(r.out == read_file(fixtures() / "expected" / "diff.txt"));
}

TEST_CASE("gpulock diff --json: stable JSON (golden) that parses", "[lock][cli][diff]") {
  auto r = run_gpulock("diff diff/old.toml diff/new.toml --json");
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.out == read_file(fixtures() / "expected" / "diff.json"));
  TempDir dir;
  write_file(dir / "diff.json", r.out);
  auto parsed = lock_test::run_shell(
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
      "assert d[\"schema\"] == 1 and d[\"identical\"] is False; "
      "kinds = sorted({p[\"change\"] for p in d[\"packages\"]}); "
      "assert kinds == [\"added\",\"changed\",\"downgraded\",\"rehashed\",\"removed\","
      "\"upgraded\"], kinds' " +
      shell_quote((dir / "diff.json").string()));
  INFO(parsed.err);
  CHECK(parsed.status == 0);
}

TEST_CASE("gpulock diff: identical locks exit 0", "[lock][cli][diff]") {
  auto r = run_gpulock("diff gpulock-cu124.toml diff/old.toml");
  CHECK(r.status == 0);
  CHECK(r.out == "gpulock-cu124.toml and diff/old.toml lock the same packages and facts\n");
  auto j = run_gpulock("diff gpulock-cu124.toml diff/old.toml --json");
  CHECK(j.status == 0);
  CHECK(j.out.find("\"identical\": true") != std::string::npos);
}

TEST_CASE("gpulock diff: bad input exits 3, missing arguments 2", "[lock][cli][diff][bad]") {
  auto bad = run_gpulock("diff diff/old.toml bad/duplicate-package.toml");
  CHECK(bad.status == 3);
  CHECK(bad.err.starts_with("error: bad/duplicate-package.toml:9: package 'a' is listed twice"));
  auto usage = run_gpulock("diff diff/old.toml");
  CHECK(usage.status == 2);
  CHECK(usage.err.starts_with("error: "));
}

TEST_CASE("gpulock diff: another CUDA variant and a nightly date are changed GPU facts",
          "[lock][cli][diff]") {
  // The golden pair changes cuDNN, the minimum driver and exclude-newer; this one the variant,
  // the CUDA version and the nightly date, with the packages unchanged.
  TempDir dir;
  const std::string old_text = read_file(fixtures() / "gpulock-cu124.toml");
  std::string new_text = old_text;
  for (auto [from, to] : {std::pair{"\nvariant = \"cu124\"\n", "\nvariant = \"cu126\"\n"},
                          std::pair{"\ncuda = \"12.4\"\n", "\ncuda = \"12.6\"\n"},
                          std::pair{"exclude-newer = 2025-01-01T00:00:00Z\n",
                                    "exclude-newer = 2025-01-01T00:00:00Z\nnightly = "
                                    "\"2025-02-01\"\n"}}) {
    REQUIRE(new_text.find(from) != std::string::npos);
    new_text = gpulock::test::replace_all(new_text, from, to);
  }
  write_file(dir / "old.toml", old_text);
  write_file(dir / "new.toml", new_text);
  lock_test::check_with_tomllib(dir / "new.toml");
  const std::string in_dir = "cd " + shell_quote(dir.path().string()) + " && NO_COLOR=1 " +
                             shell_quote(GPULOCK_EXE) + " diff old.toml new.toml";

  auto r = lock_test::run_shell(in_dir);
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "fact              old    new\n"
        "gpu.variant       cu124  cu126\n"
        "gpu.cuda          12.4   12.6\n"
        "snapshot.nightly  -      2025-02-01\n"
        "\n"
        "3 facts changed\n");

  auto j = lock_test::run_shell(in_dir + " --json");
  CHECK(j.status == 1);
  CHECK(j.out.find("\"packages\": [],\n  \"facts\": [\n"
                   "    {\n      \"key\": \"gpu.variant\",\n      \"old\": \"cu124\",\n      "
                   "\"new\": \"cu126\"\n    },\n"
                   "    {\n      \"key\": \"gpu.cuda\",\n      \"old\": \"12.4\",\n      "
                   "\"new\": \"12.6\"\n    },\n"
                   "    {\n      \"key\": \"snapshot.nightly\",\n      \"old\": null,\n      "
                   "\"new\": \"2025-02-01\"\n    }\n  ]\n}\n") != std::string::npos);

  // The other way round: old and new swapped in every row.
  auto back = lock_test::run_shell("cd " + shell_quote(dir.path().string()) + " && NO_COLOR=1 " +
                                   shell_quote(GPULOCK_EXE) + " diff new.toml old.toml");
  CHECK(back.status == 1);
  CHECK(back.out ==
        "fact              old         new\n"
        "gpu.variant       cu126       cu124\n"
        "gpu.cuda          12.6        12.4\n"
        "snapshot.nightly  2025-02-01  -\n"
        "\n"
        "3 facts changed\n");
}

TEST_CASE("gpulock diff: the table's header is bold on a terminal, plain with NO_COLOR",
          "[lock][cli][diff]") {
  // A real pseudo-terminal (Python's pty); it turns "\n" into "\r\n", removed here.
  auto on_terminal = [](const std::string& env) {
    auto r =
        lock_test::run_shell("cd " + shell_quote(fixtures().string()) + " && env -u NO_COLOR " +
                             env + " " + gpulock::test::on_pseudo_terminal() + " " +
                             shell_quote(GPULOCK_EXE) + " diff diff/old.toml diff/new.toml");
    r.out = gpulock::test::replace_all(r.out, "\r", "");
    return r;
  };
  auto coloured = on_terminal("");
  CHECK(coloured.status == 1);
  CHECK(coloured.out.starts_with("\x1b[1mpackage\x1b[0m            \x1b[1mchange\x1b[0m      "));
  const std::string golden = read_file(fixtures() / "expected" / "diff.txt");
  auto plain = on_terminal("NO_COLOR=1");
  CHECK(plain.status == 1);
  CHECK(plain.out == golden);
}

TEST_CASE("a newer minor lock-version is read with a warning naming file and line",
          "[lock][cli][reader]") {
  TempDir dir;
  std::string text = read_file(fixtures() / "gpulock-cu124.toml");
  REQUIRE(text.find("\nlock-version = \"1.0\"\n") != std::string::npos);
  text = gpulock::test::replace_all(text, "\nlock-version = \"1.0\"\n",
                                    "\nlock-version = \"1.1\"\nfuture-key = \"x\"\n");
  write_file(dir / "pylock.toml", text);
  const std::string warnings =
      "warning: pylock.toml:3: lock-version '1.1' is newer than 1.0; keys this gpulock does not "
      "know are kept but not checked\n"
      "warning: pylock.toml:4: unknown key 'future-key' at the top level (kept as is)\n";
  const std::string run =
      "cd " + shell_quote(dir.path().string()) + " && NO_COLOR=1 " + shell_quote(GPULOCK_EXE) + " ";

  // export: the same requirements as from the 1.0 lock, with the warnings on stderr.
  auto e = lock_test::run_shell(run + "export --lock pylock.toml");
  CHECK(e.status == 0);
  CHECK(e.err == warnings);
  CHECK(gpulock::test::replace_all(e.out, "pylock.toml", "gpulock-cu124.toml") ==
        read_file(fixtures() / "expected" / "export-cu124.txt"));

  // diff against the 1.0 lock: only the lock-version differs (the unknown key is kept, not a
  // fact gpulock compares).
  std::filesystem::copy_file(fixtures() / "gpulock-cu124.toml", dir / "old.toml");
  auto d = lock_test::run_shell(run + "diff old.toml pylock.toml");
  CHECK(d.status == 1);
  CHECK(d.err == warnings);
  CHECK(d.out == "fact          old  new\nlock-version  1.0  1.1\n\n1 fact changed\n");
}

TEST_CASE("gpulock export refuses a lock missing a hash: exit 3 with file and line",
          "[lock][cli][bad]") {
  for (const auto& c : lock_test::missing_hash_cases()) {
    INFO(c.text);
    TempDir dir;
    write_file(dir / "pylock.toml", c.text);
    auto cli = lock_test::run_shell("cd " + shell_quote(dir.path().string()) + " && " +
                                    shell_quote(GPULOCK_EXE) + " export");
    CHECK(cli.status == 3);
    CHECK(cli.err.starts_with("error: pylock.toml:" + std::to_string(c.line) + ": "));
  }
}

// Every kind of bad lock file is refused with InvalidLockfile, the file and the line; the CLI
// turns that into exit code 3 (tested in cli_test.cpp).
#include <fcntl.h>
#include <unistd.h>

#include "gpulock/lock/lockfile.h"

#include "lock_test_support.h"

using namespace gpulock::lock;
using gpulock::core::ErrorCode;
using lock_test::fixtures;
using namespace std::string_literals;

namespace {

struct BadCase {
  const char* file;
  std::size_t line;
  const char* message;  // a substring of the message
};

const BadCase kBadCases[] = {
    {"not-toml.toml", 6, "not valid TOML"},
    {"version-not-string.toml", 6, "'version' in package 'a' must be a string, not an integer"},
    {"size-bool.toml", 9, "'size' in wheel 2 of package 'a' must be an integer, not a boolean"},
    {"upload-time-string.toml", 11,
     "'upload-time' in wheel 1 of package 'a' must be a TOML date-time"},
    {"lock-version-2.toml", 2, "unsupported lock-version '2.0': gpulock reads lock-version 1.x"},
    {"lock-version-not-number.toml", 1, "lock-version 'one' is not a version number"},
    {"missing-hashes.toml", 14, "in the sdist of package 'b' has no 'hashes'"},
    {"uv-empty-hashes.toml", 11, "has an empty 'hashes' table"},
    {"two-sources.toml", 4, "package 'a' has more than one kind of source (vcs, wheels)"},
    {"no-source.toml", 4, "package 'a' has no source"},
    {"duplicate-package.toml", 9, "package 'a' is listed twice with no marker (first at line 4)"},
    {"duplicate-marker.toml", 16,
     "package 'a' is listed twice with the same marker (first at line 4)"},
    {"name-not-normalized.toml", 5, "package name 'Typing_Extensions' is not normalized"},
    {"wheel-version-mismatch.toml", 9,
     "file 'a-1.1-py3-none-any.whl' has version 1.1, but package 'a' has version 1.0"},
    {"wheel-name-mismatch.toml", 8,
     "file 'torchtriton-2.5.1-py3-none-any.whl' is not a file of package 'torch'"},
    {"missing-created-by.toml", 1, "'created-by' is required at the top level"},
    {"missing-packages.toml", 1, "'packages' is required"},
    {"negative-size.toml", 7, "'size' in the sdist of package 'a' must not be negative (-5)"},
    {"hash-not-string.toml", 7,
     "hash 'sha256' in the archive of package 'a' must be a non-empty "
     "string, not an integer"},
    {"tool-gpulock-archs-not-array.toml", 10,
     "'archs' in [tool.gpulock.gpu] must be an array of strings, not a string"},
    // [tool.gpulock.gpu]'s typed values: one that does not parse is refused at its key's line.
    {"tool-gpulock-driver-bad.toml", 10,
     "'driver' in [tool.gpulock.gpu] is not a driver version (like 550.54.14) or none: 'abc'"},
    {"tool-gpulock-cuda-ceiling-bad.toml", 10,
     "'cuda-ceiling' in [tool.gpulock.gpu] is not a CUDA version (major.minor, like 12.4): "
     "'12.x'"},
    {"tool-gpulock-compat-bad.toml", 10,
     "'compat' in [tool.gpulock.gpu] is not strict or minor: 'loose'"},
    {"tool-gpulock-archs-bad.toml", 12,
     "'archs' in [tool.gpulock.gpu] has an entry that is not a GPU architecture (sm_XY, like "
     "sm_90): 'sm_x'"},
    {"tool-gpulock-cuda-bad.toml", 10,
     "'cuda' in [tool.gpulock.gpu] is not a CUDA version (major.minor, like 12.4): 'x'"},
    {"tool-gpulock-min-driver-bad.toml", 10,
     "'min-driver' in [tool.gpulock.gpu] is not a driver version (like 550.54.14): "
     "'550.54.14 '"},
    // [packages.tool.gpulock.files] (wheel_files.h): gpulock's record of each wheel's files.
    {"tool-gpulock-files-digest-bad.toml", 9,
     "package 'a': [packages.tool.gpulock.files] \"a-1.0-py3-none-any.whl\": members-sha256 is "
     "not 64 lowercase hex digits"},
    {"tool-gpulock-files-path-bad.toml", 9,
     "\"a-1.0-py3-none-any.whl\": shared-libraries holds an entry that is not a relative path"},
    {"tool-gpulock-files-path-control.toml", 9,
     "\"a-1.0-py3-none-any.whl\": shared-libraries holds an entry that is not a relative path"},
    {"tool-gpulock-files-unknown-wheel.toml", 9,
     "\"b-1.0-py3-none-any.whl\": names a file the package does not list"},
    {"packages-not-array.toml", 3, "'packages' at the top level must be an array of tables"},
    {"vcs-without-commit.toml", 7, "'commit-id' is required in the vcs source of package 'mylib'"},
};

}  // namespace

TEST_CASE("bad lock files are refused with the file and line", "[lock][reader][bad]") {
  for (const auto& c : kBadCases) {
    const auto path = fixtures() / "bad" / c.file;
    auto r = read_lock_file(path);
    INFO(c.file);
    REQUIRE_FALSE(r.has_value());
    const auto& e = r.error();
    INFO(e.to_string());
    CHECK(e.code == ErrorCode::InvalidLockfile);
    CHECK(e.where == path.string());
    CHECK(e.line == c.line);
    CHECK(e.message.find(c.message) != std::string::npos);
    CHECK(e.to_string().starts_with(path.string() + ":" + std::to_string(c.line) + ":"));
  }
}

TEST_CASE("every bad fixture is also refused by the independent reader", "[lock][reader][bad]") {
  std::string files;
  for (const auto& c : kBadCases)
    files += " " + lock_test::shell_quote((fixtures() / "bad" / c.file).string());
  auto r = lock_test::run_shell(
      "/usr/bin/python3 " +
      lock_test::shell_quote(std::string(GPULOCK_SOURCE_DIR) + "/tests/lock/check_pylock.py") +
      " --invalid" + files);
  INFO(r.err);
  CHECK(r.status == 0);
}

TEST_CASE("a TOML syntax error carries the column too", "[lock][reader][bad]") {
  auto r = parse_lock("lock-version = \"1.0\"\ncreated-by = = \"x\"\n", "p.toml");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().line == 2);
  CHECK(r.error().column > 0);
  CHECK(r.error().to_string().starts_with("p.toml:2:"));
}

TEST_CASE("binary and non-UTF-8 input is refused, not crashed on", "[lock][reader][bad]") {
  const std::string cases[] = {
      std::string("lock-version = \"1.0\"\ncreated-by = \"\xff\xfe\"\npackages = []\n"),
      "\0\0\0\x01binary"s,
      "lock-version = \"1.0\"\ncreated-by = \"x\0y\"\npackages = []\n"s,
      std::string(100000, '['),
      std::string("a = ") + std::string(5000, '[') + std::string(5000, ']'),
      "",
  };
  for (const auto& text : cases) {
    auto r = parse_lock(text, "bin.toml");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::InvalidLockfile);
    CHECK(r.error().where == "bin.toml");
  }
}

TEST_CASE("a file over 64 MB is refused before it is read", "[lock][reader][bad]") {
  lock_test::TempDir dir;
  const auto path = dir / "pylock.toml";
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    // A sparse file: its size is over the limit without writing 64 MB.
    REQUIRE(::ftruncate(fd, static_cast<off_t>(kMaxLockFileBytes + 1)) == 0);
    ::close(fd);
  }
  auto r = read_lock_file(path);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::InvalidLockfile);
  CHECK(r.error().where == path.string());
  CHECK(r.error().message == "the lock file is 67108865 bytes; lock files over 64 MB are refused");

  // Exactly at the limit is read (and then fails as TOML, at its first line).
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(kMaxLockFileBytes)) == 0);
  auto at_limit = read_lock_file(path);
  REQUIRE_FALSE(at_limit.has_value());
  CHECK(at_limit.error().message.find("not valid TOML") != std::string::npos);
}

TEST_CASE("a missing file or a directory is an I/O or input error naming it",
          "[lock][reader][bad]") {
  lock_test::TempDir dir;
  auto missing = read_lock_file(dir / "nope.toml");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::Io);
  CHECK(missing.error().to_string() ==
        (dir / "nope.toml").string() + ": cannot open the lock file: No such file or directory");
  auto directory = read_lock_file(dir.path());
  REQUIRE_FALSE(directory.has_value());
  CHECK(directory.error().code == ErrorCode::InvalidLockfile);
}

TEST_CASE("a hint accompanies the errors a user can act on", "[lock][reader][bad]") {
  auto v2 = read_lock_file(fixtures() / "bad" / "lock-version-2.toml");
  REQUIRE_FALSE(v2.has_value());
  CHECK_FALSE(v2.error().hints.empty());
  auto uv = read_lock_file(fixtures() / "bad" / "uv-empty-hashes.toml");
  REQUIRE_FALSE(uv.has_value());
  REQUIRE_FALSE(uv.error().hints.empty());
  CHECK(uv.error().hints[0].find("gpulock resolve") != std::string::npos);
}

TEST_CASE("every kind of file needs a hash: archive, sdist and wheel", "[lock][reader][bad]") {
  // The sdist and the empty-table cases are fixtures (missing-hashes.toml, uv-empty-hashes.toml);
  // these are the archive and a wheel without the key, and a wheel whose table is empty.
  for (const auto& c : lock_test::missing_hash_cases()) {
    INFO(c.text);
    auto r = parse_lock(c.text, "pylock.toml");
    REQUIRE_FALSE(r.has_value());
    INFO(r.error().to_string());
    CHECK(r.error().code == ErrorCode::InvalidLockfile);
    CHECK(r.error().line == c.line);
    CHECK(r.error().message.find(c.message) != std::string::npos);
    CHECK(r.error().to_string().starts_with("pylock.toml:" + std::to_string(c.line) + ": "));
    lock_test::TempDir dir;
    lock_test::write_file(dir / "pylock.toml", c.text);
    // The independent reader refuses them too.
    auto py = lock_test::run_shell(
        "/usr/bin/python3 " +
        lock_test::shell_quote(std::string(GPULOCK_SOURCE_DIR) + "/tests/lock/check_pylock.py") +
        " --invalid " + lock_test::shell_quote((dir / "pylock.toml").string()));
    INFO(py.err);
    CHECK(py.status == 0);
  }
}

namespace {

// A lock of one wheel whose table holds `fields` (line 9 on).
std::string one_wheel_lock(const std::string& fields) {
  return "lock-version = \"1.0\"\ncreated-by = \"test\"\n\n[[packages]]\nname = \"a\"\n"
         "version = \"1.0\"\n\n[[packages.wheels]]\nname = \"a-1.0-py3-none-any.whl\"\n" +
         fields;
}

const std::string kSha = std::string(64, 'a');

}  // namespace

TEST_CASE("fields that become paths, URLs and sizes are checked when read (issue 40)",
          "[lock][reader][bad]") {
  struct Case {
    std::string fields;
    std::size_t line;
    std::string message;
  };
  const std::string url = "url = \"https://x.org/a-1.0-py3-none-any.whl\"\n";
  const Case cases[] = {
      {url + "hashes = { sha256 = \"../../victim\" }\n", 11,
       "hash 'sha256' in wheel 1 of package 'a' must be 64 lowercase hex digits, not "
       "'../../victim'"},
      {url + "hashes = { sha256 = \"/abs/path\" }\n", 11, "must be 64 lowercase hex digits"},
      {url + "hashes = { sha256 = \"" + std::string(64, 'A') + "\" }\n", 11,
       "must be 64 lowercase hex digits"},
      {url + "hashes = { sha256 = \"" + std::string(63, 'a') + "\" }\n", 11,
       "must be 64 lowercase hex digits"},
      {url + "hashes = { sha256 = \"" + std::string(63, 'a') + "\\u0000\" }\n", 11,
       "must be 64 lowercase hex digits, not '" + std::string(63, 'a') + "\\x00'"},
      {url + "hashes = { sha256 = \"" + kSha + "\", sha512 = \"../" + std::string(60, 'a') +
           "\" }\n",
       11, "hash 'sha512' in wheel 1 of package 'a' must be an even number"},
      {url + "hashes = { sha256 = \"" + kSha + "\", md5 = \"ab\" }\n", 11,
       "hash 'md5' in wheel 1 of package 'a' must be an even number (32 to 128)"},
      {url + "hashes = { \"SHA/256\" = \"" + kSha + "\" }\n", 11,
       "hash algorithm 'SHA/256' in wheel 1 of package 'a' is not a hash algorithm's name"},
      {"url = \"ftp://x.org/a-1.0-py3-none-any.whl\"\nhashes = { sha256 = \"" + kSha + "\" }\n", 10,
       "'url' in wheel 1 of package 'a' must be an http, https or file URL: 'ftp://"},
      {"url = \"gopher:a-1.0-py3-none-any.whl\"\nhashes = { sha256 = \"" + kSha + "\" }\n", 10,
       "must be an http, https or file URL"},
      {"url = \"https://x.org/\\na-1.0-py3-none-any.whl\"\nhashes = { sha256 = \"" + kSha +
           "\" }\n",
       10, "'url' in wheel 1 of package 'a' contains whitespace or a control character"},
      {"url = \"https:a-1.0-py3-none-any.whl\"\nhashes = { sha256 = \"" + kSha + "\" }\n", 10,
       "is not an absolute https URL"},
      {"url = \"file:a-1.0-py3-none-any.whl\"\nhashes = { sha256 = \"" + kSha + "\" }\n", 10,
       "is not a file URL with an absolute path"},
      {"path = \"w/a\\u0007-1.0-py3-none-any.whl\"\nhashes = { sha256 = \"" + kSha + "\" }\n", 10,
       "'path' in wheel 1 of package 'a' contains a control character"},
      {url + "size = 1125899906842625\nhashes = { sha256 = \"" + kSha + "\" }\n", 11,
       "'size' in wheel 1 of package 'a' is 1125899906842625 bytes, over the"},
  };
  for (const auto& c : cases) {
    const std::string text = one_wheel_lock(c.fields);
    INFO(text);
    auto r = parse_lock(text, "pylock.toml");
    REQUIRE_FALSE(r.has_value());
    INFO(r.error().to_string());
    CHECK(r.error().code == ErrorCode::InvalidLockfile);
    CHECK(r.error().line == c.line);
    CHECK(r.error().message.find(c.message) != std::string::npos);
    CHECK(r.error().to_string().starts_with("pylock.toml:" + std::to_string(c.line) + ": "));
  }
}

TEST_CASE("well-formed file fields are accepted: schemes in any case, paths, other hashes",
          "[lock][reader]") {
  for (const std::string fields : {
           "url = \"HTTPS://x.org/a-1.0-py3-none-any.whl\"\n",
           "url = \"http://x.org/a-1.0-py3-none-any.whl\"\n",
           "url = \"file:///srv/w/a-1.0-py3-none-any.whl\"\n",
           "url = \"File:/srv/w/a-1.0-py3-none-any.whl\"\n",
           "path = \"../w/a-1.0-py3-none-any.whl\"\n",
           "path = \"/srv/w/a-1.0-py3-none-any.whl\"\nsize = 1125899906842624\n",
       }) {
    const std::string text =
        one_wheel_lock(fields + "hashes = { sha256 = \"" + kSha + "\", md5 = \"" +
                       std::string(32, '0') + "\", sha512 = \"" + std::string(128, 'f') +
                       "\", blake2b = \"" + std::string(128, '1') + "\" }\n");
    INFO(text);
    auto r = parse_lock(text, "pylock.toml");
    INFO((r ? "" : r.error().to_string()));
    CHECK(r.has_value());
  }
}

TEST_CASE("vcs and directory paths and an index URL are one line of text", "[lock][reader][bad]") {
  const std::string head =
      "lock-version = \"1.0\"\ncreated-by = \"test\"\n\n[[packages]]\nname = \"a\"\n";
  const std::pair<std::string, std::string> cases[] = {
      {head + "[packages.directory]\npath = \"src\\u001b[2J\"\n",
       "'path' in the directory source of package 'a' contains a control character"},
      {head +
           "[packages.vcs]\ntype = \"git\"\nurl = \"https://x.org/r\\r\\n\"\ncommit-id = \"ab\"\n",
       "'url' in the vcs source of package 'a' contains a control character"},
      {head + "index = \"https://x.org/\\u0000\"\n[packages.directory]\npath = \"src\"\n",
       "'index' in package 'a' contains a control character"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    auto r = parse_lock(text, "pylock.toml");
    REQUIRE_FALSE(r.has_value());
    INFO(r.error().to_string());
    CHECK(r.error().code == ErrorCode::InvalidLockfile);
    CHECK(r.error().message.find(message) != std::string::npos);
  }
  auto ok = parse_lock(head +
                           "[packages.vcs]\ntype = \"git\"\nurl = \"git+ssh://git@x.org/r\"\n"
                           "commit-id = \"ab\"\n",
                       "pylock.toml");
  INFO((ok ? "" : ok.error().to_string()));
  CHECK(ok.has_value());
}

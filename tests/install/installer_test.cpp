// install/installer.h's pure parts: --installer's one parser and a file source applied to a lock;
// record.h's check_stat (the no-op sync's check of every installed file) and check_members
// (check --env's comparison with a wheel's file list).
#include "gpulock/install/installer.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "gpulock/install/record.h"

using namespace gpulock;

namespace {

lock::FileEntry file(std::string url, bool sha256) {
  lock::FileEntry f;
  f.url = std::move(url);
  if (sha256) f.hashes["sha256"] = "ab";
  return f;
}

// Takes every file whose URL ends in ".whl" from "mirror/", by name; fails on "bad".
class FakeSource final : public install::FileSource {
 public:
  core::Result<std::optional<std::string>> url_for(const lock::FileEntry& f) override {
    asked.push_back(f.filename());
    if (f.filename() == "bad") return core::fail(core::ErrorCode::Network, "unreachable");
    if (!f.url->ends_with(".whl")) return std::nullopt;
    return "mirror/" + f.filename();
  }
  std::vector<std::string> asked;
};

}  // namespace

TEST_CASE("an installer kind is parsed once, from the --installer text") {
  CHECK(install::parse_kind("native").value() == install::Kind::Native);
  CHECK(install::parse_kind("pip").value() == install::Kind::Pip);
  auto bad = install::parse_kind("uv");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == core::ErrorCode::Usage);
  CHECK(bad.error().message == "invalid --installer 'uv': expected native or pip");
}

TEST_CASE("a file source redirects the files it has, with a sha256 and a URL") {
  lock::Lock lk;
  lock::Package a;
  a.name = "a";
  a.wheels = std::vector<lock::FileEntry>{file("https://x/a-1-py3-none-any.whl", true),
                                          file("https://x/a-2-py3-none-any.whl", false)};
  a.sdist = file("https://x/a-1.tar.gz", true);
  lock::Package b;
  b.name = "b";
  b.archive = file("https://x/b-1-py3-none-any.whl", true);
  lk.packages = {a, b};
  FakeSource source;
  std::vector<std::string> taken;
  REQUIRE(install::take_files_from(source, lk, taken));
  CHECK(taken == std::vector<std::string>{"a-1-py3-none-any.whl", "b-1-py3-none-any.whl"});
  CHECK(source.asked ==
        std::vector<std::string>{"a-1-py3-none-any.whl", "a-1.tar.gz", "b-1-py3-none-any.whl"});
  CHECK(*(*lk.packages[0].wheels)[0].url == "mirror/a-1-py3-none-any.whl");
  CHECK(*(*lk.packages[0].wheels)[1].url == "https://x/a-2-py3-none-any.whl");
  CHECK(*lk.packages[0].sdist->url == "https://x/a-1.tar.gz");
  CHECK(*lk.packages[1].archive->url == "mirror/b-1-py3-none-any.whl");

  lock::Lock broken;
  lock::Package c;
  c.name = "c";
  c.archive = file("https://x/bad", true);
  broken.packages = {c};
  auto s = install::take_files_from(source, broken, taken);
  REQUIRE_FALSE(s);
  CHECK(s.error().code == core::ErrorCode::Network);
}

TEST_CASE("record: check_stat, plain paths joined as text, `..` paths kept inside the prefix") {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "gpulock-check-stat-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const fs::path prefix = tmpl;
  const fs::path site = prefix / "lib" / "python3.11" / "site-packages";
  fs::create_directories(site / "pkg");
  fs::create_directories(prefix / "bin");
  std::ofstream(site / "pkg" / "a.py") << "abc";
  std::ofstream(prefix / "bin" / "tool") << "#!/bin/sh\n";
  auto row = [](std::string path, const fs::path& file) {
    struct ::stat st {};
    REQUIRE(::lstat(file.c_str(), &st) == 0);
    return install::record::StatRow{std::move(path), static_cast<std::uint64_t>(st.st_size),
                                    install::record::mtime_ns(st)};
  };
  namespace record = install::record;
  const auto a = row("pkg/a.py", site / "pkg" / "a.py");
  CHECK(record::check_stat(prefix, site, a).empty());
  CHECK(
      record::check_stat(prefix, site, row("../../../bin/tool", prefix / "bin" / "tool")).empty());
  auto bigger = a;
  bigger.size = 4;
  CHECK(record::check_stat(prefix, site, bigger).starts_with("modified (size 3"));
  auto older = a;
  older.mtime_ns -= 1;
  CHECK(record::check_stat(prefix, site, older).starts_with("modified (its mtime"));
  CHECK(record::check_stat(prefix, site, {"pkg/gone.py", 1, 0}) == "missing");
  CHECK(record::check_stat(prefix, site, {"pkg/./a.py", a.size, a.mtime_ns}).empty());
  for (const char* outside : {"../../../../etc/passwd", "/etc/passwd", ""}) {
    CAPTURE(outside);
    CHECK(record::check_stat(prefix, site, {outside, 0, 0}) ==
          "outside the environment (not read)");
  }
  // StatChecker: the same answers, a directory opened once for the rows in it.
  record::StatChecker checker(prefix, site);
  CHECK(checker.check(a).empty());
  CHECK(checker.check(bigger).starts_with("modified (size 3"));
  CHECK(checker.check({"pkg/gone.py", 1, 0}) == "missing");
  CHECK(checker.check({"nodir/x.py", 1, 0}) == "missing");
  CHECK(checker.check({"nodir/y.py", 1, 0}) == "missing");
  CHECK(checker.check(older).starts_with("modified (its mtime"));
  CHECK(checker.check(row("../../../bin/tool", prefix / "bin" / "tool")).empty());
  CHECK(checker.check({"../../../../etc/passwd", 0, 0}) == "outside the environment (not read)");
  std::ofstream(site / "top.py") << "x";
  CHECK(checker.check(row("top.py", site / "top.py")).empty());
  CHECK(checker.check(a).empty());
  std::error_code ec;
  fs::remove_all(prefix, ec);
}

TEST_CASE("record: check_members, each member where the installer puts it, sizes compared") {
  namespace fs = std::filesystem;
  namespace record = install::record;
  std::string tmpl = (fs::temp_directory_path() / "gpulock-check-members-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const fs::path prefix = tmpl;
  const fs::path site = prefix / "lib" / "python3.11" / "site-packages";
  fs::create_directories(site / "pkg");
  fs::create_directories(site / "pkg-1.0.dist-info");
  fs::create_directories(site / "moved");
  std::ofstream(site / "pkg" / "a.py") << "abc";
  std::ofstream(site / "pkg" / "b.py") << "abcdef";  // 6 bytes, the wheel's 2
  fs::create_directories(site / "pkg" / "dir.so");
  std::ofstream(site / "moved" / "m.py") << "m";
  std::ofstream(site / "pkg-1.0.dist-info" / "RECORD") << "rewritten by the installer";
  std::vector<index::WheelMember> members{
      {"pkg/a.py", 3, 1},
      {"pkg/b.py", 2, 2},
      {"pkg/gone.py", 1, 3},
      {"pkg/dir.so", 0, 4},
      {"pkg-1.0.data/purelib/moved/m.py", 1, 5},  // installed at the site root
      {"pkg-1.0.data/scripts/tool", 10, 6},       // outside site-packages: not compared
      {"pkg-1.0.data/headers/pkg.h", 10, 7},
      {"pkg-1.0.dist-info/RECORD", 1, 8},     // the installer writes its own
      {"pkg-1.0.dist-info/INSTALLER", 1, 9},  // likewise, were a wheel to ship one
      {"pkg/../../escape.py", 1, 10},         // the installer refuses such paths
  };
  auto got = record::check_members(members, site);
  CHECK(got.compared == 5);
  const std::vector<record::MemberProblem> want{
      {"pkg/b.py", "modified (size 6, 2 in the wheel)"},
      {"pkg/gone.py", "missing"},
      {"pkg/dir.so", "not a regular file"},
  };
  CHECK(got.problems == want);
  CHECK(record::is_installer_written("pkg-1.0.dist-info/REQUESTED"));
  CHECK(record::is_installer_written("pkg-1.0.dist-info/direct_url.json"));
  CHECK_FALSE(record::is_installer_written("pkg-1.0.dist-info/METADATA"));
  CHECK_FALSE(record::is_installer_written("pkg/RECORD"));
  CHECK_FALSE(record::is_installer_written("pkg-1.0.dist-info/sub/RECORD"));
  std::error_code ec;
  fs::remove_all(prefix, ec);
}

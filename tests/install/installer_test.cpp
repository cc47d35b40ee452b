// install/installer.h's pure parts: --installer's one parser and a file source applied to a lock.
#include "gpulock/install/installer.h"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

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

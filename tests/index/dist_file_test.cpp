// DistFile, the compact record of one file on a project page (issue 18): what goes in comes
// back out, copies are independent, and a page's files share their name, version and tag set.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/page.h"
#include "gpulock/index/parse.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

const std::string kSha(64, 'a');
const std::string kSha2 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

}  // namespace

TEST_CASE("DistFile keeps its strings in one record, the filename once", "[dist_file]") {
  DistFile f;
  CHECK(f.filename().empty());
  CHECK(f.url().empty());
  CHECK(f.requires_python().empty());
  CHECK_FALSE(f.is_wheel());
  CHECK_FALSE(f.is_sdist());
  CHECK(f.version().to_string() == "0");
  CHECK(f.project().empty());
  CHECK(f.tags().empty());

  // The URL ends with the filename (PyPI, most indexes): stored once.
  f.set_text("demo-1.0.tar.gz", "https://h/p/demo-1.0.tar.gz", ">=3.9", "broken");
  CHECK(f.filename() == "demo-1.0.tar.gz");
  CHECK(f.url() == "https://h/p/demo-1.0.tar.gz");
  CHECK(f.requires_python() == ">=3.9");
  CHECK(f.yanked_reason() == "broken");

  // A percent-encoded URL does not end with the decoded filename: both are kept.
  f.set_text("torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl",
             "https://h/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl");
  CHECK(f.filename() == "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl");
  CHECK(f.url() == "https://h/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl");
  CHECK(f.requires_python().empty());
  CHECK(f.yanked_reason().empty());

  // One field at a time, the others kept (also when the filename lived in the old URL).
  f.set_text("a.whl", "https://h/a.whl", ">=3.8");
  f.set_url("https://mirror/x/a.whl");
  CHECK(f.filename() == "a.whl");
  CHECK(f.url() == "https://mirror/x/a.whl");
  CHECK(f.requires_python() == ">=3.8");
  f.set_url("https://mirror/other");
  CHECK(f.filename() == "a.whl");
  CHECK(f.url() == "https://mirror/other");
  f.set_filename("b.whl");
  CHECK(f.filename() == "b.whl");
  CHECK(f.url() == "https://mirror/other");
  f.set_requires_python("");
  CHECK(f.requires_python().empty());
  f.set_yanked(true, "reason");
  CHECK(f.yanked());
  CHECK(f.yanked_reason() == "reason");
  CHECK(f.filename() == "b.whl");
  f.set_yanked(false);
  CHECK_FALSE(f.yanked());
}

TEST_CASE("DistFile hashes: one sha256 as 32 bytes, anything else as given, in order",
          "[dist_file]") {
  DistFile f;
  CHECK_FALSE(f.has_hashes());
  CHECK(f.sha256().empty());
  CHECK(f.hashes().empty());

  f.add_hash("sha256", kSha2);
  CHECK(f.has_hashes());
  CHECK(f.sha256() == kSha2);
  CHECK(f.hash("sha256") == kSha2);
  CHECK(f.hash("md5").empty());
  CHECK(f.hashes() == std::vector<Hash>{{"sha256", kSha2}});

  // A second algorithm: both kept, in page order.
  f.add_hash("blake2b_256", "bb");
  CHECK(f.hashes() == std::vector<Hash>{{"sha256", kSha2}, {"blake2b_256", "bb"}});
  CHECK(f.sha256() == kSha2);
  CHECK(f.hash("blake2b_256") == "bb");

  f.clear_hashes();
  CHECK_FALSE(f.has_hashes());
  CHECK(f.hashes().empty());

  // A digest that is not 64 hex digits (a test page, a broken index) is kept as written.
  f.add_hash("sha256", "ab");
  CHECK(f.sha256() == "ab");
  CHECK(f.hashes() == std::vector<Hash>{{"sha256", "ab"}});
  f.clear_hashes();
  f.add_hash("md5", "cc");
  f.add_hash("sha256", kSha);
  CHECK(f.hashes() == std::vector<Hash>{{"md5", "cc"}, {"sha256", kSha}});
  CHECK(f.sha256() == kSha);

  // The .metadata file's hashes are separate.
  CHECK_FALSE(f.core_metadata());
  f.set_core_metadata(true);
  f.add_core_metadata_hash("sha256", kSha2);
  CHECK(f.core_metadata());
  CHECK(f.core_metadata_sha256() == kSha2);
  CHECK(f.core_metadata_hashes() == std::vector<Hash>{{"sha256", kSha2}});
  CHECK(f.sha256() == kSha);
  f.clear_core_metadata_hashes();
  CHECK(f.core_metadata_sha256().empty());
  CHECK(f.core_metadata());
}

TEST_CASE("DistFile size, upload time, kind, and independent copies", "[dist_file]") {
  DistFile f;
  CHECK_FALSE(f.size());
  CHECK_FALSE(f.upload_time());
  f.set_size(0);
  CHECK(f.size() == std::optional<std::uint64_t>(0));
  f.set_upload_time(-5);
  CHECK(f.upload_time() == std::optional<std::int64_t>(-5));
  f.set_size(std::nullopt);
  CHECK_FALSE(f.size());

  auto w = core::WheelFilename::parse("Demo_Pkg-1.0-7a-py2.py3-none-any.whl");
  REQUIRE(w);
  f.set_text("Demo_Pkg-1.0-7a-py2.py3-none-any.whl",
             "https://h/Demo_Pkg-1.0-7a-py2.py3-none-any.whl");
  f.set_wheel(*w);
  CHECK(f.is_wheel());
  CHECK_FALSE(f.is_sdist());
  CHECK(f.project() == "demo-pkg");
  CHECK(f.version().to_string() == "1.0");
  CHECK(f.tags() == w->tags);
  CHECK(f.build() == w->build);
  REQUIRE(f.wheel());
  CHECK(f.wheel()->python_tag == "py2.py3");
  CHECK(f.wheel()->build == w->build);
  CHECK_FALSE(f.sdist());

  f.add_hash("sha256", kSha);
  f.add_hash("md5", "cc");
  DistFile copy = f;
  f.set_url("https://elsewhere/x.whl");
  f.clear_hashes();
  f.set_sdist(*core::SdistFilename::parse("demo-2.0.tar.gz"));
  CHECK(copy.url() == "https://h/Demo_Pkg-1.0-7a-py2.py3-none-any.whl");
  CHECK(copy.filename() == "Demo_Pkg-1.0-7a-py2.py3-none-any.whl");
  CHECK(copy.hashes() == std::vector<Hash>{{"sha256", kSha}, {"md5", "cc"}});
  CHECK(copy.is_wheel());
  CHECK(copy.version().to_string() == "1.0");
  CHECK(f.is_sdist());
  CHECK(f.version().to_string() == "2.0");
  CHECK_FALSE(f.build());

  DistFile moved = std::move(copy);
  CHECK(moved.filename() == "Demo_Pkg-1.0-7a-py2.py3-none-any.whl");
  copy = moved;
  CHECK(copy.hashes() == moved.hashes());
  f.clear_kind();
  CHECK_FALSE(f.is_wheel());
  CHECK_FALSE(f.is_sdist());
}

TEST_CASE("a parsed page's files share one entry per version and per tag set", "[dist_file]") {
  std::string json = R"({"meta":{"api-version":"1.1"},"name":"huge","files":[)";
  int n = 0;
  for (int v = 0; v < 3; ++v) {
    for (const char* tags : {"cp311-cp311-manylinux_2_17_x86_64", "cp312-cp312-win_amd64"}) {
      std::string name = fmt::format("huge-1.{}-{}.whl", v, tags);
      json +=
          fmt::format(R"({}{{"filename":"{}","url":"https://h/p/{}","hashes":{{"sha256":"{}"}}}})",
                      n++ ? "," : "", name, name, kSha);
    }
    std::string sdist = fmt::format("huge-1.{}.tar.gz", v);
    json += fmt::format(R"(,{{"filename":"{}","url":"../../p/{}","hashes":{{}}}})", sdist, sdist);
    ++n;
  }
  json += "]}";
  auto page = parse_json_page(json, "https://h/simple/huge/", PageFilter{"huge"});
  REQUIRE(page);
  REQUIRE(page->files.size() == 9);
  const auto& files = page->files;
  // Same version: the same entry; same tag set: the same entry.
  CHECK(&files[0].version() == &files[1].version());
  CHECK(&files[0].version() != &files[3].version());
  CHECK(files[0].tag_set() == files[3].tag_set());
  CHECK(files[1].tag_set() == files[4].tag_set());
  CHECK(files[0].tag_set() != files[1].tag_set());
  CHECK(files[2].is_sdist());
  CHECK(files[2].version() == files[0].version());
  CHECK(files[2].version() != files[5].version());
  CHECK(files[2].url() == "https://h/p/huge-1.0.tar.gz");
  CHECK(files[2].filename() == "huge-1.0.tar.gz");
  CHECK_FALSE(files[2].has_hashes());
  CHECK(files[0].sha256() == kSha);
  CHECK(files[8].version().to_string() == "1.2");
  CHECK(files[6].wheel()->platform_tag == "manylinux_2_17_x86_64");
  // A copy outlives its page.
  DistFile kept = files[7];
  page = std::unexpected(core::Error{});
  CHECK(kept.filename() == "huge-1.2-cp312-cp312-win_amd64.whl");
  CHECK(kept.tags().size() == 1);
  CHECK(kept.version().to_string() == "1.2");
}

TEST_CASE("JSON strings with escapes are unescaped, plain ones read in place", "[dist_file]") {
  auto page = parse_json_page(
      R"({"files":[{"filename":"demo-1.0.tar.gz","url":"https:\/\/h\/p\/demo-1.0.tar.gz"  ,)"
      R"("requires-python":"\u003e=3.9" , "yanked":"bad\tbuild"},)"
      R"({"filename":"demo-1.1.tar.gz" ,"url":"https://h/p/demo-1.1.tar.gz","requires-python":"",)"
      R"("yanked":""}]})",
      "https://h/simple/demo/");
  REQUIRE(page);
  REQUIRE(page->files.size() == 2);
  CHECK(page->files[0].url() == "https://h/p/demo-1.0.tar.gz");
  CHECK(page->files[0].requires_python() == ">=3.9");
  CHECK(page->files[0].yanked_reason() == "bad\\x09build");
  CHECK(page->files[1].filename() == "demo-1.1.tar.gz");
  CHECK(page->files[1].requires_python().empty());
  CHECK(page->files[1].yanked());
  CHECK(page->files[1].yanked_reason().empty());
  auto wrong =
      parse_json_page(R"({"files":[{"filename":12,"url":"x"}]})", "https://h/simple/demo/");
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message == "invalid PEP 691 page: files[0].filename: expected a string");
}

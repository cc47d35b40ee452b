// The on-disk cache format: round trips, torn and foreign files, concurrent writers.
#include "cache.h"

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/parse.h"

#include "index_test_support.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

ProjectPage sample_page(std::size_t files) {
  std::string json =
      R"({"meta":{"api-version":"1.1"},"name":"demo-pkg","versions":["1.0","2.0"],"files":[)";
  for (std::size_t i = 0; i < files; ++i) {
    if (i) json += ",";
    json += fmt::format(
        R"({{"filename":"demo_pkg-{}.0-cp311-cp311-manylinux_2_17_x86_64.whl","url":"../../p/demo_pkg-{}.0.whl",)"
        R"("hashes":{{"sha256":"{:064x}"}},"requires-python":">=3.9","core-metadata":{{"sha256":"ab"}},)"
        R"("yanked":{},"size":{},"upload-time":"2024-01-0{}T00:00:00.5Z"}})",
        i, i, i, i % 3 == 0 ? "\"why\"" : "false", 1000 + i, 1 + i % 9);
  }
  json +=
      R"(,{"filename":"demo-pkg-0.1.tar.gz","url":"https://h/demo-pkg-0.1.tar.gz","hashes":{}}]})";
  auto page = parse_json_page(json, "http://h/simple/demo-pkg/", {"demo-pkg", false});
  REQUIRE(page);
  page->warnings.push_back("a warning");
  return *page;
}

void check_same(const ProjectPage& a, const ProjectPage& b) {
  CHECK(a.found == b.found);
  CHECK(a.name == b.name);
  CHECK(a.url == b.url);
  CHECK(a.api_version == b.api_version);
  CHECK(a.versions == b.versions);
  CHECK(a.warnings == b.warnings);
  REQUIRE(a.files.size() == b.files.size());
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    const DistFile& x = a.files[i];
    const DistFile& y = b.files[i];
    CHECK(x.filename == y.filename);
    CHECK(x.url == y.url);
    CHECK(x.hashes == y.hashes);
    CHECK(x.requires_python == y.requires_python);
    CHECK(x.yanked == y.yanked);
    CHECK(x.yanked_reason == y.yanked_reason);
    CHECK(x.core_metadata == y.core_metadata);
    CHECK(x.core_metadata_hashes == y.core_metadata_hashes);
    CHECK(x.size == y.size);
    CHECK(x.upload_time == y.upload_time);
    CHECK(x.wheel.has_value() == y.wheel.has_value());
    CHECK(x.sdist.has_value() == y.sdist.has_value());
    CHECK(x.version() == y.version());
  }
}

}  // namespace

TEST_CASE("page entries round-trip through the cache", "[cache]") {
  std::string root = index_test::scratch_dir("cache-roundtrip");
  detail::DiskCache cache(root, true);
  detail::PageEntry e;
  e.url = "http://h/simple/demo-pkg/";
  e.stored_at = 1700000000;
  e.max_age = 600;
  e.no_cache = true;
  e.status = 403;
  e.etag = "\"abc\"";
  e.last_modified = "Mon, 01 Jan 2024 00:00:00 GMT";
  e.page = sample_page(25);
  REQUIRE(cache.store_page(e));
  auto loaded = cache.load_page(e.url);
  REQUIRE(loaded);
  CHECK(loaded->stored_at == e.stored_at);
  CHECK(loaded->max_age == 600);
  CHECK(loaded->no_cache);
  CHECK(loaded->status == 403);
  CHECK(loaded->etag == e.etag);
  CHECK(loaded->last_modified == e.last_modified);
  check_same(loaded->page, e.page);
  CHECK_FALSE(cache.load_page("http://h/simple/other/"));

  detail::PageEntry missing;
  missing.url = "http://h/simple/nothing/";
  missing.max_age = 600;
  missing.page.name = "nothing";
  REQUIRE(cache.store_page(missing));
  auto nf = cache.load_page(missing.url);
  REQUIRE(nf);
  CHECK_FALSE(nf->page.found);
}

TEST_CASE("freshness", "[cache]") {
  detail::PageEntry e;
  e.stored_at = 1000;
  e.max_age = 600;
  CHECK(e.fresh(1000));
  CHECK(e.fresh(1599));
  CHECK_FALSE(e.fresh(1600));
  CHECK_FALSE(e.fresh(999));  // a clock that went backwards
  e.no_cache = true;
  CHECK_FALSE(e.fresh(1001));
  e.no_cache = false;
  e.max_age = -1;
  CHECK_FALSE(e.fresh(1001));
}

TEST_CASE("torn, truncated and foreign cache files read as misses", "[cache]") {
  std::string root = index_test::scratch_dir("cache-torn");
  detail::DiskCache cache(root, true);
  detail::PageEntry e;
  e.url = "http://h/simple/demo-pkg/";
  e.page = sample_page(5);
  REQUIRE(cache.store_page(e));
  std::string path;
  for (const auto& ent : std::filesystem::recursive_directory_iterator(root)) {
    if (ent.is_regular_file()) path = ent.path().string();
  }
  REQUIRE_FALSE(path.empty());
  std::string good = index_test::read_text(path);

  index_test::write_text(path, good.substr(0, good.size() / 2));  // torn
  CHECK_FALSE(cache.load_page(e.url));
  std::string flipped = good;
  flipped[good.size() - 10] ^= 0x20;  // a changed byte
  index_test::write_text(path, flipped);
  CHECK_FALSE(cache.load_page(e.url));
  index_test::write_text(path, "not a cache file at all, but long enough to have a header");
  CHECK_FALSE(cache.load_page(e.url));
  index_test::write_text(path, good);
  CHECK(cache.load_page(e.url));

  // A disabled cache neither reads nor writes.
  detail::DiskCache off(root, false);
  CHECK_FALSE(off.load_page(e.url));
  CHECK_FALSE(off.store_page(e));
}

TEST_CASE("concurrent writers never expose a torn entry", "[cache]") {
  std::string root = index_test::scratch_dir("cache-concurrent");
  detail::DiskCache cache(root, true);
  const std::string url = "http://h/simple/demo-pkg/";
  std::atomic<bool> stop{false};
  std::atomic<int> hits{0}, misses{0}, bad{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 3; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < 40; ++i) {
        detail::PageEntry e;
        e.url = url;
        e.stored_at = w * 1000 + i;
        e.page = sample_page(static_cast<std::size_t>(10 + w * 10));
        cache.store_page(e);
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop) {
      auto e = cache.load_page(url);
      if (!e) {
        ++misses;
      } else if (e->page.files.size() != 11 && e->page.files.size() != 21 &&
                 e->page.files.size() != 31) {
        ++bad;
      } else {
        ++hits;
      }
    }
  });
  for (int i = 0; i < 3; ++i)
    threads[static_cast<std::size_t>(i)].join();
  stop = true;
  threads.back().join();
  CHECK(bad == 0);
  CHECK(cache.load_page(url));
  // No temporary files are left behind.
  for (const auto& ent : std::filesystem::recursive_directory_iterator(root)) {
    CHECK(ent.path().filename().string().rfind(".tmp-", 0) != 0);
  }
}

TEST_CASE("metadata, digests and host capabilities", "[cache]") {
  std::string root = index_test::scratch_dir("cache-blobs");
  detail::DiskCache cache(root, true);
  detail::MetadataEntry m;
  m.url = "http://h/x.whl";
  m.stored_at = 5;
  m.text = "Metadata-Version: 2.1\nName: x\n";
  REQUIRE(cache.store_metadata("sha256-abc", m));
  auto lm = cache.load_metadata("sha256-abc");
  REQUIRE(lm);
  CHECK(lm->text == m.text);
  CHECK(lm->url == m.url);
  CHECK_FALSE(cache.load_metadata("sha256-abd"));

  detail::DigestEntry d;
  d.url = "http://h/x.whl";
  d.sha256 = "00ff";
  d.size = 77;
  d.etag = "\"e\"";
  REQUIRE(cache.store_digest(d));
  auto ld = cache.load_digest(d.url);
  REQUIRE(ld);
  CHECK(ld->sha256 == "00ff");
  CHECK(ld->size == 77);
  CHECK(ld->etag == "\"e\"");

  CHECK_FALSE(cache.load_range_support("h"));
  REQUIRE(cache.store_range_support("h", false));
  CHECK(cache.load_range_support("h") == std::optional<bool>(false));
  REQUIRE(cache.store_range_support("h", true));
  CHECK(cache.load_range_support("h") == std::optional<bool>(true));
}

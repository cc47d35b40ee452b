// The on-disk cache format: round trips, torn and foreign files, concurrent writers.
#include "cache.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <thread>
#include <tuple>
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
    CHECK(x.filename() == y.filename());
    CHECK(x.url() == y.url());
    CHECK(x.hashes() == y.hashes());
    CHECK(x.requires_python() == y.requires_python());
    CHECK(x.yanked() == y.yanked());
    CHECK(x.yanked_reason() == y.yanked_reason());
    CHECK(x.core_metadata() == y.core_metadata());
    CHECK(x.core_metadata_hashes() == y.core_metadata_hashes());
    CHECK(x.size() == y.size());
    CHECK(x.upload_time() == y.upload_time());
    CHECK(x.wheel().has_value() == y.wheel().has_value());
    CHECK(x.sdist().has_value() == y.sdist().has_value());
    CHECK(x.version() == y.version());
    if (x.wheel() && y.wheel()) {
      CHECK(x.wheel()->name == y.wheel()->name);
      CHECK(x.wheel()->version.to_string() == y.wheel()->version.to_string());
      CHECK(x.wheel()->build == y.wheel()->build);
      CHECK(x.wheel()->tags == y.wheel()->tags);
      CHECK(x.wheel()->python_tag == y.wheel()->python_tag);
      CHECK(x.wheel()->abi_tag == y.wheel()->abi_tag);
      CHECK(x.wheel()->platform_tag == y.wheel()->platform_tag);
    }
    if (x.sdist() && y.sdist()) {
      CHECK(x.sdist()->name == y.sdist()->name);
      CHECK(x.sdist()->version.to_string() == y.sdist()->version.to_string());
      CHECK(x.sdist()->extension == y.sdist()->extension);
    }
  }
}

// A page with several versions, compressed tag sets, a build tag, local versions and sdists.
ProjectPage mixed_page() {
  std::vector<std::string> names = {
      "demo_pkg-2.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
      "demo_pkg-2.0-cp311-cp311-win_amd64.whl",
      "demo_pkg-2.0.tar.gz",
      "demo_pkg-1.0-1build-py2.py3-none-any.whl",
      "demo_pkg-1.0.zip",
      "demo_pkg-1.5+cu124-cp311-cp311-linux_x86_64.whl",
      "demo_pkg-1.5+cu124-cp312-cp312-linux_x86_64.whl",
      "demo_pkg-0.9-cp39-abi3-macosx_11_0_arm64.whl",
      "demo_pkg-0.9.tar.gz",
  };
  std::string json = R"({"meta":{"api-version":"1.1"},"name":"demo-pkg","files":[)";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) json += ",";
    json +=
        fmt::format(R"({{"filename":"{}","url":"https://h/p/{}","hashes":{{"sha256":"{:064x}"}}}})",
                    names[i], names[i], i);
  }
  json += "]}";
  auto page = parse_json_page(json, "http://h/simple/demo-pkg/", {"demo-pkg", false});
  REQUIRE(page);
  REQUIRE(page->files.size() == names.size());
  return *page;
}

// Keeps wheels with a tag for CPython 3.11 or any Python 3 on x86_64 Linux.
bool keep_linux_311(std::span<const core::Tag> tags) {
  for (const auto& t : tags) {
    bool python = t.interpreter == "cp311" || t.interpreter == "py3";
    bool platform = t.platform == "any" || t.platform.ends_with("linux_x86_64") ||
                    t.platform.ends_with("manylinux2014_x86_64");
    if (python && platform) return true;
  }
  return false;
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

TEST_CASE("pages round-trip with every wheel and sdist field", "[cache]") {
  ProjectPage page = mixed_page();
  std::string bytes;
  detail::encode_page(page, bytes);
  std::string_view in = bytes;
  ProjectPage decoded;
  REQUIRE(detail::decode_page(in, decoded));
  check_same(decoded, page);
  CHECK(decoded.omitted.empty());
  REQUIRE(decoded.files[3].wheel());
  CHECK(decoded.files[3].wheel()->build == std::optional<std::pair<std::uint64_t, std::string>>(
                                               std::pair<std::uint64_t, std::string>{1, "build"}));
  CHECK(decoded.files[5].version().to_string() == "1.5+cu124");

  // Every truncation reads as invalid, never as a crash.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::string_view cut(bytes.data(), n);
    ProjectPage p;
    CHECK_FALSE(detail::decode_page(cut, p));
  }
}

TEST_CASE("a filtered decode keeps the wheels the filter accepts and summarizes the rest",
          "[cache][filter]") {
  ProjectPage page = mixed_page();
  std::string bytes;
  detail::encode_page(page, bytes);

  // What the filter should leave, computed from the full page.
  std::vector<std::string> expected_files;
  std::vector<std::tuple<std::string, bool, bool>> expected_omitted;
  for (const auto& f : page.files) {
    if (f.wheel() && keep_linux_311(f.wheel()->tags)) {
      expected_files.emplace_back(f.filename());
      continue;
    }
    std::string v = f.version().to_string();
    auto it = std::find_if(expected_omitted.begin(), expected_omitted.end(),
                           [&](const auto& o) { return std::get<0>(o) == v; });
    if (it == expected_omitted.end())
      it = expected_omitted.insert(expected_omitted.end(), {v, false, false});
    (f.wheel() ? std::get<1>(*it) : std::get<2>(*it)) = true;
  }
  REQUIRE(expected_files.size() == 3);  // the manylinux, py2.py3 and 3.11 +cu124 wheels

  int calls = 0;
  detail::WheelFilter filter = [&](std::span<const core::Tag> tags) {
    ++calls;
    return keep_linux_311(tags);
  };
  auto check_filtered = [&](const ProjectPage& p) {
    std::vector<std::string> files;
    for (const auto& f : p.files)
      files.emplace_back(f.filename());
    CHECK(files == expected_files);
    std::vector<std::tuple<std::string, bool, bool>> omitted;
    for (const auto& o : p.omitted)
      omitted.emplace_back(o.version.to_string(), o.wheels, o.sdists);
    CHECK(omitted == expected_omitted);
  };

  std::string_view in = bytes;
  ProjectPage decoded;
  REQUIRE(detail::decode_page(in, decoded, &filter));
  check_filtered(decoded);
  CHECK(calls == 6);  // once per distinct tag set (6 among the 6 wheels), not per file
  // The kept files are complete.
  for (const auto& f : decoded.files) {
    auto full = std::find_if(page.files.begin(), page.files.end(),
                             [&](const DistFile& g) { return g.filename() == f.filename(); });
    REQUIRE(full != page.files.end());
    ProjectPage a, b;
    a.files = {f};
    b.files = {*full};
    check_same(a, b);
  }

  // The same filtering of a page in memory (a page just parsed).
  ProjectPage in_memory = page;
  detail::filter_page(in_memory, filter);
  check_filtered(in_memory);
}

TEST_CASE("crc32c: RFC 3720 vectors, hardware and software agree", "[cache]") {
  CHECK(detail::crc32c("123456789") == 0xE3069283u);
  CHECK(detail::crc32c(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(detail::crc32c(std::string(32, '\xff')) == 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i)
    ascending.push_back(static_cast<char>(i));
  CHECK(detail::crc32c(ascending) == 0x46DD794Eu);
  std::mt19937 rng(7);
  std::string data(5000, '\0');
  for (auto& c : data)
    c = static_cast<char>(rng());
  for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 65u, 1000u, 4999u}) {
    std::string_view part(data.data(), n);
    CHECK(detail::crc32c(part) == detail::crc32c_software(part));
  }
  for (std::size_t n = 0; n < 200; ++n) {
    std::string_view part(data.data(), n);
    CHECK(detail::checksum64(part, 7) == detail::checksum64(part, 7, true));
  }
  CHECK(detail::checksum64(data, 7) == detail::checksum64(data, 7, true));
  CHECK(detail::checksum64(data, 1) != detail::checksum64(data, 2));
  std::string flipped = data;
  for (std::size_t i : {0u, 1666u, 3333u, 4999u}) {
    flipped[i] = static_cast<char>(flipped[i] ^ 1);
    CHECK(detail::checksum64(flipped, 1) != detail::checksum64(data, 1));
    flipped[i] = data[i];
  }
}

TEST_CASE("entries with the previous header format (hash64 checksum) still read", "[cache]") {
  std::string root = index_test::scratch_dir("cache-format1");
  detail::DiskCache cache(root, true);
  detail::MetadataEntry m;
  m.url = "https://h/x.whl";
  m.stored_at = 1;
  m.text = "Metadata-Version: 2.1\nName: x\n";
  REQUIRE(cache.store_metadata("sha256-old", m));
  std::string path;
  for (const auto& ent : std::filesystem::recursive_directory_iterator(root)) {
    if (ent.is_regular_file()) path = ent.path().string();
  }
  REQUIRE_FALSE(path.empty());
  std::string bytes = index_test::read_text(path);
  REQUIRE(bytes.size() > 24);
  REQUIRE(bytes[5] == 2);
  // Rewrite the header as format 1 wrote it.
  bytes[5] = 1;
  std::uint64_t old_sum = detail::hash64(std::string_view(bytes).substr(24), 0x6770756c6f636bULL);
  std::memcpy(bytes.data() + 16, &old_sum, 8);
  index_test::write_text(path, bytes);
  auto loaded = cache.load_metadata("sha256-old");
  REQUIRE(loaded);
  CHECK(loaded->text == m.text);
  // And a format-1 header with a wrong checksum is still a miss.
  bytes[bytes.size() - 1] ^= 1;
  index_test::write_text(path, bytes);
  CHECK_FALSE(cache.load_metadata("sha256-old"));
}

// The on-disk cache format: round trips, torn and foreign files, concurrent writers.
#include "cache.h"

#include <signal.h>
#include <unistd.h>

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
#include <sys/resource.h>
#include <sys/wait.h>

#include "gpulock/index/parse.h"

#include "cache_binary.h"
#include "index_test_support.h"
#include "page_compare.h"

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
  for (std::size_t i = 0; i < a.files.size(); ++i)
    index_test::check_same_file(a.files[i], b.files[i]);
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

TEST_CASE("Checksum64Stream gives checksum64's value however the bytes are split", "[cache]") {
  std::mt19937_64 rng(46);
  std::string data(200'003, '\0');
  for (auto& c : data)
    c = static_cast<char>(rng());
  std::vector<std::size_t> sizes = {0,   1,    2,    3,      4,       5,       7,
                                    8,   9,    10,   23,     24,      25,      26,
                                    100, 1000, 4097, 65'536, 200'001, 200'002, 200'003};
  for (int i = 0; i < 12; ++i)
    sizes.push_back(rng() % data.size());
  for (std::size_t size : sizes) {
    const std::string_view bytes(data.data(), size);
    const std::uint64_t seed = rng();
    for (bool software : {false, true}) {
      INFO("size " << size << (software ? ", software" : ", hardware where the CPU has it"));
      const std::uint64_t expected = detail::checksum64(bytes, seed, software);
      CHECK(expected == detail::checksum64(bytes, seed, !software));
      // Whole, byte by byte (small sizes), and random pieces, short and long, empty ones too.
      std::vector<std::function<std::size_t()>> chunkings = {
          [&] { return size; }, [] { return std::size_t{1}; }, [&] { return rng() % 9; },
          [&] { return rng() % 5000; }, [&] { return 1 + rng() % (size / 2 + 1); }};
      for (std::size_t c = 0; c < chunkings.size(); ++c) {
        if (c == 1 && size > 5000) continue;
        INFO("chunking " << c);
        detail::Checksum64Stream stream(size, seed, software);
        std::string_view rest = bytes;
        while (!rest.empty()) {
          const std::size_t n = std::min(chunkings[c](), rest.size());
          stream.update(rest.substr(0, n));
          rest.remove_prefix(n);
        }
        CHECK(stream.consumed() == size);
        CHECK(stream.finish() == expected);
      }
    }
  }
}

namespace {

constexpr std::uint64_t kSeed = 0x6770756c6f636bULL;  // cache.cpp's kChecksumSeed

// A page entry as the cache wrote it in one buffer (before issue 46): header, the entry's
// fields, encode_page's bytes.
std::string one_buffer_entry(const detail::PageEntry& e) {
  std::string payload;
  detail::put_str(payload, e.url);
  detail::put_i64(payload, e.stored_at);
  detail::put_i64(payload, e.max_age);
  detail::put_u8(payload, e.no_cache ? 1 : 0);
  const auto status = static_cast<std::uint16_t>(e.status);
  payload.append(reinterpret_cast<const char*>(&status), 2);
  detail::put_str(payload, e.etag);
  detail::put_str(payload, e.last_modified);
  detail::encode_page(e.page, payload);
  std::string out = "GPLKP";
  out += '\2';
  out.append(2, '\0');
  detail::put_u64(out, payload.size());
  detail::put_u64(out, detail::checksum64(payload, kSeed));
  return out + payload;
}

// The files under `root` (an entry, and any temporary beside it).
std::vector<std::string> files_under(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& ent : std::filesystem::recursive_directory_iterator(root)) {
    if (ent.is_regular_file()) out.push_back(ent.path().string());
  }
  return out;
}

// A page of `files` wheels, a variants file and an sdist (sample_page with a variants file).
ProjectPage page_with_variants(std::size_t files) {
  ProjectPage page = sample_page(files);
  std::string json = R"({"meta":{"api-version":"1.1"},"name":"demo-pkg","files":[)"
                     R"({"filename":"demo_pkg-1.0-variants.json","url":"https://h/v.json",)"
                     R"("hashes":{"sha256":"00"}}]})";
  auto variants = parse_json_page(json, "http://h/simple/demo-pkg/", {"demo-pkg", false});
  REQUIRE(variants);
  for (auto& f : variants->variants_files)
    page.variants_files.push_back(std::move(f));
  return page;
}

}  // namespace

TEST_CASE("PageEncoder: its size first, then encode_page's bytes in chunks", "[cache]") {
  for (std::size_t files : {0u, 1u, 40u}) {
    const ProjectPage page = files == 0 ? ProjectPage{} : page_with_variants(files);
    std::string whole;
    detail::encode_page(page, whole);
    const detail::PageEncoder encoder(page);
    CHECK(encoder.size() == whole.size());
    for (std::size_t chunk : {1u, 20u, 333u, 100'000u}) {
      INFO(files << " files, chunk " << chunk);
      std::string streamed, buffer;
      int flushes = 0;
      REQUIRE(encoder.write(buffer, chunk, [&](std::string& b) {
        CHECK(b.size() >= chunk);
        streamed += b;
        b.clear();
        ++flushes;
        return true;
      }));
      // What the last flush left: under a chunk, then the two counts at most (no files).
      CHECK(buffer.size() < chunk + 8);
      CHECK(streamed + buffer == whole);
      CHECK((flushes > 0) == (chunk < whole.size()));
      // A flush that fails stops the encoding.
      if (flushes > 1) {
        std::string b;
        int calls = 0;
        CHECK_FALSE(encoder.write(b, chunk, [&](std::string&) { return ++calls < 2; }));
        CHECK(calls == 2);
      }
    }
  }
}

TEST_CASE("page entries are streamed to the same bytes as one buffer held them", "[cache]") {
  std::string root = index_test::scratch_dir("cache-streamed");
  detail::DiskCache cache(root, true);
  std::vector<std::pair<std::string, ProjectPage>> pages;
  pages.emplace_back("missing", ProjectPage{});
  pages.back().second.name = "missing";
  pages.emplace_back("one", sample_page(1));
  pages.emplace_back("many", page_with_variants(300));
  pages.emplace_back("mixed", mixed_page());
  REQUIRE_FALSE(pages[2].second.variants_files.empty());
  for (auto& [name, page] : pages) {
    detail::PageEntry e;
    e.url = "http://h/simple/" + name + "/";
    e.stored_at = 1700000000;
    e.max_age = 60;
    e.etag = "\"e\"";
    e.last_modified = "Mon, 01 Jan 2024 00:00:00 GMT";
    e.page = page;
    const std::string expected = one_buffer_entry(e);
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{24}, std::size_t{100},
                              std::size_t{5000}, detail::DiskCache::kPageChunkSize}) {
      INFO(name << ", chunk " << chunk << ", entry of " << expected.size() << " bytes");
      std::filesystem::remove_all(root);
      REQUIRE(cache.store_page(e, page, chunk));
      const auto files = files_under(root);
      REQUIRE(files.size() == 1);  // no temporary left beside it
      CHECK(index_test::read_text(files[0]) == expected);
      auto loaded = cache.load_page(e.url);
      REQUIRE(loaded);
      CHECK(loaded->etag == e.etag);
      check_same(loaded->page, page);
      CHECK(loaded->page.variants_files.size() == page.variants_files.size());
    }
  }
}

TEST_CASE("a page entry that fails to be written leaves the old one and no temporary", "[cache]") {
  std::string root = index_test::scratch_dir("cache-stream-fail");
  detail::DiskCache cache(root, true);
  detail::PageEntry old;
  old.url = "http://h/simple/demo-pkg/";
  old.stored_at = 1;
  old.page = sample_page(1);
  REQUIRE(cache.store_page(old));
  detail::PageEntry big = old;
  big.stored_at = 2;
  big.page = sample_page(200);
  REQUIRE(one_buffer_entry(big).size() > 16384);
  // In a child, under a file-size limit the new entry is over (EFBIG): streamed in chunks, and
  // in one write.
  for (std::size_t chunk : {std::size_t{1000}, detail::DiskCache::kPageChunkSize}) {
    INFO("chunk " << chunk);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      const rlimit limit{16384, 16384};
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
      ::signal(SIGXFSZ, SIG_IGN);
      ::_exit(cache.store_page(big, big.page, chunk) ? 11 : 0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK(files_under(root).size() == 1);
    auto loaded = cache.load_page(old.url);
    REQUIRE(loaded);
    CHECK(loaded->stored_at == 1);
  }
}

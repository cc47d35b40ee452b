// A wheel's member list from its zip central directory (issue 44 item 1): the parser
// (index/src/zip_directory.cpp) on zips built here, zip64 included, checked against Python's
// zipfile and libzip; the digest and the shared libraries; bounded reads of a central directory
// that lies; local and file:// wheels through the client, with no network.
#include "gpulock/index/wheel_members.h"

#include <cstdio>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/core/sha256.h"
#include "gpulock/index/client.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"

#include "cache.h"
#include "index_test_support.h"
#include "zip_builder.h"
#include "zip_directory.h"

using namespace gpulock;
using namespace gpulock::index;
using index_test::build_zip;
using index_test::ZipEntry;
using index_test::ZipLayout;
using index_test::ZipOptions;

namespace {

// What Python's zipfile lists: "name\tsize\tcrc" per file entry (directories left out).
std::string python_listing(const std::string& path) {
  std::string out_file = path + ".listing";
  std::string cmd = fmt::format(
      "/usr/bin/python3 -c \"import zipfile,sys\n"
      "with open(sys.argv[2],'w') as o:\n"
      "  for i in zipfile.ZipFile(sys.argv[1]).infolist():\n"
      "    (i.filename.endswith('/') or o.write('%s\\t%d\\t%08x\\n' % (i.filename, i.file_size, "
      "i.CRC)))\" '{}' '{}'",
      path, out_file);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return index_test::read_text(out_file);
}

std::string listing(const WheelMembers& m) {
  std::string out;
  for (const auto& e : m.members)
    out += fmt::format("{}\t{}\t{:08x}\n", e.path, e.size, e.crc32);
  return out;
}

std::string write_zip(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir + "/" + name;
  index_test::write_text(path, bytes);
  return path;
}

// Many members with long names: a central directory larger than the 72 KiB first read.
std::vector<ZipEntry> many_entries(int n) {
  std::vector<ZipEntry> e = index_test::cudnn_like_entries();
  for (int i = 0; i < n; ++i) {
    e.push_back({fmt::format("torch/include/ATen/ops/generated_operator_header_{:05d}_impl.h", i),
                 fmt::format("// {}\n", i)});
  }
  return e;
}

// The members of `zip` by "range requests" answered from memory, counting them.
struct Ranged {
  core::Result<std::vector<WheelMember>> members;
  int fetches = 0;
  std::uint64_t bytes = 0;
};
Ranged by_ranges(const std::string& zip, std::uint64_t tail_size, std::uint64_t total = 0) {
  if (total == 0) total = zip.size();
  const std::uint64_t offset = total - zip.size();  // a zip standing for the end of a larger file
  Ranged r{std::vector<WheelMember>{}};
  index::detail::RangeFetch fetch = [&](std::uint64_t a,
                                        std::uint64_t b) -> core::Result<std::string> {
    ++r.fetches;
    REQUIRE(a <= b);
    REQUIRE(b < total);
    if (a < offset) return core::fail(core::ErrorCode::Network, "before the stand-in");
    return zip.substr(static_cast<std::size_t>(a - offset), static_cast<std::size_t>(b - a + 1));
  };
  std::string tail = zip.substr(zip.size() - static_cast<std::size_t>(tail_size));
  r.members = index::detail::members_via_ranges(total, tail, fetch, "test.whl", &r.bytes);
  return r;
}

}  // namespace

TEST_CASE("is_shared_library matches lib*.so and lib*.so.* file names", "[members]") {
  for (const char* yes : {"nvidia/cudnn/lib/libcudnn_graph.so.9", "libtorch.so", "lib.so",
                          "nvidia/cu13/lib/libnvrtc-builtins.so.13.3", "a/libnccl.so.2"}) {
    CHECK(is_shared_library(yes));
  }
  for (const char* no : {"nvidia/__init__.py", "torch/lib/c10.so", "libfoo.a", "libso",
                         "lib/libfoo.so9", "nvidia/libdir.so.d/x.py", "mylib.so"}) {
    CHECK_FALSE(is_shared_library(no));
  }
}

TEST_CASE("members_digest hashes path, size and CRC-32 sorted by path", "[members]") {
  std::vector<WheelMember> a{{"b/x.so", 10, 0xdeadbeef}, {"a/__init__.py", 0, 0}};
  std::vector<WheelMember> b{a[1], a[0]};
  CHECK(members_digest(a) == members_digest(b));  // the zip's order does not matter
  // The exact text hashed (wheel_members.h).
  std::string text = std::string("a/__init__.py") + '\0' + "0" + '\0' + "00000000\n" + "b/x.so" +
                     '\0' + "10" + '\0' + "deadbeef\n";
  CHECK(members_digest(a) == core::sha256_hex(text));
  auto changed = a;
  changed[0].crc32 ^= 1;
  CHECK(members_digest(changed) != members_digest(a));
  changed = a;
  changed[0].size += 1;
  CHECK(members_digest(changed) != members_digest(a));
  CHECK(members_digest({}) == core::sha256_hex(""));
}

TEST_CASE("a cuDNN-shaped wheel: members, sizes, CRCs, digest and shared libraries", "[members]") {
  auto entries = index_test::cudnn_like_entries();
  std::string dir = index_test::scratch_dir("members-cudnn");
  std::string path = write_zip(
      dir, "nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl", build_zip(entries));
  auto m = read_wheel_members(path);
  REQUIRE(m);
  REQUIRE(m->members.size() == entries.size() - 1);  // the directory entry is left out
  CHECK(m->members[0] == WheelMember{"nvidia/__init__.py", 0, 0});
  for (const auto& member : m->members) {
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const ZipEntry& e) { return e.name == member.path; });
    REQUIRE(it != entries.end());
    CHECK(member.size == it->data.size());
    CHECK(member.crc32 == index_test::crc32(it->data));
  }
  CHECK(listing(*m) == python_listing(path));
  CHECK(m->digest == members_digest(m->members));
  CHECK(m->shared_libraries ==
        std::vector<std::string>{
            "nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cudnn/lib/libcudnn_adv.so.9",
            "nvidia/cudnn/lib/libcudnn_cnn.so.9",
            "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9",
            "nvidia/cudnn/lib/libcudnn_engines_runtime_compiled.so.9",
            "nvidia/cudnn/lib/libcudnn_graph.so.9", "nvidia/cudnn/lib/libcudnn_heuristic.so.9",
            "nvidia/cudnn/lib/libcudnn_ops.so.9"});
  // The same list from memory, from a file:// URL through the client (no network, no cache),
  // and from a wheel built by Python's zipfile with a 64 KiB comment.
  CHECK(index::detail::members_from_buffer(build_zip(entries), "x").value() == m->members);
  ClientOptions o;
  o.cache_dir = dir + "/cache";
  IndexClient client(o);
  auto via_client = client.wheel_members(WheelRef{path_to_file_url(path), std::nullopt, {}});
  REQUIRE(via_client);
  CHECK(*via_client == *m);
  CHECK(client.stats().requests == 0);
  ZipOptions commented;
  commented.comment = std::string(65535, 'c');
  auto with_comment = read_wheel_members(write_zip(dir, "c.whl", build_zip(entries, commented)));
  REQUIRE(with_comment);
  CHECK(*with_comment == *m);
}

TEST_CASE("zip64: end records, locator and extra fields", "[members]") {
  auto entries = index_test::cudnn_like_entries();
  std::string dir = index_test::scratch_dir("members-zip64");
  ZipOptions o;
  o.zip64 = true;
  std::string path = write_zip(dir, "z64.whl", build_zip(entries, o));
  auto m = read_wheel_members(path);
  REQUIRE(m);
  auto plain = read_wheel_members(write_zip(dir, "plain.whl", build_zip(entries)));
  REQUIRE(plain);
  CHECK(*m == *plain);
  CHECK(listing(*m) == python_listing(path));
  // A zip64 file written by Python's zipfile (its zip64 end records forced, deflated members).
  std::string py64 = dir + "/py64.whl";
  std::string cmd = fmt::format(
      "/usr/bin/python3 -c \"import zipfile,sys\n"
      "zipfile.ZIP_FILECOUNT_LIMIT = 1\n"
      "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
      "  z.writestr('nvidia/__init__.py', '')\n"
      "  z.writestr('nvidia/nccl/lib/libnccl.so.2', 'x' * 5000)\n"
      "  z.writestr('nvidia_nccl_cu13-2.29.7.dist-info/RECORD', '')\" '{}'",
      py64);
  REQUIRE(std::system(cmd.c_str()) == 0);
  REQUIRE(index_test::read_text(py64).find(std::string("PK\x06\x06", 4)) != std::string::npos);
  auto from_python = read_wheel_members(py64);
  REQUIRE(from_python);
  CHECK(listing(*from_python) == python_listing(py64));
  CHECK(from_python->shared_libraries == std::vector<std::string>{"nvidia/nccl/lib/libnccl.so.2"});
  // libzip (the METADATA reader) reads the same file.
  auto meta = read_wheel_metadata(path);
  REQUIRE(meta);
  CHECK(meta->find("Name: nvidia-cudnn-cu13") != std::string::npos);
  // A zip64 extra field that lacks the size its header defers to.
  ZipLayout l;
  std::string z = build_zip({{"a.so", "x"}}, o, &l);
  index_test::patch(z, l.directory_offset + 46 + 4 + 2, 0, 2);  // the extra's length: 0
  auto lacks = index::detail::members_from_buffer(z, "z.whl");
  REQUIRE_FALSE(lacks);
  CHECK(lacks.error().message.find("lacks the zip64 sizes") != std::string::npos);
}

TEST_CASE("a central directory larger than the first read takes one more range", "[members]") {
  std::string zip = build_zip(many_entries(3000));
  const std::uint64_t tail = index::detail::member_tail_bytes(zip.size());
  CHECK(tail == index::detail::kTailBytes);  // 1% of ~0.5 MB is under the floor
  auto r = by_ranges(zip, tail);
  REQUIRE(r.members);
  CHECK(r.members->size() == 3000 + index_test::cudnn_like_entries().size() - 1);
  CHECK(r.fetches == 1);
  ZipLayout l;
  (void)build_zip(many_entries(3000), {}, &l);
  CHECK(l.directory_size > tail);
  // The tail plus exactly the rest of the directory: nothing before it.
  CHECK(r.bytes == zip.size() - l.directory_offset);
  // Small tails still find everything (the EOCD's reach first, then the directory).
  for (std::uint64_t small : {22u, 100u, 5000u}) {
    auto s = by_ranges(zip, small);
    REQUIRE(s.members);
    CHECK(*s.members == *r.members);
    CHECK(s.fetches <= 2);
  }
  std::string dir = index_test::scratch_dir("members-big");
  std::string path = write_zip(dir, "big.whl", zip);
  auto m = read_wheel_members(path);
  REQUIRE(m);
  CHECK(m->members == *r.members);
  CHECK(listing(*m) == python_listing(path));
}

TEST_CASE("the first read: 1% of the size, at least 72 KiB, at most 1 MiB", "[members]") {
  using index::detail::member_tail_bytes;
  CHECK(member_tail_bytes(std::nullopt) == 72 * 1024);
  CHECK(member_tail_bytes(1000) == 1000);
  CHECK(member_tail_bytes(1'000'000) == 72 * 1024);
  CHECK(member_tail_bytes(50'000'000) == 500'000);
  CHECK(member_tail_bytes(3'000'000'000ULL) == 1024 * 1024);
}

TEST_CASE("a central directory that lies gives an error, not a crash or a huge read", "[members]") {
  auto entries = index_test::cudnn_like_entries();
  ZipLayout l;
  const std::string good = build_zip(entries, {}, &l);
  auto fails_with = [&](const std::string& zip, std::string_view words) {
    auto r = index::detail::members_from_buffer(zip, "lie.whl");
    REQUIRE_FALSE(r);
    CHECK(r.error().where == "lie.whl");
    CHECK_THAT(r.error().message, Catch::Contains(std::string(words)));
    // The same through range reads from a small tail: same answer, bounded reads.
    auto ranged = by_ranges(zip, std::min<std::uint64_t>(zip.size(), 100));
    REQUIRE_FALSE(ranged.members);
    CHECK(ranged.bytes <= zip.size());
  };
  std::string z = good;
  index_test::patch(z, l.eocd_offset + 8, 0xFFFE, 2);  // entries beyond what the size holds
  index_test::patch(z, l.eocd_offset + 10, 0xFFFE, 2);
  fails_with(z, "claims 65534 entries");
  z = good;
  index_test::patch(z, l.eocd_offset + 16, 0x7FFFFFF0, 4);  // offset beyond the file
  fails_with(z, "but the end records begin at offset");
  z = good;
  index_test::patch(z, l.eocd_offset + 12, 0xFFFFFFF0, 4);  // size beyond the file
  fails_with(z, "claims 4294967280 bytes");
  z = good;
  index_test::patch(z, l.directory_offset + 42, 0x7FFFFFF0, 4);  // a member's data offset
  fails_with(z, "past the central directory");
  z = good;
  index_test::patch(z, l.directory_offset + 20, 0x7FFFFFF0, 4);  // a member's compressed size
  fails_with(z, "past the central directory");
  z = good;
  index_test::patch(z, l.directory_offset + 28, 0xFFFF, 2);  // a name running past the end
  fails_with(z, "cut short");
  z = good;
  index_test::patch(z, l.directory_offset, 0, 4);  // no header signature
  fails_with(z, "no signature");
  z = good;
  index_test::patch(z, l.eocd_offset + 8, 3, 2);  // fewer entries than the bytes hold
  index_test::patch(z, l.eocd_offset + 10, 3, 2);
  fails_with(z, "bytes after its 3 entries");
  fails_with("not a zip at all", "no end of central directory record");
  fails_with(std::string(100000, '\0'), "no end of central directory record");
  z = build_zip({{std::string("a\0b.so", 6), "x"}});
  fails_with(z, "holds a NUL byte");
}

TEST_CASE("a zip64 directory that claims a gigabyte is refused before it is fetched", "[members]") {
  // The last 100 KB of a "3 GiB file" whose zip64 record puts a 1 GiB directory before them.
  ZipOptions o;
  o.zip64 = true;
  ZipLayout l;
  std::string zip = build_zip({{"a.so", "x"}}, o, &l);
  const std::uint64_t total = 3ULL << 30;
  const std::uint64_t shift = total - zip.size();
  const std::uint64_t record = l.zip64_record_offset + shift;
  index_test::patch(zip, l.zip64_record_offset + 24, 1000, 8);
  index_test::patch(zip, l.zip64_record_offset + 32, 1000, 8);
  index_test::patch(zip, l.zip64_record_offset + 40, 1ULL << 30, 8);
  index_test::patch(zip, l.zip64_record_offset + 48, record - (1ULL << 30), 8);
  index_test::patch(zip, l.zip64_record_offset + 56 + 8, record, 8);  // the locator
  auto r = by_ranges(zip, zip.size(), total);
  REQUIRE_FALSE(r.members);
  CHECK(r.members.error().code == core::ErrorCode::IndexFormat);
  CHECK_THAT(r.members.error().message, Catch::Contains("more than 64 MiB"));
  CHECK(r.fetches == 0);
  // A locator pointing past itself, and one pointing before the file.
  std::string z = build_zip({{"a.so", "x"}}, o, &l);
  index_test::patch(z, l.zip64_record_offset + 56 + 8, l.eocd_offset, 8);
  CHECK_FALSE(index::detail::members_from_buffer(z, "x"));
  z = build_zip({{"a.so", "x"}}, o, &l);
  index_test::patch(z, l.zip64_record_offset + 40, 0xFFFFFFFFFFFFULL, 8);
  auto huge = index::detail::members_from_buffer(z, "x");
  REQUIRE_FALSE(huge);
  CHECK(huge.error().code == core::ErrorCode::InvalidInput);
}

TEST_CASE("local wheels: the test wheels built by Python's zipfile", "[members]") {
  const std::string wheels = index_test::wheels_dir() + "/wheels/";
  for (const char* name : {"big_pkg-2.0-py3-none-any.whl", "demo_pkg-1.2.3-py3-none-any.whl",
                           "tail_pkg-1.0-py3-none-any.whl"}) {
    DYNAMIC_SECTION(name) {
      auto m = read_wheel_members(wheels + name);
      REQUIRE(m);
      CHECK(listing(*m) == python_listing(wheels + name));
    }
  }
  auto not_zip = read_wheel_members(wheels + "notzip-1.0-py3-none-any.whl");
  REQUIRE_FALSE(not_zip);
  CHECK(not_zip.error().code == core::ErrorCode::InvalidInput);
  auto missing = read_wheel_members(wheels + "missing.whl");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == core::ErrorCode::Io);
}

TEST_CASE("member lists in the cache: round trip, and torn or altered entries are misses",
          "[members][cache]") {
  std::string root = index_test::scratch_dir("members-cache-entry");
  index::detail::DiskCache cache(root, true);
  index::detail::MembersEntry e;
  e.url = "https://files.example/x.whl";
  e.stored_at = 1234;
  e.size = 999;
  e.etag = "\"abc\"";
  e.last_modified = "Sun, 06 Dec 2026 00:00:00 GMT";
  e.members = make_wheel_members(
      index::detail::members_from_buffer(build_zip(index_test::cudnn_like_entries()), "x").value());
  const std::string key = "sha256-" + std::string(64, 'a') + " " + e.url;
  REQUIRE(cache.store_members(key, e));
  auto back = cache.load_members(key);
  REQUIRE(back);
  CHECK(back->members == e.members);  // shared libraries recomputed, digest kept
  CHECK(back->url == e.url);
  CHECK(back->stored_at == 1234);
  CHECK(back->size == 999);
  CHECK(back->etag == e.etag);
  CHECK(back->last_modified == e.last_modified);
  CHECK_FALSE(cache.load_members("url:" + e.url + " size:999"));  // another key
  std::string path;
  for (const auto& ent : std::filesystem::recursive_directory_iterator(root)) {
    if (ent.is_regular_file()) path = ent.path().string();
  }
  REQUIRE(path.find("/members-v1/") != std::string::npos);
  const std::string good = index_test::read_text(path);
  index_test::write_text(path, good.substr(0, good.size() / 2));
  CHECK_FALSE(cache.load_members(key));
  std::string flipped = good;
  flipped[good.size() - 5] ^= 0x01;
  index_test::write_text(path, flipped);
  CHECK_FALSE(cache.load_members(key));
  index_test::write_text(path, good);
  CHECK(cache.load_members(key));
}

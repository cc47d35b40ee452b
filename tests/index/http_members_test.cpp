// A wheel's member list over HTTP (issue 44 item 1), against a private nginx (its access log
// shows every Range header) and the fault server's /no-range/ mode: only ranges are read (the
// tail, then at most one more), a server without range support still works, the cache answers a
// warm or --offline run with no request, lists of many wheels are read in parallel, and a central
// directory that lies is an error after a bounded read.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/client.h"
#include "gpulock/index/hash.h"
#include "gpulock/index/wheel_members.h"

#include "http_support.h"
#include "zip_builder.h"
#include "zip_directory.h"

using namespace gpulock;
using namespace gpulock::index;
using index_test::build_zip;
using index_test::test_options;
using index_test::unique_agent;
using index_test::ZipEntry;
using index_test::ZipLayout;
using index_test::ZipOptions;

namespace {

constexpr const char* kCudnn = "nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl";
constexpr const char* kBig = "torch_like-1.0-py3-none-any.whl";
constexpr const char* kZip64 = "zip64_pkg-1.0-py3-none-any.whl";
constexpr const char* kLying = "lying-1.0-py3-none-any.whl";

// A central directory larger than the 72 KiB first read (~350 KB).
std::vector<ZipEntry> big_entries() {
  std::vector<ZipEntry> e = index_test::cudnn_like_entries();
  for (int i = 0; i < 3000; ++i) {
    e.push_back({fmt::format("torch/include/ATen/ops/generated_operator_header_{:05d}_impl.h", i),
                 std::string(200, static_cast<char>('a' + i % 26))});
  }
  return e;
}

// The served tree: wheels/ with the four test wheels (built once per process).
const std::string& served_root() {
  static const std::string root = [] {
    std::string dir = index_test::scratch_dir("members-served");
    std::filesystem::create_directories(dir + "/wheels");
    index_test::write_text(dir + "/manifest.json", "{}\n");  // servers.py serves such trees
    auto w = [&](const char* name, const std::string& bytes) {
      index_test::write_text(dir + "/wheels/" + name, bytes);
    };
    w(kCudnn, build_zip(index_test::cudnn_like_entries()));
    w(kBig, build_zip(big_entries()));
    ZipOptions o;
    o.zip64 = true;
    w(kZip64, build_zip(index_test::cudnn_like_entries(), o));
    ZipLayout l;
    std::string lying = build_zip(big_entries(), {}, &l);
    index_test::patch(lying, l.eocd_offset + 16, 0x7FFFFFF0, 4);  // a directory past the end
    w(kLying, lying);
    return dir;
  }();
  return root;
}

std::uint64_t file_size(const char* name) {
  return std::filesystem::file_size(served_root() + "/wheels/" + name);
}

std::string sha256_of(const char* name) {
  return sha256_file(served_root() + "/wheels/" + name).value().sha256;
}

struct Served {
  gpulock::test::PrivateServers servers;
  Served() : servers(options()) {}
  static gpulock::test::PrivateServerOptions options() {
    gpulock::test::PrivateServerOptions o;
    o.root = served_root();
    o.copy = false;
    o.fault = true;
    return o;
  }
  std::string url(const char* name) const { return servers.env().http_url() + "/wheels/" + name; }
  std::string no_range_url(const char* name) const {
    return servers.env().fault_url() + "/no-range/wheels/" + name;
  }
};

Served& served() {
  static Served s;
  return s;
}

}  // namespace

TEST_CASE("member lists by range requests: the tail, then at most one more", "[http][members]") {
  const std::string agent = unique_agent("members-ranges");
  const std::string cache = index_test::scratch_dir("members-ranges");
  IndexClient client(test_options(cache, agent));
  auto local = read_wheel_members(served_root() + "/wheels/" + kCudnn);
  REQUIRE(local);

  // A small directory: one request for the tail (the whole 72 KiB floor or the file).
  auto small = client.wheel_members(WheelRef{served().url(kCudnn), file_size(kCudnn), {}});
  REQUIRE(small);
  CHECK(*small == *local);
  CHECK(small->shared_libraries.size() == 8);
  CHECK(client.stats().range_requests == 1);
  CHECK(client.stats().range_members == 1);

  // A directory larger than the first read: the tail, then exactly the rest of the directory.
  const std::uint64_t big_size = file_size(kBig);
  auto big = client.wheel_members(WheelRef{served().url(kBig), big_size, {}});
  REQUIRE(big);
  CHECK(big->members.size() == 3000 + 14);
  CHECK(*big == read_wheel_members(served_root() + "/wheels/" + kBig).value());
  CHECK(client.stats().range_requests == 3);
  auto log = index_test::settled_requests_by(agent, 3, served().servers.access_log());
  REQUIRE(log.size() == 3);
  for (const auto& e : log)
    CHECK(e.status == 206);
  const std::uint64_t tail = index::detail::member_tail_bytes(file_size(kCudnn));
  CHECK(log[0].range == fmt::format("bytes=-{}", tail));
  CHECK(log[1].range == fmt::format("bytes=-{}", index::detail::kTailBytes));
  ZipLayout l;
  (void)build_zip(big_entries(), {}, &l);
  CHECK(log[2].range ==
        fmt::format("bytes={}-{}", l.directory_offset, big_size - index::detail::kTailBytes - 1));
  // Bytes read for the big wheel: its directory and end record, a fraction of the file.
  const std::uint64_t big_bytes = static_cast<std::uint64_t>(log[1].bytes + log[2].bytes);
  CHECK(big_bytes == big_size - l.directory_offset);
  CHECK(big_bytes * 2 < big_size);
  WARN(fmt::format("big wheel: {} of {} bytes read in 2 range requests; cuDNN-shaped: {} of {}",
                   big_bytes, big_size, log[0].bytes, file_size(kCudnn)));

  // zip64 over HTTP.
  auto z64 = client.wheel_members(WheelRef{served().url(kZip64), std::nullopt, {}});
  REQUIRE(z64);
  CHECK(z64->members == local->members);
}

TEST_CASE("member lists from a server without range support", "[http][members]") {
  const std::string cache = index_test::scratch_dir("members-norange");
  IndexClient client(test_options(cache, unique_agent("members-norange")));
  // A small wheel comes whole in the answer to the tail request.
  auto small = client.wheel_members(
      WheelRef{served().no_range_url(kCudnn), file_size(kCudnn), sha256_of(kCudnn)});
  REQUIRE(small);
  CHECK(*small == read_wheel_members(served_root() + "/wheels/" + kCudnn).value());
  CHECK(client.stats().range_requests == 1);
  CHECK(client.stats().downloaded_members == 1);
  // A wheel over what that answer may bring: the range-less host is remembered, the wheel is
  // streamed to a temporary file (hashed against its sha256) and read there.
  auto big =
      client.wheel_members(WheelRef{served().no_range_url(kBig), file_size(kBig), sha256_of(kBig)});
  REQUIRE(big);
  CHECK(big->members.size() == 3000 + 14);
  CHECK(client.stats().range_requests == 1);
  CHECK(client.stats().download_requests == 1);
  CHECK(client.stats().downloaded_members == 2);
  // A wrong sha256 on a whole download is a mismatch.
  IndexClient other(
      test_options(index_test::scratch_dir("members-norange2"), unique_agent("members-norange2")));
  auto wrong =
      other.wheel_members(WheelRef{served().no_range_url(kCudnn), std::nullopt, sha256_of(kBig)});
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code == core::ErrorCode::HashMismatch);
}

TEST_CASE("cached member lists: warm and --offline runs send nothing", "[http][members]") {
  const std::string cache = index_test::scratch_dir("members-cache");
  const WheelRef hashed{served().url(kBig), file_size(kBig), sha256_of(kBig)};
  const WheelRef unhashed{served().url(kCudnn), file_size(kCudnn), {}};
  WheelMembers first_hashed, first_unhashed;
  {
    IndexClient cold(test_options(cache, unique_agent("members-cold")));
    first_hashed = cold.wheel_members(hashed).value();
    first_unhashed = cold.wheel_members(unhashed).value();
    CHECK(cold.stats().range_requests == 3);
    // Memoized in the client.
    CHECK(cold.wheel_members(hashed).value() == first_hashed);
    CHECK(cold.stats().range_requests == 3);
  }
  {
    auto o = test_options(cache, unique_agent("members-offline"));
    o.offline = true;
    IndexClient offline(o);
    CHECK(offline.wheel_members(hashed).value() == first_hashed);
    CHECK(offline.wheel_members(unhashed).value() == first_unhashed);
    CHECK(offline.stats().requests == 0);
    CHECK(offline.stats().members_cache_hits == 2);
    // Not in the cache: an Offline error, no request.
    auto missing = offline.wheel_members(WheelRef{served().url(kZip64), std::nullopt, {}});
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == core::ErrorCode::Offline);
    // Another size for the same URL is another file: not the cached list.
    CHECK_FALSE(offline.wheel_members(WheelRef{unhashed.url, 12345, {}}));
  }
  {
    IndexClient warm(test_options(cache, unique_agent("members-warm")));
    CHECK(warm.wheel_members(hashed).value() == first_hashed);
    CHECK(warm.wheel_members(unhashed).value() == first_unhashed);  // fresh for 10 minutes
    CHECK(warm.stats().requests == 0);
  }
  {
    // --refresh: the list without a hash is revalidated by its ETag (a 304, no body); the
    // hashed one is immutable.
    const std::string agent = unique_agent("members-refresh");
    auto o = test_options(cache, agent);
    o.refresh = true;
    IndexClient refresh(o);
    CHECK(refresh.wheel_members(hashed).value() == first_hashed);
    CHECK(refresh.wheel_members(unhashed).value() == first_unhashed);
    CHECK(refresh.stats().requests == 1);
    auto log = index_test::settled_requests_by(agent, 1, served().servers.access_log());
    REQUIRE(log.size() == 1);
    CHECK(log[0].if_none_match != "-");
    CHECK(log[0].status == 304);
  }
}

TEST_CASE("many member lists at once: one wave of tails, then one of larger directories",
          "[http][members]") {
  const std::string agent = unique_agent("members-batch");
  IndexClient client(test_options(index_test::scratch_dir("members-batch"), agent));
  std::vector<WheelRef> wheels{{served().url(kCudnn), file_size(kCudnn), {}},
                               {served().url(kBig), file_size(kBig), {}},
                               {served().url(kZip64), file_size(kZip64), {}},
                               {served().url(kLying), file_size(kLying), {}},
                               {"ftp://example.invalid/x.whl", std::nullopt, {}},
                               {served().url(kCudnn), file_size(kCudnn), "not-a-digest"}};
  auto results = client.wheel_members(wheels);
  REQUIRE(results.size() == wheels.size());
  REQUIRE(results[0]);
  REQUIRE(results[1]);
  REQUIRE(results[2]);
  CHECK(results[0]->members == results[2]->members);
  CHECK(results[1]->members.size() == 3000 + 14);
  // The lying directory lies past the file's end: refused from the tail, nothing more fetched.
  REQUIRE_FALSE(results[3]);
  CHECK(results[3].error().code == core::ErrorCode::InvalidInput);
  CHECK(results[3].error().where == served().url(kLying));
  REQUIRE_FALSE(results[4]);
  CHECK(results[4].error().code == core::ErrorCode::InvalidInput);
  REQUIRE_FALSE(results[5]);
  CHECK(results[5].error().code == core::ErrorCode::InvalidInput);
  // One tail per wheel, one more for the big one.
  CHECK(client.stats().range_requests == 5);
  auto log = index_test::settled_requests_by(agent, 5, served().servers.access_log());
  CHECK(log.size() == 5);
  std::size_t lying = 0;
  for (const auto& e : log) {
    CHECK(e.range != "-");
    if (e.uri.ends_with(kLying)) ++lying;
  }
  CHECK(lying == 1);
}

TEST_CASE("many member lists are read in parallel", "[http][members]") {
  // The fault server's /barrier3/ holds each request until three wait at once (504 after 10 s):
  // the three tails are in flight together, or this fails.
  IndexClient client(
      test_options(index_test::scratch_dir("members-parallel"), unique_agent("members-parallel")));
  const std::string base = served().servers.env().fault_url() + "/barrier3/wheels/";
  std::vector<WheelRef> wheels{{base + kCudnn, file_size(kCudnn), {}},
                               {base + kBig, file_size(kBig), {}},
                               {base + kZip64, file_size(kZip64), {}}};
  auto results = client.wheel_members(wheels);
  REQUIRE(results.size() == 3);
  for (const auto& r : results) {
    REQUIRE(r);
    CHECK_FALSE(r->members.empty());
  }
  CHECK(results[1]->members.size() == 3000 + 14);
  CHECK(client.stats().range_requests == 4);  // three tails, then the big wheel's directory
  CHECK(client.stats().retries == 0);
}

// Issue 46: the resolve starts a likely candidate's list beside its METADATA; the read after the
// solve joins it. /barrier4/ (used by no other test: an opened barrier stays open) holds each
// request until four wait at once, and the lists are then asked for one at a time: the four
// tails were in flight before anything asked, or the first ask waits alone and fails (504).
TEST_CASE("a prefetched member list is read once, before it is asked for", "[http][members]") {
  IndexClient client(
      test_options(index_test::scratch_dir("members-prefetch"), unique_agent("members-prefetch")));
  const std::string base = served().servers.env().fault_url() + "/barrier4/wheels/";
  std::vector<WheelRef> wheels{{base + kCudnn, file_size(kCudnn), {}},
                               {base + kBig, file_size(kBig), {}},
                               {base + kZip64, file_size(kZip64), {}},
                               {base + kLying, file_size(kLying), {}}};
  for (const auto& w : wheels)
    client.prefetch_wheel_members(w);
  // A local wheel or an invalid reference starts nothing (read, or refused, when asked).
  client.prefetch_wheel_members({served_root() + "/wheels/" + kCudnn, std::nullopt, {}});
  client.prefetch_wheel_members({"ftp://example.invalid/x.whl", std::nullopt, {}});
  CHECK(client.stats().range_requests <= 4);
  std::vector<core::Result<WheelMembers>> results;
  for (const auto& w : wheels)
    results.push_back(client.wheel_members(w));
  REQUIRE(results[0]);
  REQUIRE(results[1]);
  REQUIRE(results[2]);
  CHECK(results[1]->members.size() == 3000 + 14);
  REQUIRE_FALSE(results[3]);
  CHECK(results[3].error().code == core::ErrorCode::InvalidInput);
  CHECK(client.stats().range_requests == 5);  // four tails, then the big wheel's directory
  CHECK(client.stats().retries == 0);
  // Asked again, all at once: answered from memory.
  auto again = client.wheel_members(wheels);
  REQUIRE(again[0]);
  CHECK(*again[0] == *results[0]);
  CHECK(client.stats().range_requests == 5);
}

// Issue 44: a wheel without PEP 658 metadata is read by range requests for METADATA; the same
// tail gives its member list, so resolve's later read of the list sends nothing.
TEST_CASE("one tail read serves a wheel's METADATA and its member list", "[http][members]") {
  const std::string agent = unique_agent("members-with-metadata");
  const std::string cache = index_test::scratch_dir("members-with-metadata");
  auto pypi = IndexSource::simple(index_test::servers().pypi_url());
  const DistFile* wheel = nullptr;
  WheelRef ref;
  {
    IndexClient client(test_options(cache, agent));
    auto networkx = client.fetch_project(pypi, "networkx");
    REQUIRE(networkx);
    for (const auto& f : (*networkx)->files) {
      if (f.wheel() && !f.core_metadata()) wheel = &f;
    }
    REQUIRE(wheel != nullptr);
    ref.url = std::string(wheel->url());
    ref.size = wheel->size();
    for (const auto& h : wheel->hashes()) {
      if (h.algorithm == "sha256") ref.sha256 = h.hex;
    }
    REQUIRE(!ref.sha256.empty());
    auto text = client.fetch_metadata(*wheel);
    REQUIRE(text);
    CHECK(text->find("Name: networkx") != std::string::npos);
    const auto ranges = client.stats().range_requests;
    CHECK(ranges >= 1);
    auto members = client.wheel_members(ref);
    REQUIRE(members);
    // Nothing more was sent for the list, and it is the wheel's own.
    CHECK(client.stats().range_requests == ranges);
    CHECK(client.stats().range_members == 1);
    const auto local = index_test::servers().index_root() / "packages" / "networkx" /
                       std::string(wheel->filename());
    auto expected = read_wheel_members(local.string());
    REQUIRE(expected);
    CHECK(*members == *expected);
    auto log = index_test::settled_requests_by(agent, 1 + ranges);
    std::size_t ranged = 0;
    for (const auto& e : log) {
      if (e.range == "-") continue;
      ++ranged;
      CHECK(e.status == 206);
      CHECK(e.uri.ends_with(".whl"));
    }
    CHECK(ranged == ranges);
  }
  // And it was cached: a new client reads it offline.
  ClientOptions offline = test_options(cache, agent);
  offline.offline = true;
  IndexClient again(offline);
  auto cached = again.wheel_members(ref);
  REQUIRE(cached);
  CHECK(cached->members.size() > 0);
  CHECK(again.stats().members_cache_hits == 1);
}

// The same from a server that ignores Range: the whole wheel METADATA's read brings gives the
// list too, so it is not downloaded a second time.
TEST_CASE("one whole download serves a wheel's METADATA and its member list", "[http][members]") {
  const std::string cache = index_test::scratch_dir("members-with-metadata-norange");
  IndexClient client(test_options(cache, unique_agent("members-with-metadata-norange")));
  auto source = IndexSource::simple(index_test::servers().fault_url() + "/no-range/simple/");
  auto networkx = client.fetch_project(source, "networkx");
  REQUIRE(networkx);
  const DistFile* wheel = nullptr;
  for (const auto& f : (*networkx)->files) {
    if (f.wheel() && !f.core_metadata()) wheel = &f;
  }
  REQUIRE(wheel != nullptr);
  auto text = client.fetch_metadata(*wheel);
  REQUIRE(text);
  CHECK(client.stats().downloaded_metadata == 1);
  const auto sent = client.stats().requests;
  WheelRef ref{std::string(wheel->url()), wheel->size(), {}};
  for (const auto& h : wheel->hashes()) {
    if (h.algorithm == "sha256") ref.sha256 = h.hex;
  }
  auto members = client.wheel_members(ref);
  REQUIRE(members);
  CHECK(client.stats().requests == sent);
  CHECK(client.stats().downloaded_members == 1);
  const auto local =
      index_test::servers().index_root() / "packages" / "networkx" / std::string(wheel->filename());
  CHECK(*members == read_wheel_members(local.string()).value());
}

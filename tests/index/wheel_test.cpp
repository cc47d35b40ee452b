// METADATA from local wheels (libzip) and through the range-read zip_source, without a server.
#include "gpulock/index/wheel.h"

#include <string>

#include <catch2/catch.hpp>

#include "gpulock/index/hash.h"

#include "index_test_support.h"
#include "page_builder.h"
#include "remote_zip.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

core::WheelFilename wheel_name(const std::string& filename) {
  auto w = core::WheelFilename::parse(filename);
  REQUIRE(w);
  return *w;
}

std::string wheel_path(const std::string& filename) {
  return index_test::wheels_dir() + "/wheels/" + filename;
}

}  // namespace

TEST_CASE("a local wheel's METADATA", "[wheel]") {
  auto name = wheel_name("demo_pkg-1.2.3-py3-none-any.whl");
  auto text = read_wheel_metadata(wheel_path("demo_pkg-1.2.3-py3-none-any.whl"), &name);
  REQUIRE(text);
  CHECK(text->starts_with("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.2.3\n"));
  CHECK(text->find("Requires-Dist: numpy>=1.20") != std::string::npos);
}

TEST_CASE("local wheel errors", "[wheel]") {
  SECTION("no METADATA") {
    auto name = wheel_name("nometa-1.0-py3-none-any.whl");
    auto text = read_wheel_metadata(wheel_path("nometa-1.0-py3-none-any.whl"), &name);
    REQUIRE_FALSE(text);
    CHECK(text.error().code == core::ErrorCode::InvalidInput);
    CHECK(text.error().message == "the wheel has no *.dist-info/METADATA file");
    CHECK(text.error().where == wheel_path("nometa-1.0-py3-none-any.whl"));
  }
  SECTION("METADATA over 10 MB") {
    auto text =
        read_wheel_metadata(wheel_path("bigmeta-1.0-py3-none-any.whl"), nullptr, "bigmeta.whl");
    REQUIRE_FALSE(text);
    CHECK(text.error().message.find("bigmeta-1.0.dist-info/METADATA is ") == 0);
    CHECK(text.error().message.find("bytes, over the 10 MB limit for METADATA") !=
          std::string::npos);
    CHECK(text.error().where == "bigmeta.whl");
  }
  SECTION("zip bomb") {
    auto text = read_wheel_metadata(wheel_path("bomb-1.0-py3-none-any.whl"));
    REQUIRE_FALSE(text);
    CHECK(text.error().message.find(
              "refusing bomb-1.0.dist-info/METADATA: it declares 1073741824 bytes from ") == 0);
    CHECK(text.error().message.find("(a zip bomb?)") != std::string::npos);
  }
  SECTION("Name and Version differ from the filename") {
    auto name = wheel_name("mismatch-1.0-py3-none-any.whl");
    auto text = read_wheel_metadata(wheel_path("mismatch-1.0-py3-none-any.whl"), &name);
    REQUIRE_FALSE(text);
    CHECK(text.error().code == core::ErrorCode::InvalidMetadata);
    CHECK(text.error().message ==
          "METADATA says 'other-name' '2.0' but the wheel's filename says 'mismatch' '1.0'");
  }
  SECTION("not a zip") {
    auto text = read_wheel_metadata(wheel_path("notzip-1.0-py3-none-any.whl"));
    REQUIRE_FALSE(text);
    CHECK(text.error().message.find("cannot read the wheel: Not a zip archive") == 0);
  }
  SECTION("missing file") {
    auto text = read_wheel_metadata(wheel_path("absent-1.0-py3-none-any.whl"));
    REQUIRE_FALSE(text);
    CHECK(text.error().code == core::ErrorCode::Io);
  }
}

TEST_CASE("check_metadata_matches compares normalized names and PEP 440 versions", "[wheel]") {
  auto name = wheel_name("Typing_Extensions-4.12.0-py3-none-any.whl");
  CHECK(check_metadata_matches("Name: typing.extensions\nVersion: 4.12\r\n", name, "x"));
  CHECK_FALSE(check_metadata_matches("Name: typing.extensions\nVersion: 4.13\n", name, "x"));
  CHECK(
      check_metadata_matches("Name: typing.extensions\nVersion: 4.12.0\n\nName: other", name, "x"));
  CHECK(check_metadata_matches("name: TYPING-extensions\nversion: v4.12.0\n", name, "x"));
  auto missing = check_metadata_matches("Name: typing-extensions\n\nVersion: 4.12.0\n", name, "x");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "METADATA has no Version field");
}

TEST_CASE("check_metadata_matches reads the headers as core::CoreMetadata::parse does", "[wheel]") {
  auto name = wheel_name("Typing_Extensions-4.12.0-py3-none-any.whl");
  // A byte-order mark is not part of the first field name.
  CHECK(
      check_metadata_matches("\xEF\xBB\xBFName: typing-extensions\nVersion: 4.12.0\n", name, "x"));
  // A line that is not a header ends the headers, as in Python's email parser.
  auto body =
      check_metadata_matches("Name: typing-extensions\nnot a header\nVersion: 4.12.0\n", name, "x");
  REQUIRE_FALSE(body);
  CHECK(body.error().message == "METADATA has no Version field");
  // A folded line is not a field of its own.
  CHECK_FALSE(check_metadata_matches("Name: typing-extensions\n Version: 4.12.0\n", name, "x"));
}

TEST_CASE("check_metadata_matches accepts a local label added by the filename only", "[wheel]") {
  // flash-attn and PyG: METADATA names the public version, the filename adds a local label.
  auto labeled =
      wheel_name("flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp311-cp311-linux_x86_64.whl");
  CHECK(check_metadata_matches("Name: flash-attn\nVersion: 2.8.3\n", labeled, "x"));
  CHECK(check_metadata_matches("Name: flash-attn\nVersion: 2.8.3+cu12torch2.8cxx11abitrue\n",
                               labeled, "x"));
  CHECK_FALSE(check_metadata_matches("Name: flash-attn\nVersion: 2.8.4\n", labeled, "x"));
  CHECK_FALSE(check_metadata_matches("Name: flash-attn\nVersion: 2.8.3+cu11\n", labeled, "x"));
  // Never the other way round: a local label in METADATA only is another version.
  auto plain = wheel_name("flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl");
  CHECK_FALSE(check_metadata_matches("Name: flash-attn\nVersion: 2.8.3+cu12\n", plain, "x"));
}

TEST_CASE("printable_index_text escapes C0, DEL and C1 controls and keeps other UTF-8", "[page]") {
  CHECK(detail::printable_index_text("broken \x1b]0;pwned\x07 build") ==
        "broken \\x1b]0;pwned\\x07 build");
  CHECK(detail::printable_index_text("a\x7f\xc2\x9b[2Jb") == "a\\x7f\\x9b[2Jb");
  CHECK(detail::printable_index_text("caf\xc3\xa9 \xc2\xa0ok") == "caf\xc3\xa9 \xc2\xa0ok");
}

TEST_CASE("range reads fetch the tail, then one coalesced range", "[wheel][range]") {
  for (const char* filename : {"demo_pkg-1.2.3-py3-none-any.whl", "big_pkg-2.0-py3-none-any.whl"}) {
    DYNAMIC_SECTION(filename) {
      std::string bytes = index_test::read_text(wheel_path(filename));
      std::uint64_t total = bytes.size();
      std::uint64_t tail_start = total > detail::kTailBytes ? total - detail::kTailBytes : 0;
      std::string tail = bytes.substr(tail_start);
      int requests = 0;
      std::uint64_t fetched = 0;
      detail::RangeFetch fetch = [&](std::uint64_t a,
                                     std::uint64_t b) -> core::Result<std::string> {
        ++requests;
        REQUIRE(b < total);
        REQUIRE(a <= b);
        fetched += b - a + 1;
        return bytes.substr(a, b - a + 1);
      };
      auto name = wheel_name(filename);
      auto text = detail::metadata_via_ranges(total, tail_start, tail, fetch, &name, "remote");
      REQUIRE(text);
      CHECK(text->find("Version: ") != std::string::npos);
      auto direct = read_wheel_metadata(wheel_path(filename), &name);
      REQUIRE(direct);
      CHECK(*text == *direct);
      if (total <= detail::kTailBytes) {
        CHECK(requests == 0);  // the tail was the whole file
      } else {
        // The central directory is larger than the tail, so a few more ranges, but far less than
        // the whole file.
        CHECK(requests >= 1);
        CHECK(requests <= 8);
        CHECK(fetched < total / 2);
      }
    }
  }
}

TEST_CASE("range reads: METADATA near the end takes the tail alone", "[wheel][range]") {
  // libzip looks for the end of central directory record in the last 65,578 bytes (the
  // longest comment and the ZIP64 locator): the tail covers that window, so a wheel whose
  // METADATA and central directory are near its end costs one request (issue 27).
  const char* filename = "tail_pkg-1.0-py3-none-any.whl";
  std::string bytes = index_test::read_text(wheel_path(filename));
  std::uint64_t total = bytes.size();
  REQUIRE(total > detail::kTailBytes);
  std::uint64_t tail_start = total - detail::kTailBytes;
  int requests = 0;
  detail::RangeFetch fetch = [&](std::uint64_t a, std::uint64_t b) -> core::Result<std::string> {
    ++requests;
    return bytes.substr(a, b - a + 1);
  };
  auto name = wheel_name(filename);
  auto text =
      detail::metadata_via_ranges(total, tail_start, bytes.substr(tail_start), fetch, &name, "r");
  REQUIRE(text);
  CHECK(text->find("Name: tail-pkg") != std::string::npos);
  CHECK(requests == 0);
}

TEST_CASE("range read failures surface as the fetch's error", "[wheel][range]") {
  std::string bytes = index_test::read_text(wheel_path("big_pkg-2.0-py3-none-any.whl"));
  std::uint64_t total = bytes.size();
  std::string tail = bytes.substr(total - detail::kTailBytes);
  detail::RangeFetch fetch = [&](std::uint64_t, std::uint64_t) -> core::Result<std::string> {
    return core::fail_at(core::ErrorCode::Timeout, "timed out", "http://h/big.whl");
  };
  auto name = wheel_name("big_pkg-2.0-py3-none-any.whl");
  auto text =
      detail::metadata_via_ranges(total, total - detail::kTailBytes, tail, fetch, &name, "remote");
  REQUIRE_FALSE(text);
  CHECK(text.error().code == core::ErrorCode::Timeout);
  CHECK(text.error().where == "http://h/big.whl");
}

TEST_CASE("a wheel held in memory", "[wheel]") {
  std::string bytes = index_test::read_text(wheel_path("demo_pkg-1.2.3-py3-none-any.whl"));
  auto name = wheel_name("demo_pkg-1.2.3-py3-none-any.whl");
  auto text = detail::metadata_from_buffer(bytes, &name, "mem");
  REQUIRE(text);
  CHECK(text->find("Name: demo-pkg") != std::string::npos);
  auto bomb = detail::metadata_from_buffer(
      index_test::read_text(wheel_path("bomb-1.0-py3-none-any.whl")), nullptr, "mem");
  REQUIRE_FALSE(bomb);
  CHECK(bomb.error().message.find("zip bomb") != std::string::npos);
}

TEST_CASE("sha256", "[hash]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Sha256 h;
  h.update("a");
  h.update("bc");
  CHECK(h.size() == 3);
  CHECK(h.finish_hex() == sha256_hex("abc"));
  CHECK(h.size() == 0);
  auto file = sha256_file(wheel_path("demo_pkg-1.2.3-py3-none-any.whl"));
  REQUIRE(file);
  std::string bytes = index_test::read_text(wheel_path("demo_pkg-1.2.3-py3-none-any.whl"));
  CHECK(file->sha256 == sha256_hex(bytes));
  CHECK(file->size == bytes.size());
  CHECK_FALSE(sha256_file("/nonexistent/file"));
}

// The parsers' fast path for sha256 digests (issue 27, goal 1): 64 hex digits decoded straight
// from the page to 32 bytes, with the checks and the results of the general path.

#include <array>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/page.h"
#include "gpulock/index/parse.h"

#include "page_builder.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

const std::string kDigest = "0123456789abcdefABCDEF0123456789abcdef0123456789ABCDEFabcdef0123";
const std::string kLower = "0123456789abcdefabcdef0123456789abcdef0123456789abcdefabcdef0123";

std::string json_page(std::string_view digest, std::string_view metadata_digest) {
  return fmt::format(
      R"({{"files":[{{"filename":"x-1.0-py3-none-any.whl","url":"x-1.0-py3-none-any.whl",)"
      R"("hashes":{{"sha256":"{}"}},"core-metadata":{{"sha256":"{}"}}}}]}})",
      digest, metadata_digest);
}

std::string html_page(std::string_view digest, std::string_view metadata_digest) {
  return fmt::format(
      "<a href=\"x-1.0-py3-none-any.whl#sha256={}\" "
      "data-core-metadata=\"sha256={}\">x</a>",
      digest, metadata_digest);
}

}  // namespace

static_assert(sizeof("0123456789abcdefABCDEF0123456789abcdef0123456789ABCDEFabcdef0123") == 65);

TEST_CASE("decode_hex32 reads 64 hex digits of either case and nothing else", "[parse]") {
  std::array<std::uint8_t, 32> out{};
  REQUIRE(detail::decode_hex32(kDigest, out));
  CHECK(out[0] == 0x01);
  CHECK(out[6] == 0xcd);
  CHECK(out[8] == 0xab);  // from "AB"
  CHECK(out[31] == 0x23);
  CHECK_FALSE(detail::decode_hex32(kDigest.substr(0, 63), out));
  CHECK_FALSE(detail::decode_hex32(kDigest + "0", out));
  for (std::size_t i = 0; i < 64; ++i) {
    for (char bad : {'g', 'G', ' ', '\0', '/', ':', '@', '`', '\x80', '\xff'}) {
      std::string text = kDigest;
      text[i] = bad;
      INFO("position " << i << " byte " << static_cast<int>(static_cast<unsigned char>(bad)));
      CHECK_FALSE(detail::decode_hex32(text, out));
      CHECK_FALSE(detail::all_hex(text));
    }
  }
  CHECK(detail::all_hex(""));
  CHECK(detail::all_hex("09afAF"));
}

TEST_CASE("add_sha256 keeps what add_hash keeps for the lowercase hex", "[parse]") {
  std::array<std::uint8_t, 32> raw{};
  REQUIRE(detail::decode_hex32(kLower, raw));
  DistFile a, b;
  a.add_sha256(raw);
  b.add_hash("sha256", kLower);
  CHECK(a.sha256() == kLower);
  CHECK(a.hashes() == b.hashes());
  // A second digest after a first: both kept, in order, as add_hash keeps them.
  a.add_hash("md5", "00ff");
  b.add_hash("md5", "00ff");
  CHECK(a.hashes() == b.hashes());
  DistFile c, d;
  c.add_hash("md5", "00ff");
  c.add_sha256(raw);
  d.add_hash("md5", "00ff");
  d.add_hash("sha256", kLower);
  CHECK(c.hashes() == d.hashes());
  CHECK(c.sha256() == kLower);
  DistFile m;
  m.add_core_metadata_sha256(raw);
  CHECK(m.core_metadata_sha256() == kLower);
  REQUIRE(m.core_metadata_hashes().size() == 1);
  m.add_core_metadata_sha256(raw);
  CHECK(m.core_metadata_hashes().size() == 2);
}

TEST_CASE("both parsers decode a 64-digit sha256 of either case to its lowercase digest",
          "[parse]") {
  auto json = parse_json_page(json_page(kDigest, kDigest), "http://h/simple/x/", {"x"});
  REQUIRE(json);
  REQUIRE(json->files.size() == 1);
  CHECK(json->files[0].sha256() == kLower);
  CHECK(json->files[0].core_metadata_sha256() == kLower);
  auto html = parse_html_page(html_page(kDigest, kDigest), "http://h/simple/x/", {"x"});
  REQUIRE(html);
  REQUIRE(html->files.size() == 1);
  CHECK(html->files[0].sha256() == kLower);
  CHECK(html->files[0].core_metadata_sha256() == kLower);
  CHECK(html->files[0].core_metadata());
}

TEST_CASE("a 64-character digest with a non-hex character is refused (JSON) or dropped (HTML)",
          "[parse]") {
  for (std::size_t i : {std::size_t{0}, std::size_t{31}, std::size_t{63}}) {
    std::string bad = kDigest;
    bad[i] = 'g';
    INFO("position " << i);
    auto json = parse_json_page(json_page(bad, kDigest), "http://h/simple/x/", {"x"});
    REQUIRE_FALSE(json);
    CHECK(json.error().message ==
          "invalid PEP 691 page: files[0].hashes.sha256: expected a hexadecimal digest");
    auto json_meta = parse_json_page(json_page(kDigest, bad), "http://h/simple/x/", {"x"});
    REQUIRE_FALSE(json_meta);
    auto html = parse_html_page(html_page(bad, bad), "http://h/simple/x/", {"x"});
    REQUIRE(html);
    REQUIRE(html->files.size() == 1);
    CHECK_FALSE(html->files[0].has_hashes());
    // An unreadable data-core-metadata value: advertised, not verified, with a warning.
    CHECK(html->files[0].core_metadata());
    CHECK(html->files[0].core_metadata_sha256().empty());
    CHECK_FALSE(html->warnings.empty());
  }
}

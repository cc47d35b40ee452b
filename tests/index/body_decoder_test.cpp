// The transport's content decoding (index/src/body_decoder.h): gzip, deflate (zlib-wrapped and
// raw), br, fed in slices as a body arrives; its end, a stream cut short, corrupt bytes, a stop.
#include "body_decoder.h"

#include <zlib.h>

#include <string>

#include <brotli/encode.h>
#include <catch2/catch.hpp>

using namespace gpulock::index::detail;

namespace {

std::string sample(std::size_t n) {
  std::string s;
  s.reserve(n);
  for (std::size_t i = 0; s.size() < n; ++i)
    s += "{\"filename\":\"demo-1." + std::to_string(i % 977) + ".whl\"},";
  s.resize(n);
  return s;
}

// windowBits: 15 + 16 gzip, 15 zlib, -15 raw deflate.
std::string zlib_compress(const std::string& in, int window_bits) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string brotli_compress(const std::string& in) {
  std::size_t size = BrotliEncoderMaxCompressedSize(in.size());
  std::string out(size, '\0');
  REQUIRE(BrotliEncoderCompress(5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, in.size(),
                                reinterpret_cast<const std::uint8_t*>(in.data()), &size,
                                reinterpret_cast<std::uint8_t*>(out.data())) == BROTLI_TRUE);
  out.resize(size);
  return out;
}

struct Collect final : BodyDecoder::Output {
  std::string text;
  std::size_t stop_after = std::string::npos;
  bool write(const char* data, std::size_t size) override {
    text.append(data, size);
    return text.size() <= stop_after;
  }
};

// Feeds `coded` in slices of `slice` bytes; the status of the last feed.
BodyDecoder::Status feed_all(BodyDecoder& d, const std::string& coded, std::size_t slice,
                             Collect& out) {
  auto status = BodyDecoder::Status::Ok;
  for (std::size_t i = 0; i < coded.size() && status == BodyDecoder::Status::Ok; i += slice)
    status = d.feed(coded.data() + i, std::min(slice, coded.size() - i), out);
  return status;
}

}  // namespace

TEST_CASE("content codings decode as the body arrives, in any slices", "[decode]") {
  const std::string text = sample(3 << 20);
  struct Case {
    const char* coding;
    std::string coded;
  };
  for (const auto& c :
       {Case{"gzip", zlib_compress(text, 15 + 16)}, Case{"x-gzip", zlib_compress(text, 15 + 16)},
        Case{"deflate", zlib_compress(text, 15)}, Case{"deflate", zlib_compress(text, -15)},
        Case{"br", brotli_compress(text)}}) {
    for (std::size_t slice : {std::size_t{1} << 20, std::size_t{4093}}) {
      INFO(c.coding << " in slices of " << slice);
      bool known = false;
      auto d = make_body_decoder(c.coding, known);
      REQUIRE(known);
      REQUIRE(d);
      Collect out;
      CHECK(feed_all(*d, c.coded, slice, out) == BodyDecoder::Status::Ok);
      CHECK(d->finished());
      CHECK(out.text == text);
    }
  }
}

TEST_CASE("a body's coding: none, identity, unknown", "[decode]") {
  bool known = false;
  CHECK(make_body_decoder("", known) == nullptr);
  CHECK(known);
  CHECK(make_body_decoder(" Identity ", known) == nullptr);
  CHECK(known);
  CHECK(make_body_decoder("GZIP", known) != nullptr);
  CHECK(known);
  CHECK(make_body_decoder("zstd", known) == nullptr);
  CHECK_FALSE(known);
}

TEST_CASE("gzip members one after another are one body", "[decode]") {
  const std::string a = sample(100000), b = sample(70000);
  bool known = false;
  auto d = make_body_decoder("gzip", known);
  Collect out;
  CHECK(feed_all(*d, zlib_compress(a, 31) + zlib_compress(b, 31), 997, out) ==
        BodyDecoder::Status::Ok);
  CHECK(d->finished());
  CHECK(out.text == a + b);
}

TEST_CASE("a coded body cut short, corrupt, or stopped by its reader", "[decode]") {
  const std::string text = sample(1 << 20);
  bool known = false;
  SECTION("cut short: not finished") {
    for (const char* coding : {"gzip", "br"}) {
      INFO(coding);
      std::string coded =
          std::string(coding) == "br" ? brotli_compress(text) : zlib_compress(text, 31);
      coded.resize(coded.size() / 2);
      auto d = make_body_decoder(coding, known);
      Collect out;
      CHECK(feed_all(*d, coded, 4096, out) == BodyDecoder::Status::Ok);
      CHECK_FALSE(d->finished());
    }
  }
  SECTION("corrupt: an error that names the coding") {
    std::string coded = zlib_compress(text, 31);
    for (std::size_t i = 20; i < 200; ++i)
      coded[i] = static_cast<char>(coded[i] ^ 0x5a);
    auto d = make_body_decoder("gzip", known);
    Collect out;
    CHECK(feed_all(*d, coded, 4096, out) == BodyDecoder::Status::Corrupt);
    CHECK(d->error_text().find("gzip") != std::string::npos);
    auto b = make_body_decoder("br", known);
    Collect out2;
    CHECK(feed_all(*b, std::string(64, '\xff'), 16, out2) == BodyDecoder::Status::Corrupt);
    CHECK(b->error_text().find("br") != std::string::npos);
  }
  SECTION("stopped: the reader's false ends decoding at once") {
    auto d = make_body_decoder("gzip", known);
    Collect out;
    out.stop_after = 100000;
    CHECK(feed_all(*d, zlib_compress(text, 31), 1 << 20, out) == BodyDecoder::Status::Stopped);
    CHECK(out.text.size() <= 100000 + (256 << 10));
  }
}

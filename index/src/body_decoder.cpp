// Streaming gzip/deflate (zlib) and br (brotli) decoding of response bodies (body_decoder.h).
// Part of libgpulock-net.so, beside libcurl (which links both libraries already).

#include "body_decoder.h"

#include <zlib.h>

#include <cstring>

#include <brotli/decode.h>

#include "gpulock/core/text.h"

namespace gpulock::index::detail {
namespace {

// Each call's output goes out in pieces of this size.
constexpr std::size_t kChunk = 256 * 1024;

class ZlibDecoder final : public BodyDecoder {
 public:
  explicit ZlibDecoder(bool deflate) : deflate_(deflate), buffer_(new char[kChunk]) {
    // 15 + 32: a gzip or a zlib header, detected (RFC 1952, RFC 1950).
    ok_ = inflateInit2(&z_, 15 + 32) == Z_OK;
  }
  ~ZlibDecoder() override {
    if (ok_) inflateEnd(&z_);
  }
  ZlibDecoder(const ZlibDecoder&) = delete;
  ZlibDecoder& operator=(const ZlibDecoder&) = delete;

  Status feed(const char* data, std::size_t size, Output& out) override {
    if (!ok_) return corrupt("zlib could not start");
    while (size > 0 && !ended_) {
      // avail_in is 32 bits: feed a large block in slices.
      auto slice = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
      z_.avail_in = slice;
      while (z_.avail_in > 0 && !ended_) {
        z_.next_out = reinterpret_cast<Bytef*>(buffer_.get());
        z_.avail_out = static_cast<uInt>(kChunk);
        int rc = inflate(&z_, Z_NO_FLUSH);
        if (rc == Z_DATA_ERROR && deflate_ && !started_) {
          // "deflate" sent as a raw deflate stream, as some servers do (libcurl allows it too).
          inflateEnd(&z_);
          ok_ = inflateInit2(&z_, -15) == Z_OK;
          deflate_ = false;
          if (!ok_) return corrupt("zlib could not start");
          z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
          z_.avail_in = slice;
          continue;
        }
        started_ = true;
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
          return corrupt(z_.msg ? z_.msg : "invalid compressed data");
        std::size_t produced = kChunk - z_.avail_out;
        if (produced > 0 && !out.write(buffer_.get(), produced)) return Status::Stopped;
        if (rc == Z_STREAM_END) {
          // Another gzip member may follow (RFC 1952 2.2); anything else after the end is
          // ignored, as libcurl did.
          if (z_.avail_in >= 2 && static_cast<unsigned char>(z_.next_in[0]) == 0x1f &&
              static_cast<unsigned char>(z_.next_in[1]) == 0x8b) {
            inflateReset(&z_);
          } else {
            ended_ = true;
          }
        } else if (rc == Z_BUF_ERROR && produced == 0) {
          break;  // needs more input
        }
      }
      data += slice;
      size -= slice;
    }
    return Status::Ok;
  }
  bool finished() const override { return ended_; }
  std::string error_text() const override { return error_; }

 private:
  Status corrupt(const char* why) {
    error_ =
        std::string("invalid content coding (") + (deflate_ ? "deflate" : "gzip") + "): " + why;
    return Status::Corrupt;
  }

  z_stream z_{};
  bool ok_ = false;
  bool deflate_ = false;
  bool started_ = false;
  bool ended_ = false;
  std::unique_ptr<char[]> buffer_;
  std::string error_;
};

class BrotliDecoder final : public BodyDecoder {
 public:
  BrotliDecoder()
      : state_(BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)), buffer_(new char[kChunk]) {}
  ~BrotliDecoder() override {
    if (state_) BrotliDecoderDestroyInstance(state_);
  }
  BrotliDecoder(const BrotliDecoder&) = delete;
  BrotliDecoder& operator=(const BrotliDecoder&) = delete;

  Status feed(const char* data, std::size_t size, Output& out) override {
    if (!state_) return corrupt("brotli could not start");
    const auto* in = reinterpret_cast<const std::uint8_t*>(data);
    std::size_t in_left = size;
    while (!ended_) {
      auto* next = reinterpret_cast<std::uint8_t*>(buffer_.get());
      std::size_t out_left = kChunk;
      auto rc = BrotliDecoderDecompressStream(state_, &in_left, &in, &out_left, &next, nullptr);
      std::size_t produced = kChunk - out_left;
      if (produced > 0 && !out.write(buffer_.get(), produced)) return Status::Stopped;
      if (rc == BROTLI_DECODER_RESULT_ERROR)
        return corrupt(BrotliDecoderErrorString(BrotliDecoderGetErrorCode(state_)));
      if (rc == BROTLI_DECODER_RESULT_SUCCESS) ended_ = true;
      if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) break;
    }
    return Status::Ok;
  }
  bool finished() const override { return ended_; }
  std::string error_text() const override { return error_; }

 private:
  Status corrupt(const char* why) {
    error_ = std::string("invalid content coding (br): ") + why;
    return Status::Corrupt;
  }

  BrotliDecoderState* state_ = nullptr;
  bool ended_ = false;
  std::unique_ptr<char[]> buffer_;
  std::string error_;
};

}  // namespace

std::string coding_ends_early(std::string_view content_encoding) {
  return "the body's content coding (" + std::string(content_encoding) + ") ends early";
}

std::unique_ptr<BodyDecoder> make_body_decoder(std::string_view coding, bool& known) {
  known = true;
  std::string name(core::trim_right(core::trim_left(coding, " \t"), " \t"));
  for (char& c : name)
    c = core::ascii_lower(c);
  if (name.empty() || name == "identity") return nullptr;
  if (name == "gzip" || name == "x-gzip") return std::make_unique<ZlibDecoder>(false);
  if (name == "deflate") return std::make_unique<ZlibDecoder>(true);
  if (name == "br") return std::make_unique<BrotliDecoder>();
  known = false;
  return nullptr;
}

}  // namespace gpulock::index::detail

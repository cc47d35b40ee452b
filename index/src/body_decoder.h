#pragma once
// A response body's content coding (RFC 9110 section 8.4: gzip, deflate, br), decoded as the
// coded bytes arrive. The transport decodes bodies itself (libcurl passes them coded) so that a
// body can be counted without being kept: a gzip bomb is refused at the page limit while holding
// only its coded bytes and a bounded part of what they inflate to (curl_transport.cpp).

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace gpulock::index::detail {

/// What the transport offers in Accept-Encoding (everything BodyDecoder decodes).
inline constexpr const char* kAcceptEncoding = "gzip, deflate, br";

class BodyDecoder {
 public:
  /// Called with each decoded chunk; returns false to stop decoding (feed then returns Stopped).
  struct Output {
    virtual bool write(const char* data, std::size_t size) = 0;

   protected:
    ~Output() = default;
  };
  enum class Status { Ok, Stopped, Corrupt };

  virtual ~BodyDecoder() = default;
  /// Decodes `size` more coded bytes. After the stream's end, more bytes are ignored.
  virtual Status feed(const char* data, std::size_t size, Output& out) = 0;
  /// The coded stream ended where it should (a body that stops short is not a whole page).
  virtual bool finished() const = 0;
  /// The message for Corrupt.
  virtual std::string error_text() const = 0;
};

/// The error text of a coded body that stops before its stream's end.
std::string coding_ends_early(std::string_view content_encoding);

/// The decoder for a Content-Encoding value ("gzip", "x-gzip", "deflate", "br"; case-blind);
/// nullptr for none or "identity". `known` is set false for a coding this cannot decode.
std::unique_ptr<BodyDecoder> make_body_decoder(std::string_view content_encoding, bool& known);

}  // namespace gpulock::index::detail

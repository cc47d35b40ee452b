#pragma once
// The reading side of a relayed body (curl_transport.cpp): a sink's success body is queued by
// the transport's thread as it arrives and read here, on the thread waiting for the request,
// which decodes it (when coded) and hands it to the request's sink. The page is then decoded
// and read on the thread that asked for it, as its bytes arrive, while the transport's thread
// stays free for the other transfers.

#include <cstdint>
#include <string>
#include <string_view>

#include "body_decoder.h"
#include "transport.h"

namespace gpulock::index::detail {

class BodyReader {
 public:
  explicit BodyReader(const HttpRequest& request) : request_(request) {}

  /// `chunk`, coded as `decoder` decodes (null: not coded), to the request's sink, after its
  /// on_head with `head` before the first byte. Decoded bytes past the request's max_body are
  /// refused (TooLarge), so a gzip bomb costs one chunk's worth. False: the body is refused (the
  /// sink or on_head said no, too large, or a corrupt coding); finish says why.
  bool read(std::string_view chunk, BodyDecoder* decoder, const HttpResponse& head);

  /// The response of the ended transfer: the decoded bytes counted, a refusal as its error (the
  /// transfer may have ended well before the refused bytes were read), a coded body that stops
  /// short of its stream's end an error.
  void finish(HttpResponse& r, const BodyDecoder* decoder) const;

 private:
  bool deliver(const char* data, std::size_t size, const HttpResponse& head);

  const HttpRequest& request_;
  std::uint64_t bytes_ = 0;
  bool headed_ = false;
  TransportError refused_ = TransportError::None;
  std::string refused_text_;
};

}  // namespace gpulock::index::detail

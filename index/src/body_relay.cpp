#include "body_relay.h"

namespace gpulock::index::detail {

bool BodyReader::read(std::string_view chunk, BodyDecoder* decoder, const HttpResponse& head) {
  if (decoder == nullptr) return deliver(chunk.data(), chunk.size(), head);
  struct Out final : BodyDecoder::Output {
    BodyReader& reader;
    const HttpResponse& head;
    Out(BodyReader& r, const HttpResponse& h) : reader(r), head(h) {}
    bool write(const char* data, std::size_t size) override {
      return reader.deliver(data, size, head);
    }
  } out(*this, head);
  switch (decoder->feed(chunk.data(), chunk.size(), out)) {
    case BodyDecoder::Status::Ok:
      return true;
    case BodyDecoder::Status::Stopped:
      return false;
    case BodyDecoder::Status::Corrupt:
      refused_ = TransportError::Other;
      refused_text_ = decoder->error_text();
      return false;
  }
  return false;
}

bool BodyReader::deliver(const char* data, std::size_t size, const HttpResponse& head) {
  bytes_ += size;
  if (request_.max_body != 0 && bytes_ > request_.max_body) {
    refused_ = TransportError::TooLarge;
    return false;
  }
  if (!headed_) {
    headed_ = true;
    if (request_.on_head && !request_.on_head(head)) {
      refused_ = TransportError::Aborted;
      return false;
    }
  }
  if (!request_.sink(data, size)) {
    refused_ = TransportError::Aborted;
    return false;
  }
  return true;
}

void BodyReader::finish(HttpResponse& r, const BodyDecoder* decoder) const {
  r.body_bytes = bytes_;
  if (refused_ != TransportError::None) {
    r.error = refused_;
    r.error_text = refused_text_.empty() ? "the body was refused as it was read" : refused_text_;
  } else if (r.error == TransportError::None && decoder != nullptr && !decoder->finished()) {
    r.error = TransportError::Other;
    r.error_text = coding_ends_early(r.content_encoding);
  }
}

}  // namespace gpulock::index::detail

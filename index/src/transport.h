#pragma once
// The narrow interface between the index client and the network library. Everything libcurl
// (and OpenSSL through it) lives in curl_transport.cpp inside libgpulock-net.so (net_plugin.h),
// which make_transport() loads on the client's first real request: a warm run neither loads nor
// initializes libcurl.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::index::detail {

struct TransportOptions {
  unsigned max_parallel = 32;
  std::chrono::milliseconds connect_timeout{10'000};
  /// No body byte at all for this long: a Timeout (the read timeout).
  std::chrono::milliseconds low_speed_time{30'000};
  std::uint32_t low_speed_bytes = 1;
  /// The low-speed floor: fewer than `floor_bytes` per second averaged over each `floor_window`
  /// is a Timeout (a drip). 0: none.
  std::uint32_t floor_bytes = 0;
  std::chrono::milliseconds floor_window{30'000};
  std::chrono::milliseconds request_timeout{0};
  long max_redirects = 10;
  std::string user_agent;
  std::string ca_file;
  std::string ca_path;
};

struct HttpResponse;

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  ///< "Name: value"
  /// Ask for no content coding (range reads: byte offsets must be offsets into the file).
  bool identity_encoding = false;
  /// CURLOPT_RANGE syntax: "0-99", "-65536" (last bytes). Empty: whole body.
  std::string range;
  /// Abort once more than this many body bytes arrive (0: no limit).
  std::uint64_t max_body = 0;
  /// Ends the transfer with Timeout after this long (0: TransportOptions::request_timeout).
  std::chrono::milliseconds timeout{0};
  /// When set, a success body's bytes (decoded) go here instead of HttpResponse::body; return
  /// false to abort (Aborted). Called on the thread that called perform(), as the bytes arrive:
  /// the transport's own thread only queues them, a bounded amount at a time (it pauses the
  /// transfer until they are taken), so a slow sink holds back its own transfer only.
  std::function<bool(const char* data, std::size_t size)> sink;
  /// With `sink`: called once, before the first body byte of a success response reaches it,
  /// with the response so far (status, headers, `content_type`, `effective_url`, and
  /// `content_length` for an uncoded body); false aborts. On perform()'s thread too.
  std::function<bool(const HttpResponse& head)> on_head;
  /// Follow a redirect from https:// to http:// (the user named the host insecure). Otherwise
  /// such a redirect fails with TransportError::InsecureRedirect.
  bool allow_insecure_redirect = false;
};

enum class TransportError : std::uint8_t {
  None,
  Connect,  ///< could not resolve/connect/send/receive (transient)
  Timeout,  ///< connect timeout, low-speed abort, request timeout
  TooSlow,  ///< under the low-speed floor (a drip: not retried, the server would drip again)
  Tls,      ///< certificate or TLS handshake failure
  TooManyRedirects,
  Truncated,         ///< the body ended before Content-Length (transient)
  TooLarge,          ///< more than max_body bytes
  Aborted,           ///< the sink returned false
  Cancelled,         ///< cancel() was called
  InsecureRedirect,  ///< an https:// request redirected to http:// (see `redirect_url`)
  HeaderTooLarge,    ///< a response header line or all of them over the limits (`error_text`)
  Other,
};

struct HttpResponse {
  long status = 0;
  std::string effective_url;  ///< after redirects
  std::string content_type;
  std::string etag;
  std::string last_modified;
  std::string cache_control;
  std::string content_range;
  std::string content_encoding;
  std::string retry_after;
  std::string body;
  std::uint64_t body_bytes = 0;  ///< counted even when a sink consumed them
  /// The Content-Length (0: none), set for HttpRequest::on_head.
  std::uint64_t content_length = 0;
  TransportError error = TransportError::None;
  std::string error_text;    ///< libcurl's message; may contain the URL (redact before showing)
  std::string redirect_url;  ///< the refused target of an InsecureRedirect
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Performs one request (blocking the calling thread while the transport's own thread does
  /// the I/O). Thread-safe; many calls may be in flight at once.
  virtual HttpResponse perform(const HttpRequest& request) = 0;
  /// Aborts every transfer in flight and every later one.
  virtual void cancel() = 0;
};

/// The libcurl transport from the network plugin; Internal error when the plugin cannot be loaded.
core::Result<std::unique_ptr<Transport>> make_transport(const TransportOptions& options);

}  // namespace gpulock::index::detail

// libcurl multi on one background thread: many transfers in flight, HTTP/2 multiplexing when a
// TLS server offers it (CURLMOPT_PIPELINING + CURLOPT_PIPEWAIT), connection reuse through the
// multi handle's pool, gzip/br decoding (body_decoder.h: bounded as the body streams), and the
// settings libcurl does not take from the environment by itself (~/.netrc,
// SSL_CERT_FILE/SSL_CERT_DIR are passed by the client).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <curl/curl.h>

#include "gpulock/core/text.h"

#include "body_decoder.h"
#include "body_relay.h"
#include "net_impl.h"

namespace gpulock::index::net {

using namespace detail;
namespace {

bool header_is(std::string_view line, std::string_view name, std::string_view& value) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (core::ascii_lower(line[i]) != name[i]) return false;
  }
  value = line.substr(name.size() + 1);
  value = core::trim_right(core::trim_left(value, " \t"), "\r\n ");
  return true;
}

// An error body is kept only to this size (enough for a message; bodies of 5xx pages can be big).
constexpr std::size_t kMaxErrorBody = 64 * 1024;
// One response's header lines, all together (libcurl's own limit, 300 KiB in 7.88, is reported
// as a receive error, which would be retried; a single line over CURL_MAX_HTTP_HEADER is
// CURLE_OUT_OF_MEMORY, "Out of memory").
constexpr std::size_t kMaxResponseHeaders = 256 * 1024;
// A coded body is decoded into memory only to this size. Past it, what is decoded is counted
// and dropped while the coded bytes are kept, and the body is decoded again from them once it
// ends within the limit: a gzip bomb is refused at the limit holding this much (issue 46), and
// only a page this large inflates twice.
constexpr std::size_t kMaxHeldDecoded = 64 << 20;
// A sink's bytes waiting for the thread that reads them (Transfer::inbox): past this the
// transfer pauses until that thread has taken them.
constexpr std::size_t kMaxInbox = 256 << 10;

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(const TransportOptions& options) : options_(options) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    multi_ = curl_multi_init();
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      static_cast<long>(options_.max_parallel));
    curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS,
                      static_cast<long>(options_.max_parallel));
    if (const char* netrc = std::getenv("NETRC"); netrc && *netrc) netrc_file_ = netrc;
    thread_ = std::thread([this] { loop(); });
  }

  ~CurlTransport() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    curl_multi_wakeup(multi_);
    thread_.join();
    curl_multi_cleanup(multi_);
  }

  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  HttpResponse perform(const HttpRequest& request) override {
    Transfer t;
    t.request = &request;
    t.owner = this;
    if (request.sink) t.reader.emplace(request);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || cancelled_) {
        t.response.error = TransportError::Cancelled;
        t.response.error_text = "cancelled";
        return std::move(t.response);
      }
      pending_.push_back(&t);
    }
    curl_multi_wakeup(multi_);
    std::unique_lock<std::mutex> lock(mu_);
    std::string chunk;
    while (true) {
      t.done_cv.wait(lock, [&] { return t.done || !t.inbox.empty(); });
      // Every byte that arrived reaches the sink, also when the transfer then failed (a
      // download cut off keeps what it got, to resume from); once the sink refused, none.
      if (t.inbox.empty() || t.stop.load()) break;
      chunk.clear();
      chunk.swap(t.inbox);
      const bool resume = ask_resume(t);
      lock.unlock();
      if (resume) curl_multi_wakeup(multi_);
      const bool ok = t.reader->read(chunk, t.decoder.get(), t.head);
      lock.lock();
      if (!ok) {
        // The transport's thread ends the transfer at its next byte, or at its next progress
        // call (about once a second) when the server sends nothing more.
        t.stop.store(true);
        if (ask_resume(t)) curl_multi_wakeup(multi_);
      }
    }
    if (!t.done) t.done_cv.wait(lock, [&] { return t.done; });
    lock.unlock();
    if (t.relaying) t.reader->finish(t.response, t.decoder.get());
    return std::move(t.response);
  }

  void cancel() override {
    cancelled_ = true;
    curl_multi_wakeup(multi_);
  }

 private:
  struct Transfer {
    const HttpRequest* request = nullptr;
    CurlTransport* owner = nullptr;
    HttpResponse response;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    char error[CURL_ERROR_SIZE] = {};
    long current_status = 0;
    std::size_t header_bytes = 0;  // of the current response
    bool too_large = false;
    bool header_too_large = false;
    bool aborted = false;
    bool too_slow = false;
    // The low-speed floor: body bytes and the time when the current window began.
    std::chrono::steady_clock::time_point window_start{};
    curl_off_t window_bytes = 0;
    // Set under mu_ when the transfer ends; its own waiter is woken, not every thread waiting
    // for a transfer (one shared condition woke all of a resolve's ~30 threads at each of its
    // ~80 transfers' ends, and they fought the transport's thread for mu_).
    bool done = false;
    std::condition_variable done_cv;
    // Content coding: the decoder (null: none), the coded bytes of a success body kept for a
    // second decoding, whether decoded bytes are only counted now, and a corrupt stream's words.
    std::unique_ptr<BodyDecoder> decoder;
    bool decoder_ready = false;
    bool unknown_coding = false;
    bool skip_error_body = false;
    bool count_only = false;
    std::string coded;
    // A sink's success body (HttpRequest::sink) is relayed: this thread only queues its bytes
    // (inbox, under mu_; the transfer pauses past kMaxInbox), and the thread waiting in
    // perform() decodes them and calls the sink (body_relay.h). `head` is the response as
    // on_head sees it, taken at the first byte.
    bool relaying = false;
    HttpResponse head;
    std::string inbox;
    bool paused = false;
    bool resume_asked = false;
    std::atomic<bool> stop{false};     // the waiting thread refused the body: the transfer ends
    std::optional<BodyReader> reader;  // the waiting thread's
  };

  // mu_ held: a paused transfer whose inbox was taken (or that must end) is resumed by the
  // transport's thread; true when that thread must be woken for it.
  bool ask_resume(Transfer& t) {
    if (!t.paused || t.resume_asked) return false;
    t.resume_asked = true;
    resumes_.push_back(&t);
    return true;
  }

  // The transport's thread, mu_ not held: a sink's success bytes queued for the waiting thread.
  std::size_t queue(Transfer* t, const char* data, std::size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    if (t->stop.load()) return 0;
    if (!t->relaying) {
      t->relaying = true;
      read_url_and_type(t);
      t->head = t->response;
      t->head.status = t->current_status;
      curl_off_t length = -1;
      if (!t->decoder &&
          curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
          length > 0) {
        t->head.content_length = static_cast<std::uint64_t>(length);
        // A Content-Length over the limit fails before a byte is read (a coded body's length
        // counts coded bytes, so only an uncoded one is judged by it).
        const std::uint64_t max = t->request->max_body;
        if (max != 0 && t->head.content_length > max) {
          t->too_large = true;
          return 0;
        }
      }
    }
    if (t->inbox.size() >= kMaxInbox) {
      t->paused = true;
      return CURL_WRITEFUNC_PAUSE;  // the same bytes come again once resumed
    }
    t->inbox.append(data, n);
    t->done_cv.notify_one();
    return n;
  }

  // Where decoded bytes go: the same path as an uncoded body's (deliver).
  struct Deliver final : BodyDecoder::Output {
    Transfer* t;
    explicit Deliver(Transfer* transfer) : t(transfer) {}
    bool write(const char* data, std::size_t size) override { return deliver(t, data, size); }
  };

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::size_t n = size * count;
    std::string_view line(data, n);
    HttpResponse& r = t->response;
    if (line.starts_with("HTTP/")) t->header_bytes = 0;
    t->header_bytes += n;
    if (t->header_bytes > kMaxResponseHeaders) {
      t->header_too_large = true;
      return 0;  // CURLE_WRITE_ERROR
    }
    if (line.starts_with("HTTP/")) {
      // A new response (after a redirect or a 100 Continue): forget the previous headers.
      r.etag.clear();
      r.last_modified.clear();
      r.cache_control.clear();
      r.content_range.clear();
      r.content_encoding.clear();
      r.retry_after.clear();
      r.redirect_url.clear();
      t->decoder.reset();
      t->decoder_ready = false;
      t->count_only = false;
      t->coded.clear();
      auto space = line.find(' ');
      t->current_status = space == std::string_view::npos
                              ? 0
                              : std::atol(std::string(line.substr(space + 1, 3)).c_str());
      return n;
    }
    std::string_view value;
    if (header_is(line, "etag", value)) {
      r.etag.assign(value);
    } else if (header_is(line, "last-modified", value)) {
      r.last_modified.assign(value);
    } else if (header_is(line, "cache-control", value)) {
      if (!r.cache_control.empty()) r.cache_control += ", ";
      r.cache_control.append(value);
    } else if (header_is(line, "content-range", value)) {
      r.content_range.assign(value);
    } else if (header_is(line, "content-encoding", value)) {
      r.content_encoding.assign(value);
    } else if (header_is(line, "retry-after", value)) {
      r.retry_after.assign(value);
    } else if (header_is(line, "location", value)) {
      r.redirect_url.assign(value);  // kept only when the redirect is refused (finish)
    }
    return n;
  }

  static std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::size_t n = size * count;
    if (!t->decoder_ready) {
      t->decoder_ready = true;
      bool known = true;
      t->decoder = make_body_decoder(t->response.content_encoding, known);
      if (!known) {
        t->unknown_coding = true;
        return 0;  // CURLE_WRITE_ERROR
      }
    }
    const HttpRequest& req = *t->request;
    bool success = t->current_status >= 200 && t->current_status < 300;
    if (req.sink && success) return t->owner->queue(t, data, n);
    if (!t->decoder) return deliver(t, data, n) ? n : 0;
    if (!success && (t->skip_error_body || t->response.body.size() >= kMaxErrorBody))
      return n;  // enough for a message
    if (success && req.max_body != 0 && !req.sink) {
      // The coded bytes are kept (for a second decoding past kMaxHeldDecoded); they count
      // against the limit too.
      if (t->coded.size() + n > req.max_body) {
        t->too_large = true;
        return 0;
      }
      t->coded.append(data, n);
    }
    Deliver out(t);
    switch (t->decoder->feed(data, n, out)) {
      case BodyDecoder::Status::Ok:
        return n;
      case BodyDecoder::Status::Stopped:
        return 0;
      case BodyDecoder::Status::Corrupt:
        if (!success) {
          t->skip_error_body = true;  // an error page's words, not worth failing for
          return n;
        }
        snprintf(t->error, sizeof t->error, "%s", t->decoder->error_text().c_str());
        return 0;
    }
    return 0;
  }

  // The response's URL after redirects and its Content-Type, from libcurl.
  static void read_url_and_type(Transfer* t) {
    HttpResponse& r = t->response;
    char* url = nullptr;
    if (curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK && url)
      r.effective_url = url;
    char* type = nullptr;
    if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
      r.content_type = type;
  }

  // A body's bytes (decoded, when it was coded): counted against the limit, given to the sink or
  // kept. False ends the transfer (too_large or aborted set).
  static bool deliver(Transfer* t, const char* data, std::size_t n) {
    HttpResponse& r = t->response;
    r.body_bytes += n;
    const HttpRequest& req = *t->request;
    bool success = t->current_status >= 200 && t->current_status < 300;
    if (req.max_body != 0 && success && r.body_bytes == n && !t->decoder) {
      // A Content-Length over the limit fails before a byte is kept (a coded body's length
      // counts coded bytes, so only an uncoded one is judged by it).
      curl_off_t length = -1;
      if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
          length > 0 && static_cast<std::uint64_t>(length) > req.max_body) {
        t->too_large = true;
        return false;
      }
    }
    if (req.max_body != 0 && r.body_bytes > req.max_body) {
      t->too_large = true;
      return false;
    }
    if (!success && r.body.size() >= kMaxErrorBody) return true;
    if (t->count_only) return true;
    if (success && t->decoder && req.max_body != 0 && r.body.size() + n > kMaxHeldDecoded) {
      // Counted from here on; decoded again from the coded bytes when the body ends (finish).
      t->count_only = true;
      std::string().swap(r.body);
      return true;
    }
    if (r.body.empty() && success && !t->decoder) {
      // Room for the whole body plus simdjson's padding, so a JSON page is parsed in place.
      curl_off_t length = -1;
      if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
          length > 0 && length < (curl_off_t{1} << 30) &&
          (req.max_body == 0 || static_cast<std::uint64_t>(length) <= req.max_body)) {
        r.body.reserve(static_cast<std::size_t>(length) + 128);
      }
    }
    if (success && req.max_body != 0 && r.body.size() + n > r.body.capacity()) {
      // A body of unknown size would grow by doubling, and the last copy would hold half the
      // limit beside the whole (2x the limit at the peak). Past an eighth of the limit, room for
      // the whole limit is reserved at once instead: its pages cost memory only as they are
      // written, and the peak stays under 1.125x the limit.
      // A coded body is held only to kMaxHeldDecoded, so that is its whole.
      std::uint64_t whole =
          t->decoder ? std::min<std::uint64_t>(req.max_body, kMaxHeldDecoded) : req.max_body;
      std::size_t grown = std::max(r.body.size() + n, 2 * r.body.capacity());
      if (grown > whole / 8) r.body.reserve(static_cast<std::size_t>(whole) + 128);
    }
    r.body.append(data, n);
    return true;
  }

  // A coded body that ended: whole (its stream's end seen), and decoded again from its coded
  // bytes when it was only counted past kMaxHeldDecoded. False: corrupt (t->error says why).
  static bool finish_coded_body(Transfer* t) {
    HttpResponse& r = t->response;
    if (!t->decoder->finished()) {
      snprintf(t->error, sizeof t->error, "%s", coding_ends_early(r.content_encoding).c_str());
      return false;
    }
    if (t->count_only) {
      std::uint64_t total = r.body_bytes;
      bool known = true;
      auto again = make_body_decoder(r.content_encoding, known);
      r.body.reserve(static_cast<std::size_t>(total) + 128);
      struct Keep final : BodyDecoder::Output {
        std::string* body;
        std::uint64_t limit;
        bool write(const char* data, std::size_t size) override {
          if (body->size() + size > limit) return false;
          body->append(data, size);
          return true;
        }
      } keep;
      keep.body = &r.body;
      keep.limit = total;
      auto status = again->feed(t->coded.data(), t->coded.size(), keep);
      if (status != BodyDecoder::Status::Ok || r.body.size() != total) {
        snprintf(t->error, sizeof t->error, "the body decoded differently the second time");
        return false;
      }
    }
    std::string().swap(t->coded);
    return true;
  }

  static int on_progress(void* user, curl_off_t, curl_off_t now_bytes, curl_off_t, curl_off_t) {
    auto* t = static_cast<Transfer*>(user);
    if (t->owner->cancelled_ || t->stop.load(std::memory_order_relaxed)) return 1;
    const TransportOptions& o = t->owner->options_;
    if (o.floor_bytes == 0 || o.floor_window.count() <= 0) return 0;
    // The floor: each window must bring floor_bytes per second on average. libcurl's own
    // low-speed check stays at "no byte at all" (the read timeout).
    auto now = std::chrono::steady_clock::now();
    if (t->window_start == std::chrono::steady_clock::time_point{}) {
      t->window_start = now;
      t->window_bytes = now_bytes;
      return 0;
    }
    if (now - t->window_start < o.floor_window) return 0;
    auto seconds = std::chrono::duration<double>(now - t->window_start).count();
    if (static_cast<double>(now_bytes - t->window_bytes) < o.floor_bytes * seconds) {
      t->too_slow = true;
      return 1;
    }
    t->window_start = now;
    t->window_bytes = now_bytes;
    return 0;
  }

  void start(Transfer* t) {
    const HttpRequest& req = *t->request;
    CURL* e = curl_easy_init();
    t->easy = e;
    curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    curl_easy_setopt(e, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &CurlTransport::on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &CurlTransport::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &CurlTransport::on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, t);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    // https never silently becomes http (issue 17), unless the caller allows it.
    const bool https_only = req.url.starts_with("https://") && !req.allow_insecure_redirect;
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, https_only ? "https" : "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, options_.max_redirects);
    curl_easy_setopt(e, CURLOPT_USERAGENT, options_.user_agent.c_str());
    // The body comes coded: the transport decodes it (on_write), bounded as it streams.
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING,
                     req.identity_encoding ? "identity" : kAcceptEncoding);
    curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    if (!req.range.empty()) curl_easy_setopt(e, CURLOPT_RANGE, req.range.c_str());
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    // Waiting for a connection to show whether it multiplexes pays off only where HTTP/2 can be
    // negotiated (TLS ALPN); on plain http:// libcurl would hold every new transfer until the
    // first response arrives, so the first request of a run would go out alone.
    if (req.url.starts_with("https://")) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout.count()));
    long low_speed_s = static_cast<long>((options_.low_speed_time.count() + 999) / 1000);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(options_.low_speed_bytes));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, low_speed_s < 1 ? 1L : low_speed_s);
    auto timeout = req.timeout.count() > 0 ? req.timeout : options_.request_timeout;
    if (timeout.count() > 0) {
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    }
    // TLS verification is always on; the trust store can only be replaced, never disabled.
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!options_.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_file.c_str());
    if (!options_.ca_path.empty()) curl_easy_setopt(e, CURLOPT_CAPATH, options_.ca_path.c_str());
    // Credentials: the URL's own, else ~/.netrc (libcurl reads it only when asked).
    curl_easy_setopt(e, CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
    if (!netrc_file_.empty()) curl_easy_setopt(e, CURLOPT_NETRC_FILE, netrc_file_.c_str());
    for (const auto& h : req.headers)
      t->headers = curl_slist_append(t->headers, h.c_str());
    if (t->headers) curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    curl_multi_add_handle(multi_, e);
    active_.push_back(t);
  }

  void finish(Transfer* t, CURLcode code) {
    HttpResponse& r = t->response;
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    r.status = status;
    read_url_and_type(t);
    switch (code) {
      case CURLE_OK:
        r.error = TransportError::None;
        // A relayed body's decoder is the waiting thread's (BodyReader::finish).
        if (t->decoder && !t->relaying && status >= 200 && status < 300 && !finish_coded_body(t)) {
          r.error = TransportError::Other;
          r.error_text = t->error;
        }
        break;
      case CURLE_OPERATION_TIMEDOUT:
        r.error = TransportError::Timeout;
        break;
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_COULDNT_CONNECT:
      case CURLE_SEND_ERROR:
      case CURLE_RECV_ERROR:
      case CURLE_GOT_NOTHING:
      case CURLE_HTTP2:
      case CURLE_HTTP2_STREAM:
        r.error = TransportError::Connect;
        break;
      case CURLE_PARTIAL_FILE:
        r.error = TransportError::Truncated;
        break;
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM:
      case CURLE_SSL_ISSUER_ERROR:
      case CURLE_SSL_CIPHER:
        r.error = TransportError::Tls;
        break;
      case CURLE_TOO_MANY_REDIRECTS:
        r.error = TransportError::TooManyRedirects;
        break;
      case CURLE_WRITE_ERROR:
        r.error = t->header_too_large ? TransportError::HeaderTooLarge
                  : t->too_large      ? TransportError::TooLarge
                  : t->aborted        ? TransportError::Aborted
                                      : TransportError::Other;
        if (t->header_too_large) {
          snprintf(t->error, sizeof t->error, "the server sent over %zu KiB of response headers",
                   kMaxResponseHeaders / 1024);
        } else if (t->unknown_coding) {
          snprintf(t->error, sizeof t->error, "unsupported Content-Encoding %s",
                   core::quote_for_message(r.content_encoding).c_str());
        }
        break;
      case CURLE_OUT_OF_MEMORY:
#if LIBCURL_VERSION_NUM >= 0x080600
      case CURLE_TOO_LARGE:
#endif
        // Before the body, libcurl says so of a header line over its limit (a real shortage of
        // memory would not leave the process running long enough to matter).
        r.error = TransportError::Other;
        if (r.body_bytes == 0) {
          r.error = TransportError::HeaderTooLarge;
          snprintf(t->error, sizeof t->error, "the server sent a response header line over %d KiB",
                   CURL_MAX_HTTP_HEADER / 1024);
        }
        break;
      case CURLE_ABORTED_BY_CALLBACK:
        r.error = t->too_slow ? TransportError::TooSlow : TransportError::Cancelled;
        break;
      case CURLE_UNSUPPORTED_PROTOCOL:
        // The redirect target is the last Location seen (only an absolute one changes scheme).
        r.error = r.redirect_url.starts_with("http://") ? TransportError::InsecureRedirect
                                                        : TransportError::Other;
        break;
      default:
        r.error = TransportError::Other;
        break;
    }
    if (t->too_slow) {
      snprintf(t->error, sizeof t->error,
               "slower than %u bytes/s over %lld s (the low-speed floor)",
               static_cast<unsigned>(options_.floor_bytes),
               static_cast<long long>(options_.floor_window.count() / 1000));
    }
    if (r.error != TransportError::InsecureRedirect) r.redirect_url.clear();
    if (code != CURLE_OK) {
      r.error_text = t->error[0] ? t->error : curl_easy_strerror(code);
      while (!r.error_text.empty() && r.error_text.back() == '\n')
        r.error_text.pop_back();
    }
    std::erase(active_, t);
    curl_multi_remove_handle(multi_, t->easy);
    curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    t->easy = nullptr;
    t->headers = nullptr;
    mark_done(t);
  }

  // Wakes the thread waiting in perform(). Notified under the lock: that thread owns `t` (on its
  // stack) and may return the moment it sees `done`, so `t` is not touched after the unlock.
  void mark_done(Transfer* t) {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase(resumes_, t);
    t->done = true;
    t->done_cv.notify_one();
  }

  // Unpauses what the waiting threads asked for; mu_ is not held, as libcurl may hand the
  // held bytes to on_write (queue) at once.
  void resume_paused() {
    std::vector<Transfer*> resumes;
    {
      std::lock_guard<std::mutex> lock(mu_);
      resumes.swap(resumes_);
      for (Transfer* t : resumes) {
        t->paused = false;
        t->resume_asked = false;
      }
    }
    for (Transfer* t : resumes)
      curl_easy_pause(t->easy, CURLPAUSE_CONT);
  }

  void loop() {
    std::vector<Transfer*> incoming;
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) break;
        incoming.assign(pending_.begin(), pending_.end());
        pending_.clear();
      }
      for (Transfer* t : incoming)
        start(t);
      incoming.clear();
      resume_paused();
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        Transfer* t = nullptr;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
        CURLcode code = msg->data.result;
        if (t) finish(t, code);
      }
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
    // Shutting down: fail whatever is still queued or running.
    std::vector<Transfer*> running_transfers(active_.begin(), active_.end());
    for (Transfer* t : running_transfers)
      finish(t, CURLE_ABORTED_BY_CALLBACK);
    std::lock_guard<std::mutex> lock(mu_);
    for (Transfer* t : pending_) {
      t->response.error = TransportError::Cancelled;
      t->response.error_text = "cancelled";
      t->done = true;
      t->done_cv.notify_one();
    }
    pending_.clear();
  }

  TransportOptions options_;
  std::string netrc_file_;
  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::deque<Transfer*> pending_;
  std::vector<Transfer*> active_;  // owned by the loop thread
  bool stop_ = false;
  std::vector<Transfer*> resumes_;  // paused transfers whose waiting thread took their bytes
  std::atomic<bool> cancelled_{false};
};

}  // namespace

std::unique_ptr<Transport> make_curl_transport(const TransportOptions& options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace gpulock::index::net

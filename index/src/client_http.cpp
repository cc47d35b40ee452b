// IndexClient's requests: the transport (the network plugin, loaded on the first request),
// retries with backoff, the deadline of page and METADATA requests, https->http redirects,
// credentials (sent only to the origin they were given for) and HTTP status errors.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "gpulock/core/text.h"
#include "gpulock/index/url.h"

#include "client_impl.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::HttpResponse;
using detail::status_text;
using detail::strip_userinfo;
using detail::TransportError;

namespace {

std::string_view reason_phrase(long status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 410:
      return "Gone";
    case 416:
      return "Range Not Satisfiable";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

bool is_transient(const HttpResponse& r) {
  switch (r.error) {
    case TransportError::Connect:
    case TransportError::Timeout:
    case TransportError::Truncated:
      return true;
    case TransportError::None:
      return r.status >= 500 || r.status == 408 || r.status == 429;
    default:
      return false;
  }
}

std::string authority_key(std::string_view url) {
  UrlParts p = split_url(url);
  std::string out(p.scheme);
  out += "://";
  std::string host(p.host);
  for (char& c : host)
    c = core::ascii_lower(c);
  return out + host;
}

}  // namespace

namespace detail {

std::string status_text(long status) {
  std::string_view reason = reason_phrase(status);
  return reason.empty() ? fmt::format("HTTP {}", status)
                        : fmt::format("HTTP {} {}", status, reason);
}

// "https://user:pw@host/x" -> ("https://host/x", "user:pw"); URLs without userinfo unchanged.
std::string strip_userinfo(std::string_view url, std::string* userinfo) {
  if (url.find('@') == std::string_view::npos) return std::string(url);
  UrlParts p = split_url(url);
  if (!p.has_authority || p.userinfo.empty()) return std::string(url);
  if (userinfo) *userinfo = std::string(p.userinfo);
  auto start = static_cast<std::size_t>(p.userinfo.data() - url.data());
  std::string out(url.substr(0, start));
  out.append(url.substr(start + p.userinfo.size() + 1));
  return out;
}

}  // namespace detail

// ---- IndexClient::Impl: transport and requests --------------------------------------------

// The transport, from the network plugin (loaded here, on the first real request).
core::Result<detail::Transport*> IndexClient::Impl::get_transport() {
  std::call_once(transport_once, [this] {
    detail::TransportOptions t;
    t.max_parallel = std::max(1u, options.max_parallel);
    t.connect_timeout = options.connect_timeout;
    t.low_speed_time = options.low_speed_time;
    t.low_speed_bytes = options.low_speed_bytes;
    t.floor_bytes = options.floor_bytes;
    t.floor_window = options.floor_window;
    t.request_timeout = options.request_timeout;
    t.max_redirects = options.max_redirects;
    t.user_agent = options.user_agent;
    t.ca_file = options.ca_file;
    t.ca_path = options.ca_path;
    auto created = detail::make_transport(t);
    if (!created) {
      transport_error = created.error();
      return;
    }
    std::lock_guard<std::mutex> lock(transport_mu);
    transport = std::move(*created);
    if (cancelled) transport->cancel();
  });
  if (!transport) return std::unexpected(*transport_error);
  return transport.get();
}

void IndexClient::Impl::cancel_transfers_for_shutdown() {
  cancelled = true;
  cancel_cv.notify_all();
  std::lock_guard<std::mutex> lock(transport_mu);
  if (transport) transport->cancel();
}

void IndexClient::Impl::remember_credentials(std::string_view url) {
  std::string userinfo;
  strip_userinfo(url, &userinfo);
  if (userinfo.empty()) return;
  std::lock_guard<std::mutex> lock(hosts_mu);
  credentials[authority_key(url)] = userinfo;
}

// The URL to send: with the credentials of its index when it has none of its own.
std::string IndexClient::Impl::with_credentials(const std::string& url) {
  UrlParts p = split_url(url);
  if (!p.has_authority || !p.userinfo.empty()) return url;
  std::lock_guard<std::mutex> lock(hosts_mu);
  if (credentials.empty()) return url;
  auto it = credentials.find(authority_key(url));
  if (it == credentials.end()) return url;
  auto host_start = static_cast<std::size_t>(p.host.data() - url.data());
  return url.substr(0, host_start) + it->second + "@" + url.substr(host_start);
}

std::chrono::milliseconds IndexClient::Impl::remaining_deadline() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(started + options.deadline -
                                                               std::chrono::steady_clock::now());
}

core::Error IndexClient::Impl::deadline_error(std::string_view shown) const {
  return core::make_error(
             ErrorCode::Timeout,
             fmt::format("timed out: index pages and metadata took longer than the {} s deadline",
                         (options.deadline.count() + 999) / 1000),
             std::string(shown))
      .with_hint("set GPULOCK_HTTP_DEADLINE (seconds) for a slow index");
}

core::Error IndexClient::Impl::cancelled_error(std::string_view url) const {
  return core::make_error(ErrorCode::Cancelled, "cancelled", redact_url(url));
}

// One request with retries (RFC 9110 idempotent GETs): 5xx, 408, 429, connection errors,
// timeouts and truncated bodies are retried with exponential backoff. Transport failures become
// errors; HTTP statuses (even 5xx after the last retry) are returned for the caller to judge,
// as are TooLarge/Aborted (the caller set those limits).
core::Result<HttpResponse> IndexClient::Impl::request(HttpRequest req, RequestKind kind,
                                                      const std::function<void()>& reset) {
  const std::string shown = redact_url(req.url);
  if (cancelled) return std::unexpected(cancelled_error(req.url));
  req.url = with_credentials(req.url);
  auto transport_ptr = get_transport();
  if (!transport_ptr) return std::unexpected(transport_ptr.error());
  detail::Transport& t = **transport_ptr;
  const bool bounded =
      kind != RequestKind::Download && kind != RequestKind::Digest && options.deadline.count() > 0;
  HttpResponse r;
  unsigned attempts = 0;
  for (unsigned attempt = 0;; ++attempt) {
    if (attempt > 0 && reset) reset();
    if (bounded) {
      auto left = remaining_deadline();
      if (left.count() <= 0) return std::unexpected(deadline_error(shown));
      req.timeout = left;
    }
    ++attempts;
    count_request(kind);
    emit(ClientEvent::Type::RequestStarted, kind, shown);
    r = t.perform(req);
    if (bounded && r.error == TransportError::Timeout && remaining_deadline().count() <= 0)
      return std::unexpected(deadline_error(shown));
    counters.bytes += r.body_bytes;
    emit(ClientEvent::Type::RequestFinished, kind, shown, r.status, r.body_bytes,
         r.error == TransportError::None ? std::string() : redact_text(r.error_text));
    if (!is_transient(r) || attempt >= options.retries || cancelled) break;
    auto delay = options.retry_backoff * (1LL << std::min(attempt, 10u));
    if (!r.retry_after.empty()) {
      long seconds = 0;
      auto [p, ec] = std::from_chars(r.retry_after.data(),
                                     r.retry_after.data() + r.retry_after.size(), seconds);
      if (ec == std::errc{} && seconds >= 0 && seconds <= 30) {
        delay = std::max<std::chrono::milliseconds>(delay, std::chrono::seconds(seconds));
      }
      // A server that asks for a longer wait than the client allows is not waited for.
      if (ec == std::errc{} && std::chrono::seconds(seconds) > options.max_retry_delay) break;
    }
    delay = std::min<std::chrono::milliseconds>(delay, options.max_retry_delay);
    if (bounded && delay >= remaining_deadline()) break;
    ++counters.retries;
    emit(ClientEvent::Type::Retry, kind, shown, r.status, 0,
         r.error == TransportError::None ? status_text(r.status) : redact_text(r.error_text));
    std::unique_lock<std::mutex> lock(cancel_mu);
    cancel_cv.wait_for(lock, delay, [&] { return cancelled.load(); });
  }
  auto after = [&]() -> std::string {
    return attempts > 1 ? fmt::format(" (after {} attempts)", attempts) : std::string();
  };
  switch (r.error) {
    case TransportError::None:
    case TransportError::TooLarge:
    case TransportError::Aborted:
      // 5xx, 408 and 429 are the statuses retried: still there after the last attempt.
      if (r.error == TransportError::None && is_transient(r)) {
        return core::fail_at(ErrorCode::Http, status_text(r.status) + after(), shown);
      }
      return r;
    case TransportError::Connect:
      return core::fail_at(
          ErrorCode::Network,
          fmt::format("cannot reach the server: {}{}", redact_text(r.error_text), after()), shown);
    case TransportError::Timeout:
    case TransportError::TooSlow:
      return core::fail_at(ErrorCode::Timeout,
                           fmt::format("timed out: {}{}", redact_text(r.error_text), after()),
                           shown);
    case TransportError::Truncated:
      return core::fail_at(
          ErrorCode::Network,
          fmt::format("truncated response body: {}{}", redact_text(r.error_text), after()), shown);
    case TransportError::Tls: {
      return std::unexpected(
          core::make_error(ErrorCode::Network,
                           fmt::format("TLS error: {}", redact_text(r.error_text)), shown)
              .with_hint("to trust a private certificate authority, set SSL_CERT_FILE to its CA "
                         "bundle (PEM)"));
    }
    case TransportError::TooManyRedirects:
      return core::fail_at(
          ErrorCode::Network,
          fmt::format("too many redirects (more than {}; a redirect loop?)", options.max_redirects),
          shown);
    case TransportError::Cancelled:
      return std::unexpected(cancelled_error(req.url));
    case TransportError::InsecureRedirect:
      return insecure_redirect(req, kind, reset, r.redirect_url, shown);
    case TransportError::HeaderTooLarge:  // not retried: the server would send it again
    case TransportError::Other:
      break;
  }
  return core::fail_at(ErrorCode::Network, redact_text(r.error_text), shown);
}

// An https:// request redirected to http://: refused unless the user named the target's host
// (`host` or `host:port`) with --allow-insecure-host; then the redirect is followed once more
// from the target, which gets no credentials of another origin (with_credentials).
core::Result<HttpResponse> IndexClient::Impl::insecure_redirect(HttpRequest req, RequestKind kind,
                                                                const std::function<void()>& reset,
                                                                const std::string& target,
                                                                const std::string& shown) {
  UrlParts p = split_url(target);
  std::string host_port(p.host);
  const bool allowed =
      std::any_of(options.insecure_hosts.begin(), options.insecure_hosts.end(),
                  [&](const std::string& h) { return h == host_port || h == url_host(target); });
  if (!allowed || req.allow_insecure_redirect) {
    return std::unexpected(
        core::make_error(
            ErrorCode::Network,
            fmt::format("refusing the redirect from https to plain http ({})", redact_url(target)),
            shown)
            .with_hint(
                fmt::format("if {} is trusted over plain http, pass --allow-insecure-host {}",
                            url_host(target), url_host(target))));
  }
  req.url = strip_userinfo(target);
  req.allow_insecure_redirect = true;
  return request(std::move(req), kind, reset);
}

// 4xx (and anything else that is not a success) as an error.
core::Error IndexClient::Impl::status_error(long status, std::string_view shown) {
  if (status == 401 || status == 403) {
    return core::make_error(ErrorCode::Auth,
                            status_text(status) + ": the index refused the request",
                            std::string(shown))
        .with_hint(
            "give credentials in the index URL (https://user:token@host/...) or in ~/.netrc");
  }
  const bool gone = status == 404 || status == 410;
  return core::make_error(gone ? ErrorCode::NotFound : ErrorCode::Http, status_text(status),
                          std::string(shown));
}

}  // namespace gpulock::index

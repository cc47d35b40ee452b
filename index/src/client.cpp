#include "gpulock/index/client.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/name.h"
#include "gpulock/core/text.h"
#include "gpulock/index/parse.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"
#include "gpulock/sys/env.h"

#include "cache.h"
#include "client_limits.h"
#include "interrupt_registry.h"
#include "page_builder.h"
#include "remote_zip.h"
#include "task_pool.h"
#include "temp_files.h"
#include "transport.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::HttpResponse;
using detail::TransportError;

std::string_view request_kind_name(RequestKind kind) noexcept {
  switch (kind) {
    case RequestKind::Page:
      return "page";
    case RequestKind::Metadata:
      return "metadata";
    case RequestKind::Range:
      return "range";
    case RequestKind::Download:
      return "download";
    case RequestKind::Digest:
      return "digest";
  }
  return "page";
}

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::int64_t now_seconds() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

// "Not on this index" answers without a max-age are kept this long.
constexpr std::int64_t kDefaultNotFoundMaxAge = 600;
// METADATA keyed by URL on hosts not known to be immutable is reused for this long.
constexpr std::int64_t kMutableMetadataMaxAge = 600;
// An index root read for its names (the torch source's: tens of KiB) is bounded far below a
// project page.
constexpr std::uint64_t kMaxProjectListBytes = 16ull << 20;

struct CacheControl {
  std::int64_t max_age = -1;
  bool no_cache = false;
  bool no_store = false;
};

CacheControl parse_cache_control(std::string_view value) {
  CacheControl cc;
  std::size_t pos = 0;
  while (pos <= value.size()) {
    auto comma = value.find(',', pos);
    std::string_view item =
        value.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? value.size() + 1 : comma + 1;
    item = core::trim(item, " \t");
    std::string lowered(item);
    for (char& c : lowered)
      c = core::ascii_lower(c);
    if (lowered.starts_with("max-age=")) {
      std::string_view n = std::string_view(lowered).substr(8);
      if (!n.empty() && n.front() == '"') n = n.substr(1, n.size() >= 2 ? n.size() - 2 : 0);
      std::int64_t v = 0;
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
      if (ec == std::errc{} && v >= 0) cc.max_age = v;
    } else if (lowered == "no-cache" || lowered.starts_with("no-cache=")) {
      cc.no_cache = true;
    } else if (lowered == "no-store") {
      cc.no_store = true;
    }
  }
  return cc;
}

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

std::string status_text(long status) {
  std::string_view reason = reason_phrase(status);
  return reason.empty() ? fmt::format("HTTP {}", status)
                        : fmt::format("HTTP {} {}", status, reason);
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

// "https://user:pw@host/x" -> ("https://host/x", "user:pw"); URLs without userinfo unchanged.
std::string strip_userinfo(std::string_view url, std::string* userinfo = nullptr) {
  if (url.find('@') == std::string_view::npos) return std::string(url);
  UrlParts p = split_url(url);
  if (!p.has_authority || p.userinfo.empty()) return std::string(url);
  if (userinfo) *userinfo = std::string(p.userinfo);
  auto start = static_cast<std::size_t>(p.userinfo.data() - url.data());
  std::string out(url.substr(0, start));
  out.append(url.substr(start + p.userinfo.size() + 1));
  return out;
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

core::Result<ClientOptions> ClientOptions::from_environment(sys::EnvLookup env) {
  ClientOptions o;
  o.cache_dir = default_cache_dir();
  if (auto s = detail::apply_limit_environment(o, env); !s) return std::unexpected(s.error());
  auto retries =
      sys::env_integer("GPULOCK_HTTP_RETRIES", 0, 10000, "a number of retries, 0-10000", env);
  if (!retries) return std::unexpected(retries.error());
  if (*retries) o.retries = static_cast<unsigned>(**retries);
  auto parallel = sys::env_integer("GPULOCK_CONCURRENT_DOWNLOADS", 1, 10000,
                                   "a number of transfers, 1-10000", env);
  if (!parallel) return std::unexpected(parallel.error());
  if (*parallel) o.max_parallel = static_cast<unsigned>(**parallel);
  return o;
}

std::string default_cache_dir() {
  if (std::string d = env("GPULOCK_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/gpulock";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/gpulock";
  return ".gpulock-cache";
}

// ----------------------------------------------------------------------------------------------

struct IndexClient::Impl {
  explicit Impl(ClientOptions o)
      : options(std::move(o)),
        cache(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir,
              !options.no_cache),
        pool(std::max(1u, options.max_parallel)) {
    immutable_hosts = {"files.pythonhosted.org", "download.pytorch.org", "download-r2.pytorch.org",
                       "pypi.nvidia.com"};
    for (const auto& h : options.immutable_hosts)
      immutable_hosts.insert(h);
    if (options.ca_file.empty()) options.ca_file = env("SSL_CERT_FILE");
    if (options.ca_path.empty()) options.ca_path = env("SSL_CERT_DIR");
    detail::register_client(this, [this] { cancel_transfers_for_shutdown(); });
  }

  ~Impl() {
    detail::unregister_client(this);
    cancel_transfers_for_shutdown();
    pool.stop();
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  ClientOptions options;
  // Page, METADATA and range requests end by started + options.deadline.
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  detail::DiskCache cache;
  std::unordered_set<std::string> immutable_hosts;

  // Counters.
  struct Counters {
    std::atomic<std::uint64_t> requests{0}, page{0}, metadata{0}, range{0}, download{0}, digest{0},
        retries{0}, not_modified{0}, page_hits{0}, metadata_hits{0}, digest_hits{0}, bytes{0},
        range_metadata{0}, downloaded_metadata{0}, pages_parsed{0};
  } counters;

  std::atomic<bool> cancelled{false};
  std::mutex cancel_mu;
  std::condition_variable cancel_cv;

  // The transport, created on the first real request.
  std::once_flag transport_once;
  std::unique_ptr<detail::Transport> transport;
  std::optional<core::Error> transport_error;  // the plugin could not be loaded
  std::mutex transport_mu;

  // Memoized operations.
  std::mutex memo_mu;
  std::unordered_map<std::string, std::shared_ptr<detail::Op<ProjectPagePtr>>> projects;
  std::unordered_map<std::string, std::shared_ptr<detail::Op<ProjectListPtr>>> project_lists;
  std::unordered_map<std::string, std::shared_ptr<detail::Op<ProjectPagePtr>>> link_pages;
  std::unordered_map<std::string, std::shared_ptr<detail::Op<std::string>>> metadata;
  std::unordered_map<std::string, std::shared_ptr<detail::Op<FileDigest>>> digests;

  // Per host: do range requests work? And credentials learned from index URLs.
  std::mutex hosts_mu;
  std::unordered_map<std::string, bool> range_support;
  std::unordered_map<std::string, std::string> credentials;

  detail::TaskPool pool;  // last: stopped first

  // ---- events and counters -------------------------------------------------------------------

  void emit(ClientEvent::Type type, RequestKind kind, std::string_view url, long status = 0,
            std::uint64_t bytes = 0, std::string message = {}) const {
    if (!options.observer) return;
    ClientEvent e;
    e.type = type;
    e.kind = kind;
    e.url = redact_url(url);
    e.status = status;
    e.bytes = bytes;
    e.message = std::move(message);
    options.observer(e);
  }

  void count_request(RequestKind kind) {
    ++counters.requests;
    switch (kind) {
      case RequestKind::Page:
        ++counters.page;
        break;
      case RequestKind::Metadata:
        ++counters.metadata;
        break;
      case RequestKind::Range:
        ++counters.range;
        break;
      case RequestKind::Download:
        ++counters.download;
        break;
      case RequestKind::Digest:
        ++counters.digest;
        break;
    }
  }

  // ---- transport -----------------------------------------------------------------------------

  // The transport, from the network plugin (loaded here, on the first real request).
  core::Result<detail::Transport*> get_transport() {
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

  void cancel_transfers_for_shutdown() {
    cancelled = true;
    cancel_cv.notify_all();
    std::lock_guard<std::mutex> lock(transport_mu);
    if (transport) transport->cancel();
  }

  void remember_credentials(std::string_view url) {
    std::string userinfo;
    strip_userinfo(url, &userinfo);
    if (userinfo.empty()) return;
    std::lock_guard<std::mutex> lock(hosts_mu);
    credentials[authority_key(url)] = userinfo;
  }

  // The URL to send: with the credentials of its index when it has none of its own.
  std::string with_credentials(const std::string& url) {
    UrlParts p = split_url(url);
    if (!p.has_authority || !p.userinfo.empty()) return url;
    std::lock_guard<std::mutex> lock(hosts_mu);
    if (credentials.empty()) return url;
    auto it = credentials.find(authority_key(url));
    if (it == credentials.end()) return url;
    auto host_start = static_cast<std::size_t>(p.host.data() - url.data());
    return url.substr(0, host_start) + it->second + "@" + url.substr(host_start);
  }

  std::chrono::milliseconds remaining_deadline() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        started + options.deadline - std::chrono::steady_clock::now());
  }

  core::Error deadline_error(std::string_view shown) const {
    return core::make_error(
               ErrorCode::Timeout,
               fmt::format("timed out: index pages and metadata took longer than the {} s deadline",
                           (options.deadline.count() + 999) / 1000),
               std::string(shown))
        .with_hint("set GPULOCK_HTTP_DEADLINE (seconds) for a slow index");
  }

  core::Error cancelled_error(std::string_view url) const {
    return core::make_error(ErrorCode::Cancelled, "cancelled", redact_url(url));
  }

  // One request with retries (RFC 9110 idempotent GETs): 5xx, 408, 429, connection errors,
  // timeouts and truncated bodies are retried with exponential backoff. Transport failures become
  // errors; HTTP statuses (even 5xx after the last retry) are returned for the caller to judge,
  // as are TooLarge/Aborted (the caller set those limits).
  core::Result<HttpResponse> request(HttpRequest req, RequestKind kind,
                                     const std::function<void()>& reset = {}) {
    const std::string shown = redact_url(req.url);
    if (cancelled) return std::unexpected(cancelled_error(req.url));
    req.url = with_credentials(req.url);
    auto transport_ptr = get_transport();
    if (!transport_ptr) return std::unexpected(transport_ptr.error());
    detail::Transport& t = **transport_ptr;
    const bool bounded = kind != RequestKind::Download && kind != RequestKind::Digest &&
                         options.deadline.count() > 0;
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
            fmt::format("cannot reach the server: {}{}", redact_text(r.error_text), after()),
            shown);
      case TransportError::Timeout:
      case TransportError::TooSlow:
        return core::fail_at(ErrorCode::Timeout,
                             fmt::format("timed out: {}{}", redact_text(r.error_text), after()),
                             shown);
      case TransportError::Truncated:
        return core::fail_at(
            ErrorCode::Network,
            fmt::format("truncated response body: {}{}", redact_text(r.error_text), after()),
            shown);
      case TransportError::Tls: {
        return std::unexpected(
            core::make_error(ErrorCode::Network,
                             fmt::format("TLS error: {}", redact_text(r.error_text)), shown)
                .with_hint("to trust a private certificate authority, set SSL_CERT_FILE to its CA "
                           "bundle (PEM)"));
      }
      case TransportError::TooManyRedirects:
        return core::fail_at(ErrorCode::Network,
                             fmt::format("too many redirects (more than {}; a redirect loop?)",
                                         options.max_redirects),
                             shown);
      case TransportError::Cancelled:
        return std::unexpected(cancelled_error(req.url));
      case TransportError::InsecureRedirect:
        return insecure_redirect(req, kind, reset, r.redirect_url, shown);
      case TransportError::Other:
        break;
    }
    return core::fail_at(ErrorCode::Network, redact_text(r.error_text), shown);
  }

  // An https:// request redirected to http://: refused unless the user named the target's host
  // (`host` or `host:port`) with --allow-insecure-host; then the redirect is followed once more
  // from the target, which gets no credentials of another origin (with_credentials).
  core::Result<HttpResponse> insecure_redirect(HttpRequest req, RequestKind kind,
                                               const std::function<void()>& reset,
                                               const std::string& target,
                                               const std::string& shown) {
    UrlParts p = split_url(target);
    std::string host_port(p.host);
    const bool allowed = std::any_of(
        options.insecure_hosts.begin(), options.insecure_hosts.end(),
        [&](const std::string& h) { return h == host_port || h == url_host(target); });
    if (!allowed || req.allow_insecure_redirect) {
      return std::unexpected(
          core::make_error(ErrorCode::Network,
                           fmt::format("refusing the redirect from https to plain http ({})",
                                       redact_url(target)),
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
  static core::Error status_error(long status, std::string_view shown) {
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

  // ---- project pages ---------------------------------------------------------------------------

  struct PageLookup {
    std::string url;    // as requested (may carry credentials)
    std::string shown;  // redacted
    PageFilter filter;
    bool forbidden_means_missing = false;
    // A find-links page holds every project: it stays whole here and is filtered per project.
    bool whole = false;
  };

  ProjectPagePtr not_found_page(const PageLookup& lookup) {
    auto page = std::make_shared<ProjectPage>();
    page->found = false;
    page->name = lookup.filter.project;
    page->url = lookup.shown;
    return page;
  }

  // Removes credentials from file URLs so pages, caches and locks never hold a secret. A page's
  // own `user:password@` is dropped, never learned: credentials come only from the URLs the user
  // gave (and netrc), and with_credentials() adds them back only on their own origin.
  static void scrub_credentials(ProjectPage& page) {
    for (auto& f : page.files) {
      if (f.url().find('@') == std::string_view::npos) continue;
      f.set_url(strip_userinfo(f.url()));
    }
  }

  // A page fetched over http(s) may not make gpulock open local files (issue 17): a file://
  // link on it, absolute or resolved from a relative one, is an error naming the page.
  static core::Status refuse_local_links(const ProjectPage& page, std::string_view shown) {
    for (const auto& f : page.files) {
      if (!is_file_url(f.url())) continue;
      return core::fail_at(ErrorCode::IndexFormat,
                           fmt::format("the page links to a local file ({}); a remote page may "
                                       "not make gpulock open local files",
                                       core::quote_for_message(f.url(), 200)),
                           std::string(shown));
    }
    return {};
  }

  // ClientOptions::keep_wheel, or null.
  const detail::WheelFilter* wheel_filter() const {
    return options.keep_wheel ? &options.keep_wheel : nullptr;
  }

  // A page as this client returns it: filtered when the caller asked (the cache keeps it whole),
  // unless it is a find-links page (`whole`), filtered per project later.
  ProjectPagePtr finish_page(ProjectPage&& page, bool whole = false) const {
    const auto* filter = whole ? nullptr : wheel_filter();
    if (filter) detail::filter_page(page, *filter);
    return std::make_shared<const ProjectPage>(std::move(page));
  }

  // A cache hit that needs no request, or nullopt. Offline: any entry, else an Offline error.
  std::optional<core::Result<ProjectPagePtr>> page_from_cache(
      const PageLookup& lookup, std::optional<detail::PageEntry>& entry) {
    // An entry used as it is gets decoded through the filter; one to revalidate is decoded
    // whole, since a 304 stores it again. One clock reading decides both.
    const std::int64_t now = now_seconds();
    const auto usable = [&](const detail::PageEntry& e) {
      if (e.status == 403 && !lookup.forbidden_means_missing) return false;
      return options.offline || (!options.refresh && e.fresh(now));
    };
    entry = cache.load_page(lookup.shown, [&](const detail::PageEntry& e) {
      return usable(e) && !lookup.whole ? wheel_filter() : nullptr;
    });
    if (entry && entry->status == 403 && !lookup.forbidden_means_missing) entry.reset();
    if (entry && usable(*entry)) {
      ++counters.page_hits;
      emit(ClientEvent::Type::CacheHit, RequestKind::Page, lookup.shown);
      return std::make_shared<const ProjectPage>(std::move(entry->page));
    }
    if (options.offline) {
      return std::unexpected(core::make_error(ErrorCode::Offline,
                                              "not in the cache, and --offline forbids fetching it",
                                              lookup.shown)
                                 .with_hint("run once without --offline to fill the cache"));
    }
    return std::nullopt;
  }

  core::Result<ProjectPagePtr> page_from_network(const PageLookup& lookup,
                                                 std::optional<detail::PageEntry> entry) {
    HttpRequest req;
    req.url = lookup.url;
    req.headers.push_back(fmt::format("Accept: {}", kSimpleAccept));
    req.max_body = options.max_page_bytes;
    if (entry && entry->page.found) {
      if (!entry->etag.empty()) req.headers.push_back("If-None-Match: " + entry->etag);
      if (!entry->last_modified.empty())
        req.headers.push_back("If-Modified-Since: " + entry->last_modified);
    }
    auto response = request(std::move(req), RequestKind::Page);
    if (!response) return std::unexpected(response.error());
    HttpResponse& r = *response;
    const std::int64_t now = now_seconds();
    CacheControl cc = parse_cache_control(r.cache_control);

    if (r.status == 304 && entry) {
      ++counters.not_modified;
      entry->stored_at = now;
      if (!r.cache_control.empty()) {
        entry->max_age = cc.max_age;
        entry->no_cache = cc.no_cache;
      }
      if (!r.etag.empty()) entry->etag = r.etag;
      if (!r.last_modified.empty()) entry->last_modified = r.last_modified;
      if (!cc.no_store) cache.store_page(*entry);
      return finish_page(std::move(entry->page), lookup.whole);
    }
    if (r.status == 404 || r.status == 410 || (r.status == 403 && lookup.forbidden_means_missing)) {
      auto page = not_found_page(lookup);
      if (!cc.no_store) {
        detail::PageEntry e;
        e.url = lookup.shown;
        e.stored_at = now;
        e.max_age = cc.max_age >= 0 ? cc.max_age : kDefaultNotFoundMaxAge;
        e.no_cache = cc.no_cache;
        e.status = static_cast<int>(r.status);
        e.page = *page;
        cache.store_page(e);
      }
      return page;
    }
    if (r.status < 200 || r.status >= 300)
      return std::unexpected(status_error(r.status, lookup.shown));
    if (r.error == TransportError::TooLarge) {
      return std::unexpected(
          core::make_error(ErrorCode::IndexFormat,
                           fmt::format("the page is larger than the {} limit (decompressed)",
                                       format_byte_size(options.max_page_bytes)),
                           lookup.shown)
              .with_hint("raise the limit with --max-page-size or GPULOCK_MAX_PAGE_SIZE"));
    }

    std::string base = strip_userinfo(r.effective_url.empty() ? lookup.url : r.effective_url);
    PageFormat format = page_format_for_content_type(r.content_type);
    if (format == PageFormat::Unknown) {
      if (!r.content_type.empty()) {
        return core::fail_at(ErrorCode::IndexFormat,
                             fmt::format("unexpected Content-Type {} (expected a PEP 691 JSON or "
                                         "PEP 503 HTML page)",
                                         core::quote_for_message(r.content_type)),
                             lookup.shown);
      }
      auto first = r.body.find_first_not_of(" \t\r\n");
      format = (first != std::string::npos && r.body[first] == '{') ? PageFormat::Json
                                                                    : PageFormat::Html;
    }
    ++counters.pages_parsed;
    auto parsed = format == PageFormat::Json ? parse_json_page_padded(r.body, base, lookup.filter)
                                             : parse_html_page(r.body, base, lookup.filter);
    // The records own everything now: the page's bytes go before the cache entry is encoded.
    std::string().swap(r.body);
    if (!parsed) {
      core::Error e = parsed.error();
      e.where = lookup.shown;
      return std::unexpected(e);
    }
    ProjectPage& page = *parsed;
    if (auto local = refuse_local_links(page, lookup.shown); !local)
      return std::unexpected(local.error());
    if (!lookup.filter.project.empty()) page.name = lookup.filter.project;
    page.url = lookup.shown;
    scrub_credentials(page);
    if (!cc.no_store) {
      detail::PageEntry e;
      e.url = lookup.shown;
      e.stored_at = now;
      e.max_age = cc.max_age;
      e.no_cache = cc.no_cache;
      e.etag = r.etag;
      e.last_modified = r.last_modified;
      cache.store_page(e, page);
    }
    return finish_page(std::move(page), lookup.whole);
  }

  core::Result<ProjectPagePtr> http_page(const PageLookup& lookup) {
    std::optional<detail::PageEntry> entry;
    if (auto hit = page_from_cache(lookup, entry)) return std::move(*hit);
    return page_from_network(lookup, std::move(entry));
  }

  // file:// Simple API: <dir>/index.json or <dir>/index.html, parsed once and cached against the
  // file's mtime and size.
  core::Result<ProjectPagePtr> local_page(const std::string& page_url, const PageFilter& filter) {
    auto dir = file_url_to_path(page_url);
    if (!dir) return std::unexpected(dir.error());
    std::string base = *dir;
    if (base.empty() || base.back() != '/') base.push_back('/');
    std::string path;
    bool json = false;
    struct stat st {};
    if (::stat((base + "index.json").c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      path = base + "index.json";
      json = true;
    } else if (::stat((base + "index.html").c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      path = base + "index.html";
    } else {
      auto page = std::make_shared<ProjectPage>();
      page->name = filter.project;
      page->url = redact_url(page_url);
      return page;
    }
    std::string key = "file://" + path;
    std::string validator =
        fmt::format("{}.{}:{}", static_cast<long long>(st.st_mtim.tv_sec),
                    static_cast<long long>(st.st_mtim.tv_nsec), static_cast<long long>(st.st_size));
    auto entry = cache.load_page(key, [&](const detail::PageEntry& e) {
      return e.etag == validator ? wheel_filter() : nullptr;
    });
    if (entry && entry->etag == validator) {
      ++counters.page_hits;
      emit(ClientEvent::Type::CacheHit, RequestKind::Page, key);
      return std::make_shared<const ProjectPage>(std::move(entry->page));
    }
    std::string body;
    if (auto read = read_local_file(path, body); !read) return std::unexpected(read.error());
    ++counters.pages_parsed;
    std::string file_url = path_to_file_url(path);
    auto parsed = json ? parse_json_page_padded(body, file_url, filter)
                       : parse_html_page(body, file_url, filter);
    if (!parsed) return std::unexpected(parsed.error());
    parsed->name = filter.project;
    parsed->url = redact_url(page_url);
    detail::PageEntry e;
    e.url = key;
    e.stored_at = now_seconds();
    e.etag = validator;
    cache.store_page(e, *parsed);
    return finish_page(std::move(*parsed));
  }

  static core::Status read_local_file(const std::string& path, std::string& out) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return core::fail_at(ErrorCode::Io, fmt::format("cannot open: {}", std::strerror(errno)),
                           path);
    struct stat st {};
    ::fstat(fd, &st);
    out.clear();
    out.reserve(static_cast<std::size_t>(st.st_size) + 64);
    char buffer[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        ::close(fd);
        return core::fail_at(ErrorCode::Io, fmt::format("cannot read: {}", std::strerror(err)),
                             path);
      }
      if (n == 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return {};
  }

  // Find-links: every distribution file of a directory or page, once per client.
  core::Result<ProjectPagePtr> all_links(const IndexSource& source) {
    std::shared_ptr<detail::Op<ProjectPagePtr>> op;
    {
      std::lock_guard<std::mutex> lock(memo_mu);
      auto& slot = link_pages[source.url];
      if (!slot) {
        IndexSource copy = source;
        slot =
            std::make_shared<detail::Op<ProjectPagePtr>>([this, copy] { return load_links(copy); });
      }
      op = slot;
    }
    return op->get();
  }

  core::Result<ProjectPagePtr> load_links(const IndexSource& source) {
    PageFilter filter;
    filter.quiet_drops = true;
    if (is_file_url(source.url)) {
      auto path = file_url_to_path(source.url);
      if (!path) return std::unexpected(path.error());
      struct stat st {};
      if (::stat(path->c_str(), &st) != 0) {
        return core::fail_at(ErrorCode::Io,
                             fmt::format("find-links location: {}", std::strerror(errno)), *path);
      }
      if (S_ISDIR(st.st_mode)) return list_directory(*path, source.url);
      std::string body;
      if (auto read = read_local_file(*path, body); !read) return std::unexpected(read.error());
      ++counters.pages_parsed;
      auto parsed = parse_html_page(body, source.url, filter);
      if (!parsed) return std::unexpected(parsed.error());
      parsed->url = redact_url(source.url);
      return std::make_shared<const ProjectPage>(std::move(*parsed));
    }
    remember_credentials(source.url);
    PageLookup lookup;
    lookup.url = source.url;
    lookup.shown = redact_url(source.url);
    lookup.filter = filter;
    lookup.forbidden_means_missing = source.forbidden_means_missing;
    lookup.whole = true;
    return http_page(lookup);
  }

  core::Result<ProjectPagePtr> list_directory(const std::string& path, const std::string& url) {
    DIR* dir = ::opendir(path.c_str());
    if (!dir) {
      return core::fail_at(
          ErrorCode::Io, fmt::format("cannot list the directory: {}", std::strerror(errno)), path);
    }
    std::vector<std::string> names;
    while (dirent* ent = ::readdir(dir)) {
      std::string_view n = ent->d_name;
      if (n == "." || n == "..") continue;
      names.emplace_back(n);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    auto page = std::make_shared<ProjectPage>();
    page->found = true;
    page->url = redact_url(url);
    page->api_version = "1.0";
    PageFilter filter;
    filter.quiet_drops = true;
    detail::FileClassifier classifier(filter);
    std::string base = path.empty() || path.back() == '/' ? path : path + "/";
    for (const auto& n : names) {
      struct stat st {};
      if (::stat((base + n).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      DistFile f;
      f.set_text(n, path_to_file_url(base + n));
      f.set_size(static_cast<std::uint64_t>(st.st_size));
      if (classifier.accept(f)) page->files.push_back(std::move(f));
    }
    return ProjectPagePtr(page);
  }

  core::Result<ProjectPagePtr> load_project(const IndexSource& source, const std::string& name) {
    if (source.kind == SourceKind::FindLinks) {
      auto all = all_links(source);
      if (!all) return std::unexpected(all.error());
      auto page = std::make_shared<ProjectPage>();
      page->name = name;
      page->url = (*all)->url;
      page->api_version = (*all)->api_version;
      for (const auto& f : (*all)->files) {
        if (f.project() == name) page->files.push_back(f);
      }
      page->found = !page->files.empty();
      return finish_page(std::move(*page));
    }
    std::string url = source.project_url(name);
    PageFilter filter;
    filter.project = name;
    if (is_file_url(url)) return local_page(url, filter);
    if (!is_http_url(url)) {
      return core::fail_at(ErrorCode::Usage,
                           "unsupported index URL (expected http://, https:// or file://)",
                           redact_url(url));
    }
    remember_credentials(url);
    PageLookup lookup;
    lookup.url = url;
    lookup.shown = redact_url(url);
    lookup.filter = std::move(filter);
    lookup.forbidden_means_missing = source.forbidden_means_missing;
    return http_page(lookup);
  }

  // A result available without a network request (cache hit, file:// source), or nullopt.
  std::optional<core::Result<ProjectPagePtr>> quick_project(const IndexSource& source,
                                                            const std::string& name) {
    if (source.kind == SourceKind::FindLinks) {
      if (is_file_url(source.url)) return load_project(source, name);
      return std::nullopt;
    }
    std::string url = source.project_url(name);
    PageFilter filter;
    filter.project = name;
    if (is_file_url(url)) return local_page(url, filter);
    if (!is_http_url(url)) return load_project(source, name);
    remember_credentials(url);
    PageLookup lookup;
    lookup.url = url;
    lookup.shown = redact_url(url);
    lookup.filter = std::move(filter);
    lookup.forbidden_means_missing = source.forbidden_means_missing;
    std::optional<detail::PageEntry> entry;
    return page_from_cache(lookup, entry);
  }

  std::shared_ptr<detail::Op<ProjectPagePtr>> project_op(const IndexSource& source,
                                                         const std::string& name, bool& created) {
    std::string key = fmt::format("{}{}\n{}\n{}", static_cast<int>(source.kind),
                                  source.forbidden_means_missing ? "f" : "", source.url, name);
    std::lock_guard<std::mutex> lock(memo_mu);
    auto& slot = projects[key];
    created = !slot;
    if (!slot) {
      IndexSource copy = source;
      slot = std::make_shared<detail::Op<ProjectPagePtr>>(
          [this, copy, name] { return load_project(copy, name); });
    }
    return slot;
  }

  // ---- index roots (which projects a source serves) -----------------------------------------

  // `file://`: the directories of the index root. nullptr when it is not a directory.
  static ProjectListPtr local_project_list(const std::string& path) {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return nullptr;
    auto list = std::make_shared<ProjectList>();
    std::string base = path.empty() || path.back() == '/' ? path : path + "/";
    while (const dirent* ent = ::readdir(dir)) {
      std::string_view n = ent->d_name;
      if (n == "." || n == ".." || !core::is_valid_name(n)) continue;
      struct stat st {};
      if (::stat((base + std::string(n)).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        list->names.insert(core::normalize_name(n));
    }
    ::closedir(dir);
    return list;
  }

  static std::string join_names(const ProjectList& list) {
    std::string text;
    for (const auto& n : list.names) {
      text += n;
      text += '\n';
    }
    return text;
  }

  static ProjectListPtr split_names(std::string_view text) {
    auto list = std::make_shared<ProjectList>();
    while (!text.empty()) {
      auto nl = text.find('\n');
      std::string_view n = text.substr(0, nl);
      if (!n.empty()) list->names.emplace(n);
      if (nl == std::string_view::npos) break;
      text.remove_prefix(nl + 1);
    }
    return list;
  }

  // The root listing of `source`, or nullptr when it has none that can be read (404, not an
  // index root, a network failure): the caller then asks per name. Kept in the cache like a
  // mutable page (kMutableMetadataMaxAge); --offline uses any cached copy. Only Cancelled is
  // an error.
  core::Result<ProjectListPtr> load_project_list(const IndexSource& source) {
    if (source.kind == SourceKind::FindLinks) return ProjectListPtr();
    const std::string url = source.url;
    if (is_file_url(url)) {
      auto path = file_url_to_path(url);
      if (!path) return ProjectListPtr();
      return local_project_list(*path);
    }
    if (!is_http_url(url)) return ProjectListPtr();
    remember_credentials(url);
    const std::string shown = redact_url(url);
    const std::string key = "project-list " + strip_userinfo(url);
    if (auto hit = cache.load_metadata(key)) {
      if (options.offline || (!options.refresh && now_seconds() - hit->stored_at < kMutableMetadataMaxAge)) {
        ++counters.page_hits;
        emit(ClientEvent::Type::CacheHit, RequestKind::Page, shown);
        return split_names(hit->text);
      }
    }
    if (options.offline) return ProjectListPtr();
    HttpRequest req;
    req.url = url;
    req.headers.push_back(fmt::format("Accept: {}", kSimpleAccept));
    req.max_body = std::min<std::uint64_t>(options.max_page_bytes, kMaxProjectListBytes);
    auto response = request(std::move(req), RequestKind::Page);
    if (!response) {
      if (response.error().code == ErrorCode::Cancelled) return std::unexpected(response.error());
      return ProjectListPtr();
    }
    const HttpResponse& r = *response;
    if (r.status < 200 || r.status >= 300 || r.error != TransportError::None) return ProjectListPtr();
    PageFormat format = page_format_for_content_type(r.content_type);
    if (format == PageFormat::Unknown) {
      auto first = r.body.find_first_not_of(" \t\r\n");
      format = (first != std::string::npos && r.body[first] == '{') ? PageFormat::Json : PageFormat::Html;
    }
    auto parsed = parse_project_list(r.body, format == PageFormat::Json, shown);
    if (!parsed || parsed->names.empty()) return ProjectListPtr();
    detail::MetadataEntry e;
    e.url = shown;
    e.stored_at = now_seconds();
    e.text = join_names(*parsed);
    cache.store_metadata(key, e);
    return std::make_shared<const ProjectList>(std::move(*parsed));
  }

  std::shared_ptr<detail::Op<ProjectListPtr>> project_list_op(const IndexSource& source, bool& created) {
    std::lock_guard<std::mutex> lock(memo_mu);
    auto& slot = project_lists[source.url];
    created = !slot;
    if (!slot) {
      IndexSource copy = source;
      slot = std::make_shared<detail::Op<ProjectListPtr>>([this, copy] { return load_project_list(copy); });
    }
    return slot;
  }

  // ---- metadata --------------------------------------------------------------------------------

  struct MetadataJob {
    std::string url;    // credential-free
    std::string shown;  // redacted
    std::string filename;
    std::string sha256;
    std::optional<std::uint64_t> size;  // PEP 700
    bool core_metadata = false;
    std::string core_metadata_sha256;
    std::optional<core::WheelFilename> wheel;
  };

  // METADATA is keyed by where it came from (the file's URL, credentials removed) together
  // with the sha256 the page claims: a page's hash claim alone never selects another index's
  // METADATA (issue 17).
  static std::string metadata_key(const DistFile& f) {
    std::string url = strip_userinfo(strip_fragment(f.url()));
    return f.sha256().empty() ? "url:" + url : "sha256-" + std::string(f.sha256()) + " " + url;
  }

  // A cached METADATA is used only when it names the wheel it is used for.
  static bool cached_metadata_fits(const std::string& text, const core::WheelFilename& wheel) {
    return check_metadata_matches(text, wheel, {}).has_value();
  }

  bool immutable_url(std::string_view url) const {
    return immutable_hosts.count(url_host(url)) > 0;
  }

  core::Result<std::string> load_metadata(const MetadataJob& job, const std::string& key) {
    if (!job.wheel) {
      return core::fail_at(
          ErrorCode::InvalidInput,
          fmt::format("'{}' is not a wheel: gpulock reads METADATA from wheels only", job.filename),
          job.shown);
    }
    if (is_file_url(job.url)) {
      auto path = file_url_to_path(job.url);
      if (!path) return std::unexpected(path.error());
      return read_wheel_metadata(*path, &*job.wheel, *path);
    }
    const bool immutable = !job.sha256.empty() || immutable_url(job.url);
    if (auto hit = cache.load_metadata(key); hit && cached_metadata_fits(hit->text, *job.wheel)) {
      if (immutable || options.offline ||
          (!options.refresh && now_seconds() - hit->stored_at < kMutableMetadataMaxAge)) {
        ++counters.metadata_hits;
        emit(ClientEvent::Type::CacheHit, RequestKind::Metadata, job.url);
        return std::move(hit->text);
      }
    }
    if (options.offline) {
      return std::unexpected(
          core::make_error(
              ErrorCode::Offline,
              fmt::format(
                  "the METADATA of {} is not in the cache, and --offline forbids fetching it",
                  job.filename),
              job.shown)
              .with_hint("run once without --offline to fill the cache"));
    }
    auto text = remote_metadata(job);
    if (!text) return text;
    if (auto ok = check_metadata_matches(*text, *job.wheel, job.shown); !ok)
      return std::unexpected(ok.error());
    detail::MetadataEntry entry;
    entry.url = job.shown;
    entry.stored_at = now_seconds();
    entry.text = *text;
    cache.store_metadata(key, entry);
    return text;
  }

  core::Result<std::string> remote_metadata(const MetadataJob& job) {
    if (job.core_metadata) {
      auto r = metadata_file(job);
      if (!r) return std::unexpected(r.error());
      if (*r) return std::move(**r);
    }
    std::string host = url_host(job.url);
    if (ranges_supported(host)) {
      auto r = range_metadata(job, host);
      if (!r) return std::unexpected(r.error());
      if (*r) return std::move(**r);
    }
    return download_metadata(job);
  }

  // PEP 658/714: <file url>.metadata. nullopt when the file turns out to be missing (404).
  core::Result<std::optional<std::string>> metadata_file(const MetadataJob& job) {
    std::string url = job.url + ".metadata";
    std::string shown = redact_url(url);
    HttpRequest req;
    req.url = url;
    req.max_body = kMaxMetadataBytes;
    auto response = request(std::move(req), RequestKind::Metadata);
    if (!response) return std::unexpected(response.error());
    HttpResponse& r = *response;
    if (r.error == TransportError::TooLarge) {
      // The server sent more than any METADATA file holds: an index fault, like an endless page.
      return core::fail_at(ErrorCode::IndexFormat,
                           "the .metadata file is over the 10 MB limit for METADATA", shown);
    }
    if (r.status == 404 || r.status == 410) {
      emit(ClientEvent::Type::Warning, RequestKind::Metadata, url, r.status, 0,
           "the index advertises a .metadata file that does not exist; reading the wheel instead");
      return std::optional<std::string>();
    }
    if (r.status < 200 || r.status >= 300) return std::unexpected(status_error(r.status, shown));
    if (!job.core_metadata_sha256.empty()) {
      std::string actual = sha256_hex(r.body);
      if (actual != job.core_metadata_sha256) {
        return core::fail_at(ErrorCode::HashMismatch,
                             fmt::format("hash mismatch: expected sha256:{}, got sha256:{}",
                                         job.core_metadata_sha256, actual),
                             shown);
      }
    }
    return std::optional<std::string>(std::move(r.body));
  }

  bool ranges_supported(const std::string& host) {
    {
      std::lock_guard<std::mutex> lock(hosts_mu);
      if (auto it = range_support.find(host); it != range_support.end()) return it->second;
    }
    auto stored = cache.load_range_support(host);
    std::lock_guard<std::mutex> lock(hosts_mu);
    auto [it, inserted] = range_support.emplace(host, stored.value_or(true));
    return it->second;
  }

  void set_ranges_supported(const std::string& host, bool supported) {
    bool changed = false;
    {
      std::lock_guard<std::mutex> lock(hosts_mu);
      auto [it, inserted] = range_support.emplace(host, supported);
      changed = inserted || it->second != supported;
      it->second = supported;
    }
    if (changed) cache.store_range_support(host, supported);
  }

  // "bytes 100-199/1234" -> {100, 1234}.
  static bool parse_content_range(std::string_view v, std::uint64_t& start, std::uint64_t& total) {
    if (!v.starts_with("bytes ")) return false;
    v.remove_prefix(6);
    auto dash = v.find('-');
    auto slash = v.find('/');
    if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash)
      return false;
    auto [p1, e1] = std::from_chars(v.data(), v.data() + dash, start);
    auto [p2, e2] = std::from_chars(v.data() + slash + 1, v.data() + v.size(), total);
    return e1 == std::errc{} && e2 == std::errc{} && p1 == v.data() + dash &&
           p2 == v.data() + v.size();
  }

  // METADATA by range reads; nullopt when the server does not do ranges (then remembered).
  core::Result<std::optional<std::string>> range_metadata(const MetadataJob& job,
                                                          const std::string& host) {
    HttpRequest first;
    first.url = job.url;
    first.identity_encoding = true;
    first.range = fmt::format("-{}", detail::kTailBytes);
    // A server that ignores Range sends the whole file: accept a small one, abort a big one.
    first.max_body = 4 * detail::kTailBytes;
    auto response = request(std::move(first), RequestKind::Range);
    if (!response) return std::unexpected(response.error());
    HttpResponse& r = *response;
    bool coded = !r.content_encoding.empty() && r.content_encoding != "identity";
    if (r.status == 206 && r.error == TransportError::None && !coded) {
      std::uint64_t start = 0, total = 0;
      if (!parse_content_range(r.content_range, start, total) || start + r.body.size() != total) {
        set_ranges_supported(host, false);
        return std::optional<std::string>();
      }
      set_ranges_supported(host, true);
      detail::RangeFetch fetch = [this, &job](std::uint64_t a,
                                              std::uint64_t b) -> core::Result<std::string> {
        HttpRequest req;
        req.url = job.url;
        req.identity_encoding = true;
        req.range = fmt::format("{}-{}", a, b);
        req.max_body = b - a + 1;
        auto resp = request(std::move(req), RequestKind::Range);
        if (!resp) return std::unexpected(resp.error());
        std::uint64_t got_start = 0, got_total = 0;
        if (resp->status != 206 || resp->error != TransportError::None ||
            !parse_content_range(resp->content_range, got_start, got_total) || got_start != a) {
          return core::fail_at(ErrorCode::Network,
                               fmt::format("range request for bytes {}-{} failed ({})", a, b,
                                           status_text(resp->status)),
                               job.shown);
        }
        return std::move(resp->body);
      };
      auto text = detail::metadata_via_ranges(total, start, std::move(r.body), fetch, &*job.wheel,
                                              job.shown);
      if (!text) return std::unexpected(text.error());
      ++counters.range_metadata;
      return std::optional<std::string>(std::move(*text));
    }
    if (r.status == 200 && r.error == TransportError::None && !coded) {
      // No range support, but the whole (small) wheel came back: use it.
      set_ranges_supported(host, false);
      emit(ClientEvent::Type::Warning, RequestKind::Range, job.url, 200, 0,
           fmt::format("range requests not supported by {}; downloading wheels whole", host));
      if (!job.sha256.empty()) {
        std::string actual = sha256_hex(r.body);
        if (actual != job.sha256) {
          return core::fail_at(
              ErrorCode::HashMismatch,
              fmt::format("hash mismatch: expected sha256:{}, got sha256:{}", job.sha256, actual),
              job.shown);
        }
      }
      auto text = detail::metadata_from_buffer(r.body, &*job.wheel, job.shown);
      if (!text) return std::unexpected(text.error());
      ++counters.downloaded_metadata;
      return std::optional<std::string>(std::move(*text));
    }
    if (r.status == 401 || r.status == 403 || r.status == 404 || r.status == 410) {
      return std::unexpected(status_error(r.status, job.shown));
    }
    set_ranges_supported(host, false);
    emit(ClientEvent::Type::Warning, RequestKind::Range, job.url, r.status, 0,
         fmt::format("range requests not supported by {}; downloading wheels whole", host));
    return std::optional<std::string>();
  }

  // The whole wheel, streamed to a temporary file and hashed as it arrives.
  core::Result<std::string> download_metadata(const MetadataJob& job) {
    std::string dir = cache.temp_dir();
    auto temp = detail::make_temp_file(dir.empty() ? std::string("/tmp") : dir, "wheel");
    if (!temp) return std::unexpected(temp.error());
    const int fd = temp->fd();
    const std::string& templ = temp->path();
    Sha256 hash;
    bool write_failed = false;
    HttpRequest req;
    req.url = job.url;
    // Bounded by the size the index declares, else by the download limit.
    req.max_body = job.size && *job.size > 0 ? *job.size : options.max_download_bytes;
    req.sink = [&](const char* data, std::size_t size) {
      hash.update(std::string_view(data, size));
      std::size_t written = 0;
      while (written < size) {
        ssize_t n = ::write(fd, data + written, size - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          write_failed = true;
          return false;
        }
        written += static_cast<std::size_t>(n);
      }
      return true;
    };
    auto reset = [&] {
      (void)hash.finish_hex();
      if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) write_failed = true;
    };
    auto response = request(std::move(req), RequestKind::Download, reset);
    if (!response) return std::unexpected(response.error());
    if (response->error == TransportError::TooLarge) {
      return core::fail_at(
          ErrorCode::IndexFormat,
          job.size && *job.size > 0
              ? fmt::format("the wheel is larger than the {} bytes the index declares", *job.size)
              : fmt::format("the wheel is larger than the {} download limit "
                            "(GPULOCK_MAX_DOWNLOAD_SIZE)",
                            format_byte_size(options.max_download_bytes)),
          job.shown);
    }
    if (write_failed || response->error == TransportError::Aborted) {
      return core::fail_at(ErrorCode::Io, "cannot write the downloaded wheel to a temporary file",
                           templ);
    }
    if (response->status < 200 || response->status >= 300) {
      return std::unexpected(status_error(response->status, job.shown));
    }
    std::string actual = hash.finish_hex();
    if (!job.sha256.empty() && actual != job.sha256) {
      return core::fail_at(
          ErrorCode::HashMismatch,
          fmt::format("hash mismatch: expected sha256:{}, got sha256:{}", job.sha256, actual),
          job.shown);
    }
    auto text = read_wheel_metadata(templ, &*job.wheel, job.shown);
    if (text) ++counters.downloaded_metadata;
    return text;
  }

  std::shared_ptr<detail::Op<std::string>> metadata_op(const DistFile& file, bool& created,
                                                       std::string& key) {
    key = metadata_key(file);
    std::lock_guard<std::mutex> lock(memo_mu);
    auto& slot = metadata[key];
    created = !slot;
    if (!slot) {
      MetadataJob job;
      job.url = strip_userinfo(strip_fragment(file.url()));
      job.shown = redact_url(job.url);
      job.filename = file.filename();
      job.sha256 = std::string(file.sha256());
      job.size = file.size();
      job.core_metadata = file.core_metadata();
      job.core_metadata_sha256 = std::string(file.core_metadata_sha256());
      job.wheel = file.wheel();
      if (!job.wheel && core::is_wheel_filename(file.filename())) {
        if (auto w = core::WheelFilename::parse(file.filename())) job.wheel = std::move(*w);
      }
      slot = std::make_shared<detail::Op<std::string>>(
          [this, job = std::move(job), key] { return load_metadata(job, key); });
    }
    return slot;
  }

  // ---- digests --------------------------------------------------------------------------------

  core::Result<FileDigest> load_digest(const std::string& url) {
    std::string shown = redact_url(url);
    if (is_file_url(url)) {
      auto path = file_url_to_path(url);
      if (!path) return std::unexpected(path.error());
      return sha256_file(*path);
    }
    std::string clean = strip_userinfo(url);
    std::string key = redact_url(clean);
    auto entry = cache.load_digest(key);
    if (entry && (options.offline || (!options.refresh && immutable_url(clean)))) {
      ++counters.digest_hits;
      emit(ClientEvent::Type::CacheHit, RequestKind::Digest, shown);
      return FileDigest{entry->sha256, entry->size};
    }
    if (options.offline) {
      return std::unexpected(core::make_error(
          ErrorCode::Offline,
          "the file's sha256 is not in the cache, and --offline forbids downloading it", shown));
    }
    Sha256 hash;
    HttpRequest req;
    req.url = url;
    req.sink = [&](const char* data, std::size_t size) {
      hash.update(std::string_view(data, size));
      return true;
    };
    if (entry && !options.refresh) {
      if (!entry->etag.empty()) req.headers.push_back("If-None-Match: " + entry->etag);
      if (!entry->last_modified.empty())
        req.headers.push_back("If-Modified-Since: " + entry->last_modified);
    }
    auto reset = [&] { (void)hash.finish_hex(); };
    auto response = request(std::move(req), RequestKind::Digest, reset);
    if (!response) return std::unexpected(response.error());
    if (response->status == 304 && entry) {
      ++counters.not_modified;
      entry->stored_at = now_seconds();
      cache.store_digest(*entry);
      return FileDigest{entry->sha256, entry->size};
    }
    if (response->status < 200 || response->status >= 300) {
      return std::unexpected(status_error(response->status, shown));
    }
    FileDigest d;
    d.size = hash.size();
    d.sha256 = hash.finish_hex();
    detail::DigestEntry e;
    e.url = key;
    e.stored_at = now_seconds();
    e.sha256 = d.sha256;
    e.size = d.size;
    e.etag = response->etag;
    e.last_modified = response->last_modified;
    cache.store_digest(e);
    return d;
  }
};

// ------------------------------------------------------------------------------------------------

IndexClient::IndexClient(ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
IndexClient::~IndexClient() = default;

core::Result<ProjectPagePtr> IndexClient::fetch_project(const IndexSource& source,
                                                        std::string_view name) {
  bool created = false;
  auto op = impl_->project_op(source, core::normalize_name(name), created);
  return op->get();
}

void IndexClient::prefetch_project(const IndexSource& source, std::string_view name) {
  bool created = false;
  std::string normalized = core::normalize_name(name);
  auto op = impl_->project_op(source, normalized, created);
  if (!created) return;
  // Cache hits and local files are answered right here: a warm run starts no thread.
  if (op->claim()) {
    if (auto quick = impl_->quick_project(source, normalized)) {
      op->finish(std::move(*quick));
      return;
    }
    Impl* impl = impl_.get();
    IndexSource copy = source;
    // Already claimed: run the network part on a pool thread.
    impl_->pool.submit(
        [impl, op, copy, normalized] { op->finish(impl->load_project(copy, normalized)); });
  }
}

core::Result<ProjectListPtr> IndexClient::fetch_project_list(const IndexSource& source) {
  bool created = false;
  return impl_->project_list_op(source, created)->get();
}

void IndexClient::prefetch_project_list(const IndexSource& source) {
  bool created = false;
  auto op = impl_->project_list_op(source, created);
  if (!created) return;
  impl_->pool.submit([op] { op->run_if_unclaimed(); });
}

core::Result<std::string> IndexClient::fetch_metadata(const DistFile& file) {
  bool created = false;
  std::string key;
  auto op = impl_->metadata_op(file, created, key);
  return op->get();
}

void IndexClient::prefetch_metadata(const DistFile& file) {
  bool created = false;
  std::string key;
  auto op = impl_->metadata_op(file, created, key);
  if (!created) return;
  if (is_file_url(file.url())) return;  // local wheels: read when asked
  std::optional<core::WheelFilename> wheel = file.wheel();
  if (!wheel && core::is_wheel_filename(file.filename())) {
    if (auto w = core::WheelFilename::parse(file.filename())) wheel = std::move(*w);
  }
  if (!wheel) return;  // fetch_metadata reports it
  auto hit = impl_->cache.load_metadata(key);
  if (hit && Impl::cached_metadata_fits(hit->text, *wheel)) {
    if (!file.sha256().empty() || impl_->immutable_url(file.url()) || impl_->options.offline) {
      if (op->claim()) {
        ++impl_->counters.metadata_hits;
        impl_->emit(ClientEvent::Type::CacheHit, RequestKind::Metadata,
                    strip_userinfo(strip_fragment(file.url())));
        op->finish(std::move(hit->text));
      }
      return;
    }
  }
  impl_->pool.submit([op] { op->run_if_unclaimed(); });
}

core::Result<FileDigest> IndexClient::fetch_file_digest(std::string_view url) {
  std::string u(strip_fragment(url));
  std::shared_ptr<detail::Op<FileDigest>> op;
  {
    std::lock_guard<std::mutex> lock(impl_->memo_mu);
    auto& slot = impl_->digests[u];
    if (!slot) {
      Impl* impl = impl_.get();
      slot = std::make_shared<detail::Op<FileDigest>>([impl, u] { return impl->load_digest(u); });
    }
    op = slot;
  }
  return op->get();
}

ClientStats IndexClient::stats() const {
  const auto& c = impl_->counters;
  ClientStats s;
  s.requests = c.requests;
  s.page_requests = c.page;
  s.metadata_requests = c.metadata;
  s.range_requests = c.range;
  s.download_requests = c.download;
  s.digest_requests = c.digest;
  s.retries = c.retries;
  s.not_modified = c.not_modified;
  s.page_cache_hits = c.page_hits;
  s.metadata_cache_hits = c.metadata_hits;
  s.digest_cache_hits = c.digest_hits;
  s.bytes_received = c.bytes;
  s.range_metadata = c.range_metadata;
  s.downloaded_metadata = c.downloaded_metadata;
  s.pages_parsed = c.pages_parsed;
  return s;
}

void IndexClient::cancel() {
  impl_->cancel_transfers_for_shutdown();
}

const ClientOptions& IndexClient::options() const noexcept {
  return impl_->options;
}

}  // namespace gpulock::index

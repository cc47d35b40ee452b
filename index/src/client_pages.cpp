// IndexClient's project pages: from the cache (fresh, or revalidated with ETag /
// Last-Modified, RFC 9111), over HTTP (PEP 691 JSON or PEP 503 HTML), from file:// Simple API
// directories and from find-links sources (a directory or one page holding every project).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/text.h"
#include "gpulock/index/parse.h"
#include "gpulock/index/url.h"
#include "gpulock/sys/huge_pages.h"

#include "client_impl.h"
#include "local_file.h"
#include "page_builder.h"
#include "page_stream.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::HttpResponse;
using detail::now_seconds;
using detail::strip_userinfo;
using detail::TransportError;

namespace {

// "Not on this index" answers without a max-age are kept this long.
constexpr std::int64_t kDefaultNotFoundMaxAge = 600;
// Files a filter must drop from one page before their memory is handed back (finish_page).
constexpr std::size_t kReturnMemoryFiles = 20'000;

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

// Removes credentials from file URLs so pages, caches and locks never hold a secret. A page's
// own `user:password@` is dropped, never learned: credentials come only from the URLs the user
// gave (and netrc), and with_credentials() adds them back only on their own origin.
void scrub_credentials(ProjectPage& page) {
  for (auto& f : page.files) {
    if (f.url().find('@') == std::string_view::npos) continue;
    f.set_url(strip_userinfo(f.url()));
  }
}

// A page fetched over http(s) may not make gpulock open local files (issue 17): a file://
// link on it, absolute or resolved from a relative one, is an error naming the page.
core::Status refuse_local_links(const ProjectPage& page, std::string_view shown) {
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

// What is left of `file` (at `path`), read into `buffer` a piece at a time and given to `take`,
// whose error ends the reading.
template <class Take>
core::Status read_pieces(detail::LocalFile& file, const std::string& path, std::span<char> buffer,
                         Take&& take) {
  while (true) {
    ssize_t n = ::read(file.fd(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return core::fail_at(ErrorCode::Io, fmt::format("cannot read: {}", std::strerror(errno)),
                           path);
    if (n == 0) return {};
    if (auto s = take(std::string_view(buffer.data(), static_cast<std::size_t>(n))); !s) return s;
  }
}

// A local page's bytes to its stream, a megabyte at a time.
core::Status stream_local_file(const std::string& path, detail::PageStream& stream) {
  detail::LocalFile file;
  if (auto s = file.open(path); !s) return s;
  std::string buffer(std::size_t{1} << 20, '\0');
  return read_pieces(file, path, buffer, [&](std::string_view piece) -> core::Status {
    stream.feed(piece);
    return {};
  });
}

}  // namespace

namespace detail {

core::Status read_local_file(const std::string& path, std::string& out, std::uint64_t max_bytes,
                             std::string_view too_large) {
  LocalFile file;
  if (auto s = file.open(path); !s) return s;
  out.clear();
  if (max_bytes == 0 || file.size() <= max_bytes)
    out.reserve(static_cast<std::size_t>(file.size()) + 64);
  char buffer[1 << 16];
  return read_pieces(file, path, buffer, [&](std::string_view piece) -> core::Status {
    out.append(piece);
    if (max_bytes != 0 && out.size() > max_bytes)
      return core::fail_at(ErrorCode::IndexFormat, std::string(too_large), path);
    return {};
  });
}

}  // namespace detail

// ---- IndexClient::Impl: project pages ------------------------------------------------------

ProjectPagePtr IndexClient::Impl::not_found_page(const PageLookup& lookup) {
  auto page = std::make_shared<ProjectPage>();
  page->found = false;
  page->name = lookup.filter.project;
  page->url = lookup.shown;
  return page;
}

// ClientOptions::keep_wheel, or null.
const detail::WheelFilter* IndexClient::Impl::wheel_filter() const {
  return options.keep_wheel ? &options.keep_wheel : nullptr;
}

// A page as this client returns it: filtered when the caller asked (the cache keeps it whole),
// unless it is a find-links page (`whole`), filtered per project later.
ProjectPagePtr IndexClient::Impl::finish_page(ProjectPage&& page, bool whole) const {
  const auto* filter = whole ? nullptr : wheel_filter();
  if (filter) {
    const std::size_t before = page.files.size();
    detail::filter_page(page, *filter);
    // A huge page's dropped files (a 100,000-file page: 30 MB of records) go back to the
    // system, rather than stay resident while what comes next takes fresh memory.
    if (before - page.files.size() >= kReturnMemoryFiles) sys::return_free_memory();
  }
  return std::make_shared<const ProjectPage>(std::move(page));
}

// A cache hit that needs no request, or nullopt. Offline: any entry, else an Offline error.
std::optional<core::Result<ProjectPagePtr>> IndexClient::Impl::page_from_cache(
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
    return std::unexpected(detail::offline_miss("", lookup.shown));
  }
  return std::nullopt;
}

namespace {

// A page's body as it arrives, decoded, on the thread that asked for it (the transport relays a
// sink's body: curl_transport.cpp), read by the stream for its format as it comes, so that a
// page is never held whole and its reading overlaps its transfer. The format comes from the
// Content-Type, or without one from the first byte that is not a space ('{' is JSON): only the
// spaces before it are held.
class PageSink {
 public:
  explicit PageSink(const PageFilter& filter, std::string_view fallback_url)
      : filter_(filter), fallback_url_(fallback_url) {}

  // HttpRequest::on_head: false (the transfer stops) for a Content-Type that is no page's;
  // page_from_network then says so.
  bool head(const HttpResponse& r) {
    reset();
    headed_ = true;
    base_ = strip_userinfo(r.effective_url.empty() ? fallback_url_ : r.effective_url);
    format_ = page_format_for_content_type(r.content_type);
    length_ = r.content_length;
    return format_ != PageFormat::Unknown || r.content_type.empty();
  }

  bool feed(const char* data, std::size_t n) {
    std::string_view bytes(data, n);
    if (stream_) {
      stream_->feed(bytes);
      return true;
    }
    held_.append(bytes);
    if (format_ != PageFormat::Unknown || held_.find_first_not_of(" \t\r\n") != std::string::npos) {
      start_stream();
    }
    return true;
  }

  // After the transfer `r`: the page read (an empty body, whose head the transport never
  // showed, is a page of nothing in the format `r` names).
  core::Result<ProjectPage> finish(const HttpResponse& r) {
    if (!headed_) head(r);
    if (!stream_) start_stream();
    return stream_->finish();
  }

  void reset() {
    stream_.reset();
    held_.clear();
    headed_ = false;
  }

 private:
  // The stream for the page's format, given what was held.
  void start_stream() {
    if (format_ == PageFormat::Unknown) {
      auto first = held_.find_first_not_of(" \t\r\n");
      format_ =
          first != std::string::npos && held_[first] == '{' ? PageFormat::Json : PageFormat::Html;
    }
    stream_ = format_ == PageFormat::Json ? detail::json_page_stream(base_, filter_)
                                          : detail::html_page_stream(base_, filter_);
    if (length_ != 0) stream_->expect(length_);
    stream_->feed(held_);
    std::string().swap(held_);
  }

  PageFilter filter_;
  std::string fallback_url_;
  std::string base_;
  PageFormat format_ = PageFormat::Unknown;
  std::uint64_t length_ = 0;
  std::string held_;
  std::unique_ptr<detail::PageStream> stream_;
  bool headed_ = false;  // head() saw this response
};

}  // namespace

core::Result<ProjectPagePtr> IndexClient::Impl::page_from_network(
    const PageLookup& lookup, std::optional<detail::PageEntry> entry) {
  HttpRequest req;
  req.url = lookup.url;
  req.headers.push_back(fmt::format("Accept: {}", kSimpleAccept));
  req.max_body = options.max_page_bytes;
  PageSink sink(lookup.filter, lookup.url);
  req.on_head = [&](const HttpResponse& head) { return sink.head(head); };
  req.sink = [&](const char* data, std::size_t n) { return sink.feed(data, n); };
  if (entry && entry->page.found) {
    if (!entry->etag.empty()) req.headers.push_back("If-None-Match: " + entry->etag);
    if (!entry->last_modified.empty())
      req.headers.push_back("If-Modified-Since: " + entry->last_modified);
  }
  auto response = request(std::move(req), RequestKind::Page, [&] { sink.reset(); });
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

  if (r.error == TransportError::Aborted ||
      (page_format_for_content_type(r.content_type) == PageFormat::Unknown &&
       !r.content_type.empty())) {
    return core::fail_at(ErrorCode::IndexFormat,
                         fmt::format("unexpected Content-Type {} (expected a PEP 691 JSON or "
                                     "PEP 503 HTML page)",
                                     core::quote_for_message(r.content_type)),
                         lookup.shown);
  }
  ++counters.pages_parsed;
  core::Result<ProjectPage> parsed = sink.finish(r);  // read as it arrived (PageSink)
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

core::Result<ProjectPagePtr> IndexClient::Impl::http_page(const PageLookup& lookup) {
  std::optional<detail::PageEntry> entry;
  if (auto hit = page_from_cache(lookup, entry)) return std::move(*hit);
  return page_from_network(lookup, std::move(entry));
}

// file:// Simple API: <dir>/index.json or <dir>/index.html, parsed once and cached against the
// file's mtime and size.
core::Result<ProjectPagePtr> IndexClient::Impl::local_page(const std::string& page_url,
                                                           const PageFilter& filter) {
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
  std::string file_url = path_to_file_url(path);
  auto stream = json ? detail::json_page_stream(file_url, filter)
                     : detail::html_page_stream(file_url, filter);
  stream->expect(static_cast<std::uint64_t>(st.st_size));
  if (auto read = stream_local_file(path, *stream); !read) return std::unexpected(read.error());
  ++counters.pages_parsed;
  auto parsed = stream->finish();
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

// Find-links: every distribution file of a directory or page, once per client.
core::Result<ProjectPagePtr> IndexClient::Impl::all_links(const IndexSource& source) {
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

core::Result<ProjectPagePtr> IndexClient::Impl::load_links(const IndexSource& source) {
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
    if (auto read = detail::read_local_file(*path, body); !read)
      return std::unexpected(read.error());
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

core::Result<ProjectPagePtr> IndexClient::Impl::list_directory(const std::string& path,
                                                               const std::string& url) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) {
    return core::fail_at(ErrorCode::Io,
                         fmt::format("cannot list the directory: {}", std::strerror(errno)), path);
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
  detail::FileClassifier::take_variants_files(*page);
  return ProjectPagePtr(page);
}

core::Result<ProjectPagePtr> IndexClient::Impl::load_project(const IndexSource& source,
                                                             const std::string& name) {
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
std::optional<core::Result<ProjectPagePtr>> IndexClient::Impl::quick_project(
    const IndexSource& source, const std::string& name) {
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

namespace {

std::string project_key(const IndexSource& source, const std::string& name) {
  return fmt::format("{}{}\n{}\n{}", static_cast<int>(source.kind),
                     source.forbidden_means_missing ? "f" : "", source.url, name);
}

}  // namespace

std::shared_ptr<detail::Op<ProjectPagePtr>> IndexClient::Impl::find_project_op(
    const IndexSource& source, const std::string& name) {
  std::string key = project_key(source, name);
  std::lock_guard<std::mutex> lock(memo_mu);
  auto it = projects.find(key);
  return it == projects.end() ? nullptr : it->second;
}

std::shared_ptr<detail::Op<ProjectPagePtr>> IndexClient::Impl::project_op(const IndexSource& source,
                                                                          const std::string& name,
                                                                          bool& created) {
  std::string key = project_key(source, name);
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

}  // namespace gpulock::index

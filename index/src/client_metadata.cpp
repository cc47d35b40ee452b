// IndexClient's wheel METADATA: from the cache, from a PEP 658/714 .metadata file, by HTTP
// range reads of the wheel's zip directory (remote_zip.h), or from the whole wheel downloaded
// to a temporary file; checked against the wheel it is for before it is kept.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "gpulock/index/hash.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"

#include "client_impl.h"
#include "remote_zip.h"
#include "temp_files.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::HttpResponse;
using detail::now_seconds;
using detail::status_text;
using detail::strip_userinfo;
using detail::TransportError;

namespace {

// METADATA is keyed by where it came from (the file's URL, credentials removed) together
// with the sha256 the page claims: a page's hash claim alone never selects another index's
// METADATA (issue 17).
std::string metadata_key(const DistFile& f) {
  std::string url = strip_userinfo(strip_fragment(f.url()));
  return f.sha256().empty() ? "url:" + url : "sha256-" + std::string(f.sha256()) + " " + url;
}

}  // namespace

// "bytes 100-199/1234" -> {100, 1234}.
bool detail::parse_content_range(std::string_view v, std::uint64_t& start, std::uint64_t& total) {
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

// ---- IndexClient::Impl: metadata -----------------------------------------------------------

// A cached METADATA is used only when it names the wheel it is used for.
bool IndexClient::Impl::cached_metadata_fits(const std::string& text,
                                             const core::WheelFilename& wheel) {
  return check_metadata_matches(text, wheel, {}).has_value();
}

bool IndexClient::Impl::immutable_url(std::string_view url) const {
  return immutable_hosts.count(url_host(url)) > 0;
}

core::Result<std::string> IndexClient::Impl::load_metadata(const MetadataJob& job,
                                                           const std::string& key) {
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
    if (cached_text_fresh(hit->stored_at, immutable)) {
      ++counters.metadata_hits;
      emit(ClientEvent::Type::CacheHit, RequestKind::Metadata, job.url);
      return std::move(hit->text);
    }
  }
  if (options.offline) {
    return std::unexpected(
        detail::offline_miss(fmt::format("the METADATA of {}", job.filename), job.shown));
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

core::Result<std::string> IndexClient::Impl::remote_metadata(const MetadataJob& job) {
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
core::Result<std::optional<std::string>> IndexClient::Impl::metadata_file(const MetadataJob& job) {
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

bool IndexClient::Impl::ranges_supported(const std::string& host) {
  {
    std::lock_guard<std::mutex> lock(hosts_mu);
    if (auto it = range_support.find(host); it != range_support.end()) return it->second;
  }
  auto stored = cache.load_range_support(host);
  std::lock_guard<std::mutex> lock(hosts_mu);
  auto [it, inserted] = range_support.emplace(host, stored.value_or(true));
  return it->second;
}

void IndexClient::Impl::set_ranges_supported(const std::string& host, bool supported) {
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(hosts_mu);
    auto [it, inserted] = range_support.emplace(host, supported);
    changed = inserted || it->second != supported;
    it->second = supported;
  }
  if (changed) cache.store_range_support(host, supported);
}

// METADATA by range reads; nullopt when the server does not do ranges (then remembered).
core::Result<std::optional<std::string>> IndexClient::Impl::range_metadata(
    const MetadataJob& job, const std::string& host) {
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
    if (!detail::parse_content_range(r.content_range, start, total) ||
        start + r.body.size() != total) {
      set_ranges_supported(host, false);
      return std::optional<std::string>();
    }
    set_ranges_supported(host, true);
    // Issue 44: the same tail (and the rest of a larger directory) gives the wheel's member
    // list, which resolve reads for every chosen wheel: no second tail read for it.
    std::uint64_t fetched = 0;
    members_along_metadata(job, total, start, r.body, r, fetched);
    // Both reads of the wheel together stop at kMaxRangeBytes.
    detail::RangeFetch fetch = [this, &job, &fetched](std::uint64_t a, std::uint64_t b) {
      fetched += b - a + 1;
      if (fetched > detail::kMaxRangeBytes) {
        return core::Result<std::string>(core::fail_at(
            ErrorCode::IndexFormat,
            fmt::format("reading METADATA would take more than {} MiB of range requests (the "
                        "limit); the wheel's central directory is too large or lies about its "
                        "offsets",
                        detail::kMaxRangeBytes >> 20),
            job.shown));
      }
      return fetch_range(job.url, job.shown, a, b);
    };
    auto text =
        detail::metadata_via_ranges(total, start, std::move(r.body), fetch, &*job.wheel, job.shown);
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
    members_of_whole(job, r.body, {}, r.body.size(), r.etag, r.last_modified);
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

// Bytes [a, b] of `url` by one range request: a 206 starting at `a`, else a Network error. With
// `etag`, a response with another ETag is one too (the file changed between two requests).
core::Result<std::string> IndexClient::Impl::fetch_range(const std::string& url,
                                                         const std::string& shown, std::uint64_t a,
                                                         std::uint64_t b, std::string_view etag) {
  HttpRequest req;
  req.url = url;
  req.identity_encoding = true;
  req.range = fmt::format("{}-{}", a, b);
  req.max_body = b - a + 1;
  auto resp = request(std::move(req), RequestKind::Range);
  if (!resp) return std::unexpected(resp.error());
  std::uint64_t got_start = 0, got_total = 0;
  if (resp->status != 206 || resp->error != TransportError::None ||
      !detail::parse_content_range(resp->content_range, got_start, got_total) || got_start != a) {
    return core::fail_at(
        ErrorCode::Network,
        fmt::format("range request for bytes {}-{} failed ({})", a, b, status_text(resp->status)),
        shown);
  }
  if (!etag.empty() && !resp->etag.empty() && resp->etag != etag) {
    return core::fail_at(ErrorCode::Network,
                         "the wheel changed between two range requests (its ETag differs)", shown);
  }
  return std::move(resp->body);
}

// The whole wheel, streamed to a temporary file and hashed as it arrives.
core::Result<IndexClient::Impl::WheelDownload> IndexClient::Impl::download_wheel(
    const std::string& url, const std::string& shown, std::optional<std::uint64_t> size,
    const std::string& sha256) {
  std::string dir = cache.temp_dir();
  auto temp = detail::make_temp_file(dir.empty() ? std::string("/tmp") : dir, "wheel");
  if (!temp) return std::unexpected(temp.error());
  const int fd = temp->fd();
  Sha256 hash;
  bool write_failed = false;
  HttpRequest req;
  req.url = url;
  // Bounded by the size the index declares, else by the download limit.
  req.max_body = size && *size > 0 ? *size : options.max_download_bytes;
  req.sink = [&](const char* data, std::size_t n) {
    hash.update(std::string_view(data, n));
    std::size_t written = 0;
    while (written < n) {
      ssize_t w = ::write(fd, data + written, n - written);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        write_failed = true;
        return false;
      }
      written += static_cast<std::size_t>(w);
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
        size && *size > 0
            ? fmt::format("the wheel is larger than the {} bytes the index declares", *size)
            : fmt::format("the wheel is larger than the {} download limit "
                          "(GPULOCK_MAX_DOWNLOAD_SIZE)",
                          format_byte_size(options.max_download_bytes)),
        shown);
  }
  if (write_failed || response->error == TransportError::Aborted) {
    return core::fail_at(ErrorCode::Io, "cannot write the downloaded wheel to a temporary file",
                         temp->path());
  }
  if (response->status < 200 || response->status >= 300) {
    return std::unexpected(status_error(response->status, shown));
  }
  WheelDownload out{std::move(*temp), {}, response->etag, response->last_modified};
  out.digest.size = hash.size();
  out.digest.sha256 = hash.finish_hex();
  if (!sha256.empty() && out.digest.sha256 != sha256) {
    return core::fail_at(
        ErrorCode::HashMismatch,
        fmt::format("hash mismatch: expected sha256:{}, got sha256:{}", sha256, out.digest.sha256),
        shown);
  }
  return out;
}

core::Result<std::string> IndexClient::Impl::download_metadata(const MetadataJob& job) {
  auto wheel = download_wheel(job.url, job.shown, job.size, job.sha256);
  if (!wheel) return std::unexpected(wheel.error());
  auto text = read_wheel_metadata(wheel->file.path(), &*job.wheel, job.shown);
  if (!text) return text;
  ++counters.downloaded_metadata;
  // Issue 44: the same download gives the member list (no second download for it).
  members_of_whole(job, {}, wheel->file.path(), wheel->digest.size, wheel->etag,
                   wheel->last_modified);
  return text;
}

bool IndexClient::Impl::metadata_done(const DistFile& file) {
  const std::string key = metadata_key(file);
  std::lock_guard<std::mutex> lock(memo_mu);
  auto it = metadata.find(key);
  return it != metadata.end() && it->second && it->second->done();
}

std::shared_ptr<detail::Op<std::string>> IndexClient::Impl::metadata_op(const DistFile& file,
                                                                        bool& created,
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

}  // namespace gpulock::index

// IndexClient's file digests: a file's sha256 and size, hashed as it downloads (never stored),
// cached with its validators and revalidated unless its host is immutable.
#include <string>

#include <fmt/format.h>

#include "gpulock/index/hash.h"
#include "gpulock/index/url.h"

#include "client_impl.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::now_seconds;
using detail::strip_userinfo;

core::Result<FileDigest> IndexClient::Impl::load_digest(const std::string& url) {
  std::string shown = redact_url(url);
  if (is_file_url(url)) {
    auto path = file_url_to_path(url);
    if (!path) return std::unexpected(path.error());
    return sha256_file(*path, options.max_download_bytes,
                       fmt::format("the file is larger than {} (GPULOCK_MAX_DOWNLOAD_SIZE)",
                                   format_byte_size(options.max_download_bytes)));
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

}  // namespace gpulock::index

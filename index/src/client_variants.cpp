// IndexClient's PEP 825 variant metadata (`{name}-{version}-variants.json`): small JSON files a
// page lists beside variant wheels. Fetched once per run, bounded, checked against the page's
// sha256 when it gives one, and cached like METADATA (PEP 825: "SHOULD NOT be considered
// immutable", so without a hash it is revalidated after kMutableMetadataMaxAge).

#include <mutex>
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
using detail::TransportError;

namespace {

// Variant metadata lists a few labels with tens of properties each: kilobytes. 1 MiB bounds a
// hostile or broken index.
constexpr std::uint64_t kMaxVariantsJsonBytes = 1024 * 1024;

std::string too_large_message() {
  return fmt::format("the variant metadata file is over the {} limit",
                     format_byte_size(kMaxVariantsJsonBytes));
}

}  // namespace

core::Result<std::string> IndexClient::Impl::load_variants_json(const VariantsJob& job,
                                                                const std::string& key) {
  std::string text;
  if (is_file_url(job.url)) {
    auto path = file_url_to_path(job.url);
    if (!path) return std::unexpected(path.error());
    if (auto read =
            detail::read_local_file(*path, text, kMaxVariantsJsonBytes, too_large_message());
        !read) {
      return std::unexpected(read.error());
    }
  } else {
    if (auto hit = cache.load_metadata(key)) {
      if (cached_text_fresh(hit->stored_at, !job.sha256.empty())) {
        ++counters.metadata_hits;
        emit(ClientEvent::Type::CacheHit, RequestKind::Metadata, job.url);
        return std::move(hit->text);
      }
    }
    if (options.offline) {
      return std::unexpected(detail::offline_miss("the variant metadata", job.shown));
    }
    HttpRequest req;
    req.url = job.url;
    req.max_body = kMaxVariantsJsonBytes;
    auto response = request(std::move(req), RequestKind::Metadata);
    if (!response) return std::unexpected(response.error());
    if (response->error == TransportError::TooLarge)
      return core::fail_at(ErrorCode::IndexFormat, too_large_message(), job.shown);
    if (response->status < 200 || response->status >= 300)
      return std::unexpected(status_error(response->status, job.shown));
    text = std::move(response->body);
  }
  if (!job.sha256.empty()) {
    std::string actual = sha256_hex(text);
    if (actual != job.sha256) {
      return core::fail_at(
          ErrorCode::HashMismatch,
          fmt::format("hash mismatch: expected sha256:{}, got sha256:{}", job.sha256, actual),
          job.shown);
    }
  }
  if (!is_file_url(job.url)) {
    detail::MetadataEntry entry;
    entry.url = job.shown;
    entry.stored_at = now_seconds();
    entry.text = text;
    cache.store_metadata(key, entry);
  }
  return text;
}

core::Result<std::string> IndexClient::fetch_variants_json(const DistFile& file) {
  Impl::VariantsJob job;
  job.url = strip_userinfo(strip_fragment(file.url()));
  job.shown = redact_url(job.url);
  job.sha256 = file.sha256();
  // Keyed apart from METADATA, by URL and the page's hash claim (as metadata_key).
  std::string key = "variants " + job.sha256 + " " + job.url;
  std::shared_ptr<detail::Op<std::string>> op;
  {
    std::lock_guard<std::mutex> lock(impl_->memo_mu);
    auto& slot = impl_->metadata[key];
    if (!slot) {
      slot = std::make_shared<detail::Op<std::string>>(
          [impl = impl_.get(), job, key] { return impl->load_variants_json(job, key); });
    }
    op = slot;
  }
  return op->get();
}

}  // namespace gpulock::index

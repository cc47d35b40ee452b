// IndexClient's wheel member lists (issue 44 item 1): the zip's central directory by HTTP range
// reads (the tail, sized from the file's size, then at most one more range for a larger
// directory: zip_directory.h), else the whole wheel (a server that ignores Range); local and
// file:// wheels read in place. Cached by the wheel's sha256 (with its URL, as METADATA: a page's
// hash claim alone never selects a list another index served), else by URL and size, validated
// by ETag; a warm or --offline run needs no network for a cached list.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "gpulock/index/hash.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel_members.h"

#include "client_impl.h"
#include "zip_directory.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::HttpResponse;
using detail::MembersEntry;
using detail::now_seconds;
using detail::strip_userinfo;
using detail::TransportError;

namespace {

bool lower_hex_64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

core::Result<IndexClient::Impl::MembersJob> IndexClient::Impl::members_job(const WheelRef& wheel) {
  MembersJob job;
  job.url = std::string(strip_fragment(wheel.url));
  job.clean = strip_userinfo(job.url);
  job.shown = redact_url(job.url);
  job.size = wheel.size;
  job.sha256 = wheel.sha256;
  std::transform(job.sha256.begin(), job.sha256.end(), job.sha256.begin(), [](char c) {
    return c >= 'A' && c <= 'F' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (!job.sha256.empty() && !lower_hex_64(job.sha256)) {
    return core::fail_at(ErrorCode::InvalidInput,
                         fmt::format("'{}' is not a sha256 digest (64 hex digits)", wheel.sha256),
                         job.shown);
  }
  if (is_file_url(job.url)) {
    auto path = file_url_to_path(job.url);
    if (!path) return std::unexpected(path.error());
    job.path = *path;
  } else if (job.url.starts_with('/')) {
    job.path = job.url;
  } else if (!is_http_url(job.url)) {
    return core::fail_at(ErrorCode::InvalidInput,
                         "a wheel's file list is read from http(s)://, file:// or a local path",
                         job.shown);
  }
  // The cache and memo key (client_impl.h: MembersJob::key).
  if (!job.path.empty()) {
    job.key = "file:" + job.path;
  } else if (!job.sha256.empty()) {
    job.key = "sha256-" + job.sha256 + " " + job.clean;
  } else {
    job.key = fmt::format("url:{} size:{}", job.clean, job.size ? std::to_string(*job.size) : "-");
  }
  return job;
}

// A cached list still valid for this run; `stale` keeps one that needs revalidation (ETag).
std::optional<WheelMembers> IndexClient::Impl::cached_members(const MembersJob& job,
                                                              const std::string& key,
                                                              std::optional<MembersEntry>& stale) {
  auto hit = cache.load_members(key);
  if (!hit || (job.size && hit->size != *job.size)) return std::nullopt;
  if (cached_text_fresh(hit->stored_at, !job.sha256.empty() || immutable_url(job.clean))) {
    ++counters.members_hits;
    emit(ClientEvent::Type::CacheHit, RequestKind::Range, job.url);
    return std::move(hit->members);
  }
  stale = std::move(hit);
  return std::nullopt;
}

core::Result<WheelMembers> IndexClient::Impl::load_members(const MembersJob& job,
                                                           const std::string& key) {
  if (!job.path.empty()) return read_wheel_members(job.path, job.shown);
  std::optional<MembersEntry> stale;
  if (auto hit = cached_members(job, key, stale)) return std::move(*hit);
  if (options.offline) {
    return std::unexpected(detail::offline_miss("the wheel's file list", job.shown));
  }
  std::optional<MembersEntry> entry;
  const std::string host = url_host(job.clean);
  if (ranges_supported(host)) {
    auto r = range_members(job, host, stale ? &*stale : nullptr);
    if (!r) return std::unexpected(r.error());
    entry = std::move(*r);
  }
  if (!entry) {
    auto whole = download_members(job);
    if (!whole) return std::unexpected(whole.error());
    entry = std::move(*whole);
  }
  entry->url = job.shown;
  entry->stored_at = now_seconds();
  cache.store_members(key, *entry);
  return std::move(entry->members);
}

// The list by range reads; nullopt when the server does not do ranges (then remembered).
core::Result<std::optional<MembersEntry>> IndexClient::Impl::range_members(
    const MembersJob& job, const std::string& host, const MembersEntry* stale) {
  const std::uint64_t tail = detail::member_tail_bytes(job.size);
  HttpRequest first;
  first.url = job.url;
  first.identity_encoding = true;
  first.range = fmt::format("-{}", tail);
  // A server that ignores Range sends the whole file: accept a small one, abort a big one.
  first.max_body = std::max<std::uint64_t>(4 * detail::kTailBytes, tail);
  if (stale && !stale->etag.empty()) first.headers.push_back("If-None-Match: " + stale->etag);
  auto response = request(std::move(first), RequestKind::Range);
  if (!response) return std::unexpected(response.error());
  HttpResponse& r = *response;
  const bool coded = !r.content_encoding.empty() && r.content_encoding != "identity";
  if (r.status == 304 && stale) {
    ++counters.not_modified;
    return std::optional<MembersEntry>(*stale);
  }
  if (r.status == 206 && r.error == TransportError::None && !coded) {
    auto entry = members_from_tail(job, r);
    if (!entry) return std::unexpected(entry.error());
    if (entry->size == 0) {  // not a usable 206
      set_ranges_supported(host, false);
      return std::optional<MembersEntry>();
    }
    set_ranges_supported(host, true);
    ++counters.range_members;
    return std::optional<MembersEntry>(std::move(*entry));
  }
  if (r.status == 401 || r.status == 403 || r.status == 404 || r.status == 410) {
    return std::unexpected(status_error(r.status, job.shown));
  }
  set_ranges_supported(host, false);
  emit(ClientEvent::Type::Warning, RequestKind::Range, job.url, r.status, 0,
       fmt::format("range requests not supported by {}; downloading wheels whole", host));
  if (r.status != 200 || r.error != TransportError::None || coded) {
    return std::optional<MembersEntry>();
  }
  // No range support, but the whole (small) wheel came back: use it.
  if (job.size && r.body.size() != *job.size) {
    return core::fail_at(ErrorCode::IndexFormat,
                         fmt::format("the wheel is {} bytes, not the {} its index declares",
                                     r.body.size(), *job.size),
                         job.shown);
  }
  if (!job.sha256.empty()) {
    if (std::string actual = sha256_hex(r.body); actual != job.sha256) {
      return core::fail_at(
          ErrorCode::HashMismatch,
          fmt::format("hash mismatch: expected sha256:{}, got sha256:{}", job.sha256, actual),
          job.shown);
    }
  }
  auto members = detail::members_from_buffer(r.body, job.shown);
  if (!members) return std::unexpected(members.error());
  ++counters.downloaded_members;
  MembersEntry e;
  e.size = r.body.size();
  e.etag = r.etag;
  e.last_modified = r.last_modified;
  e.members = make_wheel_members(std::move(*members));
  return std::optional<MembersEntry>(std::move(e));
}

// The 206 answer to the tail request, then at most one more range. An entry of size 0: the
// answer was no usable range (a Content-Range that does not end the file).
core::Result<MembersEntry> IndexClient::Impl::members_from_tail(const MembersJob& job,
                                                                HttpResponse& tail) {
  std::uint64_t start = 0, total = 0;
  if (!detail::parse_content_range(tail.content_range, start, total) ||
      start + tail.body.size() != total || total == 0) {
    return MembersEntry{};
  }
  if (job.size && total != *job.size) {
    return core::fail_at(
        ErrorCode::IndexFormat,
        fmt::format("the wheel is {} bytes, not the {} its index declares", total, *job.size),
        job.shown);
  }
  const std::string etag = tail.etag;
  detail::RangeFetch fetch = [this, &job, &etag](std::uint64_t a, std::uint64_t b) {
    return fetch_range(job.url, job.shown, a, b, etag);
  };
  auto members = detail::members_via_ranges(total, std::move(tail.body), fetch, job.shown);
  if (!members) return std::unexpected(members.error());
  MembersEntry e;
  e.size = total;
  e.etag = etag;
  e.last_modified = tail.last_modified;
  e.members = make_wheel_members(std::move(*members));
  return e;
}

// The whole wheel streamed to a temporary file (hashed, bounded), then read in place.
core::Result<MembersEntry> IndexClient::Impl::download_members(const MembersJob& job) {
  auto wheel = download_wheel(job.url, job.shown, job.size, job.sha256);
  if (!wheel) return std::unexpected(wheel.error());
  auto members = read_wheel_members(wheel->file.path(), job.shown);
  if (!members) return std::unexpected(members.error());
  ++counters.downloaded_members;
  MembersEntry e;
  e.size = wheel->digest.size;
  e.etag = std::move(wheel->etag);
  e.last_modified = std::move(wheel->last_modified);
  e.members = std::move(*members);
  return e;
}

std::shared_ptr<detail::Op<WheelMembers>> IndexClient::Impl::members_op(const MembersJob& job,
                                                                        const std::string& key,
                                                                        bool& created) {
  std::lock_guard<std::mutex> lock(memo_mu);
  auto& slot = member_lists[key];
  created = !slot;
  if (!slot) {
    slot = std::make_shared<detail::Op<WheelMembers>>(
        [this, job, key] { return load_members(job, key); });
  }
  return slot;
}

void IndexClient::Impl::remember_members(const MembersJob& job, MembersEntry entry) {
  if (!job.path.empty()) return;  // a local wheel is read in place, never cached
  entry.url = job.shown;
  entry.stored_at = now_seconds();
  cache.store_members(job.key, entry);
  std::lock_guard<std::mutex> lock(memo_mu);
  auto& slot = member_lists[job.key];
  if (slot) return;  // read (or being read) already
  slot = std::make_shared<detail::Op<WheelMembers>>(
      [members = std::move(entry.members)]() -> core::Result<WheelMembers> { return members; });
}

void IndexClient::Impl::members_along_metadata(const MetadataJob& job, std::uint64_t total,
                                               std::uint64_t& window_start, std::string& window,
                                               const HttpResponse& tail, std::uint64_t& fetched) {
  if (window_start + window.size() != total || (job.size && *job.size != total)) return;
  auto mj = members_job(WheelRef{job.url, job.size, job.sha256});
  if (!mj) return;
  {
    std::lock_guard<std::mutex> lock(memo_mu);
    if (member_lists.contains(mj->key)) return;
  }
  std::map<std::uint64_t, std::string> before;  // the ranges read before the window
  detail::RangeFetch fetch = [this, &job, &tail, &before](std::uint64_t a, std::uint64_t b) {
    auto bytes = fetch_range(job.url, job.shown, a, b, tail.etag);
    if (bytes) before[a] = *bytes;
    return bytes;
  };
  auto members = detail::members_via_ranges(total, window, fetch, job.shown, &fetched);
  if (!members) return;
  // The ranges that end where the window begins, joined to it.
  while (!before.empty()) {
    auto it = std::find_if(before.begin(), before.end(), [&](const auto& piece) {
      return piece.first + piece.second.size() == window_start;
    });
    if (it == before.end()) break;
    window_start = it->first;
    window.insert(0, it->second);
    before.erase(it);
  }
  MembersEntry entry;
  entry.size = total;
  entry.etag = tail.etag;
  entry.last_modified = tail.last_modified;
  entry.members = make_wheel_members(std::move(*members));
  ++counters.range_members;
  remember_members(*mj, std::move(entry));
}

void IndexClient::Impl::members_of_whole(const MetadataJob& job, std::string_view data,
                                         const std::string& path, std::uint64_t size,
                                         const std::string& etag,
                                         const std::string& last_modified) {
  auto mj = members_job(WheelRef{job.url, job.size, job.sha256});
  if (!mj || (job.size && *job.size != size)) return;
  {
    std::lock_guard<std::mutex> lock(memo_mu);
    if (member_lists.contains(mj->key)) return;
  }
  MembersEntry entry;
  if (path.empty()) {
    auto members = detail::members_from_buffer(data, job.shown);
    if (!members) return;
    entry.members = make_wheel_members(std::move(*members));
  } else {
    auto members = read_wheel_members(path, job.shown);
    if (!members) return;
    entry.members = std::move(*members);
  }
  entry.size = size;
  entry.etag = etag;
  entry.last_modified = last_modified;
  ++counters.downloaded_members;
  remember_members(*mj, std::move(entry));
}

// ---- the public API
// ------------------------------------------------------------------------------

core::Result<WheelMembers> IndexClient::wheel_members(const WheelRef& wheel) {
  auto job = Impl::members_job(wheel);
  if (!job) return std::unexpected(job.error());
  bool created = false;
  return impl_->await(impl_->members_op(*job, job->key, created));
}

// The list's op, started if this is its first request: a cache hit or a local wheel answered
// on this thread, else a read on the pool (a warm run starts no thread).
std::shared_ptr<detail::Op<WheelMembers>> IndexClient::Impl::start_members(MembersJob job) {
  const std::string key = job.key;
  bool created = false;
  auto op = members_op(job, key, created);
  if (!created || !op->claim()) return op;
  std::optional<detail::MembersEntry> stale;
  if (!job.path.empty()) {
    op->finish(read_wheel_members(job.path, job.shown));
  } else if (auto hit = cached_members(job, key, stale)) {
    op->finish(std::move(*hit));
  } else if (!pool.submit(
                 [this, op, job = std::move(job), key] { op->finish(load_members(job, key)); })) {
    op->run_claimed();
  }
  return op;
}

void IndexClient::prefetch_wheel_members(const WheelRef& wheel) {
  auto job = Impl::members_job(wheel);
  // A local wheel is read when asked (a prefetch never blocks), an invalid one reported then.
  if (!job || !job->path.empty()) return;
  (void)impl_->start_members(std::move(*job));
}

std::vector<core::Result<WheelMembers>> IndexClient::wheel_members(
    std::span<const WheelRef> wheels) {
  std::vector<core::Result<WheelMembers>> out;
  out.reserve(wheels.size());
  std::vector<std::shared_ptr<detail::Op<WheelMembers>>> ops(wheels.size());
  std::vector<std::optional<core::Error>> invalid(wheels.size());
  // Every list not in the cache starts on the pool at once (max_parallel transfers in flight).
  for (std::size_t i = 0; i < wheels.size(); ++i) {
    auto job = Impl::members_job(wheels[i]);
    if (!job) {
      invalid[i] = job.error();
      continue;
    }
    ops[i] = impl_->start_members(std::move(*job));
  }
  for (std::size_t i = 0; i < wheels.size(); ++i) {
    if (invalid[i]) {
      out.emplace_back(std::unexpected(std::move(*invalid[i])));
    } else {
      out.push_back(impl_->await(ops[i]));
    }
  }
  return out;
}

void IndexClient::remember_members(const WheelRef& wheel, const WheelMembers& members) {
  auto job = Impl::members_job(wheel);
  if (!job || job->sha256.empty() || !wheel.size) return;
  MembersEntry entry;
  entry.size = *wheel.size;
  entry.members = members;
  impl_->remember_members(*job, std::move(entry));
}

}  // namespace gpulock::index

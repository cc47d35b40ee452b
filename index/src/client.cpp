// IndexClient: construction, events and counters, and the public API, which memoizes each
// operation (task_pool.h's Op) and runs prefetches on the pool. What is where: client_impl.h.
#include "gpulock/index/client.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "gpulock/core/name.h"
#include "gpulock/index/url.h"
#include "gpulock/sys/env.h"

#include "client_impl.h"
#include "client_limits.h"
#include "interrupt_registry.h"

namespace gpulock::index {

using detail::strip_userinfo;

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

// ---- IndexClient::Impl: construction, events and counters ------------------------------------

IndexClient::Impl::Impl(ClientOptions o)
    : options(std::move(o)),
      cache(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir, !options.no_cache),
      pool(std::max(1u, options.max_parallel), [this] { note_progress(); }) {
  immutable_hosts = {"files.pythonhosted.org", "download.pytorch.org", "download-r2.pytorch.org",
                     "pypi.nvidia.com"};
  for (const auto& h : options.immutable_hosts)
    immutable_hosts.insert(h);
  if (options.ca_file.empty()) options.ca_file = env("SSL_CERT_FILE");
  if (options.ca_path.empty()) options.ca_path = env("SSL_CERT_DIR");
  detail::register_client(this, [this] { cancel_transfers_for_shutdown(); });
}

IndexClient::Impl::~Impl() {
  detail::unregister_client(this);
  cancel_transfers_for_shutdown();
  pool.stop();
}

void IndexClient::Impl::note_progress() {
  {
    std::lock_guard<std::mutex> lock(progress_mu);
    ++progress;
  }
  progress_cv.notify_all();
}

std::function<void()> IndexClient::Impl::hook_for_this_thread() {
  std::lock_guard<std::mutex> lock(progress_mu);
  auto it = wait_hooks.find(std::this_thread::get_id());
  return it == wait_hooks.end() ? std::function<void()>() : it->second;
}

void IndexClient::Impl::wait_progress(std::uint64_t seen) {
  std::unique_lock<std::mutex> lock(progress_mu);
  // Bounded: a task that ends without a pool thread (a prefetch dropped at shutdown) is still
  // noticed.
  progress_cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return progress != seen; });
}

void IndexClient::Impl::emit(ClientEvent::Type type, RequestKind kind, std::string_view url,
                             long status, std::uint64_t bytes, std::string message) const {
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

void IndexClient::Impl::count_request(RequestKind kind) {
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

// ------------------------------------------------------------------------------------------------

IndexClient::IndexClient(ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
IndexClient::~IndexClient() = default;

core::Result<ProjectPagePtr> IndexClient::fetch_project(const IndexSource& source,
                                                        std::string_view name) {
  bool created = false;
  auto op = impl_->project_op(source, core::normalize_name(name), created);
  return impl_->await(op);
}

bool IndexClient::project_done(const IndexSource& source, std::string_view name) {
  auto op = impl_->find_project_op(source, core::normalize_name(name));
  return op && op->done();
}

bool IndexClient::project_list_done(const IndexSource& source) {
  std::lock_guard<std::mutex> lock(impl_->memo_mu);
  auto it = impl_->project_lists.find(source.url);
  return it != impl_->project_lists.end() && it->second && it->second->done();
}

std::function<void()> IndexClient::set_wait_hook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(impl_->progress_mu);
  auto& hooks = impl_->wait_hooks;
  std::function<void()> previous;
  auto it = hooks.find(std::this_thread::get_id());
  if (it != hooks.end()) {
    previous = std::move(it->second);
    hooks.erase(it);
  }
  if (hook) hooks.emplace(std::this_thread::get_id(), std::move(hook));
  return previous;
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
  return impl_->await(impl_->project_list_op(source, created));
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
  return impl_->await(op);
}

bool IndexClient::metadata_done(const DistFile& file) {
  return impl_->metadata_done(file);
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
  s.members_cache_hits = c.members_hits;
  s.range_members = c.range_members;
  s.downloaded_members = c.downloaded_members;
  return s;
}

void IndexClient::cancel() {
  impl_->cancel_transfers_for_shutdown();
}

const ClientOptions& IndexClient::options() const noexcept {
  return impl_->options;
}

}  // namespace gpulock::index

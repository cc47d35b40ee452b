#pragma once
// IndexClient's state (IndexClient::Impl) and the helpers its parts share; inside the index
// library only. The member functions are defined by idea:
//   client.cpp               construction, events and counters, the public IndexClient API
//   client_http.cpp          requests: the transport, retries, deadlines, https->http redirects,
//                            credentials and their origins, HTTP status errors
//   client_pages.cpp         project pages: the cache (RFC 9111), HTTP, file:// indexes and
//                            find-links sources
//   client_project_list.cpp  index roots: which projects a source serves
//   client_metadata.cpp      wheel METADATA: PEP 658/714 files, range reads, whole downloads
//   client_members.cpp       a wheel's member list: its zip's tail by range reads, the cache
//   client_digest.cpp        a file's sha256 and size (FileDigest)
//   client_download.cpp      whole files into a partial file, resumed by Range (a mirror)
//   client_limits.cpp        the environment variables behind ClientOptions' limits

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "gpulock/core/error.h"
#include "gpulock/core/filename.h"
#include "gpulock/index/client.h"
#include "gpulock/index/parse.h"

#include "cache.h"
#include "task_pool.h"
#include "temp_files.h"
#include "transport.h"

namespace gpulock::index {

namespace detail {

inline std::int64_t now_seconds() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

// METADATA keyed by URL on hosts not known to be immutable is reused for this long.
inline constexpr std::int64_t kMutableMetadataMaxAge = 600;

// "https://user:pw@host/x" -> ("https://host/x", "user:pw"); URLs without userinfo unchanged.
std::string strip_userinfo(std::string_view url, std::string* userinfo = nullptr);

// "HTTP 404 Not Found" (the reason phrase when the status has a common one).
std::string status_text(long status);

// The Offline error of a cache miss under --offline: "SUBJECT is not in the cache, and --offline
// forbids fetching it" ("not in the cache, ..." without a subject), naming `shown`, with the
// hint to fill the cache once.
inline core::Error offline_miss(std::string_view subject, std::string_view shown) {
  std::string message(subject);
  message += subject.empty() ? "not in the cache" : " is not in the cache";
  message += ", and --offline forbids fetching it";
  return core::make_error(core::ErrorCode::Offline, std::move(message), std::string(shown))
      .with_hint("run once without --offline to fill the cache");
}

// "bytes 100-199/1234" -> {100, 1234}; false when malformed.
bool parse_content_range(std::string_view v, std::uint64_t& start, std::uint64_t& total);

}  // namespace detail

namespace detail {
// Whether this thread is running a wait hook (IndexClient::set_wait_hook): one flag for every
// kind of operation, so a hook's own fetches wait plainly.
inline bool& in_wait_hook() {
  thread_local bool running = false;
  return running;
}

/// A local file's bytes into `out`: pages and variant metadata read from file:// sources.
/// `max_bytes` (0: none) bounds it: more is IndexFormat with the message `too_large`. Errors: Io
/// naming the path.
core::Status read_local_file(const std::string& path, std::string& out, std::uint64_t max_bytes = 0,
                             std::string_view too_large = {});
}  // namespace detail

struct IndexClient::Impl {
  explicit Impl(ClientOptions o);
  ~Impl();

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
        range_metadata{0}, downloaded_metadata{0}, pages_parsed{0}, members_hits{0},
        range_members{0}, downloaded_members{0};
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
  std::unordered_map<std::string, std::shared_ptr<detail::Op<WheelMembers>>> member_lists;

  // Per host: do range requests work? And credentials learned from index URLs.
  std::mutex hosts_mu;
  std::unordered_map<std::string, bool> range_support;
  std::unordered_map<std::string, std::string> credentials;

  // Background progress: a count of finished pool tasks, and each waiting thread's hook
  // (IndexClient::set_wait_hook; several threads resolve at once for a set of targets).
  std::mutex progress_mu;
  std::condition_variable progress_cv;
  std::uint64_t progress = 0;
  std::unordered_map<std::thread::id, std::function<void()>> wait_hooks;

  detail::TaskPool pool;  // last: stopped first

  // ---- events and counters (client.cpp) -------------------------------------------------------

  void note_progress();
  // The result of `op`, running the wait hook while another thread runs it.
  template <class T>
  core::Result<T> await(const std::shared_ptr<detail::Op<T>>& op);
  // The hook to run while this thread waits, or empty (not this thread's, or already in it).
  std::function<void()> hook_for_this_thread();
  void wait_progress(std::uint64_t seen);

  void emit(ClientEvent::Type type, RequestKind kind, std::string_view url, long status = 0,
            std::uint64_t bytes = 0, std::string message = {}) const;
  void count_request(RequestKind kind);

  // ---- transport and requests (client_http.cpp) -----------------------------------------------

  core::Result<detail::Transport*> get_transport();
  void cancel_transfers_for_shutdown();
  void remember_credentials(std::string_view url);
  std::string with_credentials(const std::string& url);
  std::chrono::milliseconds remaining_deadline() const;
  core::Error deadline_error(std::string_view shown) const;
  core::Error cancelled_error(std::string_view url) const;
  core::Result<detail::HttpResponse> request(detail::HttpRequest req, RequestKind kind,
                                             const std::function<void()>& reset = {});
  core::Result<detail::HttpResponse> insecure_redirect(detail::HttpRequest req, RequestKind kind,
                                                       const std::function<void()>& reset,
                                                       const std::string& target,
                                                       const std::string& shown);
  static core::Error status_error(long status, std::string_view shown);

  // ---- project pages (client_pages.cpp) -------------------------------------------------------

  struct PageLookup {
    std::string url;    // as requested (may carry credentials)
    std::string shown;  // redacted
    PageFilter filter;
    bool forbidden_means_missing = false;
    // A find-links page holds every project: it stays whole here and is filtered per project.
    bool whole = false;
  };

  ProjectPagePtr not_found_page(const PageLookup& lookup);
  const detail::WheelFilter* wheel_filter() const;
  ProjectPagePtr finish_page(ProjectPage&& page, bool whole = false) const;
  std::optional<core::Result<ProjectPagePtr>> page_from_cache(
      const PageLookup& lookup, std::optional<detail::PageEntry>& entry);
  core::Result<ProjectPagePtr> page_from_network(const PageLookup& lookup,
                                                 std::optional<detail::PageEntry> entry);
  core::Result<ProjectPagePtr> http_page(const PageLookup& lookup);
  core::Result<ProjectPagePtr> local_page(const std::string& page_url, const PageFilter& filter);
  core::Result<ProjectPagePtr> all_links(const IndexSource& source);
  core::Result<ProjectPagePtr> load_links(const IndexSource& source);
  core::Result<ProjectPagePtr> list_directory(const std::string& path, const std::string& url);
  core::Result<ProjectPagePtr> load_project(const IndexSource& source, const std::string& name);
  std::optional<core::Result<ProjectPagePtr>> quick_project(const IndexSource& source,
                                                            const std::string& name);
  std::shared_ptr<detail::Op<ProjectPagePtr>> project_op(const IndexSource& source,
                                                         const std::string& name, bool& created);
  // The memoized page operation, or null when nothing asked for it yet.
  std::shared_ptr<detail::Op<ProjectPagePtr>> find_project_op(const IndexSource& source,
                                                              const std::string& name);

  // ---- index roots (client_project_list.cpp) --------------------------------------------------

  core::Result<ProjectListPtr> load_project_list(const IndexSource& source);
  std::shared_ptr<detail::Op<ProjectListPtr>> project_list_op(const IndexSource& source,
                                                              bool& created);

  // ---- metadata (client_metadata.cpp) ---------------------------------------------------------

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

  static bool cached_metadata_fits(const std::string& text, const core::WheelFilename& wheel);
  // A cached METADATA or variant metadata stored at `stored_at` is used: always when immutable
  // (hashed) or offline, else until kMutableMetadataMaxAge unless --refresh.
  bool cached_text_fresh(std::int64_t stored_at, bool immutable) const {
    return immutable || options.offline ||
           (!options.refresh && detail::now_seconds() - stored_at < detail::kMutableMetadataMaxAge);
  }
  bool immutable_url(std::string_view url) const;
  core::Result<std::string> load_metadata(const MetadataJob& job, const std::string& key);
  core::Result<std::string> remote_metadata(const MetadataJob& job);
  core::Result<std::optional<std::string>> metadata_file(const MetadataJob& job);
  bool ranges_supported(const std::string& host);
  void set_ranges_supported(const std::string& host, bool supported);
  core::Result<std::optional<std::string>> range_metadata(const MetadataJob& job,
                                                          const std::string& host);
  core::Result<std::string> download_metadata(const MetadataJob& job);
  core::Result<std::string> fetch_range(const std::string& url, const std::string& shown,
                                        std::uint64_t a, std::uint64_t b,
                                        std::string_view etag = {});
  struct WheelDownload {
    detail::TempFile file;
    FileDigest digest;
    std::string etag;
    std::string last_modified;
  };
  // The whole wheel in a temporary file, bounded by `size` (else max_download_bytes), its
  // sha256 checked when given.
  core::Result<WheelDownload> download_wheel(const std::string& url, const std::string& shown,
                                             std::optional<std::uint64_t> size,
                                             const std::string& sha256);
  std::shared_ptr<detail::Op<std::string>> metadata_op(const DistFile& file, bool& created,
                                                       std::string& key);
  bool metadata_done(const DistFile& file);

  // ---- wheel member lists (client_members.cpp) ------------------------------------------------

  struct MembersJob {
    std::string url;    // as given, without the fragment (its credentials are sent)
    std::string clean;  // credential-free
    std::string shown;  // redacted
    std::string path;   // a local wheel's path, else empty
    std::optional<std::uint64_t> size;
    std::string sha256;
    // The cache and memo key: "sha256-<hex> <clean url>" (as METADATA's: a page's hash claim
    // alone never selects a list another URL served), else "url:<clean url> size:<n|->", or
    // "file:<path>" (not cached).
    std::string key;
  };
  static core::Result<MembersJob> members_job(const WheelRef& wheel);
  std::optional<WheelMembers> cached_members(const MembersJob& job, const std::string& key,
                                             std::optional<detail::MembersEntry>& stale);
  core::Result<WheelMembers> load_members(const MembersJob& job, const std::string& key);
  core::Result<std::optional<detail::MembersEntry>> range_members(
      const MembersJob& job, const std::string& host, const detail::MembersEntry* stale);
  core::Result<detail::MembersEntry> members_from_tail(const MembersJob& job,
                                                       detail::HttpResponse& tail);
  core::Result<detail::MembersEntry> download_members(const MembersJob& job);
  std::shared_ptr<detail::Op<WheelMembers>> members_op(const MembersJob& job,
                                                       const std::string& key, bool& created);
  // A list read along another read of the wheel (METADATA's tail, install's whole wheel): into
  // the cache and the memo, so that wheel_members reads nothing more for it.
  void remember_members(const MembersJob& job, detail::MembersEntry entry);
  std::shared_ptr<detail::Op<WheelMembers>> start_members(MembersJob job);
  // Issue 44: the member list from the tail METADATA's range read fetched (the bytes
  // [window_start, total) of the wheel), and the rest of a larger directory; remembered. The
  // window grows to the directory's start when a range before it was read, so that METADATA's
  // read finds the directory there; `fetched` counts the bytes of those ranges. Nothing is
  // remembered when the list cannot be read this way (METADATA's own read then says why, if
  // anything is wrong).
  // The list of a whole wheel METADATA's read holds (`data` in memory, else the file `path`),
  // its sha256 checked already when the index gives one; remembered.
  void members_of_whole(const MetadataJob& job, std::string_view data, const std::string& path,
                        std::uint64_t size, const std::string& etag,
                        const std::string& last_modified);
  void members_along_metadata(const MetadataJob& job, std::uint64_t total,
                              std::uint64_t& window_start, std::string& window,
                              const detail::HttpResponse& tail, std::uint64_t& fetched);

  // ---- PEP 825 variant metadata (client_variants.cpp) -----------------------------------------

  struct VariantsJob {
    std::string url;    // credential-free
    std::string shown;  // redacted
    std::string sha256;
  };
  core::Result<std::string> load_variants_json(const VariantsJob& job, const std::string& key);

  // ---- digests (client_digest.cpp) ------------------------------------------------------------

  core::Result<FileDigest> load_digest(const std::string& url);

  // ---- downloads into files (client_download.cpp) ---------------------------------------------

  core::Result<FileDigest> download_into(const DownloadRequest& request);
  core::Result<long> probe_status(const std::string& url);
};

template <class T>
core::Result<T> IndexClient::Impl::await(const std::shared_ptr<detail::Op<T>>& op) {
  if (!op->done()) {
    if (auto hook = hook_for_this_thread()) {
      bool& in_hook = detail::in_wait_hook();
      if (!in_hook) {
        // Not started (never prefetched, or a prefetch still queued): a pool thread runs it,
        // ahead of the queue, so that this thread runs the hook meanwhile instead of waiting a
        // round trip with nothing started (the pages that land during it start their METADATA).
        if (op->claim() && !pool.submit([op] { op->run_claimed(); }, true)) op->run_claimed();
        // Running: run the hook now and after each background transfer that finishes.
        while (op->running()) {
          std::uint64_t seen = 0;
          {
            std::lock_guard<std::mutex> lock(progress_mu);
            seen = progress;
          }
          in_hook = true;
          hook();
          in_hook = false;
          if (!op->running()) break;
          wait_progress(seen);
        }
      }
    }
  }
  return op->get();
}

}  // namespace gpulock::index

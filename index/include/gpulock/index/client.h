#pragma once
/// @file
/// IndexClient: project pages and wheel METADATA from Simple API indexes and find-links
/// sources, over HTTP(S) (libcurl multi on a background thread, created on the first real
/// request) and file://, with an on-disk cache.
///
/// Cache (DESIGN.md §index): `$GPULOCK_CACHE_DIR`, else `$XDG_CACHE_HOME/gpulock`, else
/// `~/.cache/gpulock`. Pages are stored parsed, in a compact binary form, with their ETag /
/// Last-Modified and freshness (Cache-Control max-age / no-cache / no-store, RFC 9111); a fresh
/// entry is used without any request, a stale one is revalidated (If-None-Match /
/// If-Modified-Since; 304 keeps the stored page). "Not on this index" answers are cached too
/// (max-age, else 10 minutes). METADATA is stored by where it came from (the file's URL,
/// with the sha256 its page claims: immutable) and used only when it names that wheel's project
/// and version; a page's hash claim alone never selects another file's METADATA. Every write
/// is atomic (temp file + rename), so concurrent gpulock processes never see a torn entry; a
/// torn or foreign file reads as a miss.
///
/// Thread safety: every member function may be called from any thread. Results are memoized
/// per client: a second fetch of the same page or METADATA returns the first result.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/index/hash.h"
#include "gpulock/index/page.h"
#include "gpulock/index/project_list.h"
#include "gpulock/index/wheel_members.h"
#include "gpulock/sys/env.h"

namespace gpulock::index {

/// What a request was for.
enum class RequestKind : std::uint8_t {
  Page,      ///< a project page or find-links page
  Metadata,  ///< a PEP 658 `.metadata` file
  Range,     ///< a byte range of a remote wheel (METADATA by range reads)
  Download,  ///< a whole wheel streamed to read its METADATA
  Digest,    ///< a whole file streamed to hash it (fetch_file_digest)
};
[[nodiscard]] std::string_view request_kind_name(RequestKind kind) noexcept;

/// A progress event. Observers are called from worker threads, possibly concurrently: they must
/// be thread-safe and quick. URLs are redacted.
struct ClientEvent {
  enum class Type : std::uint8_t {
    RequestStarted,   ///< an HTTP request is about to be sent
    RequestFinished,  ///< `status` (0 on a transport error), `bytes` received
    Retry,            ///< a request failed transiently and will be retried; `message` says why
    CacheHit,         ///< served from the cache without a request
    Warning,          ///< e.g. "range requests not supported by HOST; streaming the wheel"
  };
  Type type = Type::RequestStarted;
  RequestKind kind = RequestKind::Page;
  std::string url;
  long status = 0;
  std::uint64_t bytes = 0;
  std::string message;
};

/// Counters since the client was created.
struct ClientStats {
  std::uint64_t requests = 0;  ///< HTTP requests sent, retries included
  std::uint64_t page_requests = 0;
  std::uint64_t metadata_requests = 0;
  std::uint64_t range_requests = 0;
  std::uint64_t download_requests = 0;
  std::uint64_t digest_requests = 0;
  std::uint64_t retries = 0;
  std::uint64_t not_modified = 0;         ///< 304 answers to conditional requests
  std::uint64_t page_cache_hits = 0;      ///< fresh pages used without a request
  std::uint64_t metadata_cache_hits = 0;  ///< METADATA served from the cache
  std::uint64_t digest_cache_hits = 0;
  std::uint64_t bytes_received = 0;       ///< body bytes over HTTP (after decompression)
  std::uint64_t range_metadata = 0;       ///< METADATA obtained by range reads
  std::uint64_t downloaded_metadata = 0;  ///< METADATA obtained by a full download
  std::uint64_t pages_parsed = 0;         ///< HTML/JSON pages parsed (0 on a warm run)
  std::uint64_t members_cache_hits = 0;   ///< wheel member lists served from the cache
  std::uint64_t range_members = 0;        ///< member lists read by range requests
  std::uint64_t downloaded_members = 0;   ///< member lists read from a whole wheel
};

struct ClientOptions {
  /// Empty: default_cache_dir().
  std::string cache_dir;
  /// Use only the cache; anything missing is an Offline error naming the URL.
  bool offline = false;
  /// Revalidate every cached page once (per client), even when fresh.
  bool refresh = false;
  /// Neither read nor write the cache.
  bool no_cache = false;
  /// Transfers in flight at once (worker threads for prefetches).
  unsigned max_parallel = 32;
  std::chrono::milliseconds connect_timeout{10'000};
  /// The read timeout: abort a transfer slower than `low_speed_bytes` per second for this long
  /// (no progress at all: a hang). `--timeout`, GPULOCK_HTTP_TIMEOUT, UV_HTTP_TIMEOUT,
  /// PIP_DEFAULT_TIMEOUT.
  std::chrono::milliseconds low_speed_time{30'000};
  std::uint32_t low_speed_bytes = 1;
  /// The low-speed floor: a transfer averaging fewer than `floor_bytes` per second over a
  /// `floor_window` is a Timeout (a drip). 0: none.
  std::uint32_t floor_bytes = 1024;
  std::chrono::milliseconds floor_window{30'000};
  /// All page, METADATA and range requests of this client end within this long of its creation
  /// (wheel downloads are bounded by their size and the floor instead). 0: none.
  std::chrono::milliseconds deadline{120'000};
  /// Longest wait between two attempts (a Retry-After beyond it is not waited for).
  std::chrono::milliseconds max_retry_delay{10'000};
  /// Per-request limit, 0 for none.
  std::chrono::milliseconds request_timeout{0};
  /// A project page's decompressed size limit (`--max-page-size`, GPULOCK_MAX_PAGE_SIZE). A page
  /// is held whole until parsed, so a gzip bomb costs about this much memory (issue 40).
  std::uint64_t max_page_bytes = std::uint64_t{256} << 20;
  /// A whole-wheel download whose index declares no size (PEP 700) is bounded by this
  /// (GPULOCK_MAX_DOWNLOAD_SIZE); one with a declared size by that size.
  std::uint64_t max_download_bytes = std::uint64_t{16} << 30;
  /// Retries after the first attempt on 5xx, 408, 429, connection errors and timeouts.
  unsigned retries = 3;
  /// First retry delay, doubled for each further retry.
  std::chrono::milliseconds retry_backoff{250};
  long max_redirects = 10;
  std::string user_agent = "gpulock";
  /// Hosts whose file URLs never change content (wheel METADATA without a hash is cached by
  /// URL forever). Defaults: files.pythonhosted.org, download.pytorch.org,
  /// download-r2.pytorch.org, pypi.nvidia.com; these are added to them.
  std::vector<std::string> immutable_hosts;
  /// Hosts (`host` or `host:port`) an https:// request may be redirected to over plain http://
  /// (`--allow-insecure-host`). Any other https -> http redirect is a Network error naming both
  /// URLs.
  std::vector<std::string> insecure_hosts;
  /// CA bundle / directory; empty: $SSL_CERT_FILE / $SSL_CERT_DIR, else libcurl's default.
  std::string ca_file;
  std::string ca_path;
  /// Progress events (see ClientEvent). May be empty.
  std::function<void(const ClientEvent&)> observer;
  /// For a caller that can use only some wheels (a resolver: the wheels of one target). When
  /// set, project pages this client returns keep as DistFiles only the wheels whose expanded tags
  /// (PEP 425) this returns true for; every other file (wheels for other targets, sdists) is
  /// summarized in ProjectPage::omitted by version. A warm run then decodes, ranks and frees
  /// only the files it can use (a PyPI page lists thousands, a target uses a few percent). It is
  /// called once per distinct compressed tag set of a page, from any thread. Pages in the cache
  /// stay complete; find-links pages are filtered per project. Empty: pages keep every file.
  std::function<bool(std::span<const core::Tag>)> keep_wheel;

  /// Defaults with the environment applied: GPULOCK_CACHE_DIR (via default_cache_dir),
  /// GPULOCK_HTTP_TIMEOUT, else UV_HTTP_TIMEOUT, else PIP_DEFAULT_TIMEOUT (seconds: the read
  /// timeout), GPULOCK_HTTP_LOW_SPEED_LIMIT (bytes/s) and GPULOCK_HTTP_LOW_SPEED_TIME (seconds:
  /// the floor), GPULOCK_HTTP_DEADLINE (seconds), GPULOCK_HTTP_RETRIES,
  /// GPULOCK_MAX_PAGE_SIZE and GPULOCK_MAX_DOWNLOAD_SIZE (parse_byte_size),
  /// GPULOCK_CONCURRENT_DOWNLOADS, read through `env` (std::getenv when null). Empty values
  /// count as unset. Errors: Usage naming the variable for a malformed GPULOCK_* value (as
  /// probe's variables; exit 2); a malformed UV_HTTP_TIMEOUT or PIP_DEFAULT_TIMEOUT, which
  /// belong to other tools, is passed over.
  [[nodiscard]] static core::Result<ClientOptions> from_environment(sys::EnvLookup env = nullptr);
};

/// A byte count: digits with an optional K, M, G or T suffix (powers of 1024, "KiB"/"KB" and
/// "k" also accepted), e.g. "1G", "512MiB", "1048576". nullopt when malformed or zero.
[[nodiscard]] std::optional<std::uint64_t> parse_byte_size(std::string_view text);
/// "1 GiB", "512 MiB", "100 bytes": a limit as error messages show it.
[[nodiscard]] std::string format_byte_size(std::uint64_t bytes);

/// `$GPULOCK_CACHE_DIR`, else `$XDG_CACHE_HOME/gpulock`, else `$HOME/.cache/gpulock`.
[[nodiscard]] std::string default_cache_dir();

/// What IndexClient::download_file fetches, and where to.
struct DownloadRequest {
  std::string url;
  std::string partial_path;           ///< created or resumed; its directory must exist
  std::optional<std::uint64_t> size;  ///< the expected size (a lock's `size`), a bound
  /// Called with the number of body bytes received so far in this call (any thread).
  std::function<void(std::uint64_t)> on_bytes;
};

class IndexClient {
 public:
  explicit IndexClient(ClientOptions options);
  ~IndexClient();
  IndexClient(const IndexClient&) = delete;
  IndexClient& operator=(const IndexClient&) = delete;

  /// The files of `name` on `source` (blocking; joins a prefetch in flight). A project the index
  /// does not have is `found == false`, not an error. Errors: Auth (401, 403), Http, Network,
  /// Timeout, IndexFormat (with line / JSON field path), Offline, Io, Cancelled; each names the
  /// (redacted) URL.
  [[nodiscard]] core::Result<ProjectPagePtr> fetch_project(const IndexSource& source,
                                                           std::string_view name);
  /// Starts fetch_project in the background and returns at once.
  void prefetch_project(const IndexSource& source, std::string_view name);
  /// Whether fetch_project(source, name) would answer without waiting: a prefetch of it has
  /// finished (or it was fetched). Never starts anything.
  [[nodiscard]] bool project_done(const IndexSource& source, std::string_view name);

  /// Which projects `source` serves, from its root listing (`<source.url>`, PEP 503/691), for
  /// first-index over a small index such as the torch source's (never call it for PyPI). Null
  /// when the source has no readable root (404, not a simple index, a network error, --offline
  /// without a cached copy): ask per name instead. Cached for 10 minutes. Errors: Cancelled.
  [[nodiscard]] core::Result<ProjectListPtr> fetch_project_list(const IndexSource& source);
  /// Starts fetch_project_list in the background.
  void prefetch_project_list(const IndexSource& source);
  /// Whether fetch_project_list(source) would answer without waiting. Never starts anything.
  [[nodiscard]] bool project_list_done(const IndexSource& source);

  /// The METADATA text of a wheel: the PEP 658/714 `.metadata` file when the index offers one
  /// (its hash verified when given), else HTTP range reads of the zip's tail and METADATA entry,
  /// else a full streamed download (hashed against the index's sha256); local wheels are read
  /// directly. Name and Version are checked against the filename. Errors: HashMismatch,
  /// InvalidInput (no METADATA, a METADATA entry over 10 MB, zip bomb), InvalidMetadata,
  /// IndexFormat (a .metadata file over 10 MB, range reads over kMaxRangeBytes, a download
  /// larger than its declared size or max_download_bytes), and fetch_project's.
  [[nodiscard]] core::Result<std::string> fetch_metadata(const DistFile& file);
  /// Starts fetch_metadata in the background.
  void prefetch_metadata(const DistFile& file);
  /// Whether fetch_metadata(file) would answer without waiting: a prefetch of it has finished
  /// (or it was fetched). Never starts anything.
  [[nodiscard]] bool metadata_done(const DistFile& file);

  /// The member list of a wheel (issue 44 item 1; wheel_members.h): from its zip's central
  /// directory, read by a range request for the tail (1% of `wheel.size`, at least 72 KiB, at
  /// most 1 MiB) and at most one more for the rest of a larger directory; from the whole wheel,
  /// hashed and bounded as fetch_metadata's download, where the server ignores Range; local and
  /// file:// wheels directly (not cached). Cached by `wheel.sha256` with the URL when given
  /// (immutable), else by URL and size and revalidated by ETag like METADATA (immutable hosts:
  /// never); --offline uses the cache only. The list is not checked against `wheel.sha256`
  /// unless the whole wheel was read. Errors: InvalidInput (not a zip, a central directory that
  /// lies about its place, size or entry count; a `sha256` that is not 64 hex digits; a URL that
  /// is neither http(s), file:// nor a path), IndexFormat (a directory over 64 MiB of reads, a
  /// size other than `wheel.size`), HashMismatch (a whole download), Offline, Io, and
  /// fetch_project's HTTP errors, each naming the (redacted) URL.
  [[nodiscard]] core::Result<WheelMembers> wheel_members(const WheelRef& wheel);
  /// The member lists of `wheels`, one result per wheel in the same order: every list not in the
  /// cache is read at once on the client's pool (max_parallel transfers in flight), so N wheels
  /// cost two waves of round trips (tails, then larger directories), not 2N. Memoized per wheel
  /// like wheel_members.
  [[nodiscard]] std::vector<core::Result<WheelMembers>> wheel_members(
      std::span<const WheelRef> wheels);
  /// Starts reading the member list of `wheel` in the background, as wheel_members would (a
  /// later wheel_members joins it): for the likely candidate of a package whose METADATA is
  /// prefetched, so that the lists a resolve judges after its solve are there by then instead
  /// of costing a last round trip. Nothing for a local wheel or an invalid reference (read and
  /// reported when asked).
  void prefetch_wheel_members(const WheelRef& wheel);
  /// Stores `members`, read from the whole wheel after its sha256 was checked to be
  /// `wheel.sha256` (install's wheel cache), as wheel_members caches a list it read: a later
  /// offline wheel_members of the same wheel (`check --env`) finds it. Does nothing for a local
  /// wheel, a wheel without a sha256, or a cache turned off.
  void remember_members(const WheelRef& wheel, const WheelMembers& members);

  /// The text of a PEP 825 variant metadata file a page lists (ProjectPage::variants_files),
  /// once per run: at most 1 MiB, its sha256 checked when the page gives one, cached like
  /// METADATA (revalidated after an hour unless hashed). Not parsed (parse_variants_json).
  /// Errors: HashMismatch, IndexFormat (over the bound), NotFound/Http/Auth, Network, Timeout,
  /// Offline, Io (a local file), each naming the (redacted) URL.
  [[nodiscard]] core::Result<std::string> fetch_variants_json(const DistFile& file);

  /// Streams `url` (http(s) or file://) through SHA-256: for files the index gives no hash for
  /// (nightly wheels). Cached by URL (forever on immutable hosts, else revalidated by ETag);
  /// `refresh` re-downloads.
  [[nodiscard]] core::Result<FileDigest> fetch_file_digest(std::string_view url);

  /// Downloads `request.url` (http(s) or file://) into `request.partial_path`, resuming a
  /// partial file left there by an interrupted run with an HTTP Range request (`bytes=N-`; a
  /// server that answers 200 instead is read from the start), then hashes the whole file.
  /// The caller compares the digest with the one it expects before using the file (the file
  /// is never trusted here). Bounded by `request.size` when given, else max_download_bytes.
  /// Not cached, not memoized (client_download.cpp). Errors: NotFound (404, 410), Auth, Http,
  /// Network, Timeout, Offline (--offline), IndexFormat (more bytes than the bound), Io
  /// naming the partial file, Cancelled.
  [[nodiscard]] core::Result<FileDigest> download_file(const DownloadRequest& request);

  /// The HTTP status of `url` for a one-byte GET (`Range: bytes=0-0`), without retries on
  /// 404/410: whether a file is still there (`install --mirror-fallback`). file:// URLs answer
  /// 200 or 404. Errors: Network, Timeout, Offline, Cancelled.
  [[nodiscard]] core::Result<long> probe_url(std::string_view url);

  /// Work for the waiting thread (issue 27: a cold resolve bound by round trips). While the
  /// thread that calls this waits in fetch_project, fetch_project_list or fetch_metadata for a
  /// transfer a background thread runs (a prefetch), `hook` is called on it once
  /// as the wait begins and again each time a background transfer finishes, so a caller can
  /// start the next prefetches (say, the METADATA of a page that just arrived) while it would
  /// otherwise sleep. Never on another thread, never reentrantly (a fetch the hook makes waits
  /// plainly); the hook must not throw and should only start work, not wait for it. Empty:
  /// none. Returns the hook it replaces (to restore). Each thread has its own: several threads
  /// may resolve through one client at once.
  std::function<void()> set_wait_hook(std::function<void()> hook);

  [[nodiscard]] ClientStats stats() const;
  /// Aborts transfers in flight and makes later calls fail with Cancelled: `mirror add` stops
  /// its other downloads after the first failure (Ctrl-C reaches clients through interrupt.h).
  void cancel();
  [[nodiscard]] const ClientOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpulock::index

#pragma once
// The on-disk cache: one file per entry, written atomically (temp file + rename) and read with
// one read(); a header with a magic, a format version, the payload length and a checksum makes a
// torn, truncated or foreign file read as a miss. Pages are stored parsed (no HTML/JSON parsing
// on a warm run); METADATA, digests and per-host capabilities are small blobs.
//
// What is where: the store (DiskCache, framing, write_file_atomic) in cache.cpp; the page codec
// (encode_page, PageEncoder, decode_page, filter_page) in cache_codec.cpp; hash64, checksum64,
// its streamed form and CRC-32C in cache_checksum.cpp; the binary writer/reader both use in
// cache_binary.h. Page entries are written as they are encoded (a 100,000-file page's entry is
// tens of MB, issue 46); the other entries are small and built in one buffer.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/index/page.h"
#include "gpulock/index/wheel_members.h"

namespace gpulock::index::detail {

/// ClientOptions::keep_wheel.
using WheelFilter = std::function<bool(std::span<const core::Tag>)>;

/// A cached answer for one page URL, with what HTTP caching needs (RFC 9111).
struct PageEntry {
  std::string url;             ///< redacted page URL (guards against key collisions)
  std::int64_t stored_at = 0;  ///< unix seconds of the last validation
  std::int64_t max_age = -1;   ///< seconds; -1: none given (revalidate every time)
  bool no_cache = false;       ///< Cache-Control: no-cache
  /// The HTTP status the page came with: 200, or 404/410/403 for "not on this index" (a 403
  /// counts as that only for sources with IndexSource::forbidden_means_missing).
  int status = 200;
  std::string etag;
  std::string last_modified;
  ProjectPage page;  ///< found == false for "not on this index"

  [[nodiscard]] bool fresh(std::int64_t now) const noexcept {
    return !no_cache && max_age >= 0 && now >= stored_at && now - stored_at < max_age;
  }
};

/// A wheel's METADATA (immutable when keyed by the file's hash).
struct MetadataEntry {
  std::string url;
  std::int64_t stored_at = 0;
  std::string text;
};

/// A file's sha256 and size, with the validators of the response that produced it.
struct DigestEntry {
  std::string url;
  std::int64_t stored_at = 0;
  std::string sha256;
  std::uint64_t size = 0;
  std::string etag;
  std::string last_modified;
};

/// A wheel's member list (issue 44). Keyed by "sha256-<hex>" (immutable) or, for a file without
/// a known hash, by "url:<redacted url> size:<n>", validated by `size` and `etag`.
struct MembersEntry {
  std::string url;             ///< redacted wheel URL
  std::int64_t stored_at = 0;  ///< unix seconds of the last validation
  std::uint64_t size = 0;      ///< the file's size
  std::string etag;
  std::string last_modified;
  WheelMembers members;  ///< shared_libraries recomputed on load, not stored
};

class DiskCache {
 public:
  DiskCache(std::string root, bool enabled) : root_(std::move(root)), enabled_(enabled) {}

  [[nodiscard]] bool enabled() const noexcept { return enabled_; }
  [[nodiscard]] const std::string& root() const noexcept { return root_; }

  [[nodiscard]] std::optional<PageEntry> load_page(std::string_view url) const;
  /// Same, decoding the files through the filter `filter_for` picks once the entry's header
  /// (freshness, status, validators) is read; nullptr: every file.
  [[nodiscard]] std::optional<PageEntry> load_page(
      std::string_view url,
      const std::function<const WheelFilter*(const PageEntry&)>& filter_for) const;
  bool store_page(const PageEntry& entry) const { return store_page(entry, entry.page); }
  /// Same, with the page given separately (`entry.page` is ignored): no copy of a big page.
  /// The entry is written as it is encoded, `chunk_size` bytes at a time (tests pass a tiny one),
  /// so that a huge page's entry is never held whole; one that fits is written with one write().
  bool store_page(const PageEntry& entry, const ProjectPage& page,
                  std::size_t chunk_size = kPageChunkSize) const;
  static constexpr std::size_t kPageChunkSize = std::size_t{1} << 20;

  /// `key`: "sha256-<hex>" or a URL.
  [[nodiscard]] std::optional<MetadataEntry> load_metadata(std::string_view key) const;
  bool store_metadata(std::string_view key, const MetadataEntry& entry) const;

  [[nodiscard]] std::optional<MembersEntry> load_members(std::string_view key) const;
  bool store_members(std::string_view key, const MembersEntry& entry) const;

  [[nodiscard]] std::optional<DigestEntry> load_digest(std::string_view url) const;
  bool store_digest(const DigestEntry& entry) const;

  /// Per host: 1 range requests work, 0 they do not; nullopt unknown.
  [[nodiscard]] std::optional<bool> load_range_support(std::string_view host) const;
  bool store_range_support(std::string_view host, bool supported) const;

  /// A directory for temporary downloads (created on demand), or "" when unavailable.
  [[nodiscard]] std::string temp_dir() const;

 private:
  [[nodiscard]] std::string path_for(std::string_view bucket, std::string_view key) const;

  std::string root_;
  bool enabled_;
};

/// Serialization of a ProjectPage in the cache's binary form (exposed for tests and benches).
/// With a filter, decoding keeps as DistFiles only the wheels it accepts (asked once per tag
/// set) and summarizes the other files in page.omitted (see ClientOptions::keep_wheel).
void encode_page(const ProjectPage& page, std::string& out);

/// encode_page in two steps, so that a large page is written as it is encoded instead of being
/// held whole (a 100,000-file page encodes to tens of MB): the constructor works out the
/// page's tables and each file's record size, size() is then the encoding's length, and write()
/// produces the same bytes as encode_page. The page must outlive the encoder.
class PageEncoder {
 public:
  /// Called with the buffer whenever it holds at least the chunk size: consumes it (clears it);
  /// false stops the encoding.
  using Flush = std::function<bool(std::string& buffer)>;

  explicit PageEncoder(const ProjectPage& page);
  [[nodiscard]] std::size_t size() const noexcept;
  /// Appends the encoding to `out`, calling `flush` each time `out` holds `chunk` bytes or more;
  /// what follows the last flush stays in `out`. False when `flush` returned false.
  bool write(std::string& out, std::size_t chunk, const Flush& flush) const;

 private:
  // One file of the page's table (FileEntry's fields) and its record's size.
  struct File {
    const DistFile* file;
    std::uint8_t kind;
    std::uint32_t name, version, tags;
    std::uint32_t record_size;
  };
  std::string head_;  // the page's fields and tables, before the files
  std::vector<File> files_;
  std::size_t records_size_ = 0;
};
bool decode_page(std::string_view& in, ProjectPage& page, const WheelFilter* filter = nullptr);

/// The same filtering applied to a page in memory (a page just parsed).
void filter_page(ProjectPage& page, const WheelFilter& filter);

/// A 64-bit hash for cache keys (not cryptographic).
std::uint64_t hash64(std::string_view data, std::uint64_t seed = 0) noexcept;
/// A 64-bit checksum of cache payloads (three CRC-32C streams mixed; hardware CRC where the CPU
/// has SSE4.2, the same values in software elsewhere; not cryptographic).
/// `software`: never the crc32 instruction (tests compare both paths).
std::uint64_t checksum64(std::string_view data, std::uint64_t seed, bool software = false) noexcept;
/// checksum64 of `total_size` bytes given in pieces of any size (a cache entry checksummed as it
/// is written): finish() returns checksum64(all the bytes, seed, software) once exactly
/// `total_size` bytes went through update().
class Checksum64Stream {
 public:
  Checksum64Stream(std::uint64_t total_size, std::uint64_t seed, bool software = false) noexcept;
  void update(std::string_view chunk) noexcept;
  /// The bytes given so far.
  [[nodiscard]] std::uint64_t consumed() const noexcept { return consumed_; }
  [[nodiscard]] std::uint64_t finish() const noexcept;

 private:
  std::uint64_t total_;
  std::uint64_t seed_;
  std::uint64_t third_;  // the first two streams' length; the third takes the rest
  std::uint64_t consumed_ = 0;
  std::uint32_t crc_[3];
  bool software_;
};
/// CRC-32C (RFC 3720 §B.4) of `data`, as checksum64 computes it, and always in software.
std::uint32_t crc32c(std::string_view data) noexcept;
std::uint32_t crc32c_software(std::string_view data) noexcept;

/// Writes `data` to `path` with sys::write_file_atomically (fsynced), creating the directory and
/// registering the temporary file for removal on a forced exit. False on any failure (the cache
/// is best-effort).
bool write_file_atomic(const std::string& path, std::string_view data);

}  // namespace gpulock::index::detail

#include "cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "gpulock/sys/atomic_file.h"

#include "cache_binary.h"
#include "temp_files.h"
#include "zip_directory.h"

namespace gpulock::index::detail {
namespace {

// Bump a bucket's version when its payload layout changes: old entries are then ignored.
// v2: tables; v3: PEP 825 variants files; v4: records without the filename the URL ends with,
// lone sha256 digests as 32 bytes.
constexpr std::string_view kPagesBucket = "pages-v4";
constexpr std::string_view kMetadataBucket = "metadata-v1";
constexpr std::string_view kDigestBucket = "digests-v1";
constexpr std::string_view kMembersBucket = "members-v1";
constexpr std::string_view kHostsBucket = "hosts-v2";

constexpr char kMagic[4] = {'G', 'P', 'L', 'K'};
// Header format 2 checksums with checksum64 (CRC-32C based, several times faster than hash64 on
// the megabytes a warm run reads); format 1 files (hash64) are still read.
constexpr std::uint8_t kFormatVersion = 2;
constexpr std::uint64_t kChecksumSeed = 0x6770756c6f636bULL;
constexpr std::size_t kHeaderSize = 24;  // magic, kind, version, 2 reserved, u64 size, u64 checksum

// A framed file's header: magic, kind, format, the payload's size and checksum.
void put_header(char* out, char kind, std::uint64_t size, std::uint64_t checksum) {
  std::memcpy(out, kMagic, 4);
  out[4] = kind;
  out[5] = static_cast<char>(kFormatVersion);
  out[6] = out[7] = '\0';
  std::memcpy(out + 8, &size, 8);
  std::memcpy(out + 16, &checksum, 8);
}

// A framed file is built in one buffer: begin_frame() reserves the header, the payload is
// appended, end_frame() fills the header in (no copy of a large payload). Pages are streamed
// instead (DiskCache::store_page).
std::string begin_frame(std::size_t expected_payload = 0) {
  std::string out;
  out.reserve(kHeaderSize + expected_payload);
  out.resize(kHeaderSize);
  return out;
}

const std::string& end_frame(std::string& buffer, char kind) {
  std::string_view payload = std::string_view(buffer).substr(kHeaderSize);
  put_header(buffer.data(), kind, payload.size(), checksum64(payload, kChecksumSeed));
  return buffer;
}

// A cache file's bytes: mapped when large (no copy, no zero-fill), else one read().
class FileBytes {
 public:
  FileBytes() = default;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes() {
    if (map_) ::munmap(map_, size_);
  }

  bool open(const std::string& path) {
    // O_NONBLOCK: a FIFO (or a device) put where an entry belongs must not block the open;
    // anything but a regular file reads as a miss.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size < static_cast<off_t>(kHeaderSize)) {
      ::close(fd);
      return false;
    }
    size_ = static_cast<std::size_t>(st.st_size);
    bool ok = true;
    if (size_ >= kMapThreshold) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (p == MAP_FAILED) {
        ok = false;
      } else {
        map_ = p;
      }
    } else {
      buffer_.resize(size_);
      std::size_t filled = 0;
      while (filled < size_) {
        ssize_t n = ::read(fd, buffer_.data() + filled, size_ - filled);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        filled += static_cast<std::size_t>(n);
      }
      ok = filled == size_;
    }
    ::close(fd);
    return ok;
  }

  [[nodiscard]] std::string_view view() const noexcept {
    return map_ ? std::string_view(static_cast<const char*>(map_), size_)
                : std::string_view(buffer_);
  }

 private:
  static constexpr std::size_t kMapThreshold = 64 * 1024;
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::string buffer_;
};

// The payload of a framed file, or nullopt when torn/foreign/corrupt.
std::optional<std::string_view> unframe(std::string_view data, char kind) {
  const auto version = data.size() < kHeaderSize ? 0 : static_cast<std::uint8_t>(data[5]);
  if (data.size() < kHeaderSize || std::memcmp(data.data(), kMagic, 4) != 0 || data[4] != kind ||
      (version != 1 && version != kFormatVersion)) {
    return std::nullopt;
  }
  std::uint64_t size = 0, checksum = 0;
  std::memcpy(&size, data.data() + 8, 8);
  std::memcpy(&checksum, data.data() + 16, 8);
  if (size != data.size() - kHeaderSize) return std::nullopt;
  std::string_view payload = data.substr(kHeaderSize);
  std::uint64_t actual =
      version == 1 ? hash64(payload, kChecksumSeed) : checksum64(payload, kChecksumSeed);
  if (actual != checksum) return std::nullopt;
  return payload;
}

std::string key_hex(std::string_view key) {
  return fmt::format("{:016x}{:016x}", hash64(key, 1), hash64(key, 2));
}

// How every cache entry is written (write_file_atomic, DiskCache::store_page).
sys::AtomicWriteOptions cache_write_options() {
  sys::AtomicWriteOptions o;
  o.create_directories = true;
  // Every entry is checksummed (unframe): one torn by a crash reads as a miss.
  o.durable = false;
  o.on_temp_file = [](const std::string& temp, bool exists) {
    if (exists) {
      register_temp_path(temp);
    } else {
      unregister_temp_path(temp);
    }
  };
  return o;
}

}  // namespace

bool write_file_atomic(const std::string& path, std::string_view data) {
  return sys::write_file_atomically(path, data, cache_write_options()).has_value();
}

std::string DiskCache::path_for(std::string_view bucket, std::string_view key) const {
  return fmt::format("{}/{}/{}", root_, bucket, key_hex(key));
}

std::optional<PageEntry> DiskCache::load_page(std::string_view url) const {
  return load_page(url, [](const PageEntry&) -> const WheelFilter* { return nullptr; });
}

std::optional<PageEntry> DiskCache::load_page(
    std::string_view url,
    const std::function<const WheelFilter*(const PageEntry&)>& filter_for) const {
  if (!enabled_) return std::nullopt;
  FileBytes data;
  if (!data.open(path_for(kPagesBucket, url))) return std::nullopt;
  auto payload = unframe(data.view(), 'P');
  if (!payload) return std::nullopt;
  std::string_view in = *payload;
  Reader r{in};
  PageEntry e;
  e.url = r.str();
  if (!r.ok || e.url != url) return std::nullopt;
  e.stored_at = r.get<std::int64_t>();
  e.max_age = r.get<std::int64_t>();
  e.no_cache = r.get<std::uint8_t>() != 0;
  e.status = static_cast<int>(r.get<std::uint16_t>());
  e.etag = r.str();
  e.last_modified = r.str();
  if (!r.ok || !decode_page(in, e.page, filter_for(e))) return std::nullopt;
  return e;
}

bool DiskCache::store_page(const PageEntry& e, const ProjectPage& page,
                           std::size_t chunk_size) const {
  if (!enabled_) return false;
  std::string prefix;
  put_str(prefix, e.url);
  put_i64(prefix, e.stored_at);
  put_i64(prefix, e.max_age);
  put_u8(prefix, e.no_cache ? 1 : 0);
  std::uint16_t status = static_cast<std::uint16_t>(e.status);
  prefix.append(reinterpret_cast<const char*>(&status), 2);
  put_str(prefix, e.etag);
  put_str(prefix, e.last_modified);
  const PageEncoder encoder(page);
  const std::uint64_t payload_size = prefix.size() + encoder.size();

  auto writer = sys::AtomicFileWriter::open(path_for(kPagesBucket, e.url), cache_write_options());
  if (!writer) return false;
  // The entry goes out in chunks, checksummed on the way; the header, whose checksum is known
  // last, is written over its placeholder at the end. One that fits in a chunk (nearly every
  // page) is written whole, header included, as end_frame() would.
  std::string buffer;
  buffer.reserve(std::min<std::uint64_t>(kHeaderSize + payload_size, chunk_size + 64 * 1024));
  buffer.resize(kHeaderSize);
  buffer += prefix;
  Checksum64Stream checksum(payload_size, kChecksumSeed);
  std::size_t header_left = kHeaderSize;  // the placeholder's bytes still in the buffer
  auto flush = [&](std::string& out) {
    checksum.update(std::string_view(out).substr(header_left));
    header_left = 0;
    if (!writer->write(out)) return false;
    out.clear();
    return true;
  };
  if (!encoder.write(buffer, chunk_size, flush)) return false;
  checksum.update(std::string_view(buffer).substr(header_left));
  // A record that file_record_size miscounted would leave a checksum over the wrong length.
  if (checksum.consumed() != payload_size) return false;
  char header[kHeaderSize];
  put_header(header, 'P', payload_size, checksum.finish());
  if (header_left == kHeaderSize) {
    std::memcpy(buffer.data(), header, kHeaderSize);
    if (!writer->write(buffer)) return false;
  } else if (!writer->write(buffer) ||
             !writer->write_at(0, std::string_view(header, kHeaderSize))) {
    return false;
  }
  return writer->commit().has_value();
}

std::optional<MetadataEntry> DiskCache::load_metadata(std::string_view key) const {
  if (!enabled_) return std::nullopt;
  FileBytes data;
  if (!data.open(path_for(kMetadataBucket, key))) return std::nullopt;
  auto payload = unframe(data.view(), 'M');
  if (!payload) return std::nullopt;
  std::string_view in = *payload;
  Reader r{in};
  std::string_view stored_key = r.str();
  MetadataEntry e;
  e.url = r.str();
  e.stored_at = r.get<std::int64_t>();
  e.text = r.str();
  if (!r.ok || stored_key != key) return std::nullopt;
  return e;
}

bool DiskCache::store_metadata(std::string_view key, const MetadataEntry& e) const {
  if (!enabled_) return false;
  std::string payload = begin_frame();
  put_str(payload, key);
  put_str(payload, e.url);
  put_i64(payload, e.stored_at);
  put_str(payload, e.text);
  return write_file_atomic(path_for(kMetadataBucket, key), end_frame(payload, 'M'));
}

std::optional<MembersEntry> DiskCache::load_members(std::string_view key) const {
  if (!enabled_) return std::nullopt;
  FileBytes data;
  if (!data.open(path_for(kMembersBucket, key))) return std::nullopt;
  auto payload = unframe(data.view(), 'W');
  if (!payload) return std::nullopt;
  std::string_view in = *payload;
  Reader r{in};
  std::string_view stored_key = r.str();
  MembersEntry e;
  e.url = r.str();
  e.stored_at = r.get<std::int64_t>();
  e.size = r.get<std::uint64_t>();
  e.etag = r.str();
  e.last_modified = r.str();
  std::string digest(r.str());
  auto count = r.get<std::uint64_t>();
  // Each member takes at least 16 bytes: a count that cannot fit reads as a miss, not a reserve.
  if (!r.ok || stored_key != key || count > in.size() / 16) return std::nullopt;
  std::vector<WheelMember> members(static_cast<std::size_t>(count));
  for (auto& m : members) {
    m.path = r.str();
    m.size = r.get<std::uint64_t>();
    m.crc32 = r.get<std::uint32_t>();
  }
  if (!r.ok || !in.empty()) return std::nullopt;
  e.members = wheel_members_with_digest(std::move(members), std::move(digest));
  return e;
}

bool DiskCache::store_members(std::string_view key, const MembersEntry& e) const {
  if (!enabled_) return false;
  std::size_t expected = 256 + key.size() + e.url.size();
  for (const auto& m : e.members.members)
    expected += 16 + m.path.size();
  std::string payload = begin_frame(expected);
  put_str(payload, key);
  put_str(payload, e.url);
  put_i64(payload, e.stored_at);
  put_u64(payload, e.size);
  put_str(payload, e.etag);
  put_str(payload, e.last_modified);
  put_str(payload, e.members.digest);
  put_u64(payload, e.members.members.size());
  for (const auto& m : e.members.members) {
    put_str(payload, m.path);
    put_u64(payload, m.size);
    put_u32(payload, m.crc32);
  }
  return write_file_atomic(path_for(kMembersBucket, key), end_frame(payload, 'W'));
}

std::optional<DigestEntry> DiskCache::load_digest(std::string_view url) const {
  if (!enabled_) return std::nullopt;
  FileBytes data;
  if (!data.open(path_for(kDigestBucket, url))) return std::nullopt;
  auto payload = unframe(data.view(), 'D');
  if (!payload) return std::nullopt;
  std::string_view in = *payload;
  Reader r{in};
  DigestEntry e;
  e.url = r.str();
  e.stored_at = r.get<std::int64_t>();
  e.sha256 = r.str();
  e.size = r.get<std::uint64_t>();
  e.etag = r.str();
  e.last_modified = r.str();
  if (!r.ok || e.url != url) return std::nullopt;
  return e;
}

bool DiskCache::store_digest(const DigestEntry& e) const {
  if (!enabled_) return false;
  std::string payload = begin_frame();
  put_str(payload, e.url);
  put_i64(payload, e.stored_at);
  put_str(payload, e.sha256);
  put_u64(payload, e.size);
  put_str(payload, e.etag);
  put_str(payload, e.last_modified);
  return write_file_atomic(path_for(kDigestBucket, e.url), end_frame(payload, 'D'));
}

std::optional<bool> DiskCache::load_range_support(std::string_view host) const {
  if (!enabled_) return std::nullopt;
  FileBytes data;
  if (!data.open(path_for(kHostsBucket, host))) return std::nullopt;
  auto payload = unframe(data.view(), 'H');
  if (!payload) return std::nullopt;
  std::string_view in = *payload;
  Reader r{in};
  std::string_view stored = r.str();
  auto value = r.get<std::uint8_t>();
  auto when = r.get<std::int64_t>();
  if (!r.ok || stored != host) return std::nullopt;
  // A server that did not do ranges may have been fixed: probe it again after a day.
  if (value == 0 && std::time(nullptr) - when > 86400) return std::nullopt;
  return value != 0;
}

bool DiskCache::store_range_support(std::string_view host, bool supported) const {
  if (!enabled_) return false;
  std::string payload = begin_frame();
  put_str(payload, host);
  put_u8(payload, supported ? 1 : 0);
  put_i64(payload, static_cast<std::int64_t>(std::time(nullptr)));
  return write_file_atomic(path_for(kHostsBucket, host), end_frame(payload, 'H'));
}

std::string DiskCache::temp_dir() const {
  std::string dir;
  if (enabled_) {
    dir = root_ + "/partial";
    // What older versions left in <cache>/tmp/ goes by the same rules as partial/'s.
    remove_stale_legacy_temp_files(root_ + "/tmp");
  } else {
    // Never /tmp itself: temp_files.h's stale-file cleanup owns the whole directory it is given.
    const char* tmp = std::getenv("TMPDIR");
    dir = fmt::format("{}/gpulock-partial-{}", (tmp && *tmp) ? tmp : "/tmp",
                      static_cast<long>(::getuid()));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return ec ? std::string() : dir;
}

}  // namespace gpulock::index::detail

#include "cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "page_builder.h"

namespace gpulock::index::detail {
namespace {

// Bump a bucket's version when its payload layout changes: old entries are then ignored.
constexpr std::string_view kPagesBucket = "pages-v1";
constexpr std::string_view kMetadataBucket = "metadata-v1";
constexpr std::string_view kDigestBucket = "digests-v1";
constexpr std::string_view kHostsBucket = "hosts-v2";

constexpr char kMagic[4] = {'G', 'P', 'L', 'K'};
constexpr std::uint8_t kFormatVersion = 1;
constexpr std::size_t kHeaderSize = 24;  // magic, kind, version, 2 reserved, u64 size, u64 checksum

constexpr std::uint64_t rotl(std::uint64_t x, int r) noexcept {
  return (x << r) | (x >> (64 - r));
}

std::uint64_t fmix(std::uint64_t k) noexcept {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// ---- binary writer/reader -------------------------------------------------------------------

void put_u8(std::string& out, std::uint8_t v) {
  out.push_back(static_cast<char>(v));
}
void put_u32(std::string& out, std::uint32_t v) {
  out.append(reinterpret_cast<const char*>(&v), 4);
}
void put_u64(std::string& out, std::uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), 8);
}
void put_i64(std::string& out, std::int64_t v) {
  out.append(reinterpret_cast<const char*>(&v), 8);
}
void put_str(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

struct Reader {
  std::string_view& in;
  bool ok = true;

  template <class T>
  T get() {
    T v{};
    if (in.size() < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, in.data(), sizeof(T));
    in.remove_prefix(sizeof(T));
    return v;
  }
  std::string_view str() {
    auto n = get<std::uint32_t>();
    if (!ok || in.size() < n) {
      ok = false;
      return {};
    }
    std::string_view s = in.substr(0, n);
    in.remove_prefix(n);
    return s;
  }
};

void put_hashes(std::string& out, const std::vector<Hash>& hashes) {
  put_u8(out, static_cast<std::uint8_t>(std::min<std::size_t>(hashes.size(), 255)));
  for (std::size_t i = 0; i < hashes.size() && i < 255; ++i) {
    put_str(out, hashes[i].algorithm);
    put_str(out, hashes[i].hex);
  }
}

void get_hashes(Reader& r, std::vector<Hash>& hashes) {
  auto n = r.get<std::uint8_t>();
  hashes.reserve(n);
  for (unsigned i = 0; i < n && r.ok; ++i) {
    Hash h;
    h.algorithm = r.str();
    h.hex = r.str();
    hashes.push_back(std::move(h));
  }
}

// A framed file is built in one buffer: begin_frame() reserves the header, the payload is
// appended, end_frame() fills the header in (no copy of a large payload).
std::string begin_frame(std::size_t expected_payload = 0) {
  std::string out;
  out.reserve(kHeaderSize + expected_payload);
  out.resize(kHeaderSize);
  return out;
}

const std::string& end_frame(std::string& buffer, char kind) {
  std::string_view payload = std::string_view(buffer).substr(kHeaderSize);
  std::uint64_t size = payload.size();
  std::uint64_t checksum = hash64(payload, 0x6770756c6f636bULL);
  std::memcpy(buffer.data(), kMagic, 4);
  buffer[4] = kind;
  buffer[5] = static_cast<char>(kFormatVersion);
  buffer[6] = buffer[7] = '\0';
  std::memcpy(buffer.data() + 8, &size, 8);
  std::memcpy(buffer.data() + 16, &checksum, 8);
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
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kHeaderSize)) {
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
  if (data.size() < kHeaderSize || std::memcmp(data.data(), kMagic, 4) != 0 || data[4] != kind ||
      static_cast<std::uint8_t>(data[5]) != kFormatVersion) {
    return std::nullopt;
  }
  std::uint64_t size = 0, checksum = 0;
  std::memcpy(&size, data.data() + 8, 8);
  std::memcpy(&checksum, data.data() + 16, 8);
  if (size != data.size() - kHeaderSize) return std::nullopt;
  std::string_view payload = data.substr(kHeaderSize);
  if (hash64(payload, 0x6770756c6f636bULL) != checksum) return std::nullopt;
  return payload;
}

std::string key_hex(std::string_view key) {
  return fmt::format("{:016x}{:016x}", hash64(key, 1), hash64(key, 2));
}

std::atomic<std::uint64_t> g_temp_counter{0};

}  // namespace

std::uint64_t hash64(std::string_view data, std::uint64_t seed) noexcept {
  constexpr std::uint64_t c1 = 0x87c37b91114253d5ULL;
  constexpr std::uint64_t c2 = 0x4cf5ad432745937fULL;
  std::uint64_t h = seed ^ (data.size() * 0x9E3779B97F4A7C15ULL);
  const char* p = data.data();
  std::size_t n = data.size();
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    w *= c1;
    w = rotl(w, 31);
    w *= c2;
    h ^= w;
    h = rotl(h, 27) * 5 + 0x52dce729;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    w *= c1;
    w = rotl(w, 31);
    w *= c2;
    h ^= w;
  }
  return fmix(h);
}

bool write_file_atomic(const std::string& path, std::string_view data) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string temp = fmt::format("{}/.tmp-{}-{}-{:x}", dir, ::getpid(), g_temp_counter.fetch_add(1),
                                 hash64(path, static_cast<std::uint64_t>(::getpid())));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  if (fd < 0) return false;
  std::size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  bool ok = written == data.size();
  ok = (::close(fd) == 0) && ok;
  if (ok) ok = ::rename(temp.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(temp.c_str());
  return ok;
}

void encode_page(const ProjectPage& page, std::string& out) {
  put_u8(out, page.found ? 1 : 0);
  put_str(out, page.name);
  put_str(out, page.url);
  put_str(out, page.api_version);
  put_u32(out, static_cast<std::uint32_t>(page.versions.size()));
  for (const auto& v : page.versions)
    put_str(out, v);
  put_u32(out, static_cast<std::uint32_t>(page.warnings.size()));
  for (const auto& w : page.warnings)
    put_str(out, w);
  put_u32(out, static_cast<std::uint32_t>(page.files.size()));
  for (const auto& f : page.files) {
    put_str(out, f.filename);
    put_str(out, f.url);
    put_hashes(out, f.hashes);
    put_str(out, f.requires_python);
    std::uint8_t flags = (f.yanked ? 1 : 0) | (f.core_metadata ? 2 : 0) | (f.size ? 4 : 0) |
                         (f.upload_time ? 8 : 0) | (f.wheel ? 16 : 0);
    put_u8(out, flags);
    if (f.yanked) put_str(out, f.yanked_reason);
    if (f.core_metadata) put_hashes(out, f.core_metadata_hashes);
    if (f.size) put_u64(out, *f.size);
    if (f.upload_time) put_i64(out, *f.upload_time);
  }
}

bool decode_page(std::string_view& in, ProjectPage& page) {
  Reader r{in};
  page.found = r.get<std::uint8_t>() != 0;
  page.name = r.str();
  page.url = r.str();
  page.api_version = r.str();
  auto nversions = r.get<std::uint32_t>();
  if (!r.ok || nversions > in.size()) return false;
  page.versions.reserve(nversions);
  for (std::uint32_t i = 0; i < nversions && r.ok; ++i)
    page.versions.emplace_back(r.str());
  auto nwarnings = r.get<std::uint32_t>();
  if (!r.ok || nwarnings > in.size()) return false;
  for (std::uint32_t i = 0; i < nwarnings && r.ok; ++i)
    page.warnings.emplace_back(r.str());
  auto nfiles = r.get<std::uint32_t>();
  if (!r.ok || nfiles > in.size()) return false;
  page.files.reserve(nfiles);
  WheelNameMemo wheels;
  for (std::uint32_t i = 0; i < nfiles && r.ok; ++i) {
    DistFile& f = page.files.emplace_back();
    f.filename = r.str();
    f.url = r.str();
    get_hashes(r, f.hashes);
    f.requires_python = r.str();
    auto flags = r.get<std::uint8_t>();
    f.yanked = flags & 1;
    f.core_metadata = flags & 2;
    if (f.yanked) f.yanked_reason = r.str();
    if (f.core_metadata) get_hashes(r, f.core_metadata_hashes);
    if (flags & 4) f.size = r.get<std::uint64_t>();
    if (flags & 8) f.upload_time = r.get<std::int64_t>();
    if (!r.ok) return false;
    // Filenames were validated when the page was parsed; a failure here means a foreign entry.
    if (flags & 16) {
      auto wheel = wheels.parse(f.filename);
      if (!wheel) return false;
      f.wheel = std::move(*wheel);
    } else {
      auto sdist = core::SdistFilename::parse(f.filename);
      if (!sdist) return false;
      f.sdist = std::move(*sdist);
    }
  }
  return r.ok;
}

std::string DiskCache::path_for(std::string_view bucket, std::string_view key) const {
  return fmt::format("{}/{}/{}", root_, bucket, key_hex(key));
}

std::optional<PageEntry> DiskCache::load_page(std::string_view url) const {
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
  if (!r.ok || !decode_page(in, e.page)) return std::nullopt;
  return e;
}

bool DiskCache::store_page(const PageEntry& e, const ProjectPage& page) const {
  if (!enabled_) return false;
  std::string payload = begin_frame(256 + page.files.size() * 256);
  put_str(payload, e.url);
  put_i64(payload, e.stored_at);
  put_i64(payload, e.max_age);
  put_u8(payload, e.no_cache ? 1 : 0);
  std::uint16_t status = static_cast<std::uint16_t>(e.status);
  payload.append(reinterpret_cast<const char*>(&status), 2);
  put_str(payload, e.etag);
  put_str(payload, e.last_modified);
  encode_page(page, payload);
  return write_file_atomic(path_for(kPagesBucket, e.url), end_frame(payload, 'P'));
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
    dir = root_ + "/tmp";
  } else {
    const char* tmp = std::getenv("TMPDIR");
    dir = (tmp && *tmp) ? tmp : "/tmp";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return ec ? std::string() : dir;
}

}  // namespace gpulock::index::detail

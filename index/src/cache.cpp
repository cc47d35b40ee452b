#include "cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "gpulock/sys/atomic_file.h"

#include "page_builder.h"
#include "temp_files.h"

namespace gpulock::index::detail {
namespace {

// Bump a bucket's version when its payload layout changes: old entries are then ignored.
constexpr std::string_view kPagesBucket = "pages-v2";  // v2: name/version/tag tables
constexpr std::string_view kMetadataBucket = "metadata-v1";
constexpr std::string_view kDigestBucket = "digests-v1";
constexpr std::string_view kHostsBucket = "hosts-v2";

constexpr char kMagic[4] = {'G', 'P', 'L', 'K'};
// Header format 2 checksums with checksum64 (CRC-32C based, several times faster than hash64 on
// the megabytes a warm run reads); format 1 files (hash64) are still read.
constexpr std::uint8_t kFormatVersion = 2;
constexpr std::uint64_t kChecksumSeed = 0x6770756c6f636bULL;
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

template <class Add>
void get_hashes(Reader& r, Add add) {
  auto n = r.get<std::uint8_t>();
  for (unsigned i = 0; i < n && r.ok; ++i) {
    std::string_view algorithm = r.str();
    std::string_view hex = r.str();
    if (r.ok) add(algorithm, hex);
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
  std::uint64_t checksum = checksum64(payload, kChecksumSeed);
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

namespace {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): SSE4.2's crc32 instruction where the CPU
// has it, else slicing-by-8 tables; both give the same values, so a cache moves between machines.
constexpr std::uint32_t kCrc32cPoly = 0x82F63B78u;

struct Crc32cTables {
  std::uint32_t t[8][256];
};

constexpr Crc32cTables make_crc32c_tables() {
  Crc32cTables tables{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ kCrc32cPoly : c >> 1;
    tables.t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) {
      std::uint32_t prev = tables.t[s - 1][i];
      tables.t[s][i] = (prev >> 8) ^ tables.t[0][prev & 0xff];
    }
  }
  return tables;
}

constexpr Crc32cTables kCrc32c = make_crc32c_tables();

// Both variants take and return the raw (not inverted) register.
std::uint32_t crc32c_portable(std::uint32_t crc, const char* p, std::size_t n) noexcept {
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= crc;
    crc = kCrc32c.t[7][w & 0xff] ^ kCrc32c.t[6][(w >> 8) & 0xff] ^
          kCrc32c.t[5][(w >> 16) & 0xff] ^ kCrc32c.t[4][(w >> 24) & 0xff] ^
          kCrc32c.t[3][(w >> 32) & 0xff] ^ kCrc32c.t[2][(w >> 40) & 0xff] ^
          kCrc32c.t[1][(w >> 48) & 0xff] ^ kCrc32c.t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0)
    crc = (crc >> 8) ^ kCrc32c.t[0][(crc ^ static_cast<unsigned char>(*p++)) & 0xff];
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t crc, const char* p,
                                                             std::size_t n) noexcept {
  std::uint64_t c = crc;
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    c = __builtin_ia32_crc32di(c, w);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n-- > 0)
    c32 = __builtin_ia32_crc32qi(c32, static_cast<unsigned char>(*p++));
  return c32;
}

// Three streams of `n` bytes each, interleaved.
__attribute__((target("sse4.2"))) void crc32c_sse42_x3(std::uint32_t& a, std::uint32_t& b,
                                                       std::uint32_t& c, const char* pa,
                                                       const char* pb, const char* pc,
                                                       std::size_t n) noexcept {
  std::uint64_t ca = a, cb = b, cc = c;
  while (n >= 8) {
    std::uint64_t wa, wb, wc;
    std::memcpy(&wa, pa, 8);
    std::memcpy(&wb, pb, 8);
    std::memcpy(&wc, pc, 8);
    ca = __builtin_ia32_crc32di(ca, wa);
    cb = __builtin_ia32_crc32di(cb, wb);
    cc = __builtin_ia32_crc32di(cc, wc);
    pa += 8;
    pb += 8;
    pc += 8;
    n -= 8;
  }
  a = crc32c_sse42(static_cast<std::uint32_t>(ca), pa, n);
  b = crc32c_sse42(static_cast<std::uint32_t>(cb), pb, n);
  c = crc32c_sse42(static_cast<std::uint32_t>(cc), pc, n);
}
#endif

std::uint32_t crc32c(std::uint32_t crc, const char* p, std::size_t n) noexcept {
#if defined(__x86_64__)
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  if (hardware) return crc32c_sse42(crc, p, n);
#endif
  return crc32c_portable(crc, p, n);
}

}  // namespace

std::uint32_t crc32c(std::string_view data) noexcept {
  return ~crc32c(~0u, data.data(), data.size());
}

std::uint32_t crc32c_software(std::string_view data) noexcept {
  return ~crc32c_portable(~0u, data.data(), data.size());
}

std::uint64_t checksum64(std::string_view data, std::uint64_t seed, bool software) noexcept {
  // Three CRC-32C streams over the three thirds of the data, mixed with the length and the seed
  // into 64 bits. The hardware path runs the streams interleaved: the crc32 instruction has a
  // latency of 3 cycles and a throughput of 1, so three independent chains keep it busy.
  const std::size_t third = data.size() / 3;
  const char* pa = data.data();
  const char* pb = pa + third;
  const char* pc = pb + third;
  const std::size_t last = data.size() - 2 * third;  // third, third + 1 or third + 2
  auto s0 = static_cast<std::uint32_t>(seed);
  auto s1 = static_cast<std::uint32_t>(seed >> 32);
  std::uint32_t a = ~s0, b = ~s1, c = ~(s0 ^ s1);
#if defined(__x86_64__)
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  if (hardware && !software) {
    crc32c_sse42_x3(a, b, c, pa, pb, pc, third);
    c = crc32c_sse42(c, pc + third, last - third);
  } else
#endif
  {
    a = crc32c_portable(a, pa, third);
    b = crc32c_portable(b, pb, third);
    c = crc32c_portable(c, pc, last);
  }
  std::uint64_t h = (static_cast<std::uint64_t>(a) << 32 | b) ^ fmix(c ^ data.size() ^ seed);
  return fmix(h);
}

bool write_file_atomic(const std::string& path, std::string_view data) {
  sys::AtomicWriteOptions o;
  o.create_directories = true;
  o.on_temp_file = [](const std::string& temp, bool exists) {
    if (exists) {
      register_temp_path(temp);
    } else {
      unregister_temp_path(temp);
    }
  };
  return sys::write_file_atomically(path, data, o).has_value();
}

// Pages are stored with what decoding needs already worked out, so a warm run parses no
// filenames: the distinct project names, versions and compressed tag sets of the page's files go
// in tables (a PyPI page has thousands of files but tens of distinct versions and tag sets), and
// each file refers to its entries by index. Decoding parses each distinct version once and
// copies the rest.
namespace {

enum class FileKind : std::uint8_t { Other = 0, Wheel = 1, Sdist = 2 };

// One file in a page's table (native byte order, like every integer in the cache).
struct FileEntry {
  std::uint8_t kind;
  std::uint8_t reserved[3];
  std::uint32_t name;     // index into the names table (wheels and sdists)
  std::uint32_t version;  // index into the versions table
  std::uint32_t tags;     // index into the tag-set table (wheels)
  std::uint32_t offset;   // of the file's record, from the start of the records
};
static_assert(sizeof(FileEntry) == 20);

// Interns strings into a table: index of `key`, adding it when new.
struct Interner {
  std::unordered_map<std::string, std::uint32_t> index;
  std::vector<const void*> items;  // the first object seen with each key
  std::uint32_t add(std::string key, const void* item) {
    auto [it, inserted] = index.emplace(std::move(key), static_cast<std::uint32_t>(items.size()));
    if (inserted) items.push_back(item);
    return it->second;
  }
};

std::string tag_set_key(const WheelTagSet& w) {
  std::string key = w.python_tag;
  key += '-';
  key += w.abi_tag;
  key += '-';
  key += w.platform_tag;
  return key;
}



}  // namespace

namespace {

// As core::SdistFilename::parse finds it (the decoder ignores it: the filename has it).
std::string_view sdist_extension_of(std::string_view filename) noexcept {
  for (std::string_view ext : {".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tar"}) {
    if (filename.ends_with(ext)) return ext;
  }
  return {};
}

}  // namespace

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

  Interner names, versions, tag_sets;
  struct Refs {
    FileKind kind = FileKind::Other;
    std::uint32_t name = 0, version = 0, tags = 0;
  };
  std::vector<Refs> refs(page.files.size());
  std::vector<std::string> version_text;
  std::unordered_map<const core::Version*, std::uint32_t> version_of;
  std::unordered_map<const WheelTagSet*, std::uint32_t> tag_set_of;
  for (std::size_t i = 0; i < page.files.size(); ++i) {
    const DistFile& f = page.files[i];
    Refs& r = refs[i];
    if (!f.is_wheel() && !f.is_sdist()) continue;
    r.kind = f.is_wheel() ? FileKind::Wheel : FileKind::Sdist;
    r.name = names.add(f.project(), &f.project());
    // Files share their version's entry: it is printed once per distinct entry.
    auto [known, fresh] = version_of.try_emplace(&f.version(), 0);
    if (fresh) {
      std::string v = f.version().to_string();
      std::size_t before = versions.items.size();
      known->second = versions.add(v, &f.version());
      if (versions.items.size() != before) version_text.push_back(std::move(v));
    }
    r.version = known->second;
    if (f.is_wheel()) {
      auto [slot, new_set] = tag_set_of.try_emplace(f.tag_set(), 0);
      if (new_set) slot->second = tag_sets.add(tag_set_key(*f.tag_set()), f.tag_set());
      r.tags = slot->second;
    }
  }
  put_u32(out, static_cast<std::uint32_t>(names.items.size()));
  for (const void* n : names.items)
    put_str(out, *static_cast<const std::string*>(n));
  put_u32(out, static_cast<std::uint32_t>(version_text.size()));
  for (const auto& v : version_text)
    put_str(out, v);
  put_u32(out, static_cast<std::uint32_t>(tag_sets.items.size()));
  for (const void* item : tag_sets.items) {
    const auto& w = *static_cast<const WheelTagSet*>(item);
    put_str(out, w.python_tag);
    put_str(out, w.abi_tag);
    put_str(out, w.platform_tag);
    put_u32(out, static_cast<std::uint32_t>(w.tags.size()));
    for (const auto& t : w.tags) {
      put_str(out, t.interpreter);
      put_str(out, t.abi);
      put_str(out, t.platform);
    }
  }

  // The files: first a table of fixed-size entries (kind, table indices, where the file's record
  // starts), then the records. A filtered decode scans the table and reads only the records of
  // the files it keeps.
  put_u32(out, static_cast<std::uint32_t>(page.files.size()));
  std::size_t table_at = out.size();
  out.resize(out.size() + page.files.size() * sizeof(FileEntry));
  std::size_t records_at = out.size();
  for (std::size_t i = 0; i < page.files.size(); ++i) {
    const DistFile& f = page.files[i];
    const Refs& r = refs[i];
    FileEntry entry{};
    entry.kind = static_cast<std::uint8_t>(r.kind);
    entry.name = r.name;
    entry.version = r.version;
    entry.tags = r.tags;
    entry.offset = static_cast<std::uint32_t>(out.size() - records_at);
    std::memcpy(out.data() + table_at + i * sizeof(FileEntry), &entry, sizeof entry);
    put_str(out, f.filename());
    put_str(out, f.url());
    put_hashes(out, f.hashes());
    put_str(out, f.requires_python());
    const auto& build = f.build();
    std::uint8_t flags = (f.yanked() ? 1 : 0) | (f.core_metadata() ? 2 : 0) | (f.size() ? 4 : 0) |
                         (f.upload_time() ? 8 : 0) | (f.is_wheel() && build ? 16 : 0);
    put_u8(out, flags);
    if (f.yanked()) put_str(out, f.yanked_reason());
    if (f.core_metadata()) put_hashes(out, f.core_metadata_hashes());
    if (f.size()) put_u64(out, *f.size());
    if (f.upload_time()) put_i64(out, *f.upload_time());
    if (r.kind == FileKind::Wheel && build) {
      put_u64(out, build->first);
      put_str(out, build->second);
    } else if (r.kind == FileKind::Sdist) {
      put_str(out, sdist_extension_of(f.filename()));
    }
  }
  put_u32(out, static_cast<std::uint32_t>(out.size() - records_at));  // the records' total size
}

bool decode_page(std::string_view& in, ProjectPage& page, const WheelFilter* filter) {
  Reader r{in};
  page.found = r.get<std::uint8_t>() != 0;
  page.name = r.str();
  page.url = r.str();
  page.api_version = r.str();
  // Counts are checked against the bytes left (each item takes at least 4) before reserving.
  auto count = [&] {
    auto n = r.get<std::uint32_t>();
    if (r.ok && n > in.size() / 4) r.ok = false;
    return r.ok ? n : 0u;
  };
  auto nversions = count();
  page.versions.reserve(nversions);
  for (std::uint32_t i = 0; i < nversions && r.ok; ++i)
    page.versions.emplace_back(r.str());
  auto nwarnings = count();
  for (std::uint32_t i = 0; i < nwarnings && r.ok; ++i)
    page.warnings.emplace_back(r.str());

  std::vector<std::string_view> names(count());
  for (auto& n : names)
    n = r.str();
  std::vector<core::Version> versions(count());
  for (auto& v : versions) {
    auto parsed = core::Version::parse(r.str());
    if (!r.ok || !parsed) return false;
    v = std::move(*parsed);
  }
  std::vector<std::shared_ptr<const WheelTagSet>> tag_sets(count());
  for (auto& entry : tag_sets) {
    auto ts = std::make_shared<WheelTagSet>();
    ts->python_tag = r.str();
    ts->abi_tag = r.str();
    ts->platform_tag = r.str();
    auto ntags = count();
    ts->tags.resize(ntags);
    for (auto& t : ts->tags) {
      t.interpreter = r.str();
      t.abi = r.str();
      t.platform = r.str();
    }
    entry = std::move(ts);
  }
  if (!r.ok) return false;
  // One shared entry per (name, version) pair the kept files use.
  std::unordered_map<std::uint64_t, std::shared_ptr<const Release>> releases;
  auto release_of = [&](std::uint32_t name, std::uint32_t version) {
    auto& slot = releases[static_cast<std::uint64_t>(name) << 32 | version];
    if (!slot) slot = std::make_shared<const Release>(Release{std::string(names[name]), versions[version]});
    return slot;
  };

  auto nfiles = r.get<std::uint32_t>();
  if (!r.ok || nfiles > in.size() / sizeof(FileEntry)) return false;
  std::string_view table = in.substr(0, nfiles * sizeof(FileEntry));
  in.remove_prefix(table.size());
  auto entry_at = [&](std::size_t i) {
    FileEntry e;
    std::memcpy(&e, table.data() + i * sizeof(FileEntry), sizeof e);
    return e;
  };
  // The records follow, the table's offsets point into them, and their total size ends the page.
  if (in.size() < 4) return false;
  std::uint32_t records_size = 0;
  std::memcpy(&records_size, in.data() + in.size() - 4, 4);
  if (records_size != in.size() - 4) return false;
  std::string_view records = in.substr(0, records_size);
  in = {};

  // Pass 1: which files to keep. With a filter, each tag set is asked once, and the versions of
  // the other files are collected in order of first appearance.
  std::vector<std::uint8_t> keep(nfiles, 1);
  std::size_t kept = nfiles;
  if (filter) {
    std::vector<std::int8_t> keep_tags(tag_sets.size(), -1);
    std::vector<std::uint8_t> omitted_kinds(versions.size(), 0);  // 1 wheels, 2 sdists
    std::vector<std::uint32_t> omitted_order;
    for (std::uint32_t i = 0; i < nfiles; ++i) {
      FileEntry e = entry_at(i);
      auto kind = static_cast<FileKind>(e.kind);
      std::uint8_t omitted_kind = 0;
      if (kind == FileKind::Sdist) {
        omitted_kind = 2;
      } else if (kind == FileKind::Wheel) {
        if (e.tags >= tag_sets.size()) return false;
        std::int8_t& k = keep_tags[e.tags];
        if (k < 0) k = (*filter)(tag_sets[e.tags]->tags) ? 1 : 0;
        if (k == 0) omitted_kind = 1;
      }
      if (omitted_kind == 0) continue;
      if (e.version >= versions.size()) return false;
      keep[i] = 0;
      --kept;
      if (omitted_kinds[e.version] == 0) omitted_order.push_back(e.version);
      omitted_kinds[e.version] |= omitted_kind;
    }
    page.omitted.reserve(omitted_order.size());
    for (auto v : omitted_order) {
      page.omitted.push_back(
          {versions[v], (omitted_kinds[v] & 1) != 0, (omitted_kinds[v] & 2) != 0});
    }
  }

  // Pass 2: the kept files in full.
  page.files.reserve(kept);
  for (std::uint32_t i = 0; i < nfiles; ++i) {
    if (!keep[i]) continue;
    FileEntry e = entry_at(i);
    auto kind = static_cast<FileKind>(e.kind);
    if (kind != FileKind::Other && kind != FileKind::Wheel && kind != FileKind::Sdist) return false;
    if (kind != FileKind::Other &&
        (e.name >= names.size() || e.version >= versions.size() ||
         (kind == FileKind::Wheel && e.tags >= tag_sets.size()))) {
      return false;
    }
    if (e.offset > records.size()) return false;
    std::string_view record = records.substr(e.offset);
    Reader f_in{record};
    DistFile& f = page.files.emplace_back();
    std::string_view filename = f_in.str();
    std::string_view url = f_in.str();
    get_hashes(f_in, [&](std::string_view a, std::string_view h) { f.add_hash(a, h); });
    std::string_view requires_python = f_in.str();
    auto flags = f_in.get<std::uint8_t>();
    std::string_view yanked_reason;
    f.set_yanked(flags & 1);
    f.set_core_metadata(flags & 2);
    if (flags & 1) yanked_reason = f_in.str();
    if (flags & 2) {
      get_hashes(f_in,
                 [&](std::string_view a, std::string_view h) { f.add_core_metadata_hash(a, h); });
    }
    if (flags & 4) f.set_size(f_in.get<std::uint64_t>());
    if (flags & 8) f.set_upload_time(f_in.get<std::int64_t>());
    f.set_text(filename, url, requires_python, yanked_reason);
    if (kind == FileKind::Wheel) {
      std::optional<std::pair<std::uint64_t, std::string>> build;
      if (flags & 16) {
        auto number = f_in.get<std::uint64_t>();
        build.emplace(number, std::string(f_in.str()));
      }
      f.set_wheel(release_of(e.name, e.version), tag_sets[e.tags], std::move(build));
    } else if (kind == FileKind::Sdist) {
      (void)f_in.str();  // the extension, which the filename has
      f.set_sdist(release_of(e.name, e.version));
    }
    if (!f_in.ok) return false;
  }
  return r.ok;
}

void filter_page(ProjectPage& page, const WheelFilter& filter) {
  std::unordered_map<std::string, bool> keep;  // by compressed tag set
  std::unordered_map<const WheelTagSet*, bool> keep_entry;  // the same, by shared entry
  std::unordered_map<core::Version, std::size_t, core::VersionHash> slots;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < page.files.size(); ++i) {
    DistFile& f = page.files[i];
    bool wheel = f.is_wheel();
    if (wheel) {
      auto [entry, new_entry] = keep_entry.try_emplace(f.tag_set(), false);
      if (new_entry) {
        auto [it, inserted] = keep.try_emplace(tag_set_key(*f.tag_set()), false);
        if (inserted) it->second = filter(f.tags());
        entry->second = it->second;
      }
      if (entry->second) {
        if (kept != i) page.files[kept] = std::move(f);
        ++kept;
        continue;
      }
    } else if (!f.is_sdist()) {
      if (kept != i) page.files[kept] = std::move(f);
      ++kept;
      continue;
    }
    auto [slot, inserted] = slots.try_emplace(f.version(), page.omitted.size());
    if (inserted) page.omitted.push_back({f.version(), false, false});
    auto& o = page.omitted[slot->second];
    (wheel ? o.wheels : o.sdists) = true;
  }
  page.files.erase(page.files.begin() + static_cast<std::ptrdiff_t>(kept), page.files.end());
  // A huge page filtered down to a few files gives its records back.
  if (kept < page.files.capacity() / 4) page.files.shrink_to_fit();
}

std::string DiskCache::path_for(std::string_view bucket, std::string_view key) const {
  return fmt::format("{}/{}/{}", root_, bucket, key_hex(key));
}

std::optional<PageEntry> DiskCache::load_page(std::string_view url) const {
  return load_page(url, [](const PageEntry&) -> const WheelFilter* { return nullptr; });
}

std::optional<PageEntry> DiskCache::load_page(
    std::string_view url, const std::function<const WheelFilter*(const PageEntry&)>& filter_for) const {
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

bool DiskCache::store_page(const PageEntry& e, const ProjectPage& page) const {
  if (!enabled_) return false;
  // Reserved for the whole entry: growing a buffer of hundreds of MB copies it (old and new at
  // once); reserved bytes never written cost no memory.
  std::size_t expected = 4096 + e.url.size() + e.etag.size() + e.last_modified.size();
  for (const auto& v : page.versions)
    expected += 4 + v.size();
  for (const auto& w : page.warnings)
    expected += 4 + w.size();
  for (const auto& f : page.files) {
    expected += 512 + f.filename().size() + f.url().size() + f.requires_python().size() +
                f.yanked_reason().size();
  }
  std::string payload = begin_frame(expected);
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

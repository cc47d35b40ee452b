// The cache's binary form of a ProjectPage (encode_page, decode_page) and the wheel filter that
// decoding and freshly parsed pages share (filter_page).
#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache.h"
#include "cache_binary.h"

namespace gpulock::index::detail {

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

// As core::SdistFilename::parse finds it (the decoder ignores it: the filename has it).
std::string_view sdist_extension_of(std::string_view filename) noexcept {
  for (std::string_view ext : {".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tar"}) {
    if (filename.ends_with(ext)) return ext;
  }
  return {};
}

// A file record's layout flags (its first byte).
constexpr std::uint8_t kNameInUrl = 1;          // the filename ends the URL: its length only
constexpr std::uint8_t kRawSha256 = 2;          // the file's lone sha256: 32 bytes
constexpr std::uint8_t kRawMetadataSha256 = 4;  // the .metadata file's lone sha256: 32 bytes

void put_digest(std::string& out, const std::array<std::uint8_t, 32>& digest) {
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
}

std::array<std::uint8_t, 32> get_digest(Reader& r) {
  std::array<std::uint8_t, 32> digest{};
  std::string_view raw = r.bytes(digest.size());
  if (r.ok) std::memcpy(digest.data(), raw.data(), digest.size());
  return digest;
}

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

std::size_t hashes_size(const std::vector<Hash>& hashes) {
  std::size_t n = 1;
  for (std::size_t i = 0; i < hashes.size() && i < 255; ++i)
    n += 8 + hashes[i].algorithm.size() + hashes[i].hex.size();
  return n;
}

// The bytes put_file_record writes for `f` (kept in step with it: PageEncoder::write checks
// each record in Debug builds). The table before the records holds their offsets, and the
// encoding's size is known before it is written.
std::size_t file_record_size(const DistFile& f, FileKind kind) {
  const bool name_in_url = !f.filename().empty() && f.url().ends_with(f.filename());
  std::size_t n = 1 + (name_in_url ? 4 : 4 + f.filename().size()) + 4 + f.url().size();
  n += f.sha256_digest() ? 32 : hashes_size(f.hashes());
  n += 4 + f.requires_python().size() + 1;
  if (f.yanked()) n += 4 + f.yanked_reason().size();
  if (f.core_metadata()) {
    n += f.core_metadata_sha256_digest() ? 32 : hashes_size(f.core_metadata_hashes());
  }
  if (f.size()) n += 8;
  if (f.upload_time()) n += 8;
  const auto& build = f.build();
  if (kind == FileKind::Wheel && build) {
    n += 8 + 4 + build->second.size();
  } else if (kind == FileKind::Sdist) {
    n += 4 + sdist_extension_of(f.filename()).size();
  }
  return n;
}

// A file's record (encode_page): what the table entry does not hold.
void put_file_record(std::string& out, const DistFile& f, FileKind kind) {
  // What the record leaves out: a filename that ends the URL (its length instead), a lone
  // sha256 as its 32 bytes instead of ("sha256", 64 hex digits).
  const bool name_in_url = !f.filename().empty() && f.url().ends_with(f.filename());
  const auto* sha256 = f.sha256_digest();
  const auto* metadata_sha256 = f.core_metadata() ? f.core_metadata_sha256_digest() : nullptr;
  put_u8(out, static_cast<std::uint8_t>((name_in_url ? kNameInUrl : 0) | (sha256 ? kRawSha256 : 0) |
                                        (metadata_sha256 ? kRawMetadataSha256 : 0)));
  if (name_in_url) {
    put_u32(out, static_cast<std::uint32_t>(f.filename().size()));
  } else {
    put_str(out, f.filename());
  }
  put_str(out, f.url());
  if (sha256) {
    put_digest(out, *sha256);
  } else {
    put_hashes(out, f.hashes());
  }
  put_str(out, f.requires_python());
  const auto& build = f.build();
  std::uint8_t flags = (f.yanked() ? 1 : 0) | (f.core_metadata() ? 2 : 0) | (f.size() ? 4 : 0) |
                       (f.upload_time() ? 8 : 0) | (f.is_wheel() && build ? 16 : 0);
  put_u8(out, flags);
  if (f.yanked()) put_str(out, f.yanked_reason());
  if (metadata_sha256) {
    put_digest(out, *metadata_sha256);
  } else if (f.core_metadata()) {
    put_hashes(out, f.core_metadata_hashes());
  }
  if (f.size()) put_u64(out, *f.size());
  if (f.upload_time()) put_i64(out, *f.upload_time());
  if (kind == FileKind::Wheel && build) {
    put_u64(out, build->first);
    put_str(out, build->second);
  } else if (kind == FileKind::Sdist) {
    put_str(out, sdist_extension_of(f.filename()));
  }
}

}  // namespace

PageEncoder::PageEncoder(const ProjectPage& page) {
  std::string& out = head_;
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

  // The variant metadata files follow the page's files, as files of kind Other.
  files_.reserve(page.files.size() + page.variants_files.size());
  for (const auto& f : page.files)
    files_.push_back({&f, 0, 0, 0, 0, 0});
  for (const auto& f : page.variants_files)
    files_.push_back({&f, 0, 0, 0, 0, 0});
  Interner names, versions, tag_sets;
  std::vector<std::string> version_text;
  std::unordered_map<const core::Version*, std::uint32_t> version_of;
  std::unordered_map<const WheelTagSet*, std::uint32_t> tag_set_of;
  for (File& r : files_) {
    const DistFile& f = *r.file;
    auto kind = FileKind::Other;
    if (f.is_wheel() || f.is_sdist()) {
      kind = f.is_wheel() ? FileKind::Wheel : FileKind::Sdist;
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
    r.kind = static_cast<std::uint8_t>(kind);
    // Kept: write() lays out the table of record offsets before the records themselves.
    r.record_size = static_cast<std::uint32_t>(file_record_size(f, kind));
    records_size_ += r.record_size;
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
}

std::size_t PageEncoder::size() const noexcept {
  return head_.size() + 4 + files_.size() * sizeof(FileEntry) + records_size_ + 4;
}

bool PageEncoder::write(std::string& out, std::size_t chunk, const Flush& flush) const {
  auto flushed = [&] { return out.size() < chunk || flush(out); };
  out += head_;
  if (!flushed()) return false;

  // The files: first a table of fixed-size entries (kind, table indices, where the file's record
  // starts), then the records. A filtered decode scans the table and reads only the records of
  // the files it keeps.
  put_u32(out, static_cast<std::uint32_t>(files_.size()));
  std::size_t offset = 0;
  for (const File& r : files_) {
    FileEntry entry{};
    entry.kind = r.kind;
    entry.name = r.name;
    entry.version = r.version;
    entry.tags = r.tags;
    entry.offset = static_cast<std::uint32_t>(offset);
    out.append(reinterpret_cast<const char*>(&entry), sizeof entry);
    offset += r.record_size;
    if (!flushed()) return false;
  }
  for (const File& r : files_) {
    [[maybe_unused]] const std::size_t before = out.size();
    put_file_record(out, *r.file, static_cast<FileKind>(r.kind));
    // file_record_size must follow put_file_record: the offsets above came from it.
    assert(out.size() - before == r.record_size);
    if (!flushed()) return false;
  }
  put_u32(out, static_cast<std::uint32_t>(records_size_));  // the records' total size
  return true;
}

void encode_page(const ProjectPage& page, std::string& out) {
  PageEncoder encoder(page);
  // The exact size: a buffer of hundreds of MB grown by doubling would hold old and new at once.
  out.reserve(out.size() + encoder.size());
  encoder.write(out, std::numeric_limits<std::size_t>::max(), {});
}

namespace {

// The tables the files of a page refer to by index (see encode_page).
struct PageTables {
  std::vector<std::string_view> names;
  std::vector<core::Version> versions;
  std::vector<std::shared_ptr<const WheelTagSet>> tag_sets;
};

// The page's own fields, then its tables; false when they do not decode.
bool decode_tables(Reader& r, ProjectPage& page, PageTables& tables) {
  std::string_view& in = r.in;
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

  auto& names = tables.names;
  names.resize(count());
  for (auto& n : names)
    n = r.str();
  auto& versions = tables.versions;
  versions.resize(count());
  for (auto& v : versions) {
    auto parsed = core::Version::parse(r.str());
    if (!r.ok || !parsed) return false;
    v = std::move(*parsed);
  }
  auto& tag_sets = tables.tag_sets;
  tag_sets.resize(count());
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
  return r.ok;
}

// The entry of file `i` in a page's table of fixed-size entries.
FileEntry entry_at(std::string_view table, std::size_t i) {
  FileEntry e;
  std::memcpy(&e, table.data() + i * sizeof(FileEntry), sizeof e);
  return e;
}

// Pass 1 of decode_page with a filter: which files to keep (`keep`, `kept`). Each tag set is
// asked once, and the versions of the other files go to page.omitted in order of first
// appearance. False when an entry refers past the tables.
bool select_files(std::string_view table, std::uint32_t nfiles, const PageTables& tables,
                  const WheelFilter& filter, ProjectPage& page, std::vector<std::uint8_t>& keep,
                  std::size_t& kept) {
  const auto& versions = tables.versions;
  const auto& tag_sets = tables.tag_sets;
  std::vector<std::int8_t> keep_tags(tag_sets.size(), -1);
  std::vector<std::uint8_t> omitted_kinds(versions.size(), 0);  // 1 wheels, 2 sdists
  std::vector<std::uint32_t> omitted_order;
  for (std::uint32_t i = 0; i < nfiles; ++i) {
    FileEntry e = entry_at(table, i);
    auto kind = static_cast<FileKind>(e.kind);
    std::uint8_t omitted_kind = 0;
    if (kind == FileKind::Sdist) {
      omitted_kind = 2;
    } else if (kind == FileKind::Wheel) {
      if (e.tags >= tag_sets.size()) return false;
      std::int8_t& k = keep_tags[e.tags];
      if (k < 0) k = filter(tag_sets[e.tags]->tags) ? 1 : 0;
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
    page.omitted.push_back({versions[v], (omitted_kinds[v] & 1) != 0, (omitted_kinds[v] & 2) != 0});
  }
  return true;
}

// One shared entry per (name, version) pair the kept files use.
class Releases {
 public:
  explicit Releases(const PageTables& tables) : tables_(tables) {}

  std::shared_ptr<const Release> of(std::uint32_t name, std::uint32_t version) {
    auto& slot = releases_[static_cast<std::uint64_t>(name) << 32 | version];
    if (!slot) {
      slot = std::make_shared<const Release>(
          Release{std::string(tables_.names[name]), tables_.versions[version]});
    }
    return slot;
  }

 private:
  const PageTables& tables_;
  std::unordered_map<std::uint64_t, std::shared_ptr<const Release>> releases_;
};

// Pass 2 of decode_page: the record of a kept file, whose entry `e` is checked against the
// tables. False when the record does not decode.
bool decode_file(std::string_view record, const FileEntry& e, const PageTables& tables,
                 Releases& releases, DistFile& f) {
  auto kind = static_cast<FileKind>(e.kind);
  Reader f_in{record};
  auto layout = f_in.get<std::uint8_t>();
  std::string_view filename;
  std::uint32_t name_size = 0;
  if (layout & kNameInUrl) {
    name_size = f_in.get<std::uint32_t>();
  } else {
    filename = f_in.str();
  }
  std::string_view url = f_in.str();
  if (layout & kNameInUrl) {
    if (name_size == 0 || name_size > url.size()) return false;
    filename = url.substr(url.size() - name_size);
  }
  if (layout & kRawSha256) {
    f.add_sha256(get_digest(f_in));
  } else {
    get_hashes(f_in, [&](std::string_view a, std::string_view h) { f.add_hash(a, h); });
  }
  std::string_view requires_python = f_in.str();
  auto flags = f_in.get<std::uint8_t>();
  std::string_view yanked_reason;
  f.set_yanked(flags & 1);
  f.set_core_metadata(flags & 2);
  if (flags & 1) yanked_reason = f_in.str();
  if ((flags & 2) && (layout & kRawMetadataSha256)) {
    f.add_core_metadata_sha256(get_digest(f_in));
  } else if (flags & 2) {
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
    f.set_wheel(releases.of(e.name, e.version), tables.tag_sets[e.tags], std::move(build));
  } else if (kind == FileKind::Sdist) {
    (void)f_in.str();  // the extension, which the filename has
    f.set_sdist(releases.of(e.name, e.version));
  }
  return f_in.ok;
}

}  // namespace

bool decode_page(std::string_view& in, ProjectPage& page, const WheelFilter* filter) {
  Reader r{in};
  PageTables tables;
  if (!decode_tables(r, page, tables)) return false;

  auto nfiles = r.get<std::uint32_t>();
  if (!r.ok || nfiles > in.size() / sizeof(FileEntry)) return false;
  std::string_view table = in.substr(0, nfiles * sizeof(FileEntry));
  in.remove_prefix(table.size());
  // The records follow, the table's offsets point into them, and their total size ends the page.
  if (in.size() < 4) return false;
  std::uint32_t records_size = 0;
  std::memcpy(&records_size, in.data() + in.size() - 4, 4);
  if (records_size != in.size() - 4) return false;
  std::string_view records = in.substr(0, records_size);
  in = {};

  // Pass 1: which files to keep (all of them without a filter).
  std::vector<std::uint8_t> keep(nfiles, 1);
  std::size_t kept = nfiles;
  if (filter && !select_files(table, nfiles, tables, *filter, page, keep, kept)) return false;

  // Pass 2: the kept files in full.
  Releases releases(tables);
  page.files.reserve(kept);
  for (std::uint32_t i = 0; i < nfiles; ++i) {
    if (!keep[i]) continue;
    FileEntry e = entry_at(table, i);
    auto kind = static_cast<FileKind>(e.kind);
    if (kind != FileKind::Other && kind != FileKind::Wheel && kind != FileKind::Sdist) return false;
    if (kind != FileKind::Other &&
        (e.name >= tables.names.size() || e.version >= tables.versions.size() ||
         (kind == FileKind::Wheel && e.tags >= tables.tag_sets.size()))) {
      return false;
    }
    if (e.offset > records.size()) return false;
    DistFile& f =
        kind == FileKind::Other ? page.variants_files.emplace_back() : page.files.emplace_back();
    if (!decode_file(records.substr(e.offset), e, tables, releases, f)) return false;
  }
  return r.ok;
}

void filter_page(ProjectPage& page, const WheelFilter& filter) {
  std::unordered_map<std::string, bool> keep;               // by compressed tag set
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

}  // namespace gpulock::index::detail

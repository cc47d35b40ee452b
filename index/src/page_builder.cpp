#include "page_builder.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "gpulock/core/text.h"
#include "gpulock/index/variants.h"

namespace gpulock::index::detail {

std::string printable_index_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    // U+0080..U+009F are C2 80..C2 9F in UTF-8 (0x9B is a CSI on some terminals).
    bool c1 = c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
              static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if (c < 0x20 || c == 0x7f || c1) {
      unsigned value = c1 ? static_cast<unsigned char>(text[++i]) : c;
      out += fmt::format("\\x{:02x}", value);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}
namespace {

bool ends_with_icase(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && core::iequals(s.substr(s.size() - suffix.size()), suffix);
}

bool is_sdist_name(std::string_view filename) noexcept {
  return ends_with_icase(filename, ".tar.gz") || ends_with_icase(filename, ".zip") ||
         ends_with_icase(filename, ".tar.bz2") || ends_with_icase(filename, ".tar.xz") ||
         ends_with_icase(filename, ".tar") || ends_with_icase(filename, ".tgz");
}

}  // namespace

namespace {

// ASCII lowercase of 8 bytes at once (SWAR): a byte gets 0x20 added when it is 'A'..'Z'; bytes
// with the high bit set are left alone. No carry crosses bytes: each 7-bit value plus at most
// 0x3f stays below 0x100.
std::uint64_t lower8(std::uint64_t w) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t high = 0x8080808080808080ULL;
  std::uint64_t x = w & ~high;
  std::uint64_t ge_a = x + ones * (0x80 - 'A');      // high bit: x >= 'A'
  std::uint64_t gt_z = x + ones * (0x80 - 'Z' - 1);  // high bit: x > 'Z'
  std::uint64_t upper = ge_a & ~gt_z & ~w & high;
  return w | (upper >> 2);
}

}  // namespace

namespace {

// Lowercases `n` bytes from `src` into `dst` (which may be `src`): 16 bytes at a time with GCC
// vector extensions (SSE2 on x86-64, NEON on arm64), then 8 with SWAR, then one by one.
void lower_bytes(char* dst, const char* src, std::size_t n) noexcept {
  using V16 = signed char __attribute__((vector_size(16)));  // bytes >= 0x80 are negative
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    V16 v;
    std::memcpy(&v, src + i, 16);
    V16 upper = (v >= 'A') & (v <= 'Z');  // lanes: 0xff where 'A'..'Z', else 0
    v |= upper & 0x20;
    std::memcpy(dst + i, &v, 16);
  }
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, src + i, 8);
    w = lower8(w);
    std::memcpy(dst + i, &w, 8);
  }
  for (; i < n; ++i)
    dst[i] = core::ascii_lower(src[i]);
}

}  // namespace

void ascii_lower(std::string& s) noexcept {
  lower_bytes(s.data(), s.data(), s.size());
}

void assign_lower(std::string& out, std::string_view text) {
  // No zero-fill before the copy. The size comes from `text`, not from the callback's argument:
  // libstdc++ 12 passes the grown capacity there (a string growing out of its small buffer to
  // 16..30 bytes got 30, read past `text` and kept the extra bytes; found by fuzz/json_page).
  const std::size_t size = text.size();
  out.resize_and_overwrite(size, [&](char* dst, std::size_t) noexcept {
    lower_bytes(dst, text.data(), size);
    return size;
  });
}

void reserve_files(std::vector<DistFile>& files, std::uint64_t bytes) {
  constexpr std::uint64_t kMost = std::uint64_t{1} << 30;  // the largest page limit's worth
  files.reserve(static_cast<std::size_t>(std::min(bytes, kMost) / 192 + 4));
}

std::size_t count_newlines(std::string_view text) noexcept {
  std::size_t count = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p))) {
    ++count;
    p = static_cast<const char*>(hit) + 1;
  }
  return count;
}

namespace {

// 0: not hex; else the lowercase hex digit.
constexpr auto kHexLower = [] {
  std::array<char, 256> t{};
  for (int c = '0'; c <= '9'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<char>(c);
  for (int c = 'a'; c <= 'f'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<char>(c);
  for (int c = 'A'; c <= 'F'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<char>(c - 'A' + 'a');
  return t;
}();

}  // namespace

namespace {

// A hex digit's value, or 0xff.
constexpr auto kHexValue = [] {
  std::array<std::uint8_t, 256> t{};
  t.fill(0xff);
  for (int c = '0'; c <= '9'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'A' + 10);
  return t;
}();

}  // namespace

bool decode_hex32(std::string_view hex, std::array<std::uint8_t, 32>& out) noexcept {
  if (hex.size() != 64) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(hex.data());
  std::uint8_t bad = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    std::uint8_t hi = kHexValue[p[2 * i]];
    std::uint8_t lo = kHexValue[p[2 * i + 1]];
    bad |= hi | lo;
    out[i] = static_cast<std::uint8_t>(hi << 4 | (lo & 15));
  }
  return (bad & 0xf0) == 0;
}

bool all_hex(std::string_view text) noexcept {
  std::uint8_t bad = 0;
  for (char c : text)
    bad |= kHexValue[static_cast<unsigned char>(c)];
  return (bad & 0xf0) == 0;
}

bool parse_hash_pair(std::string_view text, Hash& out) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 >= text.size()) return false;
  std::string_view algo = text.substr(0, eq);
  std::string_view hex = text.substr(eq + 1);
  for (char c : algo) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  out.hex.resize(hex.size());
  for (std::size_t i = 0; i < hex.size(); ++i) {
    char h = kHexLower[static_cast<unsigned char>(hex[i])];
    if (h == 0) return false;
    out.hex[i] = h;
  }
  out.algorithm.assign(algo);
  ascii_lower(out.algorithm);
  return true;
}

bool add_hash_pair(std::string_view text, DistFile& file, bool core_metadata) {
  constexpr std::string_view kPrefix = "sha256=";
  std::array<std::uint8_t, 32> digest;
  if (text.starts_with(kPrefix) && decode_hex32(text.substr(kPrefix.size()), digest)) {
    if (core_metadata) {
      file.add_core_metadata_sha256(digest);
    } else {
      file.add_sha256(digest);
    }
    return true;
  }
  Hash h;
  if (!parse_hash_pair(text, h)) return false;
  if (core_metadata) {
    file.add_core_metadata_hash(h);
  } else {
    file.add_hash(h);
  }
  return true;
}

std::size_t WheelNameMemo::Hash::operator()(std::string_view s) const noexcept {
  constexpr std::uint64_t k = 0x9e3779b97f4a7c15ULL;
  std::uint64_t h = s.size() * k;
  const char* p = s.data();
  std::size_t n = s.size(), i = 0;
  auto mix = [&](std::uint64_t w) {
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  };
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  if (i < n) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    mix(w);
  }
  h *= k;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

const WheelNameMemo::ReleasePtr& WheelNameMemo::release_for(std::string_view key,
                                                            const std::string& name,
                                                            const core::Version& version) {
  auto it = releases_.find(key);
  if (it == releases_.end()) {
    it =
        releases_.emplace(std::string(key), std::make_shared<const Release>(Release{name, version}))
            .first;
  }
  return it->second;
}

const WheelNameMemo::TagSetPtr& WheelNameMemo::tag_set_for(std::string_view key,
                                                           const core::WheelFilename& parsed) {
  auto it = tags_.find(key);
  if (it == tags_.end()) {
    auto entry = std::make_shared<WheelTagSet>();
    entry->python_tag = parsed.python_tag;
    entry->abi_tag = parsed.abi_tag;
    entry->platform_tag = parsed.platform_tag;
    entry->tags = parsed.tags;
    it = tags_.emplace(std::string(key), std::move(entry)).first;
  }
  return it->second;
}

bool WheelNameMemo::full_parse(std::string_view filename, DistFile& file, std::string& error) {
  // PEP 825: a variant label after the platform tag; the file keeps its name, and is a wheel of
  // the name without the label.
  auto full = core::WheelFilename::parse_with_variant(filename);
  if (!full) {
    error = full.error().message;
    return false;
  }
  key_ = full->name;
  key_ += '\n';
  key_ += full->version.to_string();
  const ReleasePtr& release = release_for(key_, full->name, full->version);
  key_ = full->python_tag;
  key_ += '-';
  key_ += full->abi_tag;
  key_ += '-';
  key_ += full->platform_tag;
  file.set_wheel(release, tag_set_for(key_, *full), std::move(full->build));
  return true;
}

bool WheelNameMemo::classify(std::string_view filename, DistFile& file, std::string& error) {
  // The common shape: name-version-python-abi-platform.whl, printable ASCII.
  if (filename.size() <= 4 || !filename.ends_with(".whl")) return full_parse(filename, file, error);
  std::string_view stem = filename.substr(0, filename.size() - 4);
  std::size_t dashes[4];
  std::size_t count = 0;
  {
    // 8 bytes at a time: any byte outside '!'..'~' sends the name to the full parse; the
    // dashes are found from a per-byte equality mask. No carry crosses bytes below: each
    // 7-bit value plus at most 0x7f stays below 0x100.
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t high = 0x8080808080808080ULL;
    constexpr std::uint64_t low7 = ~high;
    const char* p = stem.data();
    const std::size_t n = stem.size();
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
      std::uint64_t z = w & low7;
      std::uint64_t bad = w | (z + ones) | ~(z + ones * (0x80 - 0x21));  // >= 0x7f or < 0x21
      if (bad & high) return full_parse(filename, file, error);
      std::uint64_t eq = w ^ (ones * '-');
      std::uint64_t dash = ~(((eq & low7) + low7) | eq) & high;  // 0x80 in each '-' byte
      while (dash) {
        if (count == 4) return full_parse(filename, file, error);  // a build tag, or an error
        dashes[count++] = i + static_cast<std::size_t>(std::countr_zero(dash)) / 8;
        dash &= dash - 1;
      }
    }
    for (; i < n; ++i) {
      auto c = static_cast<unsigned char>(p[i]);
      if (c <= 0x20 || c >= 0x7f) return full_parse(filename, file, error);
      if (c == '-') {
        if (count == 4) return full_parse(filename, file, error);
        dashes[count++] = i;
      }
    }
  }
  if (count != 4) return full_parse(filename, file, error);
  std::string_view name = stem.substr(0, dashes[0]);
  std::string_view version = stem.substr(dashes[0] + 1, dashes[1] - dashes[0] - 1);
  std::string_view tags = stem.substr(dashes[1] + 1);

  // Pages list a project's files version by version: the previous file's name and version are
  // compared before any hashing.
  const std::string* normalized = nullptr;
  bool same_name = false;
  if (last_name_ && last_name_->first == name) {
    normalized = &last_name_->second;
    same_name = true;
  } else if (auto it = names_.find(name); it != names_.end()) {
    last_name_ = &*it;
    normalized = &it->second;
  } else {
    // First file with this name: the full parse validates the name (and everything else).
    auto full = core::WheelFilename::parse(filename);
    if (!full) {
      error = full.error().message;
      return false;
    }
    auto n = names_.emplace(std::string(name), full->name).first;
    last_name_ = &*n;
    key_ = full->name;
    key_ += '\n';
    key_ += version;
    last_release_ = &release_for(key_, full->name, full->version);
    last_version_text_.assign(version);
    file.set_wheel(*last_release_, tag_set_for(tags, *full));
    return true;
  }
  if (!same_name || !last_release_ || last_version_text_ != version) {
    key_ = *normalized;
    key_ += '\n';
    key_ += version;
    auto it = releases_.find(key_);
    if (it == releases_.end()) {
      auto v = core::Version::parse(version);
      if (!v) return full_parse(filename, file, error);
      it = releases_
               .emplace(key_, std::make_shared<const Release>(Release{*normalized, std::move(*v)}))
               .first;
    }
    last_release_ = &it->second;
    last_version_text_.assign(version);
  }
  const std::pair<const std::string, TagSetPtr>* tags_entry = nullptr;
  TagSlot* slot = nullptr;
  if (tags.size() >= 8) {
    std::uint64_t head, tail;
    std::memcpy(&head, tags.data(), 8);
    std::memcpy(&tail, tags.data() + tags.size() - 8, 8);
    std::uint64_t f = (head * 0x9e3779b97f4a7c15ULL) ^ (tail * 0xbf58476d1ce4e5b9ULL) ^
                      (tags.size() * 0x94d049bb133111ebULL);
    slot = &tag_slots_[f >> 56];  // kTagSlots == 256
    if (slot->entry && slot->entry->first == tags) tags_entry = slot->entry;
  }
  if (!tags_entry) {
    auto tags_it = tags_.find(tags);
    if (tags_it == tags_.end()) {
      auto t = core::parse_tag_set(tags);
      if (!t) return full_parse(filename, file, error);
      auto entry = std::make_shared<WheelTagSet>();
      entry->python_tag.assign(stem.substr(dashes[1] + 1, dashes[2] - dashes[1] - 1));
      entry->abi_tag.assign(stem.substr(dashes[2] + 1, dashes[3] - dashes[2] - 1));
      entry->platform_tag.assign(stem.substr(dashes[3] + 1));
      entry->tags = std::move(*t);
      tags_it = tags_.emplace(std::string(tags), std::move(entry)).first;
    }
    tags_entry = &*tags_it;
    if (slot) slot->entry = tags_entry;
  }
  file.set_wheel(*last_release_, tags_entry->second);
  return true;
}

core::Result<core::WheelFilename> WheelNameMemo::parse(std::string_view filename) {
  DistFile file;
  std::string error;
  if (!classify(filename, file, error)) return core::WheelFilename::parse_with_variant(filename);
  return std::move(*file.wheel());
}

std::shared_ptr<const Release> WheelNameMemo::sdist_release(std::string_view stem,
                                                            const core::SdistFilename& parsed) {
  auto it = sdists_.find(stem);
  if (it == sdists_.end()) {
    it = sdists_
             .emplace(std::string(stem),
                      std::make_shared<const Release>(Release{parsed.name, parsed.version}))
             .first;
  }
  return it->second;
}

std::shared_ptr<const Release> WheelNameMemo::find_sdist_release(std::string_view stem) const {
  auto it = sdists_.find(stem);
  return it == sdists_.end() ? nullptr : it->second;
}

namespace {

// The sdist extension `filename` ends with, as core::SdistFilename::parse finds it, or "".
std::string_view sdist_extension(std::string_view filename) noexcept {
  for (std::string_view ext : {".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tar"}) {
    if (filename.ends_with(ext)) return filename.substr(filename.size() - ext.size());
  }
  return {};
}

}  // namespace

bool FileClassifier::accept(DistFile& file) {
  std::string_view name = file.filename();
  std::string reason;
  file.clear_kind();
  if (ends_with_icase(name, ".whl")) {
    if (!wheels_.classify(name, file, reason)) file.clear_kind();
  } else if (std::string_view ext = sdist_extension(name); !ext.empty()) {
    // Files of one release share the stem: its first sdist is parsed, the others share it.
    std::string_view stem = name.substr(0, name.size() - ext.size());
    if (auto release = wheels_.find_sdist_release(stem)) {
      file.set_sdist(std::move(release));
    } else if (auto parsed = core::SdistFilename::parse(name)) {
      file.set_sdist(wheels_.sdist_release(stem, *parsed));
    } else {
      reason = parsed.error().message;
    }
  } else if (is_sdist_name(name)) {
    reason = core::SdistFilename::parse(name).error().message;  // e.g. `.tgz`, `.TAR.GZ`
  } else if (auto variants = variants_json_name(name)) {
    // PEP 825 variant metadata: kept (neither a wheel nor an sdist); finish() moves it aside.
    if (filter_.project.empty() || variants->project == filter_.project) return true;
    reason = fmt::format("variant metadata of project '{}'", variants->project);
  } else {
    reason = "not a wheel or sdist";
  }
  if (!file.is_wheel() && !file.is_sdist()) {
    if (!filter_.quiet_drops) {
      if (unparseable_ == 0) {
        first_unparseable_ = name;
        first_unparseable_reason_ = std::move(reason);
      }
      ++unparseable_;
    }
    return false;
  }
  if (!filter_.project.empty() && file.project() != filter_.project) {
    if (!filter_.quiet_drops) {
      if (other_project_ == 0) first_other_project_ = name;
      ++other_project_;
    }
    return false;
  }
  return true;
}

void FileClassifier::take_variants_files(ProjectPage& page) {
  auto other = [](const DistFile& f) { return !f.is_wheel() && !f.is_sdist(); };
  if (std::none_of(page.files.begin(), page.files.end(), other)) return;
  std::vector<DistFile> kept;
  kept.reserve(page.files.size());
  for (auto& f : page.files)
    (other(f) ? page.variants_files : kept).push_back(std::move(f));
  page.files = std::move(kept);
}

void FileClassifier::finish(ProjectPage& page) const {
  take_variants_files(page);
  // File names come from the index: escaped before they can reach a terminal.
  const std::string first_unparseable = printable_index_text(first_unparseable_);
  const std::string first_unparseable_reason = printable_index_text(first_unparseable_reason_);
  const std::string first_other_project = printable_index_text(first_other_project_);
  if (unparseable_ > 0) {
    page.warnings.push_back(
        unparseable_ == 1
            ? fmt::format("skipped '{}': {}", first_unparseable, first_unparseable_reason)
            : fmt::format(
                  "skipped {} files that are not valid wheel or sdist names (first: '{}': {})",
                  unparseable_, first_unparseable, first_unparseable_reason));
  }
  if (other_project_ > 0) {
    page.warnings.push_back(
        other_project_ == 1
            ? fmt::format("skipped '{}': not a file of project '{}'", first_other_project,
                          filter_.project)
            : fmt::format("skipped {} files of other projects than '{}' (first: '{}')",
                          other_project_, filter_.project, first_other_project));
  }
}

}  // namespace gpulock::index::detail

#include "gpulock/index/page.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "gpulock/core/civil_date.h"
#include "gpulock/core/name.h"
#include "gpulock/index/url.h"

#include "page_builder.h"

namespace gpulock::index {
namespace {

bool read_digits(std::string_view s, std::size_t& pos, std::size_t count, unsigned& out) noexcept {
  if (pos + count > s.size()) return false;
  unsigned v = 0;
  for (std::size_t i = 0; i < count; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  out = v;
  pos += count;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) noexcept {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

const std::string kEmptyName;
const core::Version kVersionZero;

bool is_pytorch_host(std::string_view host) {
  return host == "download.pytorch.org" || host == "download-r2.pytorch.org";
}

}  // namespace

IndexSource IndexSource::simple(std::string_view url_or_path, std::string display_name) {
  IndexSource s;
  s.url = url_from_user_input(url_or_path);
  UrlParts parts = split_url(s.url);
  if (!parts.has_query && !parts.has_fragment && (s.url.empty() || s.url.back() != '/')) {
    s.url.push_back('/');
  }
  s.kind = SourceKind::SimpleApi;
  s.name = std::move(display_name);
  s.forbidden_means_missing = is_pytorch_host(url_host(s.url));
  return s;
}

IndexSource IndexSource::find_links(std::string_view url_or_path, std::string display_name) {
  IndexSource s;
  s.url = url_from_user_input(url_or_path);
  s.kind = SourceKind::FindLinks;
  s.name = std::move(display_name);
  s.forbidden_means_missing = is_pytorch_host(url_host(s.url));
  return s;
}

std::string IndexSource::project_url(std::string_view project) const {
  if (kind == SourceKind::FindLinks) return url;
  std::string out = url;
  if (out.empty() || out.back() != '/') out.push_back('/');
  out += core::normalize_name(project);
  out.push_back('/');
  return out;
}

namespace {

// 64 lowercase hex digits -> 32 bytes; false otherwise (the digest is then kept as text, and
// so are uppercase digits, as given). The decoding is page_builder's, branch-free per digit.
bool decode_sha256(std::string_view hex, std::array<std::uint8_t, 32>& out) noexcept {
  return std::ranges::none_of(hex, [](char c) { return c >= 'A' && c <= 'F'; }) &&
         detail::decode_hex32(hex, out);
}

std::string encode_hex(const std::array<std::uint8_t, 32>& raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(64, '\0');
  for (std::size_t i = 0; i < 32; ++i) {
    out[2 * i] = kDigits[raw[i] >> 4];
    out[2 * i + 1] = kDigits[raw[i] & 15];
  }
  return out;
}

const std::vector<core::Tag> kNoTags;
const std::optional<std::pair<std::uint64_t, std::string>> kNoBuild;

std::uint32_t size32(std::string_view s) {
  // Strings of a page come from a page limited to a few GiB; a longer one is cut, never wrapped.
  return static_cast<std::uint32_t>(std::min<std::size_t>(s.size(), 0xffffffffu));
}

}  // namespace

DistFile::DistFile(const DistFile& other)
    : url_size_(other.url_size_),
      filename_size_(other.filename_size_),
      requires_python_size_(other.requires_python_size_),
      yanked_reason_size_(other.yanked_reason_size_),
      release_(other.release_),
      tag_set_(other.tag_set_),
      size_(other.size_),
      upload_time_(other.upload_time_),
      sha256_(other.sha256_),
      core_metadata_sha256_(other.core_metadata_sha256_),
      flags_(other.flags_) {
  std::size_t n = static_cast<std::size_t>(url_size_) +
                  ((flags_ & kFilenameInUrl) ? 0 : filename_size_) + requires_python_size_ +
                  yanked_reason_size_;
  if (other.text_ && n > 0) {
    text_ = std::make_unique_for_overwrite<char[]>(n);
    std::memcpy(text_.get(), other.text_.get(), n);
  }
  if (other.extra_) extra_ = std::make_unique<Extra>(*other.extra_);
}

DistFile& DistFile::operator=(const DistFile& other) {
  if (this != &other) {
    DistFile copy(other);
    *this = std::move(copy);
  }
  return *this;
}

std::string_view DistFile::url() const noexcept {
  return {text_.get(), url_size_};
}

std::string_view DistFile::filename() const noexcept {
  if (flags_ & kFilenameInUrl) return {text_.get() + url_size_ - filename_size_, filename_size_};
  return {text_.get() + url_size_, filename_size_};
}

std::string_view DistFile::requires_python() const noexcept {
  std::size_t at = url_size_ + ((flags_ & kFilenameInUrl) ? 0 : filename_size_);
  return {text_.get() + at, requires_python_size_};
}

std::string_view DistFile::yanked_reason() const noexcept {
  std::size_t at =
      url_size_ + ((flags_ & kFilenameInUrl) ? 0 : filename_size_) + requires_python_size_;
  return {text_.get() + at, yanked_reason_size_};
}

void DistFile::set_text(std::string_view filename, std::string_view url,
                        std::string_view requires_python, std::string_view yanked_reason) {
  // The views may point into text_: the new buffer is filled before the old one goes.
  const bool in_url = !filename.empty() && url.size() >= filename.size() && url.ends_with(filename);
  const std::uint32_t u = size32(url), f = size32(filename), r = size32(requires_python),
                      y = size32(yanked_reason);
  const std::size_t n = static_cast<std::size_t>(u) + (in_url ? 0 : f) + r + y;
  std::unique_ptr<char[]> text;
  if (n > 0) {
    text = std::make_unique_for_overwrite<char[]>(n);
    char* p = text.get();
    // An empty view may have a null data(): memcpy must not see it, even for 0 bytes.
    auto put = [&p](std::string_view part, std::uint32_t size) {
      if (size > 0) std::memcpy(p, part.data(), size);
      p += size;
    };
    put(url, u);
    if (!in_url) put(filename, f);
    put(requires_python, r);
    put(yanked_reason, y);
  }
  text_ = std::move(text);
  url_size_ = u;
  filename_size_ = f;
  requires_python_size_ = r;
  yanked_reason_size_ = y;
  flags_ = static_cast<std::uint8_t>(in_url ? flags_ | kFilenameInUrl : flags_ & ~kFilenameInUrl);
}

void DistFile::set_filename(std::string_view filename) {
  set_text(filename, url(), requires_python(), yanked_reason());
}

void DistFile::set_url(std::string_view url) {
  // The filename may live at the end of the old URL: copied out first.
  std::string name(filename());
  set_text(name, url, requires_python(), yanked_reason());
}

void DistFile::set_requires_python(std::string_view requires_python) {
  set_text(filename(), url(), requires_python, yanked_reason());
}

void DistFile::set_yanked(bool yanked, std::string_view reason) {
  flags_ = static_cast<std::uint8_t>(yanked ? flags_ | kYanked : flags_ & ~kYanked);
  if (reason != yanked_reason()) set_text(filename(), url(), requires_python(), reason);
}

DistFile::Extra& DistFile::extra() {
  if (!extra_) extra_ = std::make_unique<Extra>();
  return *extra_;
}

void DistFile::add_to(std::vector<Hash>* list, std::array<std::uint8_t, 32>& raw, std::uint8_t flag,
                      std::string_view algorithm, std::string_view hex, bool core_metadata) {
  // One sha256 alone is kept as 32 bytes; anything else as text, in page order.
  if (!(flags_ & flag) && (!list || list->empty()) && algorithm == "sha256" &&
      decode_sha256(hex, raw)) {
    flags_ |= flag;
    return;
  }
  std::vector<Hash>& out = core_metadata ? extra().core_metadata_hashes : extra().hashes;
  if (flags_ & flag) {
    out.push_back({"sha256", encode_hex(raw)});
    flags_ = static_cast<std::uint8_t>(flags_ & ~flag);
    raw = {};
  }
  out.push_back({std::string(algorithm), std::string(hex)});
}

void DistFile::add_hash(std::string_view algorithm, std::string_view hex) {
  add_to(extra_ ? &extra_->hashes : nullptr, sha256_, kSha256, algorithm, hex, false);
}

void DistFile::add_raw_sha256(std::vector<Hash>* list, std::array<std::uint8_t, 32>& raw,
                              std::uint8_t flag, const std::array<std::uint8_t, 32>& digest,
                              bool core_metadata) {
  if (!(flags_ & flag) && (!list || list->empty())) {
    raw = digest;
    flags_ |= flag;
    return;
  }
  add_to(list, raw, flag, "sha256", encode_hex(digest), core_metadata);
}

void DistFile::add_sha256(const std::array<std::uint8_t, 32>& digest) {
  add_raw_sha256(extra_ ? &extra_->hashes : nullptr, sha256_, kSha256, digest, false);
}

void DistFile::clear_hashes() noexcept {
  flags_ = static_cast<std::uint8_t>(flags_ & ~kSha256);
  sha256_ = {};
  if (extra_) extra_->hashes.clear();
}

void DistFile::set_core_metadata(bool advertised) noexcept {
  flags_ = static_cast<std::uint8_t>(advertised ? flags_ | kCoreMetadata : flags_ & ~kCoreMetadata);
}

void DistFile::add_core_metadata_hash(std::string_view algorithm, std::string_view hex) {
  add_to(extra_ ? &extra_->core_metadata_hashes : nullptr, core_metadata_sha256_,
         kCoreMetadataSha256, algorithm, hex, true);
}

void DistFile::add_core_metadata_sha256(const std::array<std::uint8_t, 32>& digest) {
  add_raw_sha256(extra_ ? &extra_->core_metadata_hashes : nullptr, core_metadata_sha256_,
                 kCoreMetadataSha256, digest, true);
}

void DistFile::clear_core_metadata_hashes() noexcept {
  flags_ = static_cast<std::uint8_t>(flags_ & ~kCoreMetadataSha256);
  core_metadata_sha256_ = {};
  if (extra_) extra_->core_metadata_hashes.clear();
}

std::vector<Hash> DistFile::hashes() const {
  if (flags_ & kSha256) return {Hash{"sha256", encode_hex(sha256_)}};
  return extra_ ? extra_->hashes : std::vector<Hash>{};
}

bool DistFile::has_hashes() const noexcept {
  return (flags_ & kSha256) || (extra_ && !extra_->hashes.empty());
}

std::string DistFile::hash(std::string_view algorithm) const {
  if (flags_ & kSha256) return algorithm == "sha256" ? encode_hex(sha256_) : std::string();
  if (extra_) {
    for (const auto& h : extra_->hashes) {
      if (h.algorithm == algorithm) return h.hex;
    }
  }
  return {};
}

std::vector<Hash> DistFile::core_metadata_hashes() const {
  if (flags_ & kCoreMetadataSha256) return {Hash{"sha256", encode_hex(core_metadata_sha256_)}};
  return extra_ ? extra_->core_metadata_hashes : std::vector<Hash>{};
}

std::string DistFile::core_metadata_sha256() const {
  if (flags_ & kCoreMetadataSha256) return encode_hex(core_metadata_sha256_);
  if (extra_) {
    for (const auto& h : extra_->core_metadata_hashes) {
      if (h.algorithm == "sha256") return h.hex;
    }
  }
  return {};
}

std::optional<std::uint64_t> DistFile::size() const noexcept {
  if (flags_ & kHasSize) return size_;
  return std::nullopt;
}

std::optional<std::int64_t> DistFile::upload_time() const noexcept {
  if (flags_ & kHasUploadTime) return upload_time_;
  return std::nullopt;
}

void DistFile::set_size(std::optional<std::uint64_t> size) noexcept {
  size_ = size.value_or(0);
  flags_ = static_cast<std::uint8_t>(size ? flags_ | kHasSize : flags_ & ~kHasSize);
}

void DistFile::set_upload_time(std::optional<std::int64_t> micros) noexcept {
  upload_time_ = micros.value_or(0);
  flags_ = static_cast<std::uint8_t>(micros ? flags_ | kHasUploadTime : flags_ & ~kHasUploadTime);
}

const core::Version& DistFile::version() const noexcept {
  return release_ ? release_->version : kVersionZero;
}

const std::string& DistFile::project() const noexcept {
  return release_ ? release_->name : kEmptyName;
}

const std::vector<core::Tag>& DistFile::tags() const noexcept {
  return tag_set_ ? tag_set_->tags : kNoTags;
}

const std::optional<std::pair<std::uint64_t, std::string>>& DistFile::build() const noexcept {
  return extra_ ? extra_->build : kNoBuild;
}

std::optional<core::WheelFilename> DistFile::wheel() const {
  if (!tag_set_ || !release_) return std::nullopt;
  core::WheelFilename w;
  w.name = release_->name;
  w.version = release_->version;
  w.build = build();
  w.tags = tag_set_->tags;
  w.python_tag = tag_set_->python_tag;
  w.abi_tag = tag_set_->abi_tag;
  w.platform_tag = tag_set_->platform_tag;
  return w;
}

std::optional<core::SdistFilename> DistFile::sdist() const {
  if (!is_sdist()) return std::nullopt;
  auto parsed = core::SdistFilename::parse(filename());
  if (parsed) return std::move(*parsed);
  // Set from parts that no longer match the filename: name and version still hold.
  core::SdistFilename s;
  s.name = release_->name;
  s.version = release_->version;
  return s;
}

void DistFile::set_wheel(std::shared_ptr<const Release> release,
                         std::shared_ptr<const WheelTagSet> tags,
                         std::optional<std::pair<std::uint64_t, std::string>> build) {
  release_ = std::move(release);
  tag_set_ = std::move(tags);
  if (build) {
    extra().build = std::move(build);
  } else if (extra_) {
    extra_->build.reset();
  }
}

void DistFile::set_wheel(const core::WheelFilename& wheel) {
  auto tags = std::make_shared<WheelTagSet>();
  tags->python_tag = wheel.python_tag;
  tags->abi_tag = wheel.abi_tag;
  tags->platform_tag = wheel.platform_tag;
  tags->tags = wheel.tags;
  set_wheel(std::make_shared<const Release>(Release{wheel.name, wheel.version}), std::move(tags),
            wheel.build);
}

void DistFile::set_sdist(std::shared_ptr<const Release> release) {
  release_ = std::move(release);
  tag_set_.reset();
  if (extra_) extra_->build.reset();
}

void DistFile::set_sdist(const core::SdistFilename& sdist) {
  set_sdist(std::make_shared<const Release>(Release{sdist.name, sdist.version}));
}

void DistFile::clear_kind() noexcept {
  release_.reset();
  tag_set_.reset();
  if (extra_) extra_->build.reset();
}

std::string format_timestamp(std::int64_t micros) {
  const core::CivilTime t = core::civil_from_micros(micros);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.date.year, t.date.month,
                                t.date.day, t.hour, t.minute, t.second);
  if (t.micros != 0) out += fmt::format(".{:06}", t.micros);
  out.push_back('Z');
  return out;
}

std::optional<std::int64_t> parse_timestamp(std::string_view s) noexcept {
  std::size_t pos = 0;
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(s, pos, 4, year) || !expect(s, pos, '-') || !read_digits(s, pos, 2, month) ||
      !expect(s, pos, '-') || !read_digits(s, pos, 2, day)) {
    return std::nullopt;
  }
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!read_digits(s, pos, 2, hour) || !expect(s, pos, ':') || !read_digits(s, pos, 2, minute) ||
      !expect(s, pos, ':') || !read_digits(s, pos, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  std::int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    std::int64_t frac = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) frac = frac * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (std::size_t i = digits; i < 6; ++i)
      frac *= 10;
    micros = frac;
  }
  std::int64_t offset = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z' || s[pos] == 'z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int sign = s[pos] == '-' ? -1 : 1;
      ++pos;
      unsigned oh = 0, om = 0;
      if (!read_digits(s, pos, 2, oh)) return std::nullopt;
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (!read_digits(s, pos, 2, om)) return std::nullopt;
      offset = sign * static_cast<std::int64_t>(oh * 3600 + om * 60);
    }
  }
  if (pos != s.size()) return std::nullopt;
  std::int64_t days = core::days_from_civil(year, month, day);
  std::int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset;
  return secs * 1'000'000 + micros;
}

}  // namespace gpulock::index

#pragma once
/// @file
/// What an index says about one project: the Simple Repository API (canonical spec:
/// packaging.python.org, "Simple repository API": PEP 503 HTML, PEP 691 JSON, PEP 592 yanking,
/// PEP 629 versioning, PEP 658/714 core metadata, PEP 700 versions/size/upload-time) and
/// find-links pages/directories (pip's `--find-links`).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/filename.h"

namespace gpulock::index {

enum class SourceKind : std::uint8_t {
  SimpleApi,  ///< PEP 503/691 base URL; a project page is base + normalized name + "/"
  FindLinks,  ///< a flat directory of files, or one HTML page linking to files
};

/// One index as configured by the user.
struct IndexSource {
  /// SimpleApi: the base URL, ending in '/'. FindLinks: a directory or page URL.
  /// http(s):// or file://; may carry credentials (never printed: see redact_url).
  std::string url;
  SourceKind kind = SourceKind::SimpleApi;
  /// A display name ("pypi", "pytorch"), optional.
  std::string name;
  /// A 403 on a project page means "not on this index" (download.pytorch.org answers 403 for
  /// a missing project). `simple()` sets it for download.pytorch.org and download-r2.pytorch.org;
  /// set it by hand for a mirror of that tree.
  bool forbidden_means_missing = false;

  /// A Simple API source from user input (URL or local path); adds the trailing '/'.
  [[nodiscard]] static IndexSource simple(std::string_view url_or_path,
                                          std::string display_name = {});
  /// A find-links source from user input (URL or local directory/file).
  [[nodiscard]] static IndexSource find_links(std::string_view url_or_path,
                                              std::string display_name = {});

  /// SimpleApi: `url + normalize_name(project) + "/"` (PEP 503 §Normalized names); FindLinks:
  /// `url`.
  [[nodiscard]] std::string project_url(std::string_view project) const;
};

/// A hash the index gives for a file, both parts lowercase ("sha256", "4f2a...").
struct Hash {
  std::string algorithm;
  std::string hex;
  friend bool operator==(const Hash&, const Hash&) = default;
};

/// A project name and version that files of one page share (the parsers and the cache intern
/// one per distinct pair, so a page of a million files holds each version once).
struct Release {
  std::string name;  ///< PEP 503 normalized
  core::Version version;
};

/// A wheel's compressed tag set as written (`cp311`, `cp311`,
/// `manylinux_2_17_x86_64.manylinux2014_x86_64`) and expanded: shared by every wheel of a page with
/// the same tags.
struct WheelTagSet {
  std::string python_tag, abi_tag, platform_tag;
  std::vector<core::Tag> tags;  ///< the expanded cross product
};

/// One file (wheel or sdist) a project page lists, as a compact record (issue 18: a page of a
/// million files must cost a few bytes of memory per byte of page, not kilobytes per file). Its
/// strings share one allocation (the filename is not stored again when the URL ends with it), a
/// sha256 digest is kept as 32 bytes, and its name, version and tag set point to entries that
/// the page's files share. A value: copies are independent of the page they came from.
class DistFile {
 public:
  DistFile() = default;
  DistFile(const DistFile& other);
  DistFile& operator=(const DistFile& other);
  DistFile(DistFile&&) noexcept = default;
  DistFile& operator=(DistFile&&) noexcept = default;
  ~DistFile() = default;

  /// As the index names it (percent-decoded), e.g. `torch-2.5.1+cu124-cp311-...whl`.
  [[nodiscard]] std::string_view filename() const noexcept;
  /// Absolute, resolved against the page URL, fragment stripped.
  [[nodiscard]] std::string_view url() const noexcept;
  /// Raw `requires-python` / `data-requires-python`, "" if none.
  [[nodiscard]] std::string_view requires_python() const noexcept;
  /// PEP 592.
  [[nodiscard]] bool yanked() const noexcept { return (flags_ & kYanked) != 0; }
  /// "" when yanked without a reason (made printable by the parsers).
  [[nodiscard]] std::string_view yanked_reason() const noexcept;
  /// From PEP 691 `hashes` or the PEP 503 `#algo=hex` fragment, in page order, both parts
  /// lowercase as the parsers give them.
  [[nodiscard]] std::vector<Hash> hashes() const;
  [[nodiscard]] bool has_hashes() const noexcept;
  /// The hex digest for `algorithm` ("sha256"), or "" when the index gives none.
  [[nodiscard]] std::string hash(std::string_view algorithm) const;
  [[nodiscard]] std::string sha256() const { return hash("sha256"); }
  /// PEP 658/714: the index serves `url + ".metadata"` (core-metadata true or a hash).
  [[nodiscard]] bool core_metadata() const noexcept { return (flags_ & kCoreMetadata) != 0; }
  /// Hashes of the `.metadata` file, if given.
  [[nodiscard]] std::vector<Hash> core_metadata_hashes() const;
  /// The sha256 of the `.metadata` file, or "".
  [[nodiscard]] std::string core_metadata_sha256() const;
  /// The file's sha256 as its 32 bytes when that is its only hash (what nearly every index
  /// gives), else null; the same for the `.metadata` file. The cache stores them so.
  [[nodiscard]] const std::array<std::uint8_t, 32>* sha256_digest() const noexcept {
    return (flags_ & kSha256) ? &sha256_ : nullptr;
  }
  [[nodiscard]] const std::array<std::uint8_t, 32>* core_metadata_sha256_digest() const noexcept {
    return (flags_ & kCoreMetadataSha256) ? &core_metadata_sha256_ : nullptr;
  }
  /// PEP 700 `size` (JSON), `data-size` (HTML).
  [[nodiscard]] std::optional<std::uint64_t> size() const noexcept;
  /// PEP 700 `upload-time` (JSON) or PyTorch's non-standard `data-upload-time` (HTML), in
  /// microseconds since 1970-01-01T00:00:00Z.
  [[nodiscard]] std::optional<std::int64_t> upload_time() const noexcept;

  /// Exactly one of these holds for a file on a page: files whose names parse as neither are
  /// dropped by the parsers (with a warning on the page).
  [[nodiscard]] bool is_wheel() const noexcept { return tag_set_ != nullptr; }
  [[nodiscard]] bool is_sdist() const noexcept { return release_ && !tag_set_; }
  /// The file's version (from the wheel or sdist filename); 0 when neither.
  [[nodiscard]] const core::Version& version() const noexcept;
  /// The PEP 503 normalized project name from the filename; "" when neither.
  [[nodiscard]] const std::string& project() const noexcept;
  /// A wheel's tag set, shared by the page's wheels with the same tags; null unless a wheel.
  [[nodiscard]] const WheelTagSet* tag_set() const noexcept { return tag_set_.get(); }
  /// A wheel's expanded tags; empty unless a wheel.
  [[nodiscard]] const std::vector<core::Tag>& tags() const noexcept;
  /// A wheel's build tag (PEP 427), if any.
  [[nodiscard]] const std::optional<std::pair<std::uint64_t, std::string>>& build() const noexcept;
  /// The parsed wheel filename, rebuilt from the shared parts; nullopt unless a wheel.
  [[nodiscard]] std::optional<core::WheelFilename> wheel() const;
  /// The parsed sdist filename; nullopt unless an sdist.
  [[nodiscard]] std::optional<core::SdistFilename> sdist() const;

  // ---- building (parsers, the cache, tests) ----
  /// Sets the four strings at once (one allocation).
  void set_text(std::string_view filename, std::string_view url,
                std::string_view requires_python = {}, std::string_view yanked_reason = {});
  void set_filename(std::string_view filename);
  void set_url(std::string_view url);
  void set_requires_python(std::string_view requires_python);
  void set_yanked(bool yanked, std::string_view reason = {});
  /// Appends a hash; `hex` is kept as given (the parsers lowercase it).
  void add_hash(std::string_view algorithm, std::string_view hex);
  void add_hash(const Hash& h) { add_hash(h.algorithm, h.hex); }
  /// Appends a sha256 digest given as its 32 bytes: what `add_hash("sha256", hex)` keeps for
  /// its lowercase hex, without the text (the parsers decode a digest straight from the page).
  void add_sha256(const std::array<std::uint8_t, 32>& digest);
  void clear_hashes() noexcept;
  void set_core_metadata(bool advertised) noexcept;
  void add_core_metadata_hash(std::string_view algorithm, std::string_view hex);
  void add_core_metadata_hash(const Hash& h) { add_core_metadata_hash(h.algorithm, h.hex); }
  /// As add_sha256, for the `.metadata` file.
  void add_core_metadata_sha256(const std::array<std::uint8_t, 32>& digest);
  void clear_core_metadata_hashes() noexcept;
  void set_size(std::optional<std::uint64_t> size) noexcept;
  void set_upload_time(std::optional<std::int64_t> micros) noexcept;
  /// A wheel from shared parts (the parsers and the cache intern them per page).
  void set_wheel(std::shared_ptr<const Release> release, std::shared_ptr<const WheelTagSet> tags,
                 std::optional<std::pair<std::uint64_t, std::string>> build = std::nullopt);
  /// A wheel from a parsed filename (its own parts).
  void set_wheel(const core::WheelFilename& wheel);
  void set_sdist(std::shared_ptr<const Release> release);
  void set_sdist(const core::SdistFilename& sdist);
  /// Neither a wheel nor an sdist.
  void clear_kind() noexcept;

 private:
  enum : std::uint8_t {
    kYanked = 1,
    kCoreMetadata = 2,
    kHasSize = 4,
    kHasUploadTime = 8,
    kSha256 = 16,              // the only hash is a sha256, in sha256_
    kCoreMetadataSha256 = 32,  // the only .metadata hash is a sha256, in core_metadata_sha256_
    kFilenameInUrl = 64,       // the URL ends with the filename, which is not stored again
  };
  // What few files have: hashes other than one sha256, a build tag.
  struct Extra {
    std::vector<Hash> hashes;
    std::vector<Hash> core_metadata_hashes;
    std::optional<std::pair<std::uint64_t, std::string>> build;
  };
  Extra& extra();
  void add_to(std::vector<Hash>* list, std::array<std::uint8_t, 32>& raw, std::uint8_t flag,
              std::string_view algorithm, std::string_view hex, bool core_metadata);
  // add_sha256 and add_core_metadata_sha256: a first sha256 kept as its bytes, else as add_to.
  void add_raw_sha256(std::vector<Hash>* list, std::array<std::uint8_t, 32>& raw, std::uint8_t flag,
                      const std::array<std::uint8_t, 32>& digest, bool core_metadata);

  // text_: url, filename (unless kFilenameInUrl), requires_python, yanked_reason.
  std::unique_ptr<char[]> text_;
  std::uint32_t url_size_ = 0;
  std::uint32_t filename_size_ = 0;
  std::uint32_t requires_python_size_ = 0;
  std::uint32_t yanked_reason_size_ = 0;
  std::shared_ptr<const Release> release_;
  std::shared_ptr<const WheelTagSet> tag_set_;
  std::unique_ptr<Extra> extra_;
  std::uint64_t size_ = 0;
  std::int64_t upload_time_ = 0;
  std::array<std::uint8_t, 32> sha256_{};
  std::array<std::uint8_t, 32> core_metadata_sha256_{};
  std::uint8_t flags_ = 0;
};

/// Files of one version that a client with ClientOptions::keep_wheel left out of a page.
struct OmittedVersion {
  core::Version version;
  bool wheels = false;  ///< wheels for other targets (tags keep_wheel refused)
  bool sdists = false;  ///< source distributions
};

/// One project on one index.
struct ProjectPage {
  /// False when the index does not have the project (404, or 403 with
  /// IndexSource::forbidden_means_missing): a normal answer, not an error.
  bool found = false;
  std::string name;             ///< PEP 503 normalized
  std::string url;              ///< the page URL (redacted)
  std::vector<DistFile> files;  ///< in page order
  /// PEP 825 variant metadata files (`{name}-{version}-variants.json`) the page lists, in page
  /// order: neither wheels nor sdists (their version is read from the name, variants_json_name).
  std::vector<DistFile> variants_files;
  std::vector<std::string> versions;  ///< PEP 700 `versions` (JSON only), as written
  std::string api_version;            ///< PEP 629 "1.1"; "1.0" when the page does not say
  std::vector<std::string> warnings;  ///< dropped files, a newer API minor, bad attributes
  /// Only from a client with ClientOptions::keep_wheel: the versions of the files that are not
  /// in `files`, one entry per version, in order of first appearance. Empty otherwise.
  std::vector<OmittedVersion> omitted;
};

using ProjectPagePtr = std::shared_ptr<const ProjectPage>;

/// Formats microseconds since the epoch as `2025-06-04T17:34:58.747000Z` (RFC 3339, UTC;
/// fraction only when non-zero, 6 digits).
[[nodiscard]] std::string format_timestamp(std::int64_t micros);

/// Parses `YYYY-MM-DD[T ]HH:MM:SS[.f{1,9}](Z|+HH:MM|-HH:MM)?` (no zone = UTC) into microseconds
/// since the epoch; nullopt when malformed.
[[nodiscard]] std::optional<std::int64_t> parse_timestamp(std::string_view text) noexcept;

}  // namespace gpulock::index

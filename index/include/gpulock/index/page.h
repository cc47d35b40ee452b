#pragma once
/// @file
/// What an index says about one project: the Simple Repository API (canonical spec:
/// packaging.python.org, "Simple repository API": PEP 503 HTML, PEP 691 JSON, PEP 592 yanking,
/// PEP 629 versioning, PEP 658/714 core metadata, PEP 700 versions/size/upload-time) and
/// find-links pages/directories (pip's `--find-links`).

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

/// One file (wheel or sdist) a project page lists.
struct DistFile {
  /// As the index names it (percent-decoded), e.g. `torch-2.5.1+cu124-cp311-...whl`.
  std::string filename;
  std::string url;              ///< absolute, resolved against the page URL, fragment stripped
  std::vector<Hash> hashes;     ///< from PEP 691 `hashes` or the PEP 503 `#algo=hex` fragment
  std::string requires_python;  ///< raw `requires-python` / `data-requires-python`, "" if none
  bool yanked = false;          ///< PEP 592
  std::string yanked_reason;    ///< "" when yanked without a reason
  /// PEP 658/714: the index serves `url + ".metadata"` (core-metadata true or a hash).
  bool core_metadata = false;
  std::vector<Hash> core_metadata_hashes;  ///< hashes of the `.metadata` file, if given
  std::optional<std::uint64_t> size;       ///< PEP 700 `size` (JSON), `data-size` (HTML)
  /// PEP 700 `upload-time` (JSON) or PyTorch's non-standard `data-upload-time` (HTML), in
  /// microseconds since 1970-01-01T00:00:00Z.
  std::optional<std::int64_t> upload_time;
  /// Exactly one of these is set: files whose names parse as neither are dropped by the parsers
  /// (with a warning on the page).
  std::optional<core::WheelFilename> wheel;
  std::optional<core::SdistFilename> sdist;

  /// The hex digest for `algorithm` ("sha256"), or "" when the index gives none.
  [[nodiscard]] std::string_view hash(std::string_view algorithm) const noexcept;
  [[nodiscard]] std::string_view sha256() const noexcept { return hash("sha256"); }
  /// The sha256 of the `.metadata` file, or "".
  [[nodiscard]] std::string_view core_metadata_sha256() const noexcept;
  /// The file's version (from the wheel or sdist filename).
  [[nodiscard]] const core::Version& version() const noexcept;
  /// The PEP 503 normalized project name from the filename.
  [[nodiscard]] const std::string& project() const noexcept;
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
  std::string name;                   ///< PEP 503 normalized
  std::string url;                    ///< the page URL (redacted)
  std::vector<DistFile> files;        ///< in page order
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

#pragma once
// Internal access to Version for the parsers and matchers in core/src (not installed).

#include <cstddef>
#include <string>
#include <string_view>

#include "gpulock/core/version.h"

namespace gpulock::core {

struct VersionAccess {
  /// Three-way comparison; with `ignore_local_a`, `a` is compared as if it had no local label
  /// (packaging's `Version(prospective.public)`), without building a copy.
  static int compare(const Version& a, const Version& b, bool ignore_local_a = false) noexcept;
  /// Epoch and release equal, trailing zeros ignored (`Version(a.base_version) ==
  /// Version(b.base_version)`).
  static bool base_equal(const Version& a, const Version& b) noexcept;
  /// Number of release components up to the last non-zero one.
  static std::size_t significant(const Version& v) noexcept { return v.release_significant_; }
  static void set_release(Version& v, std::span<const std::uint64_t> r) { v.set_release(r); }
  static void set_epoch(Version& v, std::uint64_t e) noexcept { v.epoch_ = e; }
  static void set_pre(Version& v, std::optional<Version::Pre> p) noexcept { v.pre_ = p; }
  static void set_post(Version& v, std::optional<std::uint64_t> p) noexcept { v.post_ = p; }
  static void set_dev(Version& v, std::optional<std::uint64_t> d) noexcept { v.dev_ = d; }
  static std::vector<Version::LocalSegment>& local(Version& v) noexcept { return v.local_; }
};

namespace detail {

struct VersionScanOptions {
  bool allow_local = true;      ///< `+label` accepted (Version, ==, !=)
  bool allow_wildcard = false;  ///< `.*` right after the release accepted (==, !=)
  std::size_t min_release = 1;  ///< `~=` needs two release components
};

struct VersionScan {
  bool ok = false;
  bool wildcard = false;
  std::size_t end = 0;        ///< position after the version (when ok)
  std::size_t error_pos = 0;  ///< 0-based position of the offending character (when !ok)
  std::string error;          ///< what went wrong, for a message
};

/// Matches packaging's VERSION_PATTERN (re.IGNORECASE) at text[pos], greedily, without the
/// surrounding `\s*` and without requiring the end of the text: `v? (N!)? N(.N)* pre? post?
/// dev? (+local)?`. Every optional part is taken as long as it matches, which for this grammar
/// finds the same match as Python's backtracking regex. Numbers above 2^64-1 fail.
/// `out` must be a default-constructed Version (it is filled in, not reset).
VersionScan scan_version(std::string_view text, std::size_t pos, const VersionScanOptions& options,
                         Version& out);

}  // namespace detail
}  // namespace gpulock::core

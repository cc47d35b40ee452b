#pragma once
// Shared by the HTML and JSON parsers: turns a filename into a wheel/sdist DistFile, filters
// by project and collects the warnings for dropped files (one warning per kind, not per file).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpulock/index/page.h"
#include "gpulock/index/parse.h"

namespace gpulock::index::detail {

/// HTML's ASCII whitespace (space, \t, \n, \r, \f; no \v), for the PEP 503 page and the
/// project list readers.
inline bool is_html_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/// core::WheelFilename::parse_with_variant (PEP 825 labels accepted), memoized per page: a PyPI
/// page has thousands of wheels but only tens of distinct names, versions and tag sets, and parsing
/// each filename from scratch is the dominant cost of reading a page. Each distinct component is
/// parsed once, by the same core functions WheelFilename::parse uses (Version::parse,
/// parse_tag_set, and WheelFilename::parse itself to validate a name), so the result is identical;
/// anything unusual (a build tag, an invalid component, a variant label) goes to
/// WheelFilename::parse_with_variant for its exact error.
class WheelNameMemo {
 public:
  /// The parsed filename (for tests: what classify() gives, rebuilt).
  core::Result<core::WheelFilename> parse(std::string_view filename);
  /// Makes `file` a wheel from `filename`, with the page's shared name/version and tag-set
  /// entries; false with the parse error's message in `error`.
  bool classify(std::string_view filename, DistFile& file, std::string& error);
  /// The shared entry for an sdist's name and version (keyed by the filename's stem).
  std::shared_ptr<const Release> sdist_release(std::string_view stem,
                                               const core::SdistFilename& parsed);
  /// The shared entry for `stem`, or null when no sdist with that stem was seen.
  std::shared_ptr<const Release> find_sdist_release(std::string_view stem) const;

 private:
  // A multiply-xorshift hash over 8-byte words: keys are short ASCII filename parts, and
  // std::hash (murmur, byte-oriented tail) showed up in profiles of large pages.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept;
  };
  template <class V>
  using Map = std::unordered_map<std::string, V, Hash, std::equal_to<>>;
  using ReleasePtr = std::shared_ptr<const Release>;
  using TagSetPtr = std::shared_ptr<const WheelTagSet>;

  bool full_parse(std::string_view filename, DistFile& file, std::string& error);
  const ReleasePtr& release_for(std::string_view key, const std::string& name,
                                const core::Version& version);
  const TagSetPtr& tag_set_for(std::string_view key, const core::WheelFilename& parsed);

  Map<std::string> names_;    // raw name -> normalized (valid names only)
  Map<ReleasePtr> releases_;  // normalized name '\n' raw version -> entry
  Map<ReleasePtr> sdists_;    // sdist stem -> entry
  Map<TagSetPtr> tags_;       // raw compressed tags -> entry
  // A direct-mapped cache in front of tags_, indexed by a few bytes of the key: the 10-50
  // tag sets of a page repeat for every version, and this avoids hashing whole keys.
  struct TagSlot {
    const std::pair<const std::string, TagSetPtr>* entry = nullptr;
  };
  static constexpr std::size_t kTagSlots = 256;
  TagSlot tag_slots_[kTagSlots];
  // The previous file's entries (unordered_map nodes never move).
  const std::pair<const std::string, std::string>* last_name_ = nullptr;
  std::string last_version_text_;
  const ReleasePtr* last_release_ = nullptr;
  std::string key_;  // scratch
};

/// Free text from an index (a yanked reason) made safe to print: C0 and C1 control characters
/// and DEL are written as `\xNN`, so no terminal escape sequence from a server reaches the
/// terminal, --json or a GitHub annotation (issue 17). Other UTF-8 is kept.
[[nodiscard]] std::string printable_index_text(std::string_view text);

class FileClassifier {
 public:
  explicit FileClassifier(const PageFilter& filter) : filter_(filter) {}

  /// Parses `file.filename()` and makes `file` a wheel or an sdist; false when the file must be
  /// dropped.
  bool accept(DistFile& file);
  /// Adds the collected warnings to the page and moves the variant metadata files it accepted
  /// out of `page.files` (take_variants_files).
  void finish(ProjectPage& page) const;
  /// Moves the accepted PEP 825 `*-variants.json` files (neither wheel nor sdist) from
  /// `page.files` to `page.variants_files`.
  static void take_variants_files(ProjectPage& page);

 private:
  const PageFilter& filter_;
  WheelNameMemo wheels_;
  std::size_t unparseable_ = 0;
  std::string first_unparseable_;
  std::string first_unparseable_reason_;
  std::size_t other_project_ = 0;
  std::string first_other_project_;
};

/// `algo=hex` (a PEP 503 fragment or a `data-core-metadata` value) -> Hash, both lowercase.
bool parse_hash_pair(std::string_view text, Hash& out);

/// `algo=hex` added to `file`'s hashes (or its core-metadata hashes) as parse_hash_pair reads
/// it; a `sha256=` digest goes straight to its 32 bytes. False (nothing added) when unreadable.
bool add_hash_pair(std::string_view text, DistFile& file, bool core_metadata);

/// Exactly 64 hex digits, either case -> the 32 bytes of a sha256 digest; false otherwise
/// (`out` is then unspecified). Branch-free per digit: the digits of a digest are random, and a
/// branch on "digit or letter" mispredicts half the time (it was most of a page's parse time).
bool decode_hex32(std::string_view hex, std::array<std::uint8_t, 32>& out) noexcept;

/// True when every byte of `text` is a hex digit (either case); true for "".
bool all_hex(std::string_view text) noexcept;

/// ASCII lowercase in place.
void ascii_lower(std::string& s) noexcept;
/// `out` = ASCII lowercase of `text`, in one pass (16 bytes at a time); `text` must not point
/// into `out`.
void assign_lower(std::string& out, std::string_view text);

/// Room for the files of a page of `bytes` (a file takes ~200-500 bytes of JSON or HTML): reserved
/// generously, since pages of a reservation that are never written cost no memory, while a vector
/// that grows by doubling moves every file and holds the old and the new at once.
void reserve_files(std::vector<DistFile>& files, std::uint64_t bytes);

/// The '\n' bytes of `text` (few in a page: one memchr per line).
std::size_t count_newlines(std::string_view text) noexcept;

}  // namespace gpulock::index::detail

#pragma once
// A zip's central directory, parsed by gpulock itself (no libzip, no plugin: a local wheel and a
// cached list load nothing): the end-of-central-directory record (APPNOTE §4.3.16), the zip64
// locator and record (§4.3.15, §4.3.14), then each central directory header (§4.3.12) with its
// zip64 extra field (§4.5.3). Every count, size and offset is checked against the file's size and
// against each other before anything is read or reserved, and all the reads of one file together
// stop at kMaxRangeBytes: a directory that lies cannot make the reader fetch or hold more.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/index/wheel_members.h"

#include "remote_zip.h"

namespace gpulock::index::detail {

/// The first read of a remote wheel: 1% of its size, at least kTailBytes (the largest EOCD
/// record with its comment, the zip64 locator and record), at most kMaxTailBytes, never more than
/// the file. Unknown size: kTailBytes.
inline constexpr std::uint64_t kMaxTailBytes = 1024 * 1024;
[[nodiscard]] std::uint64_t member_tail_bytes(std::optional<std::uint64_t> size) noexcept;

/// Where a zip's central directory lies.
struct ZipDirectoryExtent {
  std::uint64_t offset = 0;   ///< of its first header
  std::uint64_t size = 0;     ///< bytes of headers
  std::uint64_t entries = 0;  ///< headers it holds
};

/// Bytes [start, start + bytes.size()) of a file of `total` bytes (the end of the file, when
/// start + bytes.size() == total).
struct ZipWindow {
  std::uint64_t total = 0;
  std::uint64_t start = 0;
  std::string_view bytes;
};

/// locate_zip_directory's answer: the extent, or else the offset the window must start at (or
/// before) for the next try.
struct ZipLocation {
  std::optional<ZipDirectoryExtent> extent;
  std::uint64_t need_from = 0;
};

/// Finds the end records in a window that ends the file. Errors: InvalidInput (no EOCD record, a
/// multi-disk archive, a zip64 record that is missing or does not end where the locator says, a
/// directory that does not end where the end records begin, more entries than its size holds).
[[nodiscard]] core::Result<ZipLocation> locate_zip_directory(const ZipWindow& window,
                                                             std::string_view display);

/// The members of `dir`, the extent's bytes exactly. Errors: InvalidInput (a header cut short or
/// without its signature, a size or offset that points past the directory's start, a missing
/// zip64 field, a name with a NUL, more or fewer headers than the extent says).
[[nodiscard]] core::Result<std::vector<WheelMember>> parse_zip_directory(
    std::string_view dir, const ZipDirectoryExtent& extent, std::string_view display);

/// The members of a file of `total` bytes whose last bytes are `tail`: locates the directory,
/// asks `fetch` for what it lacks before the tail (one range for a larger directory; two when a
/// zip64 record also lies before it), then parses it. `fetched` (optional) counts the bytes
/// asked for. Errors: locate_zip_directory's and parse_zip_directory's, IndexFormat (the tail and
/// the ranges would pass kMaxRangeBytes), and `fetch`'s (located at `display`).
[[nodiscard]] core::Result<std::vector<WheelMember>> members_via_ranges(
    std::uint64_t total, std::string tail, const RangeFetch& fetch, std::string_view display,
    std::uint64_t* fetched = nullptr);

/// The members of a whole file in memory.
[[nodiscard]] core::Result<std::vector<WheelMember>> members_from_buffer(std::string_view data,
                                                                         std::string_view display);

/// make_wheel_members with the digest already known (a cache entry: its checksum covers it).
[[nodiscard]] WheelMembers wheel_members_with_digest(std::vector<WheelMember> members,
                                                     std::string digest);

}  // namespace gpulock::index::detail

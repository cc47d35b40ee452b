#pragma once
// METADATA of a remote wheel by HTTP range reads: libzip reads the archive through a custom
// zip_source whose READ fetches missing byte ranges on demand (coalescing small reads into one
// range request of at least kMinChunk bytes), and which reports SEEK and TELL support, as libzip
// requires for reading an archive.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/core/filename.h"

namespace gpulock::index::detail {

/// Bytes [start, end] (inclusive) of the remote file.
using RangeFetch = std::function<core::Result<std::string>(std::uint64_t start, std::uint64_t end)>;

// The first range read: libzip searches the last 65,578 bytes for the end of central directory
// record (a 64 KiB comment, the record, the ZIP64 locator), so a shorter tail always cost a
// second request (issue 27).
inline constexpr std::uint64_t kTailBytes = 72 * 1024;
inline constexpr std::uint64_t kMinChunk = 64 * 1024;
/// All range reads of one wheel together (its central directory, the METADATA entry's local
/// header and data) stop at this many bytes: a central directory that lies about its size or
/// offsets cannot make the client fetch and hold a whole multi-gigabyte wheel.
inline constexpr std::uint64_t kMaxRangeBytes = 64 * 1024 * 1024;

/// `tail` holds the bytes [tail_start, total) already fetched.
core::Result<std::string> metadata_via_ranges(std::uint64_t total, std::uint64_t tail_start,
                                              std::string tail, const RangeFetch& fetch,
                                              const core::WheelFilename* expected,
                                              std::string_view display);

/// A whole wheel held in memory.
core::Result<std::string> metadata_from_buffer(std::string_view data,
                                               const core::WheelFilename* expected,
                                               std::string_view display);

}  // namespace gpulock::index::detail

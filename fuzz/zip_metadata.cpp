// The zip reader of range reads (index/src/remote_zip.cpp, zip_metadata.cpp; libzip through
// gpulock's own zip_source that fetches byte ranges on demand). The input is a whole wheel:
// read once from memory and once by "range requests" answered from the input, starting from a
// tail of at most kTailBytes as the client does. Properties: both paths agree (same METADATA or
// both fail), the METADATA is at most kMaxMetadataBytes, every range asked is inside the file.
#include <fmt/format.h>

#include "gpulock/core/filename.h"
#include "gpulock/index/wheel.h"

#include "fuzz_check.h"
#include "net_impl.h"

namespace net = gpulock::index::net;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view wheel = gpulock::fuzz::as_text(data, size);
  static const auto expected = *gpulock::core::WheelFilename::parse("demo-1.0-py3-none-any.whl");
  auto whole = net::metadata_from_buffer(wheel, &expected, "demo.whl");
  if (whole)
    FUZZ_CHECK(whole->size() <= gpulock::index::kMaxMetadataBytes, "METADATA over the limit");
  // Range reads: a tail of a quarter of the file (at least 22 bytes, the end-of-central-directory
  // record), the rest fetched. The tail size varies with the input so both the cached and the
  // fetched paths run.
  std::uint64_t total = size;
  std::uint64_t tail_size = std::min<std::uint64_t>(
      total, std::min<std::uint64_t>(gpulock::index::detail::kTailBytes,
                                     std::max<std::uint64_t>(22, total / 4)));
  std::uint64_t tail_start = total - tail_size;
  std::size_t fetches = 0;
  gpulock::index::detail::RangeFetch fetch =
      [&](std::uint64_t start, std::uint64_t end) -> gpulock::core::Result<std::string> {
    FUZZ_CHECK(start <= end && end < total,
               fmt::format("range {}-{} of a {} byte file", start, end, total));
    ++fetches;
    return std::string(wheel.substr(start, end - start + 1));
  };
  auto ranged = net::metadata_via_ranges(total, tail_start, std::string(wheel.substr(tail_start)),
                                         fetch, &expected, "demo.whl");
  FUZZ_CHECK(whole.has_value() == ranged.has_value(),
             fmt::format("from memory: {}; by ranges: {}", whole ? "ok" : whole.error().message,
                         ranged ? "ok" : ranged.error().message));
  if (whole) FUZZ_CHECK(*whole == *ranged, "the two paths read different METADATA");
  return 0;
}

// A wheel's member list from its zip central directory (index/src/zip_directory.cpp, issue 44:
// gpulock's own parser of the EOCD record, the zip64 locator and record, and the central
// headers). The input is a whole file: read once from memory and once by "range requests"
// answered from the input, starting from a tail whose size varies with the input's length.
// Properties: both paths agree (same members or both fail); every range asked lies inside the
// file and before the bytes already held, and all of them together stay within the file and
// kMaxRangeBytes; at most three ranges; every member has a non-empty name without NUL that is
// not a directory; no more members than 46-byte headers fit in the file; the digest and the
// shared libraries are those of the members.
#include "zip_directory.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/index/wheel_members.h"

#include "fuzz_check.h"

namespace detail = gpulock::index::detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view file = gpulock::fuzz::as_text(data, size);
  auto whole = detail::members_from_buffer(file, "fuzz.whl");
  const std::uint64_t total = size;
  const std::uint64_t tail_size =
      std::min<std::uint64_t>(total, std::max<std::uint64_t>(22, total >> (size % 5)));
  std::uint64_t held_from = total - tail_size;
  std::size_t fetches = 0;
  detail::RangeFetch fetch = [&](std::uint64_t start,
                                 std::uint64_t end) -> gpulock::core::Result<std::string> {
    FUZZ_CHECK(
        start <= end && end < held_from,
        fmt::format("range {}-{} with bytes from {} held, of {}", start, end, held_from, total));
    ++fetches;
    held_from = start;
    return std::string(file.substr(start, end - start + 1));
  };
  std::uint64_t fetched = 0;
  auto ranged = detail::members_via_ranges(total, std::string(file.substr(total - tail_size)),
                                           fetch, "fuzz.whl", &fetched);
  FUZZ_CHECK(fetches <= 3, fmt::format("{} range requests", fetches));
  FUZZ_CHECK(whole.has_value() == ranged.has_value(),
             fmt::format("from memory: {}; by ranges: {}", whole ? "ok" : whole.error().message,
                         ranged ? "ok" : ranged.error().message));
  if (!whole) return 0;
  FUZZ_CHECK(*whole == *ranged, "the two paths read different members");
  FUZZ_CHECK(fetched <= total && fetched <= detail::kMaxRangeBytes,
             fmt::format("{} bytes read of {}", fetched, total));
  FUZZ_CHECK(whole->size() <= total / 46,
             fmt::format("{} members in {} bytes", whole->size(), total));
  for (const auto& m : *whole) {
    FUZZ_CHECK(!m.path.empty() && m.path.back() != '/' && m.path.find('\0') == std::string::npos,
               "a member name that is empty, a directory or holds a NUL");
  }
  auto members = gpulock::index::make_wheel_members(*whole);
  FUZZ_CHECK(
      members.digest == gpulock::index::members_digest(*whole) && members.digest.size() == 64,
      "the digest is not the members'");
  for (const auto& lib : members.shared_libraries) {
    FUZZ_CHECK(
        gpulock::index::is_shared_library(lib) &&
            std::any_of(whole->begin(), whole->end(), [&](const auto& m) { return m.path == lib; }),
        "a shared library that is no member");
  }
  return 0;
}

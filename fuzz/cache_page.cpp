// The index cache's binary page entries (index/src/cache_codec.cpp: encode_page, decode_page).
// The cache is gpulock's own, but a file in it may be torn by a crash or changed by anyone who
// can write the directory, so its decoder is a parser of outside bytes. Byte 0 picks the mode:
//  - even: the rest is a cache entry; decoding it must not crash, and what decodes must encode
//    and decode again to the same files (filtered or not, by bit 1);
//  - odd: the rest is a PEP 691 page; every page that parses must survive encode -> decode with
//    the same files: filename, URL, hashes (a lone sha256 stored as 32 bytes, others as text),
//    the .metadata hashes, requires-python, yanked, size and upload time.
#include <fmt/format.h>

#include "cache.h"
#include "page_checks.h"

namespace {

using gpulock::index::DistFile;
using gpulock::index::ProjectPage;

void check_same(const ProjectPage& a, const ProjectPage& b) {
  FUZZ_CHECK(a.files.size() == b.files.size(),
             fmt::format("{} files -> {}", a.files.size(), b.files.size()));
  FUZZ_CHECK(a.variants_files.size() == b.variants_files.size(), "variants files differ");
  FUZZ_CHECK(a.versions == b.versions && a.name == b.name && a.url == b.url, "page fields differ");
  for (std::size_t i = 0; i < a.files.size() && i < b.files.size(); ++i) {
    const DistFile& x = a.files[i];
    const DistFile& y = b.files[i];
    auto same_hashes = [](const std::vector<gpulock::index::Hash>& p,
                          const std::vector<gpulock::index::Hash>& q) {
      if (p.size() != q.size()) return false;
      for (std::size_t k = 0; k < p.size(); ++k) {
        if (p[k].algorithm != q[k].algorithm || p[k].hex != q[k].hex) return false;
      }
      return true;
    };
    FUZZ_CHECK(
        x.filename() == y.filename() && x.url() == y.url(),
        fmt::format("'{}' at '{}' -> '{}' at '{}'", x.filename(), x.url(), y.filename(), y.url()));
    FUZZ_CHECK(same_hashes(x.hashes(), y.hashes()), fmt::format("hashes of '{}'", x.filename()));
    FUZZ_CHECK(x.core_metadata() == y.core_metadata() &&
                   same_hashes(x.core_metadata_hashes(), y.core_metadata_hashes()),
               fmt::format(".metadata of '{}'", x.filename()));
    FUZZ_CHECK(x.requires_python() == y.requires_python() && x.yanked() == y.yanked() &&
                   x.yanked_reason() == y.yanked_reason() && x.size() == y.size() &&
                   x.upload_time() == y.upload_time(),
               fmt::format("fields of '{}'", x.filename()));
    FUZZ_CHECK(x.is_wheel() == y.is_wheel() && x.is_sdist() == y.is_sdist() &&
                   ((!x.is_wheel() && !x.is_sdist()) ||
                    (x.project() == y.project() && x.version() == y.version())),
               fmt::format("kind of '{}'", x.filename()));
  }
}

void round_trip(const ProjectPage& page) {
  std::string bytes;
  gpulock::index::detail::encode_page(page, bytes);
  std::string_view in = bytes;
  ProjectPage back;
  FUZZ_CHECK(gpulock::index::detail::decode_page(in, back), "an encoded page does not decode");
  check_same(page, back);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view rest = gpulock::fuzz::as_text(data + 1, size - 1);
  if (data[0] & 1) {
    auto filter = gpulock::fuzz::filter_for(data[0] >> 1);
    auto page = gpulock::index::parse_json_page(rest, "https://example.org/simple/demo/", filter);
    if (page) round_trip(*page);
    return 0;
  }
  gpulock::index::detail::WheelFilter keep_x86 = [](std::span<const gpulock::core::Tag> tags) {
    for (const auto& t : tags) {
      if (t.platform.find("x86_64") != std::string::npos || t.platform == "any") return true;
    }
    return false;
  };
  std::string_view in = rest;
  ProjectPage page;
  if (gpulock::index::detail::decode_page(in, page, (data[0] & 2) ? &keep_x86 : nullptr)) {
    round_trip(page);
  }
  return 0;
}

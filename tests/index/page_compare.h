#pragma once
// Two reads of a page compared field by field (a page read in pieces against the page read
// whole; a page over HTTP against the same bytes parsed; a page read back from the cache): the
// files and their every field, the variant files, the warnings, or the error with its line.

#include <catch2/catch.hpp>

#include "gpulock/core/error.h"
#include "gpulock/index/page.h"

namespace index_test {

inline void check_same_file(const gpulock::index::DistFile& x, const gpulock::index::DistFile& y) {
  CHECK(x.filename() == y.filename());
  CHECK(x.url() == y.url());
  CHECK(x.hashes() == y.hashes());
  CHECK(x.requires_python() == y.requires_python());
  CHECK(x.yanked() == y.yanked());
  CHECK(x.yanked_reason() == y.yanked_reason());
  CHECK(x.size() == y.size());
  CHECK(x.upload_time() == y.upload_time());
  CHECK(x.core_metadata() == y.core_metadata());
  CHECK(x.core_metadata_hashes() == y.core_metadata_hashes());
  CHECK(x.project() == y.project());
  CHECK(x.is_wheel() == y.is_wheel());
  CHECK(x.is_sdist() == y.is_sdist());
  CHECK(x.version().to_string() == y.version().to_string());
  CHECK(x.wheel().has_value() == y.wheel().has_value());
  CHECK(x.sdist().has_value() == y.sdist().has_value());
  if (x.wheel() && y.wheel()) {
    CHECK(x.wheel()->name == y.wheel()->name);
    CHECK(x.wheel()->version.to_string() == y.wheel()->version.to_string());
    CHECK(x.wheel()->build == y.wheel()->build);
    CHECK(x.wheel()->tags == y.wheel()->tags);
    CHECK(x.wheel()->python_tag == y.wheel()->python_tag);
    CHECK(x.wheel()->abi_tag == y.wheel()->abi_tag);
    CHECK(x.wheel()->platform_tag == y.wheel()->platform_tag);
  }
  if (x.sdist() && y.sdist()) {
    CHECK(x.sdist()->name == y.sdist()->name);
    CHECK(x.sdist()->version.to_string() == y.sdist()->version.to_string());
    CHECK(x.sdist()->extension == y.sdist()->extension);
  }
}

/// `got` is `want`, field by field.
inline void check_same(const gpulock::core::Result<gpulock::index::ProjectPage>& got,
                       const gpulock::core::Result<gpulock::index::ProjectPage>& want) {
  REQUIRE(got.has_value() == want.has_value());
  if (!want) {
    CHECK(got.error().message == want.error().message);
    CHECK(got.error().code == want.error().code);
    CHECK(got.error().where == want.error().where);
    CHECK(got.error().line == want.error().line);
    return;
  }
  CHECK(got->found == want->found);
  CHECK(got->api_version == want->api_version);
  CHECK(got->warnings == want->warnings);
  REQUIRE(got->files.size() == want->files.size());
  for (std::size_t i = 0; i < want->files.size(); ++i)
    check_same_file(got->files[i], want->files[i]);
  REQUIRE(got->variants_files.size() == want->variants_files.size());
  for (std::size_t i = 0; i < want->variants_files.size(); ++i)
    check_same_file(got->variants_files[i], want->variants_files[i]);
}

}  // namespace index_test

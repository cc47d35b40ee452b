#pragma once
/// @file
/// The index cache flags that `gpulock resolve`, `check` and `index` share (--cache-dir,
/// --offline, --refresh, --no-cache; DESIGN.md §Cache), and the client options they give.
/// Each command registers the flags itself, with help text in its own terms.

#include <string>
#include <vector>

#include "gpulock/index/client.h"

namespace gpulock::cli {

struct CacheFlags {
  std::string cache_dir;  ///< empty: the default (index::default_cache_dir)
  bool offline = false;
  bool refresh = false;
  bool no_cache = false;
  /// --allow-insecure-host HOST (repeatable): an https -> http redirect to HOST is followed.
  std::vector<std::string> insecure_hosts;
};

/// `index::ClientOptions::from_environment()` (GPULOCK_CACHE_DIR, GPULOCK_HTTP_*) with the
/// flags applied over it.
[[nodiscard]] index::ClientOptions cache_client_options(const CacheFlags& flags);

}  // namespace gpulock::cli

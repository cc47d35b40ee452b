#pragma once
/// @file
/// The index cache flags that `gpulock resolve`, `check` and `index` share (--cache-dir,
/// --offline, --refresh, --no-cache; DESIGN.md §Cache), and the client options they give.
/// Each command registers the flags itself, with help text in its own terms.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gpulock/index/client.h"

namespace gpulock::cli {

struct CacheFlags {
  std::string cache_dir;  ///< empty: the default (index::default_cache_dir)
  bool offline = false;
  bool refresh = false;
  bool no_cache = false;
  /// --timeout SECONDS (the read timeout); 0: the environment's or the default (30 s).
  double timeout = 0;
  /// --max-page-size SIZE (index::parse_byte_size); empty: the environment's or 256 MiB.
  std::string max_page_size;
  /// --allow-insecure-host HOST (repeatable): an https -> http redirect to HOST is followed.
  std::vector<std::string> insecure_hosts;
};

/// Registers --timeout and --max-page-size (docs/concepts/network.md) on a command using
/// CacheFlags.
void add_limit_options(CLI::App& app, CacheFlags& flags);

/// `index::ClientOptions::from_environment()` (GPULOCK_CACHE_DIR, GPULOCK_HTTP_*) with the
/// flags applied over it. Errors: Usage for a malformed variable.
[[nodiscard]] core::Result<index::ClientOptions> cache_client_options(const CacheFlags& flags);

}  // namespace gpulock::cli

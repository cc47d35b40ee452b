// The index a locked package came from, as an IndexSource to ask again (`gpulock check --index`,
// `gpulock export --urls`).
#pragma once

#include <string>

#include "gpulock/index/page.h"
#include "gpulock/lock/lockfile.h"

namespace gpulock::app::detail {

/// `url` (a package's PEP 751 `index`) as a Simple API source. download.pytorch.org answers 403
/// for a project it does not have: an index the lock's [tool.gpulock.indexes] records with role
/// "torch" reads 403 as "not on this index".
inline index::IndexSource locked_index_source(const lock::Lock& lk, const std::string& url) {
  auto s = index::IndexSource::simple(url);
  if (lk.gpulock) {
    for (const auto& ix : lk.gpulock->indexes) {
      if (ix.url == url && ix.role == "torch") s.forbidden_means_missing = true;
    }
  }
  return s;
}

}  // namespace gpulock::app::detail

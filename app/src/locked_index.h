// The index a locked package came from, as an IndexSource to ask again (`gpulock check --index`,
// `gpulock export --urls`).
#pragma once

#include <string>

#include "gpulock/catalog/source.h"
#include "gpulock/index/page.h"
#include "gpulock/lock/lockfile.h"

namespace gpulock::app::detail {

/// `url` (a package's PEP 751 `index`) as a Simple API source. download.pytorch.org answers 403
/// for a project it does not have: an index the lock's [tool.gpulock.indexes] records with role
/// "torch" (the torch family's variants) reads 403 as "not on this index".
inline index::IndexSource locked_index_source(const lock::Lock& lk, const std::string& url) {
  auto s = index::IndexSource::simple(url);
  if (lk.gpulock) {
    for (const auto& ix : lk.gpulock->indexes) {
      auto source = catalog::read_recorded_role(ix.role);
      if (ix.url == url && source && source->role == catalog::Role::Family)
        s.forbidden_means_missing = true;
    }
  }
  return s;
}

}  // namespace gpulock::app::detail

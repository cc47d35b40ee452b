#include "cache_flags.h"

namespace gpulock::cli {

index::ClientOptions cache_client_options(const CacheFlags& flags) {
  auto o = index::ClientOptions::from_environment();
  if (!flags.cache_dir.empty()) o.cache_dir = flags.cache_dir;
  o.offline = flags.offline;
  o.refresh = flags.refresh;
  o.no_cache = flags.no_cache;
  o.insecure_hosts = flags.insecure_hosts;
  return o;
}

}  // namespace gpulock::cli

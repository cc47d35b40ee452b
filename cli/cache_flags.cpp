#include "cache_flags.h"

#include <cstdlib>

namespace gpulock::cli {

core::Result<index::ClientOptions> cache_client_options(const CacheFlags& flags) {
  auto env = index::ClientOptions::from_environment();
  if (!env) return env;
  index::ClientOptions& o = *env;
  if (!flags.cache_dir.empty()) o.cache_dir = flags.cache_dir;
  o.offline = flags.offline;
  o.refresh = flags.refresh;
  o.no_cache = flags.no_cache;
  if (flags.timeout > 0) {
    o.low_speed_time = std::chrono::milliseconds(static_cast<long long>(flags.timeout * 1000));
  }
  if (auto size = index::parse_byte_size(flags.max_page_size)) o.max_page_bytes = *size;
  o.insecure_hosts = flags.insecure_hosts;
  return env;
}

void add_limit_options(CLI::App& app, CacheFlags& flags) {
  app.add_option("--timeout", flags.timeout,
                 "Seconds a request may go without receiving anything (default 30; "
                 "$GPULOCK_HTTP_TIMEOUT, $UV_HTTP_TIMEOUT, $PIP_DEFAULT_TIMEOUT)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            char* end = nullptr;
            double seconds = std::strtod(v.c_str(), &end);
            return end != v.c_str() && *end == '\0' && seconds > 0 && seconds < 1e7
                       ? std::string()
                       : "expected a number of seconds above 0, e.g. 30 or 2.5";
          },
          "SECONDS"));
  app.add_option("--max-page-size", flags.max_page_size,
                 "Largest index page accepted, decompressed, e.g. 1G or 512M (default 256M; "
                 "$GPULOCK_MAX_PAGE_SIZE)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return index::parse_byte_size(v) ? std::string()
                                             : "expected a size such as 1G, 512M or 1048576";
          },
          "SIZE"));
}

}  // namespace gpulock::cli

#pragma once
// The environment variables behind ClientOptions' time and size limits.

#include "gpulock/index/client.h"

namespace gpulock::index::detail {

/// Applies GPULOCK_HTTP_TIMEOUT (else UV_HTTP_TIMEOUT, else PIP_DEFAULT_TIMEOUT),
/// GPULOCK_HTTP_LOW_SPEED_LIMIT / _TIME, GPULOCK_HTTP_DEADLINE, GPULOCK_HTTP_MAX_RETRY_DELAY,
/// GPULOCK_MAX_PAGE_SIZE and GPULOCK_MAX_DOWNLOAD_SIZE to `o`; unset or malformed ones are
/// skipped.
void apply_limit_environment(ClientOptions& o);

}  // namespace gpulock::index::detail

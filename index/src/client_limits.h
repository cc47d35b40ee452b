#pragma once
// The environment variables behind ClientOptions' time and size limits.

#include "gpulock/index/client.h"
#include "gpulock/sys/env.h"

namespace gpulock::index::detail {

/// Applies GPULOCK_HTTP_TIMEOUT (else UV_HTTP_TIMEOUT, else PIP_DEFAULT_TIMEOUT),
/// GPULOCK_HTTP_LOW_SPEED_LIMIT / _TIME, GPULOCK_HTTP_DEADLINE, GPULOCK_HTTP_MAX_RETRY_DELAY,
/// GPULOCK_MAX_PAGE_SIZE and GPULOCK_MAX_DOWNLOAD_SIZE to `o`; unset ones are skipped, as are
/// uv's and pip's when malformed. Errors: Usage (sys::invalid_env) for a malformed GPULOCK_*.
[[nodiscard]] core::Status apply_limit_environment(ClientOptions& o, sys::EnvLookup env);

}  // namespace gpulock::index::detail

#pragma once
/// @file
/// A lock's GPU facts as the fit rule reads them (gpu/fit.h): its platforms, its recorded CUDA,
/// minimum driver and compat (`[tool.gpulock.gpu]`), and its packages with typed versions.

#include "gpulock/gpu/fit.h"
#include "gpulock/lock/lock.h"

namespace gpulock::lock {

/// The facts of `lock` for gpu::lock_fits: the typed values of `[tool.gpulock.gpu]` as the
/// reader parsed them (no compat counts as strict); a package without a version or with one
/// that does not parse is left out. `cpu` is the CPU of
/// the lock's first platform, empty when it has none.
[[nodiscard]] gpu::LockFacts gpu_facts(const Lock& lock);

}  // namespace gpulock::lock

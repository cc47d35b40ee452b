#pragma once
// Shared by the two installers (install.cpp: pip; install_sync.cpp: native).
#include <string>
#include <vector>

#include "gpulock/app/install.h"
#include "gpulock/core/error.h"
#include "gpulock/lock/lock.h"

namespace gpulock::app {

/// --mirror / --mirror-fallback: the lock's file URLs replaced, in memory, by the mirror's;
/// the file names taken from it are appended to `from_mirror`.
[[nodiscard]] core::Status use_mirror(const InstallRequest& request, lock::Lock& lk,
                                      std::vector<std::string>& from_mirror);

/// The probe after an install (either installer): `request`'s probe settings, run with the
/// environment's `python` against the lock just installed.
[[nodiscard]] core::Result<EnvironmentReport> probe_installed(const InstallRequest& request,
                                                              const std::string& python);

}  // namespace gpulock::app

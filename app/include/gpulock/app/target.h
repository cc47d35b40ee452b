#pragma once
/// @file
/// The target environment of a resolution: the Python and platform the lock is for, as marker
/// values (PEP 508) and as the ordered list of wheel tags it accepts (PEP 425/600/656). From
/// `--python-version X.Y --platform TAG`, from an interpreter (`--python PYTHON`, which is asked
/// for its own values), or from the host's `python3` when neither is given.

#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/environment.h"
#include "gpulock/core/error.h"
#include "gpulock/core/tags.h"
#include "gpulock/core/target.h"
#include "gpulock/core/version.h"

namespace gpulock::app {

/// The pure value lives in core (core/target.h); building one is app's (it may ask an
/// interpreter).
using core::Target;

struct TargetRequest {
  std::string python;          ///< --python PYTHON (an interpreter to ask); empty: not given
  std::string python_version;  ///< --python-version X.Y
  std::string platform;        ///< --platform TAG
  /// --platform given again (pip accepts it repeated): each adds its wheel tags after the first
  /// one's, for the same OS and machine (a different machine is a usage error).
  std::vector<std::string> more_platforms;
};

/// Builds the target. With --python-version and --platform: from those (platform defaults to
/// `manylinux_2_28_<host machine>` when only the version is given). With --python: asks that
/// interpreter. With neither: asks `python3` on PATH. Errors: Usage for bad flag values or an
/// interpreter that cannot be run (with a hint to pass --python-version/--platform).
[[nodiscard]] core::Result<Target> make_target(const TargetRequest& request);

/// The target for explicit values (no process is run).
[[nodiscard]] core::Result<Target> make_target(std::string_view python_version,
                                               std::string_view platform);

}  // namespace gpulock::app

#pragma once
/// @file
/// The target environment of a resolution, as a value: the Python and platform the lock is for,
/// as marker values (PEP 508) and as the ordered list of wheel tags it accepts (PEP 425/600/656).
/// Pure; app::make_target builds one from flags or from an interpreter it asks.

#include <string>
#include <vector>

#include "gpulock/core/environment.h"
#include "gpulock/core/tags.h"
#include "gpulock/core/version.h"

namespace gpulock::core {

struct Target {
  std::string python_version;  ///< "3.11"
  Version python_full;         ///< 3.11.0 (or the interpreter's own)
  std::string platform;        ///< the best platform tag, e.g. "manylinux_2_28_x86_64"
  TagTarget tags;              ///< what supported_tags() is computed from
  Environment environment;     ///< marker values
  std::vector<Tag> supported;  ///< supported_tags(tags), best first
  /// The interpreter asked: its sys.executable (the real file behind a pyenv shim); empty when
  /// the target was given (--python-version, --platform).
  std::string executable;

  /// `environments` marker for the lock: which machines this lock is valid for.
  [[nodiscard]] std::string environment_marker() const;
};

}  // namespace gpulock::core

#pragma once
/// @file
/// Making a virtual environment for a lock (issue 25, `gpulock install --venv DIR`, and
/// `./.venv` when no environment is given): the first interpreter on PATH that the lock
/// accepts (its `requires-python`, and its target's Python X.Y when it records one) makes a
/// standard venv (`-m venv --without-pip`: pyvenv.cfg, bin/ links, activation scripts); pip is
/// not needed in it, gpulock installs the packages itself.
#include <filesystem>
#include <optional>
#include <string>

#include "gpulock/core/error.h"

namespace gpulock::app {

struct VenvRequest {
  std::filesystem::path dir;
  std::optional<std::string> requires_python;  ///< the lock's
  std::optional<std::string> target_python;    ///< "3.11": the lock's [tool.gpulock.target]
};

struct CreatedVenv {
  std::filesystem::path python;  ///< <dir>/bin/python
  std::string base_python;       ///< the interpreter that made it
  std::string version;           ///< its version, "3.11.7"
};

/// The interpreter create_venv would use (`python` is where the venv's would be), without
/// creating anything. Errors: NotFound, as create_venv.
[[nodiscard]] core::Result<CreatedVenv> choose_venv_interpreter(const VenvRequest& request);

/// Errors: NotFound (no interpreter on PATH fits, each one tried named in the message), Io (the
/// venv module failed).
[[nodiscard]] core::Result<CreatedVenv> create_venv(const VenvRequest& request);

}  // namespace gpulock::app

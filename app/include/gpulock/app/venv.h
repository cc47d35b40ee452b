#pragma once
/// @file
/// Making a virtual environment for a lock (issue 25, `gpulock install --venv DIR`, and
/// `./.venv` when no environment is given): every interpreter on PATH is asked
/// (interpreters_on_path) and the first one the lock accepts (its `requires-python`, its
/// target's Pythons and platforms: targets.h python_refusal) makes a standard venv
/// (`-m venv --without-pip`: pyvenv.cfg, bin/ links, activation scripts); pip is not needed in
/// it, gpulock installs the packages itself.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/app/target.h"
#include "gpulock/core/error.h"
#include "gpulock/lock/lock.h"

namespace gpulock::app {

/// An interpreter found on PATH and what it says of itself (interpreters_on_path).
struct PathPython {
  std::string path;              ///< where PATH has it: /usr/bin/python3
  std::optional<Target> target;  ///< nullopt: it could not be asked
  std::string error;             ///< why it could not be asked
};

/// Every interpreter on PATH: `python3`, then `python3.N` (N from 15 down to 6), then `python`,
/// each in every PATH directory in order; one per real file (the first name that reaches it),
/// each asked once (make_target).
[[nodiscard]] std::vector<PathPython> interpreters_on_path();

/// "/usr/bin/python3 (Python 3.11.2)", or the path alone when it could not be asked.
[[nodiscard]] std::string describe_python(const PathPython& python);

struct VenvRequest {
  std::filesystem::path dir;
  std::optional<std::string> requires_python;  ///< the lock's
  std::optional<lock::GpulockTarget> target;   ///< the lock's [tool.gpulock.target]
};

struct CreatedVenv {
  std::filesystem::path python;  ///< <dir>/bin/python
  std::string base_python;       ///< the interpreter that made it
  std::string version;           ///< its version, "3.11.7"
  /// The interpreters found before it, each with why the lock does not take it:
  /// "/usr/bin/python3 (Python 3.11.2): this lock is for Python 3.12, ...".
  std::vector<std::string> passed_over;
};

/// The interpreter create_venv would use (`python` is where the venv's would be), without
/// creating anything. Errors: NotFound, as create_venv.
[[nodiscard]] core::Result<CreatedVenv> choose_venv_interpreter(const VenvRequest& request);

/// Errors: NotFound (no interpreter on PATH fits, each one tried named in the message), Io (the
/// venv module failed).
[[nodiscard]] core::Result<CreatedVenv> create_venv(const VenvRequest& request);

}  // namespace gpulock::app

#pragma once
/// @file
/// Making a virtual environment for a lock (issue 25, `gpulock install --venv DIR`, and
/// `./.venv` when no environment is given): the interpreters on PATH are asked in turn
/// (PathPythons), only until one the lock accepts (its `requires-python`, its target's Pythons
/// and platforms: targets.h python_refusal) is found, and its real interpreter (sys.executable:
/// what a pyenv shim runs) makes a standard venv (`-m venv --without-pip`: pyvenv.cfg, bin/
/// links, activation scripts); pip is not needed in it, gpulock installs the packages itself.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/app/target.h"
#include "gpulock/core/error.h"
#include "gpulock/lock/lock.h"

namespace gpulock::app {

/// An interpreter found on PATH and what it says of itself (PathPythons).
struct PathPython {
  std::string path;              ///< where PATH has it: /usr/bin/python3
  std::optional<Target> target;  ///< nullopt: it could not be asked
  std::string error;             ///< why it could not be asked
};

/// The interpreters on PATH: `python3`, then `python3.N` (N from 15 down to 6), then `python`,
/// each in every PATH directory in order; one per real file (the first name that reaches it).
/// Each is asked (make_target) only when `operator[]` first reaches it, and at most once in the
/// process however many lists hold it: a pyenv shim is a script of its own per name and takes
/// a second or more to start, so asking every candidate up front took 9-12 s (issue 41).
class PathPythons {
 public:
  /// Finds the candidates on PATH; runs none of them.
  PathPythons();
  /// Interpreters already asked (tests, callers that hold them).
  explicit PathPythons(std::vector<PathPython> asked);
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  /// The i-th candidate, asked now if it was not yet (i < size()).
  [[nodiscard]] const PathPython& operator[](std::size_t i);

 private:
  std::vector<PathPython> items_;
  std::vector<bool> asked_;
};

/// "/usr/bin/python3 (Python 3.11.2)", or the path alone when it could not be asked.
[[nodiscard]] std::string describe_python(const PathPython& python);

struct VenvRequest {
  std::filesystem::path dir;
  std::optional<std::string> requires_python;  ///< the lock's
  std::optional<lock::GpulockTarget> target;   ///< the lock's [tool.gpulock.target]
};

struct CreatedVenv {
  std::filesystem::path python;  ///< <dir>/bin/python
  std::string base_python;       ///< the interpreter that made it, as PATH has it
  /// Its sys.executable, the file that runs (a pyenv shim's Python); it makes the venv.
  std::string base_executable;
  std::string version;  ///< its version, "3.11.7"
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

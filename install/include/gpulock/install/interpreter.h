#pragma once
// What an interpreter says about itself (one `python -c` run): the probe's site-packages and
// marker environment, and the install scheme the native installer writes into.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/environment.h"
#include "gpulock/core/error.h"

namespace gpulock::install {

struct Interpreter {
  std::string version;     ///< "3.11.7"
  std::string executable;  ///< sys.executable
  std::filesystem::path prefix, base_prefix;
  std::map<std::string, std::filesystem::path> paths;  ///< sysconfig.get_paths()
  std::vector<std::filesystem::path> site_packages;    ///< sys.path order, existing only
  core::Environment markers;
};

/// A virtual environment's interpreter described without starting it, from `pyvenv.cfg` (venv's
/// `version`, virtualenv's `version_info`) and the standard CPython layout
/// (`<prefix>/bin/python*`, `<prefix>/lib/pythonX.Y/site-packages`); the marker values are those
/// of CPython on this Linux machine. nullopt when `python` is not laid out so (ask_interpreter).
[[nodiscard]] std::optional<Interpreter> read_venv(const std::string& python);

/// Runs `python -c` with the query. Errors: Io (cannot run, fails, no site-packages).
[[nodiscard]] core::Result<Interpreter> ask_interpreter(const std::string& python);

}  // namespace gpulock::install

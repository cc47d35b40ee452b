#pragma once
// What an interpreter says about itself (one `python -c` run): the probe's site-packages and
// marker environment, and the install scheme the native installer writes into.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpulock/core/environment.h"
#include "gpulock/core/error.h"

namespace gpulock::app {

struct Interpreter {
  std::string version;     ///< "3.11.7"
  std::string executable;  ///< sys.executable
  std::filesystem::path prefix, base_prefix;
  std::map<std::string, std::filesystem::path> paths;  ///< sysconfig.get_paths()
  std::vector<std::filesystem::path> site_packages;    ///< sys.path order, existing only
  core::Environment markers;
};

/// Runs `python -c` with the query. Errors: Io (cannot run, fails, no site-packages).
[[nodiscard]] core::Result<Interpreter> ask_interpreter(const std::string& python);

}  // namespace gpulock::app

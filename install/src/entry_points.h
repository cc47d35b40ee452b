#pragma once
// A wheel's entry points (entry_points.txt's [console_scripts] and [gui_scripts]) and the
// launcher scripts made for them, as pip makes them (wheel_install.cpp).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::install::detail {

// `[console_scripts]` and `[gui_scripts]` of entry_points.txt: name -> "module:attr".
struct EntryPoints {
  std::vector<std::pair<std::string, std::string>> console, gui;
};

/// From the text of entry_points.txt (empty: none).
[[nodiscard]] EntryPoints read_entry_points(const std::string& text);
/// pip's get_console_script_specs: pip and easy_install get versioned launchers.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> console_specs(
    std::vector<std::pair<std::string, std::string>> console, const std::string& xy);
[[nodiscard]] core::Result<std::string> launcher(const std::string& name, const std::string& value,
                                                 const std::string& python);
[[nodiscard]] bool safe_script_name(const std::string& name);
[[nodiscard]] bool is_entrypoint_wrapper(std::string name, const EntryPoints& eps);

}  // namespace gpulock::install::detail

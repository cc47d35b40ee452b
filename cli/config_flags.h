#pragma once
/// @file
/// Project configuration for the commands that take resolve's input flags (issue 26): the
/// values given on the command line by key, and the configuration loaded and applied beneath
/// them (app/config.h).

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gpulock/app/config.h"

#include "resolve_flags.h"

namespace gpulock::cli {

/// The configuration keys given as flags on `sub`'s command line, with their values as typed.
[[nodiscard]] std::map<std::string, std::vector<std::string>> given_config_flags(
    const CLI::App& sub);

/// Loads the configuration for `flags` (its --project, the flags given on `sub`) and applies it
/// beneath them to `flags.request`. Errors: load_config's (exit 3 for a file, 2 for a
/// GPULOCK_* variable).
[[nodiscard]] core::Result<app::Config> apply_project_config(const CLI::App& sub,
                                                             ResolveFlags& flags);

/// The configured mirror (`GPULOCK_MIRROR`, a `mirror` key), for install and `check --index`
/// when no --mirror is given; "" when none. Errors: load_config's.
[[nodiscard]] core::Result<std::string> configured_mirror();

}  // namespace gpulock::cli

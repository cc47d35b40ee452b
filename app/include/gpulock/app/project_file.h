#pragma once
/// @file
/// Requirements from a `pyproject.toml` (`--project`): `[project].dependencies`, the
/// `[project.optional-dependencies]` of each `--extra`, and each `--group` of
/// `[dependency-groups]` (PEP 735, with `{include-group = "..."}` entries, loops detected).

#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/requirements_file.h"
#include "gpulock/core/error.h"

namespace gpulock::app {

/// Errors: InvalidInput naming `path` and the line (not TOML, wrong types, an unknown extra
/// or group, an include-group loop), InvalidRequirement for a bad requirement string (with its
/// line).
[[nodiscard]] core::Result<std::vector<RequirementEntry>> read_project_requirements(
    std::string_view text, const std::string& path, const std::vector<std::string>& extras,
    const std::vector<std::string>& groups);

}  // namespace gpulock::app

#pragma once
/// @file
/// Text and JSON rendering of the environment probe (`gpulock probe`, `gpulock install`).
/// The JSON schema ("gpulock.probe/1") is docs/schemas/probe.schema.json (docs/commands/probe.md).

#include <string>

#include "gpulock/app/probe_env.h"

#include "terminal.h"

namespace gpulock::cli {

/// Grouped text for people: Environment, cuDNN, Sub-libraries, Preloaded, Mapped, GPU,
/// Machine, Lock, Verdict. Colours only when the terminal allows them.
[[nodiscard]] std::string render_probe_text(const app::EnvironmentReport& report,
                                            const Terminal& term);

/// The "gpulock.probe/1" JSON document.
[[nodiscard]] std::string render_probe_json(const app::EnvironmentReport& report);

}  // namespace gpulock::cli

#pragma once
/// @file
/// Resolve's input flags, declared once for `gpulock resolve` and `gpulock check` (issue 21):
/// one name, one help text and one parser per flag. Every flag with a row in the request's
/// options table (app/resolve_request.h: the indexes, --find-links, --torch-backend,
/// --torch-index-base, --nightly, --index-strategy, --python-version, --platform, --cuda-compat,
/// --prerelease, --exclude-newer, --index, --index-for) is read through its row's parser as the
/// command line is read, as the configuration, targets, hint edits and the lock record read it;
/// the first value that does not parse is kept and reported by the command (one `error:` line
/// with the type's hints, exit 2). The machine flags are declared once for every command
/// (machine_flags.h).

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gpulock/app/resolve.h"
#include "gpulock/gpu/machine_flags.h"

namespace gpulock::cli {

struct ResolveFlags {
  app::ResolveRequest request;
  bool pre = false;               ///< --pre: --prerelease allow
  bool allow_incomplete = false;  ///< --allow-incomplete
  gpu::MachineFlags machine;      ///< --driver, --cuda-ceiling, --gpu-arch (machine_flags.h)
  /// The first typed value that did not parse.
  std::optional<core::Error> error;

  /// Applies --pre and the machine flags to `request` (after parsing); returns
  /// `error` when set, else the driver's parse error.
  [[nodiscard]] core::Status finish();
};

/// Declares the flags that name what is resolved and for which target, as resolve and check
/// both take them: requirements, -r, -c, --project, --extra, --group, --index-url,
/// --extra-index-url, -f, --torch-backend, --torch-index-base, --nightly, --index-strategy,
/// --python-version, --platform, --cuda-compat, --prerelease, --pre, --allow-incomplete,
/// --exclude-newer. Returns
/// the options declared (check compares the lock's record when any was given).
std::vector<CLI::Option*> add_resolve_input_flags(CLI::App& sub, ResolveFlags& flags);

/// resolve's own: --index, --index-for, --python, --driver, --cuda-ceiling, --gpu-arch.
void add_resolve_source_and_machine_flags(CLI::App& sub, ResolveFlags& flags);

}  // namespace gpulock::cli

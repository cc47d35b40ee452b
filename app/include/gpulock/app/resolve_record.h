#pragma once
/// @file
/// A request and the lock's record of it (issue 43 item 4): one pair. to_record writes what a
/// lock's `[tool.gpulock.inputs]` says of the request (requirement texts, input files with their
/// sha256, extras, groups, and the options the table records, request_options()); from_record
/// reads a lock back into the request that makes it again: the same inputs (re-read now), the
/// options through their own parsers, the indexes by role, the target, the machine
/// (`[tool.gpulock.gpu]`) and the snapshot. `check --inputs` compares the first, `check --index`
/// resolves the second.

#include <filesystem>

#include "gpulock/app/resolve_request.h"
#include "gpulock/core/error.h"
#include "gpulock/lock/lock.h"

namespace gpulock::app {

/// The `[tool.gpulock.inputs]` record of `request` for a lock in `lock_dir` (input files are
/// recorded relative to it), with its sha256 over lock::canonical_inputs_text. Reads the
/// request's inputs; errors: theirs (a file that cannot be read, a bad requirement).
[[nodiscard]] core::Result<lock::GpulockInputs> to_record(const ResolveRequest& request,
                                                          const std::filesystem::path& lock_dir);

/// The request `lock` records, its files taken relative to `lock_dir`. `output` is "-" and
/// nothing of this machine is read (the machine is the lock's). Errors (InvalidInput), worded to
/// follow "upstream moves not checked: ": "the lock records no inputs", "FILE cannot be read: ...",
/// "the lock's recorded options do not read: ...".
[[nodiscard]] core::Result<ResolveRequest> from_record(const lock::Lock& lock,
                                                       const std::filesystem::path& lock_dir);

}  // namespace gpulock::app

#pragma once
/// @file
/// The drift check (`gpulock check`, DESIGN.md §Commands; issue "Drift detection for CI"): does
/// the lock still describe what is run? Four layers, each reported on its own so that a user's
/// drift is never confused with an index that moved or a runner that cannot run the lock:
///
///  - inputs (offline): the lock's `[tool.gpulock.inputs]` record against the files it names
///    (re-read, relative to the lock; sha256 compared) and, when resolve's input flags are given
///    to check, against those flags (requirement arguments, -r/-c/--project files, extras,
///    groups, options, indexes, target); the record's own sha256 catches a hand-edited record.
///  - env (offline): the distributions installed in an environment (asked from its interpreter)
///    against the locked packages whose markers apply: missing, extra (pip, setuptools and wheel
///    ignored unless strict), another version, another variant (`+cpu` for `+cu124`); with
///    `deep`, the installed files of torch and `nvidia-*` against their RECORD hashes (PEP 376,
///    "Recording installed projects"); plus the load probe's verdict for that environment
///    (probe/load_probe.h `assess_load`).
///  - machine (offline): this machine's driver against the lock's minimum driver, its CUDA
///    ceiling against the lock's CUDA (under the lock's `compat`), its GPU architectures against
///    the locked torch build's arch list and the locked cuDNN's lowest supported GPU.
///  - index (network, opt-in): every locked file still listed on its index with the same hash
///    (else "upstream pruned" / "upstream rehashed"), not yanked since (PEP 592), and what a
///    resolve with the same recorded inputs and snapshot picks today ("upstream moved":
///    a warning, an error only with `strict`).
///
/// Returns results; never prints. Drift is a result; errors are for a bad lock (InvalidLockfile),
/// an unreadable lock (Io), bad flags (Usage) and an unreachable index (network codes).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/machine.h"
#include "gpulock/app/resolve.h"
#include "gpulock/core/error.h"
#include "gpulock/index/client.h"

namespace gpulock::app {

enum class CheckLayer : std::uint8_t { Inputs, Env, Machine, Index };

/// "inputs", "env", "machine", "index".
[[nodiscard]] std::string_view check_layer_name(CheckLayer layer) noexcept;

enum class DriftSeverity : std::uint8_t {
  Error,    ///< drift: the check fails (exit 1)
  Warning,  ///< reported; fails only with `strict` (which turns it into an Error)
  Info,     ///< reported; never fails
};

/// "error", "warning", "info".
[[nodiscard]] std::string_view drift_severity_name(DriftSeverity severity) noexcept;

/// One finding. `kind` is stable (docs/commands/check.md lists them):
///  inputs:  inputs-not-recorded, inputs-record-edited, input-missing, input-changed,
///           input-added, input-removed, requirement-added, requirement-removed, extra-added,
///           extra-removed, group-added, group-removed, option-changed, index-changed,
///           target-changed
///  env:     not-installed, version-differs, variant-differs, not-in-lock, record-mismatch,
///           record-unverifiable, locked-file-missing, locked-file-mismatch,
///           load-<probe finding id> (e.g. load-outside-environment)
///  machine: driver-below-minimum, cuda-ceiling-below-lock, gpu-arch-unsupported,
///           gpu-arch-cudnn, no-driver
///  index:   upstream-pruned, upstream-rehashed, upstream-yanked, upstream-moved,
///           upstream-no-solution, hash-not-checked
struct Drift {
  CheckLayer layer = CheckLayer::Inputs;
  std::string kind;
  DriftSeverity severity = DriftSeverity::Error;
  std::string subject;  ///< the package, input file, option, "driver", or GPU arch concerned
  std::string message;  ///< one sentence
  std::vector<std::string> details;  ///< further lines (which requirement, which file, ...)
  std::string hint;                  ///< what to do; may be empty
  /// The line in the lock this concerns (the package's `[[packages]]` header, the wheel's
  /// line, or the `[tool.gpulock.*]` table); 0 when none.
  std::size_t line = 0;
  std::optional<std::string> expected;  ///< what the lock says
  std::optional<std::string> actual;    ///< what was found
};

/// How one layer went.
struct LayerResult {
  CheckLayer layer = CheckLayer::Inputs;
  bool checked = false;
  /// When checked: what was compared ("2 input files, 1 requirement argument"); when not:
  /// why not ("no --python and no active virtualenv").
  std::string summary;
  /// Further facts that are not drift (the load probe's information lines, the Python asked).
  std::vector<std::string> notes;
};

/// Everything `gpulock check` takes.
struct CheckRequest {
  std::string lock = "pylock.toml";  ///< --lock
  /// Layers asked for (--inputs --env --machine --index). None: the offline defaults (inputs;
  /// env when `python` is given, VIRTUAL_ENV is set or ./.venv exists; machine).
  bool inputs = false, env = false, machine = false, index = false;
  /// --python: the environment's interpreter; empty: `$VIRTUAL_ENV/bin/python`, else
  /// `./.venv/bin/python` (app/probe_env.h default_python).
  std::string python;
  bool strict = false;  ///< --strict: warnings fail; pip/setuptools/wheel count as extra
  bool deep = false;    ///< --deep: RECORD hashes; hashes of index files the page gives none for
  /// Resolve's input flags as given to check (nullopt: none given). Compared with the lock's
  /// record: requirements, requirement_files, constraint_files, project, extras, groups,
  /// index_url, extra_index_urls, find_links, torch_backend, torch_index_base (when a torch
  /// backend or nightly is given), nightly, index_strategy, prerelease, exclude_newer,
  /// cuda_compat, and target.python_version / target.platform when given. Paths are relative
  /// to the current directory, as for resolve.
  std::optional<ResolveRequest> given;
  /// --driver, --cuda-ceiling, --gpu-arch: describe the machine for the machine layer (then
  /// GPULOCK_DRIVER, GPULOCK_CUDA_CEILING, GPULOCK_GPU_ARCH).
  MachineRequest machine_flags;
  /// For the index layer (refresh is forced on: check must see the index as it is now).
  /// The command gives index::ClientOptions::from_environment() with its flags applied.
  index::ClientOptions client;
  /// --mirror LOC (with --index): a pruned file's hint says whether that mirror has it.
  std::string mirror;
  /// "Now" for a relative --exclude-newer in the record (tests pin it); 0: the clock.
  std::int64_t now_micros = 0;
};

struct CheckResult {
  std::string lock_path;              ///< as given
  std::string lock_command;           ///< the command that made the lock, as recorded ("": none)
  std::vector<LayerResult> layers;    ///< always the four, in CheckLayer order
  std::vector<Drift> drifts;          ///< layer order, then the order found
  std::vector<std::string> warnings;  ///< the lock reader's warnings
  bool strict = false;

  /// Any drift of severity Error (with `strict`, warnings were already turned into errors).
  [[nodiscard]] bool drift_found() const noexcept;
  [[nodiscard]] std::size_t count(DriftSeverity severity) const noexcept;
  [[nodiscard]] const LayerResult& layer(CheckLayer layer) const;
};

/// Runs the check. Errors: Io (the lock or an input file cannot be read, the environment's
/// interpreter cannot be run), InvalidLockfile (the lock breaks PEP 751), Usage (bad override
/// values; --extra/--group given without --project, as resolve refuses it),
/// InvalidInput/InvalidRequirement (a requirement argument given that does not parse, `where`
/// "argument N" as resolve says; files named by the input flags given), and with the
/// index layer the index client's errors (Network, Http, Timeout, Auth, IndexFormat, ...).
/// Every drift is part of the result.
[[nodiscard]] core::Result<CheckResult> check(const CheckRequest& request);

}  // namespace gpulock::app

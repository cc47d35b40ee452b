#pragma once
/// @file
/// Declared targets (issue 22): the machines a project runs on, each locked as
/// `pylock.<name>.toml`. Declared in `pyproject.toml` as `[tool.gpulock.targets.<name>]` or in a
/// standalone `gpulock.toml` as `[targets.<name>]` (which wins over pyproject's table in the same
/// directory, as uv.toml does). Keys are named as resolve's flags: `python-version`, `platform`
/// (a tag or a list), `driver` (a version or "none") or `cuda-ceiling`, `gpu-arch` (a list),
/// `torch-backend`, `cuda-compat`. Everything else is shared by all targets.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/app/resolve.h"
#include "gpulock/app/target.h"
#include "gpulock/app/venv.h"
#include "gpulock/core/error.h"
#include "gpulock/lock/lock.h"
#include "gpulock/probe/machine.h"

namespace gpulock::app {

struct TargetSpec {
  std::string name;                    ///< [a-z0-9-]+
  std::string python_version;          ///< as declared: a version ("3.11") or a specifier
  std::vector<std::string> pythons;    ///< the X.Y versions it spans, ascending
  std::vector<std::string> platforms;  ///< the first is the target's, later ones add wheel tags
  gpu::DriverSpec driver;              ///< auto: not given (with no cuda-ceiling: a CPU machine)
  std::string cuda_ceiling;
  std::vector<std::string> gpu_archs;
  std::optional<TorchBackend> torch_backend;
  std::optional<gpu::CudaCompat> cuda_compat;
};

struct DeclaredTargets {
  std::string file;                 ///< where they were read
  std::vector<TargetSpec> targets;  ///< in name order
};

/// The targets declared for a project: `project` (a pyproject.toml or gpulock.toml path), else
/// `dir`/gpulock.toml, else `dir`/pyproject.toml. Errors: InvalidInput naming the file, table and
/// key (a bad name, an unknown key, a value its flag's parser refuses); Usage when no file
/// declares any target.
[[nodiscard]] core::Result<DeclaredTargets> read_targets(const std::string& project,
                                                         const std::filesystem::path& dir);

/// How a lock's recorded target ([tool.gpulock.target], [tool.gpulock.gpu]) differs from its
/// declaration (`check --all-targets`): one phrase per key ("declares Python 3.12, the lock is
/// for 3.11"); empty when it matches.
[[nodiscard]] std::vector<std::string> target_differences(const TargetSpec& target,
                                                          const lock::Lock& lock);

/// `shared` with a target's keys applied: its target, its machine (never detected), its torch
/// backend and compat, and the lock `dir`/pylock.<name>.toml.
[[nodiscard]] ResolveRequest request_for_target(const ResolveRequest& shared,
                                                const TargetSpec& target,
                                                const std::filesystem::path& dir);

/// One target's resolve.
struct TargetOutcome {
  std::string name;
  std::string output;  ///< pylock.<name>.toml
  /// A target spanning several Pythons or platforms: one result whose lock serves them all (the
  /// wheels of each, `environments`, markers). Not solved: the explanation; for a target no
  /// single version set serves, it names the package that forces a split.
  ResolveResult result;
};

struct TargetsOptions {
  /// --independent-targets: each target gets its own newest versions, not aligned.
  bool independent = false;
};

struct TargetsOutcome {
  std::vector<TargetOutcome> targets;  ///< in the order given
  /// One line per package a target could not align to: "numpy 2.3.1 everywhere except target
  /// 'py39': requires-python".
  std::vector<std::string> alignment;
  index::ClientStats index_stats;  ///< the one client every target went through
};

/// Resolves each target through one shared index client and, only when every one solved,
/// writes every lock (each atomically; a failed write puts back the locks already replaced).
/// Versions are aligned: a package several targets lock gets, in each of them, the newest
/// public version any of them locks (local labels differ as they must); a target that cannot
/// take it keeps its own newest, with a line in `alignment`. A target's own Pythons and
/// platforms always share one version set. Errors: the first target's error, with the target
/// named. A target without a solution is a result: nothing is written.
[[nodiscard]] core::Result<TargetsOutcome> resolve_targets(const ResolveRequest& shared,
                                                           const std::vector<TargetSpec>& targets,
                                                           const std::filesystem::path& dir,
                                                           const ResolveObserver& observer = {},
                                                           const TargetsOptions& options = {});

}  // namespace gpulock::app

namespace gpulock::app {

/// How one lock fits this machine (`gpulock install` without --lock, issue 22).
struct LockFit {
  std::string path;
  std::string target;  ///< [tool.gpulock.target] name, else the file name
  bool fits = false;
  bool gpu = false;                      ///< a CUDA build (else CPU)
  std::optional<gpu::CudaVersion> cuda;  ///< the CUDA it needs
  std::string why;                       ///< "fits: ...", or why not
  /// Over several interpreters (choose_lock_for_new_venv): the first one it fits with.
  std::string python;
};

struct LockChoice {
  std::optional<std::string> chosen;  ///< the lock to install; none when no lock fits
  std::vector<LockFit> locks;         ///< every lock looked at, in file-name order
  /// Set when a CPU lock was chosen although GPU locks exist: why none of them fits.
  bool cpu_fallback = false;
};

/// The locks of `dir`: pylock.toml and every pylock.<name>.toml, in file-name order. Errors: Io.
[[nodiscard]] core::Result<std::vector<std::filesystem::path>> lock_files(
    const std::filesystem::path& dir);

/// The locks of `dir` (lock_files) judged against `machine` and, when given, the `python` that
/// will run them: a lock fits only where its target's Python (one of `pythons` for a target
/// spanning several) is this one and one of its platforms is a platform this Python's tags
/// accept; then a CUDA lock fits when the driver's ceiling runs its CUDA (under the lock's
/// compat) and every GPU of the machine is one the lock was made for; a CPU lock fits any
/// machine. The best fit is the CUDA lock with the highest CUDA; a CPU lock only when no CUDA
/// lock fits. Errors: Io (the directory).
[[nodiscard]] core::Result<LockChoice> choose_lock(const std::filesystem::path& dir,
                                                   const probe::MachineInfo& machine,
                                                   const Target* python = nullptr);

/// choose_lock for this machine: the one `machine` describes (flags, then GPULOCK_*, then
/// detection) and the interpreter `python` (empty: python3 on PATH). An interpreter that cannot
/// be asked leaves the locks' Python and platform uncompared, and `python_unasked` says why.
struct HereChoice {
  LockChoice choice;
  std::optional<std::string> python;  ///< the interpreter's X.Y, when it could be asked
  std::string python_unasked;
};
/// `only`, when not empty, replaces the directory's locks (`install --lock L --print-target`).
[[nodiscard]] core::Result<HereChoice> choose_lock_here(
    const std::filesystem::path& dir, const probe::OverrideFlags& machine,
    const std::string& python, const std::vector<std::filesystem::path>& only = {});

/// Why `python` cannot run a lock with this `requires_python` and `[tool.gpulock.target]`
/// (nullptr: none): not one of the target's Pythons (`pythons`, else `python`; a free-threaded
/// "3.13t" counts as 3.13), none of its platforms one this interpreter's tags accept, or its
/// full version outside `requires-python`. Empty when it can.
[[nodiscard]] std::string python_refusal(const std::optional<std::string>& requires_python,
                                         const lock::GpulockTarget* target, const Target& python);

/// choose_lock for a venv still to be made (issue 25): each lock is judged against the machine
/// and the interpreters of `pythons` in turn (each asked only when reached: PathPythons), and
/// fits with the first one it accepts (LockFit::python); a lock no interpreter runs says why for
/// each. With no interpreter that could be asked, the locks' Python is not compared
/// (`python_unasked`). `HereChoice::python` is the chosen lock's interpreter's X.Y. Errors: as
/// choose_lock_here.
[[nodiscard]] core::Result<HereChoice> choose_lock_for_new_venv(
    const std::filesystem::path& dir, const probe::OverrideFlags& machine, PathPythons& pythons,
    const std::vector<std::filesystem::path>& only = {});

}  // namespace gpulock::app

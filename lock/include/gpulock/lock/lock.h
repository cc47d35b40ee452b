#pragma once
/// @file
/// The lock model: every field of a PEP 751 `pylock.toml`, version 1.0 (canonical spec:
/// packaging.python.org, "pylock.toml Specification"), plus gpulock's own `[tool.gpulock]`
/// table (DESIGN.md §Lockfile; documented in docs/concepts/lockfile.md).
///
/// Optional fields are `std::optional` so that absent and empty stay distinct (`extras = []`
/// means "the inputs had no extras", an absent key means "not recorded"); that is what lets a
/// foreign lock be read and re-written without loss. Keys the model does not know (from a newer
/// minor lock-version) are kept in `unknown` tables and written back after the known keys.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/lock/toml_value.h"

namespace gpulock::lock {

/// The 1-based line in the file a value was read from (0 for a value built in memory). Ignored
/// by `==`, so a model read back from a file compares equal to the one that was written.
struct SourceLine {
  std::size_t line = 0;
  friend bool operator==(const SourceLine&, const SourceLine&) noexcept { return true; }
};

/// Hash algorithm (lowercase, e.g. "sha256") -> hex digest. PEP 751 requires at least one entry
/// for every archive, sdist and wheel.
using Hashes = std::map<std::string, std::string, std::less<>>;

/// A file: `[packages.archive]`, `[packages.sdist]` or one of `[[packages.wheels]]`.
/// One of `url` / `path` is required (both may be given; `path` wins for the file name).
struct FileEntry {
  std::optional<std::string> name;  ///< the file name; may be omitted when the url/path ends in it
  std::optional<std::string> url;
  std::optional<std::string> path;  ///< relative paths are relative to the lock file
  std::optional<std::uint64_t> size;
  std::optional<TomlDatetime> upload_time;  ///< always UTC (the reader converts offsets)
  Hashes hashes;
  std::optional<std::string> subdirectory;  ///< archives only
  TomlTable unknown;
  SourceLine line;

  /// The file name: `name`, else the last component of `path`, else of `url` (percent-decoded,
  /// without query or fragment).
  [[nodiscard]] std::string filename() const;

  friend bool operator==(const FileEntry&, const FileEntry&) = default;
};

/// `[packages.vcs]`: a source tree in a version control system.
struct VcsSource {
  std::string type;  ///< "git", "hg", "svn", "bzr"
  std::optional<std::string> url;
  std::optional<std::string> path;
  std::optional<std::string> requested_revision;
  std::string commit_id;
  std::optional<std::string> subdirectory;
  TomlTable unknown;
  SourceLine line;
  friend bool operator==(const VcsSource&, const VcsSource&) = default;
};

/// `[packages.directory]`: a local source tree.
struct DirectorySource {
  std::string path;
  std::optional<bool> editable;
  std::optional<std::string> subdirectory;
  TomlTable unknown;
  SourceLine line;
  friend bool operator==(const DirectorySource&, const DirectorySource&) = default;
};

/// One `[[packages]]` entry. Exactly one source: `vcs`, `directory`, `archive`, or `sdist`
/// and/or `wheels`.
struct Package {
  std::string name;  ///< PEP 503 normalized
  std::optional<std::string> version;
  std::optional<std::string> marker;
  std::optional<std::string> requires_python;
  /// `[[packages.dependencies]]`: tables of disambiguating keys (`{ name = "spam" }`).
  std::optional<std::vector<TomlTable>> dependencies;
  std::optional<std::string> index;
  std::optional<VcsSource> vcs;
  std::optional<DirectorySource> directory;
  std::optional<FileEntry> archive;
  std::optional<FileEntry> sdist;
  std::optional<std::vector<FileEntry>> wheels;
  /// `[[packages.attestation-identities]]`: `kind` plus publisher-specific keys.
  std::optional<std::vector<TomlTable>> attestation_identities;
  std::optional<TomlTable> tool;  ///< `[packages.tool]`
  TomlTable unknown;
  SourceLine line;  ///< the line of this package's `[[packages]]` header (or inline table)

  /// Every archive/sdist/wheel of the package, in model order.
  [[nodiscard]] std::vector<const FileEntry*> files() const;

  friend bool operator==(const Package&, const Package&) = default;
};

/// One index gpulock read (`[[tool.gpulock.indexes]]`); URLs never carry credentials.
struct IndexRecord {
  std::string name;
  std::string url;
  /// "default", "extra", "torch", "pinned", "find-links", "direct" (catalog::recorded_role)
  std::string role;
  /// Issue 41 item 2: the user-level setting this index came from ("env PIP_EXTRA_INDEX_URL",
  /// "file ~/.config/pip/pip.conf"), written only for an index that supplied a locked file;
  /// absent for flags and project files.
  std::optional<std::string> origin;
  TomlTable unknown;
  friend bool operator==(const IndexRecord&, const IndexRecord&) = default;
};

/// An input file of `gpulock resolve`, so `gpulock check` can tell which input changed.
struct InputFile {
  std::string path;    ///< relative to the lock file's directory, '/' separators
  std::string kind;    ///< "requirements", "constraints", "project"
  std::string sha256;  ///< hex digest of the file's bytes
  TomlTable unknown;
  friend bool operator==(const InputFile&, const InputFile&) = default;
};

/// `[tool.gpulock.inputs]`: what the lock was resolved from.
struct GpulockInputs {
  std::vector<std::string> requirements;  ///< requirement arguments, as given
  std::vector<InputFile> files;
  std::vector<std::string> extras;
  std::vector<std::string> groups;
  /// Resolve options that change the result, by flag name without dashes
  /// (`index-strategy`, `prerelease`, `torch-backend`, ...). String values only.
  std::map<std::string, std::string, std::less<>> options;
  /// sha256 of `canonical_inputs_text(*this)`, computed by the caller (lock/ has no hashing).
  std::string sha256;
  TomlTable unknown;  ///< keys of a newer writer, kept
  SourceLine line;
  friend bool operator==(const GpulockInputs&, const GpulockInputs&) = default;
};

/// `[tool.gpulock.target]`: the environment the lock is for.
struct GpulockTarget {
  std::string python;    ///< "3.11"
  std::string platform;  ///< a platform tag, e.g. "manylinux_2_28_x86_64"
  TomlTable unknown;     ///< keys of a newer writer, kept
  SourceLine line;
  /// The declared target this lock is for (`[tool.gpulock.targets.<name>]`, `pylock.<name>.toml`).
  std::optional<std::string> name;
  /// A target spanning several Pythons or platforms (issue 22): every one of them, in order
  /// (`python` and `platform` keep the first, so readers of single-machine locks keep working).
  std::vector<std::string> pythons;
  std::vector<std::string> platforms;
  friend bool operator==(const GpulockTarget&, const GpulockTarget&) = default;
};

/// `[tool.gpulock.gpu]`: the GPU facts the lock was resolved for and what it needs, typed (the
/// reader parses each value once and refuses one that does not parse; the writer prints each
/// value's canonical text, the text gpulock wrote: a driver as given, CUDA "12.4", "sm_90").
/// Every field is optional; a CPU-only lock has no table at all.
struct GpulockGpu {
  /// The machine's driver: a version ("550.54.14", kept as written), or "none" for a machine
  /// without a GPU (`--driver none`).
  std::optional<gpu::DriverSpec> driver;
  std::optional<gpu::CudaVersion> cuda_ceiling;  ///< the driver's CUDA ceiling, e.g. 12.4
  std::optional<std::string> method;      ///< how the ceiling was found ("nvml", "override", ...)
  std::optional<gpu::CudaCompat> compat;  ///< "strict" or "minor"
  std::vector<gpu::ComputeCapability> archs;     ///< GPU archs the lock must run on, e.g. sm_90
  std::optional<std::string> variant;            ///< torch CUDA variant chosen, e.g. "cu124"
  std::optional<gpu::CudaVersion> cuda;          ///< CUDA runtime version locked, e.g. 12.4
  std::optional<std::string> cudnn;              ///< cuDNN version locked, e.g. "9.1.0.70"
  std::optional<gpu::DriverVersion> min_driver;  ///< minimum driver this lock needs
  TomlTable unknown;                             ///< keys of a newer writer, kept
  SourceLine line;
  friend bool operator==(const GpulockGpu&, const GpulockGpu&) = default;
};

/// `[tool.gpulock.snapshot]`: the point in time the indexes were read at.
struct GpulockSnapshot {
  std::optional<TomlDatetime> exclude_newer;  ///< --exclude-newer, UTC
  std::optional<std::string> nightly;         ///< nightly build date, "YYYY-MM-DD"
  TomlTable unknown;                          ///< keys of a newer writer, kept
  SourceLine line;
  friend bool operator==(const GpulockSnapshot&, const GpulockSnapshot&) = default;
};

/// `[tool.gpulock]`, schema 1. Disposable for installers (PEP 751 §tool), read by
/// `gpulock check` and `gpulock diff`.
struct GpulockTool {
  static constexpr std::int64_t kSchema = 1;
  std::int64_t schema = kSchema;
  std::vector<IndexRecord> indexes;
  std::optional<GpulockInputs> inputs;
  std::optional<GpulockTarget> target;
  std::optional<GpulockGpu> gpu;
  std::optional<GpulockSnapshot> snapshot;
  TomlTable unknown;  ///< keys of a newer schema 1 writer, kept
  SourceLine line;
  friend bool operator==(const GpulockTool&, const GpulockTool&) = default;
};

/// A whole `pylock.toml`.
struct Lock {
  std::string lock_version = "1.0";
  std::string created_by;
  std::optional<std::vector<std::string>> environments;
  std::optional<std::string> requires_python;
  std::optional<std::vector<std::string>> extras;
  std::optional<std::vector<std::string>> dependency_groups;
  std::optional<std::vector<std::string>> default_groups;
  std::vector<Package> packages;
  std::optional<GpulockTool> gpulock;  ///< `[tool.gpulock]` when it has schema 1
  TomlTable tool;                      ///< every other `[tool.*]` table, as read
  TomlTable unknown;
  /// The command in the file's header comment (`gpulock resolve ...`); empty for none. Read back
  /// from files gpulock wrote, so re-writing a lock keeps its header.
  std::string command;

  friend bool operator==(const Lock&, const Lock&) = default;
};

/// Sorts packages by normalized name, then version (PEP 440 order when both parse, text order
/// otherwise), then marker; wheels by file name; the canonical order the writer uses.
void canonicalize(Lock& lock);

/// True if package `a` sorts before `b` in canonical order.
[[nodiscard]] bool package_less(const Package& a, const Package& b);

/// The text whose sha256 goes in `[tool.gpulock.inputs].sha256`: one line per fact, in a fixed
/// order (`requirement <text>`, `file <kind> <path> <sha256>`, `extra <name>`, `group <name>`,
/// `option <key>=<value>`), each ending in "\n". The sha256 field itself is not part of it.
[[nodiscard]] std::string canonical_inputs_text(const GpulockInputs& inputs);

/// Every package entry with this name (compared after PEP 503 normalization), in model order.
[[nodiscard]] std::vector<const Package*> find_packages(const Lock& lock, std::string_view name);

}  // namespace gpulock::lock

#pragma once
/// @file
/// Reading and writing `pylock.toml` (PEP 751; canonical spec: packaging.python.org,
/// "pylock.toml Specification").
///
/// Reader: TOML 1.0 through toml++, then every PEP 751 rule plus the extra checks of the
/// reference validator (pypa/packaging `packaging.pylock`): major lock-version 1 (a higher minor
/// is read with a warning), required keys with the right types (a boolean is not an integer,
/// `upload-time` is a TOML date-time), names normalized, wheel/sdist file names consistent with
/// the package's name and version, at least one hash per archive/sdist/wheel, exactly one
/// source per package, and no two entries of one name with the same marker. Every error names
/// the file and the line.
///
/// Writer: gpulock's own, byte-stable format (docs/concepts/lockfile.md): a header comment,
/// top-level keys, packages in canonical order (lock.h `canonicalize`) with a fixed key order,
/// one inline table per file (`wheels` one per line), `[tool.gpulock]`, then other tools'
/// tables. The same model always gives the same bytes, and `read(write(x)) == x`.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/lock/lock.h"

namespace gpulock::lock {

/// Lock files larger than this are refused before they are read (64 MiB).
inline constexpr std::uintmax_t kMaxLockFileBytes = 64ull * 1024 * 1024;

/// A lock read from a file, with what the reader noticed but accepted.
struct LockFile {
  Lock lock;
  /// Warnings, each naming the file and line: a newer minor lock-version, keys PEP 751 does not
  /// define, a `[tool.gpulock]` of another schema (kept as an opaque tool table), an
  /// `upload-time` that was not in UTC.
  std::vector<core::Error> warnings;
};

/// Parses lock-file text. `where` names it in errors (a path). Errors: InvalidLockfile with
/// `where`, `line` and (for TOML syntax errors) `column` set.
[[nodiscard]] core::Result<LockFile> parse_lock(std::string_view text, std::string_view where);

/// Reads and parses a file. Errors: Io (cannot open/read: the message names the file and the
/// system error), InvalidLockfile (over kMaxLockFileBytes, not a regular file, or as
/// parse_lock).
[[nodiscard]] core::Result<LockFile> read_lock_file(const std::filesystem::path& path);

/// Options of the writer.
struct WriteOptions {
  /// When set, replaces `lock.command` in the header comment (e.g. the resolve command line).
  std::optional<std::string> command;
};

/// The canonical text of a lock. Packages are written in canonical order whatever the model's
/// order. Never fails: strings are escaped, invalid UTF-8 replaced, so the output is valid TOML.
/// It may still be an invalid *lock* if the model breaks PEP 751 (e.g. a file without hashes);
/// `validate_lock` says so.
[[nodiscard]] std::string to_toml(const Lock& lock, const WriteOptions& options = {});

/// Writes `to_toml(lock)` atomically (gpulock/sys/atomic_file.h). Errors: Io.
[[nodiscard]] core::Status write_lock_file(const std::filesystem::path& path, const Lock& lock,
                                           const WriteOptions& options = {});

/// The PEP 751 checks of the reader applied to a model in memory (what `write_lock_file`'s
/// callers can run before writing). Errors: InvalidLockfile naming the package.
[[nodiscard]] core::Status validate_lock(const Lock& lock);

}  // namespace gpulock::lock

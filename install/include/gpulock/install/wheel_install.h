#pragma once
/// @file
/// The native wheel installer (issue 25): one wheel, already unpacked (the shared cache,
/// install/wheel_cache.h), installed into an environment as the binary distribution format
/// specification says (PEP 427 §Installing a wheel) and as pip 26 does where it is silent:
/// the root into purelib or platlib (`Root-Is-Purelib`), `<name>.data/<scheme>/` into the
/// scheme's directory, `#!python` in `.data/scripts` rewritten to the interpreter, console and
/// GUI entry points written as pip's launchers, `RECORD` rewritten with the installed paths and
/// the generated files, `INSTALLER`, `REQUESTED` and `direct_url.json` (PEP 610). Files from
/// the cache are linked (sys/link_file.h); every file gpulock writes or rewrites is a new file,
/// so the cache is never written through a link. Removal (`remove_distribution`) follows the
/// distribution's RECORD, as `pip uninstall` does.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/filename.h"
#include "gpulock/sys/link_file.h"

namespace gpulock::install {

/// Where an environment's files go (the target interpreter's sysconfig paths).
struct InstallScheme {
  std::filesystem::path prefix;   ///< sys.prefix; nothing outside it is ever removed
  std::filesystem::path purelib;  ///< site-packages
  std::filesystem::path platlib;
  std::filesystem::path scripts;  ///< bin/
  std::filesystem::path data;     ///< the prefix
  /// Headers go to `<headers>/<project name>` (pip's venv scheme: include/site/pythonX.Y).
  std::filesystem::path headers;
  std::string python;     ///< the interpreter written in launchers' shebangs
  std::string python_xy;  ///< "3.11": pip's versioned pip3.11 launcher
};

/// What a sync changed in an environment, so that a failure half way puts it back as it was
/// (issue 25: all or nothing). A file to be replaced or removed is first set aside (renamed into
/// a stash directory inside the environment, so on the same file system); every file and
/// directory written is noted. `rollback` removes what was written and renames the set-aside
/// files back, newest first; `commit` deletes the stash. The destructor rolls back what was
/// neither committed nor rolled back.
class InstallJournal {
 public:
  /// The stash is made on first use, as `<root>/.gpulock-stash-XXXXXX` in the first of `roots`
  /// where it can be (the prefix, then site-packages).
  /// `registry` (a directory outside the environment, under the cache: sync_registry()) gets a
  /// record of the stash with the journal's random token when the stash is made; only a
  /// journal with such a record is ever replayed (roll_back_interrupted). Empty: no record.
  explicit InstallJournal(std::vector<std::filesystem::path> roots,
                          std::filesystem::path registry = {});
  ~InstallJournal();
  InstallJournal(const InstallJournal&) = delete;
  InstallJournal& operator=(const InstallJournal&) = delete;

  /// Moves the file, link or directory at `path` into the stash (nothing when there is none).
  /// Errors: Io.
  [[nodiscard]] core::Status set_aside(const std::filesystem::path& path);
  /// A file or link this sync created at `path`.
  void created(const std::filesystem::path& path);
  /// Creates `dir` and its missing parents, each noted. Errors: Io.
  [[nodiscard]] core::Status make_dirs(const std::filesystem::path& dir);
  /// Puts everything back. Returns the paths it could not restore (empty: all restored).
  std::vector<std::string> rollback();
  /// Keeps the changes: the journal, then the stash, is deleted.
  void commit();

  enum class Kind : char { File = 'F', Dir = 'D', Aside = 'A' };
  struct Entry {
    Kind kind;
    std::filesystem::path path, stashed;
  };

 private:
  core::Status note(Kind kind, const std::filesystem::path& path,
                    const std::filesystem::path& stashed = {});
  core::Status make_stash();
  struct Noted {
    Kind kind;
    std::string path, stashed;
  };
  std::vector<std::filesystem::path> roots_;
  std::filesystem::path registry_;
  std::filesystem::path record_;  ///< this stash's file in the registry
  std::filesystem::path stash_;
  int journal_fd_ = -1;
  std::vector<Noted> log_;
  std::size_t next_ = 0;
  bool done_ = false;
  /// GPULOCK_TEST_INSTALL_KILL="KIND N" (file, dir or aside): the process kills itself with
  /// SIGKILL before noting the N-th entry of that kind, for the tests of an interrupted sync.
  Kind kill_kind_ = Kind::File;
  std::size_t kill_at_ = 0;
  std::size_t kill_count_ = 0;
};

/// The journal on disk (issue 25): `<stash>/journal` holds one line per entry, written before
/// the change it describes, and one per entry undone; `commit` deletes it before the stash. A
/// sync killed half way leaves the stash with its journal, which the next one undoes first.
struct InterruptedSync {
  std::filesystem::path stash;
  std::size_t restored = 0;  ///< files put back from the stash
  std::size_t removed = 0;   ///< files the killed sync had written, removed
  bool journal = true;       ///< false: a stash with no journal (a commit cut short)
  /// Not written by gpulock with this registry (no record, or another token): left alone.
  bool foreign = false;
  bool live = false;                 ///< its run still holds the journal's lock: left alone
  std::vector<std::string> lost;     ///< set-aside files that could not be put back
  std::vector<std::string> skipped;  ///< entries naming a path outside `roots`: not followed
};

/// The stashes (`.gpulock-stash-*`) in `roots` (an environment's prefix and site-packages).
[[nodiscard]] std::vector<std::filesystem::path> find_interrupted_syncs(
    const std::vector<std::filesystem::path>& roots);

/// Finishes the rollback of the sync that left `stash`: every file it wrote is removed and
/// every file it set aside put back, newest first; the stash is deleted when nothing is lost.
/// A stash with no journal is what a commit killed half way leaves: it is deleted. Acted on only
/// when `registry` records the stash with the journal's token (else `foreign`), when no live
/// process holds the journal's lock (else `live`), and only for entries whose paths lie under
/// `roots` (the scheme's directories) with no symbolic link among their parents (else
/// `skipped`).
[[nodiscard]] InterruptedSync roll_back_interrupted(
    const std::filesystem::path& stash, const std::filesystem::path& registry,
    const std::vector<std::filesystem::path>& roots);

/// `<cache_dir>/syncs-v1`: the records of live journals (cache_dir empty: the default cache).
[[nodiscard]] std::filesystem::path sync_registry(const std::string& cache_dir);

/// Installed files (absolute, lexically normal path) -> the project that owns them.
using FileOwners = std::map<std::string, std::string>;

struct WheelInstallOptions {
  sys::LinkMode link_mode = sys::LinkMode::Hardlink;
  bool requested = false;                      ///< write REQUESTED (a root of the lock)
  std::optional<std::string> direct_url_json;  ///< written as direct_url.json when given
  /// Where replaced files are set aside and written ones noted (nullptr: replaced in place).
  InstallJournal* journal = nullptr;
  /// Files the environment's other distributions own: a member that would overwrite one with
  /// other bytes is refused (InvalidInput); byte-identical ones are shared. The wheel's files
  /// are added. nullptr: no check.
  FileOwners* owners = nullptr;
};

struct InstalledWheel {
  std::filesystem::path dist_info;
  std::size_t files = 0;             ///< rows in the new RECORD
  std::vector<std::string> scripts;  ///< launcher names written into scripts/
  std::size_t linked = 0;            ///< files linked from the cache (not copied)
};

/// Installs the wheel unpacked at `unpacked` (the archive's tree as it is). `wheel` names it.
/// Existing files at the destinations are replaced (unlinked first). Errors: InvalidInput (no
/// matching .dist-info directory, a `.data` file outside a known scheme, an entry point name
/// that would leave the scripts directory), Io.
[[nodiscard]] core::Result<InstalledWheel> install_unpacked_wheel(
    const std::filesystem::path& unpacked, const core::WheelFilename& wheel,
    const InstallScheme& scheme, const WheelInstallOptions& options);

struct RemovedDistribution {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
};

/// Removes an installed distribution: every file its RECORD lists (relative to the directory
/// that holds `dist_info`) that lies inside `scheme.prefix`, the `__pycache__/*.pyc` of its
/// `.py` files, the `.dist-info` directory, then the directories left empty. Errors:
/// InvalidInput (no RECORD: pip refuses too), Io. With a `journal` every file is set aside
/// instead of deleted (InstallJournal::commit deletes them). Files in `others` (owned by a
/// distribution that stays) are kept.
[[nodiscard]] core::Result<RemovedDistribution> remove_distribution(
    const std::filesystem::path& dist_info, const InstallScheme& scheme,
    InstallJournal* journal = nullptr, const FileOwners* others = nullptr);

}  // namespace gpulock::install

#pragma once
// RECORD files (PEP 376 / "Recording installed projects"; PEP 427 §The .dist-info directory):
// Python csv rows of path, `sha256=<urlsafe base64, no padding>`, size. Shared by the native
// installer (install_wheel.cpp), the sync's verification and `check --env --deep`.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

#include "gpulock/index/wheel_members.h"
#include "gpulock/lock/lock.h"

namespace gpulock::install::record {

struct Row {
  std::string path;  ///< '/'-separated, relative to the site-packages directory
  std::string hash;  ///< "sha256=..." or empty
  std::string size;  ///< decimal or empty
};

/// The fields of one CSV line (quotes as Python's csv module writes them).
[[nodiscard]] std::vector<std::string> csv_fields(const std::string& line);

/// The rows of a RECORD text (blank lines skipped).
[[nodiscard]] std::vector<Row> parse(std::string_view text);

/// The rows of `dist_info/RECORD`; nullopt when it cannot be read.
[[nodiscard]] std::optional<std::vector<Row>> read(const std::filesystem::path& dist_info);

/// Rows as Python's csv.writer writes them (minimal quoting, "\r\n" line ends), in the given
/// order.
[[nodiscard]] std::string write(const std::vector<Row>& rows);

/// Hex sha256 as RECORD's "sha256=..." value, without the prefix.
[[nodiscard]] std::string hex_to_urlsafe_b64(std::string_view hex);

/// One installed file against its row: `row.path` taken relative to `site` (the directory that
/// holds the dist-info). Empty: it matches (or the row has no hash); else "missing", "modified
/// (...)", a size that differs (found without reading the file), or, never opened: a path
/// outside `prefix` (the environment) or something other than a regular file.
[[nodiscard]] std::string verify_file(const std::filesystem::path& prefix,
                                      const std::filesystem::path& site, const Row& row);

/// gpulock's own record of an installed file (kStatFile in the dist-info, written at install):
/// its size and mtime then, compared on later syncs and by `check --env` without hashing.
struct StatRow {
  std::string path;  ///< as in RECORD
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};
inline constexpr std::string_view kStatFile = ".gpulock-files";

/// "path\tsize\tmtime_ns" lines (a path with a tab or newline is left out). The same format is
/// the wheel cache's entry manifest (install/wheel_cache.h).
[[nodiscard]] std::string write_stats(const std::vector<StatRow>& rows);
/// The rows of such a file (malformed lines skipped); nullopt when it cannot be read.
[[nodiscard]] std::optional<std::vector<StatRow>> read_stat_file(const std::filesystem::path& file);
/// `dist_info/<kStatFile>`; nullopt when there is none (installed by another tool).
[[nodiscard]] std::optional<std::vector<StatRow>> read_stats(
    const std::filesystem::path& dist_info);
/// A stat's mtime in nanoseconds, as StatRow records it.
[[nodiscard]] std::int64_t mtime_ns(const struct ::stat& st);
/// One installed file against its StatRow, as verify_file (same path rules); empty: unchanged.
[[nodiscard]] std::string check_stat(const std::filesystem::path& prefix,
                                     const std::filesystem::path& site, const StatRow& row);
/// check_stat over the rows of one site-packages, the same answers: a row in the directory of
/// the row before it is a stat relative to that directory, opened once (a no-op sync stats
/// every installed file). One per thread.
class StatChecker {
 public:
  StatChecker(std::filesystem::path prefix, std::filesystem::path site);
  ~StatChecker();
  StatChecker(const StatChecker&) = delete;
  StatChecker& operator=(const StatChecker&) = delete;
  [[nodiscard]] std::string check(const StatRow& row);

 private:
  std::filesystem::path prefix_;
  std::filesystem::path site_;
  std::string dir_;  // relative to site_, the directory dir_fd_ is open on (-1: missing)
  int dir_fd_ = -1;
  bool opened_ = false;
};
/// The prefix of an environment whose site-packages is `site` (lib/pythonX.Y/site-packages).
[[nodiscard]] std::filesystem::path prefix_of_site(const std::filesystem::path& site);

/// The shared libraries the lock recorded for `filename`, a wheel of `package`
/// ([packages.tool.gpulock.files], lock/wheel_files.h) that are not in `site`, as site-relative
/// paths; empty when all are there or the lock records none.
[[nodiscard]] std::vector<std::string> missing_locked_libraries(const lock::Package& package,
                                                                std::string_view filename,
                                                                const std::filesystem::path& site);

/// The package's recorded wheel with the fewest of its shared libraries missing from `site`
/// (of several wheels, a lock for several platforms, that one is taken to be the one
/// installed): its file name, how many libraries it records, and those missing. `file` is empty
/// when the lock records no wheel of the package.
struct LockedLibraries {
  std::string file;
  std::size_t total = 0;
  std::vector<std::string> missing;
};
[[nodiscard]] LockedLibraries check_locked_libraries(const lock::Package& package,
                                                     const std::filesystem::path& site);

/// Issue 44 item 1: a wheel's files (its member list from the zip's central directory, read at
/// lock time: index::WheelMembers) against the environment whose site-packages is `site`. Each
/// member is looked for where the installer puts it (index::site_path_of_member); not compared:
/// a member that lands outside site-packages (`.data/scripts`, whose launchers the installer
/// rewrites, `.data/headers`, `.data/data`), one whose path is not a plain relative path (the
/// installer refuses those), and the dist-info files the installer writes itself (RECORD,
/// INSTALLER, REQUESTED, direct_url.json: is_installer_written). A problem is "missing", "not a
/// regular file", or "modified (size N, M in the wheel)"; the file's bytes are not read (a
/// change of the same size is --deep's, through RECORD's hashes).
struct MemberProblem {
  std::string path;  ///< site-relative
  std::string problem;
  friend bool operator==(const MemberProblem&, const MemberProblem&) = default;
};
struct MemberCheck {
  std::size_t compared = 0;  ///< members looked for
  std::vector<MemberProblem> problems;
};
[[nodiscard]] MemberCheck check_members(std::span<const index::WheelMember> members,
                                        const std::filesystem::path& site);

/// Whether `member` (an archive path) is a dist-info file an installer writes itself, whatever
/// the wheel holds: `<name>.dist-info/RECORD`, `INSTALLER`, `REQUESTED`, `direct_url.json`.
[[nodiscard]] bool is_installer_written(std::string_view member) noexcept;

}  // namespace gpulock::install::record

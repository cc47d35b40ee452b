#pragma once
// Issue 44 items 1 and 4: every installed locked wheel's files against the wheel's member list
// (index::WheelMembers, read from its zip's central directory at lock time and cached by the
// wheel's sha256), shared by `check --env` (check_env.cpp: `locked-file-mismatch` drifts and
// notes) and `probe --lock` (probe_env.cpp: findings). Not a public header.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpulock/index/client.h"
#include "gpulock/index/wheel_members.h"
#include "gpulock/install/record.h"
#include "gpulock/lock/lock.h"
#include "gpulock/probe/environment.h"

namespace gpulock::app::detail {

// The member lists of the installed packages' locked wheels, by wheel file name, from the cache
// or a local wheel (never the network), each only when its digest is the lock's
// `members-sha256` (else, for a wheel unpacked in install's cache, its files when as many as the
// lock's `members`); `unusable`: why a list that was found is not used.
struct LockedLists {
  std::map<std::string, std::vector<index::WheelMember>, std::less<>> lists;
  std::map<std::string, std::string, std::less<>> unusable;
};
// `lock_dir`: absolute, the directory a local wheel's path is relative to; `cache`: the cache
// (read offline whatever it says).
LockedLists read_locked_lists(const lock::Lock& lock, const std::filesystem::path& lock_dir,
                              const index::ClientOptions& cache,
                              const probe::PythonEnvironment& env);

// The record of the wheel installed for `p`: its one record, else the one whose tags are the
// dist-info's WHEEL `Tag:` lines; nullopt when none is known.
std::optional<std::string> installed_wheel(const lock::Package& p,
                                           const probe::InstalledDistribution& installed);

enum class ListCheck { NoRecord, NotAvailable, OtherList, WheelUnknown, Compared };
struct ListChecked {
  ListCheck outcome = ListCheck::NoRecord;
  std::string wheel;  // the wheel's file name (the package's name when the wheel is not known)
  std::string why;    // OtherList: why the list found is not used
  std::size_t compared = 0;                              // Compared: the members looked for
  std::vector<install::record::MemberProblem> problems;  // Compared: missing or resized
};
// The installed files of `p` against its wheel's list (install::record::check_members), leaving
// out of `problems` the site-relative paths in `named` (missing shared libraries a finding named
// already).
ListChecked check_locked_members(const lock::Package& p,
                                 const probe::InstalledDistribution& installed,
                                 const LockedLists& lists, const std::set<std::string>& named);

// "NAME VERSION: N of the M files WHEEL installs in site-packages are missing or of another size
// (the file list the lock records)", for a Compared `c` with problems.
std::string members_message(const lock::Package& p, const probe::InstalledDistribution& installed,
                            const ListChecked& c);
// "PATH: PROBLEM" for each of `c`'s problems, the first `max_shown`, then "... and N more".
std::vector<std::string> members_details(const ListChecked& c, std::size_t max_shown);

// "reinstall it: `PYTHON -m pip uninstall -y PACKAGE`, then `INSTALL`": for files changed where
// install's sync would keep the package (RECORD still lists them and checks out, or only --deep
// saw the change), so it is removed first. `install`: the complete install command.
std::string reinstall_hint(const std::string& python, const std::string& package,
                           const std::string& install);

// What the lists allowed, in words: how many wheels were compared (`compared`), for which the
// comparison was not possible and why (`subject`: the wheel, or the first of several).
struct ListNote {
  bool compared = false;
  std::string subject;
  std::string text;
};
std::vector<ListNote> file_list_notes(const std::vector<ListChecked>& checked);

}  // namespace gpulock::app::detail

// Issue 44 items 1 and 4, for `check --env` and `probe --lock`: every installed locked wheel's
// files against the wheel's member list (index::WheelMembers, read from its zip's central
// directory at lock time and cached by the wheel's sha256), the list taken only when its digest
// is the lock's `members-sha256`. Offline: the cache, or the wheel itself when the lock names a
// local file; never the network.
#include "locked_files.h"

#include <algorithm>
#include <fstream>
#include <tuple>

#include <fmt/format.h>

#include "gpulock/core/filename.h"
#include "gpulock/core/name.h"
#include "gpulock/install/wheel_cache.h"
#include "gpulock/lock/wheel_files.h"

namespace gpulock::app::detail {
namespace {

namespace fs = std::filesystem;

// Where the lock's file entry for `filename` is read from: its URL, else its path (relative to
// the lock), with its sha256 and size. nullopt: the package lists no such file.
std::optional<index::WheelRef> ref_of(const fs::path& lock_dir, const lock::Package& p,
                                      std::string_view filename) {
  for (const auto* f : p.files()) {
    if (f->filename() != filename) continue;
    index::WheelRef ref;
    if (f->path) {
      fs::path path = *f->path;
      ref.url = (path.is_absolute() ? path : lock_dir / path).lexically_normal().string();
    } else if (f->url) {
      ref.url = *f->url;
    } else {
      return std::nullopt;
    }
    ref.size = f->size;
    if (auto h = f->hashes.find("sha256"); h != f->hashes.end()) ref.sha256 = h->second;
    return ref;
  }
  return std::nullopt;
}

// The tags a dist-info's WHEEL file declares (`Tag:` lines), sorted; empty when unreadable.
std::vector<std::string> installed_tags(const fs::path& dist_info) {
  std::vector<std::string> tags;
  std::ifstream in(dist_info / "WHEEL");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.starts_with("Tag:")) continue;
    std::string tag = line.substr(4);
    const auto b = tag.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    tags.push_back(tag.substr(b, tag.find_last_not_of(" \t") - b + 1));
  }
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  return tags;
}

// A wheel file name's expanded tags, sorted; empty when it does not parse.
std::vector<std::string> filename_tags(std::string_view filename) {
  std::vector<std::string> tags;
  auto parsed = core::WheelFilename::parse_with_variant(filename);
  if (!parsed) return tags;
  for (const auto& t : parsed->tags)
    tags.push_back(t.to_string());
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  return tags;
}

}  // namespace

LockedLists read_locked_lists(const lock::Lock& lock, const fs::path& lock_dir,
                              const index::ClientOptions& cache,
                              const probe::PythonEnvironment& env) {
  LockedLists out;
  std::vector<index::WheelRef> refs;
  // file name, members-sha256, members
  std::vector<std::tuple<std::string, std::string, std::uint64_t>> wanted;
  for (const auto& p : lock.packages) {
    if (env.find(core::normalize_name(p.name)) == nullptr) continue;
    auto records = lock::wheel_files(p);
    if (!records) continue;
    for (const auto& [name, rec] : *records) {
      auto ref = ref_of(lock_dir, p, name);
      if (!ref) continue;
      refs.push_back(std::move(*ref));
      wanted.emplace_back(name, rec.members_sha256, rec.members);
    }
  }
  if (refs.empty()) return out;
  index::ClientOptions options = cache;
  options.offline = true;  // the cache, or a local wheel: never the network
  options.refresh = false;
  options.max_parallel = 1;
  index::IndexClient client(options);
  auto lists = client.wheel_members(refs);
  const fs::path unpacked = install::wheel_cache_root(options.cache_dir);
  for (std::size_t i = 0; i < lists.size() && i < wanted.size(); ++i) {
    auto& [name, digest, count] = wanted[i];
    if (!lists[i]) {
      // Not in the cache, and not a local file: the wheel unpacked in install's cache (the tree
      // of the very wheel the lock pins by sha256), when it holds as many files as the lock
      // records (paths and sizes only: the digest needs the CRC-32s).
      auto files = install::cached_wheel_files(unpacked, refs[i].sha256);
      if (!files) continue;
      if (files->size() != count) {
        out.unusable.emplace(name, fmt::format("its unpacked copy in the wheel cache holds {} "
                                               "files, the lock records {}",
                                               files->size(), count));
        continue;
      }
      out.lists.emplace(name, std::move(*files));
      continue;
    }
    if (lists[i]->digest != digest) {
      // The record was changed, or the wheel behind a path.
      out.unusable.emplace(name, fmt::format("its file list (members-sha256 {:.12}) is not the "
                                             "one the lock records ({:.12})",
                                             lists[i]->digest, digest));
      continue;
    }
    out.lists.emplace(name, std::move(lists[i]->members));
  }
  return out;
}

std::optional<std::string> installed_wheel(const lock::Package& p,
                                           const probe::InstalledDistribution& installed) {
  auto records = lock::wheel_files(p);
  if (!records || records->empty()) return std::nullopt;
  if (records->size() == 1) return records->begin()->first;
  const auto tags = installed_tags(installed.dist_info);
  if (tags.empty()) return std::nullopt;
  for (const auto& [name, rec] : *records) {
    if (filename_tags(name) == tags) return name;
  }
  return std::nullopt;
}

ListChecked check_locked_members(const lock::Package& p,
                                 const probe::InstalledDistribution& installed,
                                 const LockedLists& lists, const std::set<std::string>& named) {
  auto records = lock::wheel_files(p);
  if (!records || records->empty()) return {ListCheck::NoRecord, {}, {}, 0, {}};
  auto wheel = installed_wheel(p, installed);
  if (!wheel) return {ListCheck::WheelUnknown, p.name, {}, 0, {}};
  auto list = lists.lists.find(*wheel);
  if (list == lists.lists.end()) {
    auto why = lists.unusable.find(*wheel);
    if (why != lists.unusable.end()) return {ListCheck::OtherList, *wheel, why->second, 0, {}};
    return {ListCheck::NotAvailable, *wheel, {}, 0, {}};
  }
  auto found = install::record::check_members(list->second, installed.site_packages);
  ListChecked out{ListCheck::Compared, *wheel, {}, found.compared, {}};
  for (auto& m : found.problems) {
    // A shared library the locked-file-missing check named already is not named twice.
    if (m.problem == "missing" && named.contains(m.path)) continue;
    out.problems.push_back(std::move(m));
  }
  return out;
}

std::string members_message(const lock::Package& p, const probe::InstalledDistribution& installed,
                            const ListChecked& c) {
  return fmt::format(
      "{} {}: {} of the {} files {} installs in site-packages {} missing or of "
      "another size (the file list the lock records)",
      p.name, installed.version, c.problems.size(), c.compared, c.wheel,
      c.problems.size() == 1 ? "is" : "are");
}

std::vector<std::string> members_details(const ListChecked& c, std::size_t max_shown) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < c.problems.size() && i < max_shown; ++i)
    out.push_back(fmt::format("{}: {}", c.problems[i].path, c.problems[i].problem));
  if (c.problems.size() > max_shown)
    out.push_back(fmt::format("... and {} more", c.problems.size() - max_shown));
  return out;
}

std::vector<ListNote> file_list_notes(const std::vector<ListChecked>& checked) {
  auto wheels = [](std::size_t n) {
    return fmt::format("{} installed wheel{}", n, n == 1 ? "" : "s");
  };
  std::vector<ListNote> notes;
  std::size_t compared = 0;
  std::vector<std::string> not_compared;
  for (const auto& c : checked) {
    if (c.outcome == ListCheck::Compared) ++compared;
    if (c.outcome == ListCheck::NotAvailable) not_compared.push_back(c.wheel);
    if (c.outcome == ListCheck::OtherList) {
      notes.push_back(
          {false, c.wheel,
           fmt::format("the file-level comparison was not possible for {}: {}", c.wheel, c.why)});
    }
    if (c.outcome == ListCheck::WheelUnknown) {
      notes.push_back(
          {false, c.wheel,
           fmt::format("the file-level comparison was not possible for {}: the lock has several "
                       "wheels of it, and the tags of its installed WHEEL file are none of theirs",
                       c.wheel)});
    }
  }
  if (compared > 0) {
    notes.push_back({true, "",
                     fmt::format("the files of {} compared by path and size with the file lists "
                                 "the lock records",
                                 wheels(compared))});
  }
  if (not_compared.empty()) return notes;
  notes.push_back(
      {false, not_compared.front(),
       fmt::format(
           "the file-level comparison was not possible for {}: {} not in the cache, the "
           "lock names no local file, and the wheel cache has no copy (`gpulock resolve` "
           "or `gpulock install` reads it): {}{}",
           wheels(not_compared.size()),
           not_compared.size() == 1 ? "its file list is" : "their file lists are",
           not_compared.front(),
           not_compared.size() > 1 ? fmt::format(" and {} more", not_compared.size() - 1) : "")});
  return notes;
}

std::string reinstall_hint(const std::string& python, const std::string& package,
                           const std::string& install) {
  return fmt::format("reinstall it: `{} -m pip uninstall -y {}`, then `{}`", python, package,
                     install);
}

}  // namespace gpulock::app::detail

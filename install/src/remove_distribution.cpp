// Removing an installed distribution (wheel_install.h remove_distribution): the files its
// RECORD lists inside the environment, set aside in the sync's journal, then the directories
// left empty.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <vector>

#include <sys/stat.h>

#include "gpulock/install/record.h"
#include "gpulock/install/wheel_install.h"

#include "io_error.h"

namespace gpulock::install {
namespace fs = std::filesystem;
namespace {

using core::ErrorCode;
using detail::io_error;

bool inside(const fs::path& p, const fs::path& root) {
  auto rel = p.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

core::Result<RemovedDistribution> remove_distribution(const fs::path& dist_info,
                                                      const InstallScheme& scheme,
                                                      InstallJournal* journal,
                                                      const FileOwners* others) {
  auto rows = record::read(dist_info);
  if (!rows) {
    return std::unexpected(
        core::make_error(ErrorCode::InvalidInput,
                         "cannot remove this distribution: it has no RECORD file listing its files",
                         dist_info.string()));
  }
  const fs::path site = dist_info.parent_path();
  const fs::path prefix = scheme.prefix.lexically_normal();
  RemovedDistribution out;
  std::set<fs::path> dirs;
  std::error_code ec;
  for (const auto& row : *rows) {
    if (row.path.empty()) continue;
    const fs::path file = (site / row.path).lexically_normal();
    if (!inside(file, prefix)) continue;  // never outside the environment
    // A file another installed distribution also owns (byte-identical, as every nvidia-*-cu12
    // wheel's empty nvidia/__init__.py) goes with its last owner.
    if (others != nullptr && others->contains(file.string())) continue;
    // gpulock's own record goes with the dist-info directory (set aside whole below).
    if (file.filename() == record::kStatFile && file.parent_path() == dist_info.lexically_normal())
      continue;
    struct stat st {};
    if (::lstat(file.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      if (journal != nullptr) {
        if (auto s = journal->set_aside(file); !s) return std::unexpected(s.error());
      } else if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
        return std::unexpected(io_error("cannot remove", file, errno));
      }
      ++out.files;
      out.bytes += static_cast<std::uint64_t>(st.st_size);
    }
    dirs.insert(file.parent_path());
    if (file.extension() == ".py") {
      // pip's uninstall removes the compiled files beside each .py.
      const fs::path cache = file.parent_path() / "__pycache__";
      const std::string stem = file.stem().string() + ".";
      std::vector<fs::path> doomed;
      for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (n.starts_with(stem) && n.ends_with(".pyc")) doomed.push_back(it->path());
      }
      for (const auto& d : doomed) {
        if (journal != nullptr) {
          if (auto s = journal->set_aside(d); !s) return std::unexpected(s.error());
        } else {
          fs::remove(d, ec);
        }
      }
      ec.clear();
      dirs.insert(cache);
    }
  }
  if (journal != nullptr) {
    if (auto s = journal->set_aside(dist_info); !s) return std::unexpected(s.error());
  } else {
    fs::remove_all(dist_info, ec);
    if (ec) return std::unexpected(io_error("cannot remove", dist_info, ec));
  }
  // The directories left empty, deepest first, never the site-packages or the prefix itself.
  std::vector<fs::path> order(dirs.begin(), dirs.end());
  std::sort(order.begin(), order.end(), [](const fs::path& a, const fs::path& b) {
    return a.native().size() > b.native().size();
  });
  for (auto dir : order) {
    while (inside(dir, prefix) && dir != site && dir != scheme.scripts && dir != scheme.purelib &&
           dir != scheme.platlib) {
      if (::rmdir(dir.c_str()) != 0) break;
      dir = dir.parent_path();
    }
  }
  return out;
}

}  // namespace gpulock::install

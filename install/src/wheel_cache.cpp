// The shared cache of unpacked wheels (install/wheel_cache.h).
#include "gpulock/install/wheel_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"
#include "gpulock/index/wheel_members.h"
#include "gpulock/install/record.h"
#include "gpulock/install/wheel_install.h"
#include "gpulock/sys/atomic_file.h"

#include "io_error.h"
#include "path_text.h"

namespace gpulock::install {
namespace fs = std::filesystem;
namespace {

using detail::io_error;

std::uint64_t tree_size(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

// The entry's mtime says when an environment last used it (prune's clock).
void touch(const fs::path& dir) {
  ::utimensat(AT_FDCWD, dir.c_str(), nullptr, 0);
}

}  // namespace

fs::path wheel_cache_root(const std::string& cache_dir) {
  return fs::path(cache_dir.empty() ? index::default_cache_dir() : cache_dir) / "wheels-v1";
}

fs::path sync_registry(const std::string& cache_dir) {
  return fs::path(cache_dir.empty() ? index::default_cache_dir() : cache_dir) / "syncs-v1";
}

namespace {

// An open directory with a flock on it, closed (and so unlocked) when the last copy goes.
std::shared_ptr<void> lock_dir(const fs::path& dir, int op) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return nullptr;
  while (::flock(fd, op) != 0) {
    if (errno == EINTR) continue;
    ::close(fd);
    return nullptr;
  }
  return std::shared_ptr<void>(new int(fd), [](void* p) {
    auto* f = static_cast<int*>(p);
    ::close(*f);
    delete f;
  });
}

// The entry's manifest (kEntryManifest, record.h's stat-file format), written at publish time
// after the files were made read-only.
core::Status write_manifest(const fs::path& dir, const std::vector<index::UnpackedFile>& files) {
  std::vector<record::StatRow> rows;
  for (const auto& f : files) {
    struct stat st {};
    const fs::path p = dir / f.path;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    // Read-only: an edit through a hard link needs a deliberate chmod first.
    const mode_t mode = (st.st_mode & 0111) != 0 ? 0555 : 0444;
    if (::chmod(p.c_str(), mode) != 0 || ::lstat(p.c_str(), &st) != 0) {
      return std::unexpected(core::make_error(
          core::ErrorCode::Io, fmt::format("cannot make read-only: {}", std::strerror(errno)),
          p.string()));
    }
    rows.push_back({f.path, static_cast<std::uint64_t>(st.st_size), record::mtime_ns(st)});
  }
  sys::AtomicWriteOptions options;
  options.durable = false;  // checked on every use: a torn one is a miss
  return sys::write_file_atomically(dir / std::string(kEntryManifest), record::write_stats(rows),
                                    options);
}

}  // namespace

namespace {

// verify_cache_entry's walk of one directory (`fd`, owned: closed here), whose path below the
// entry is `rel` ("" or ending in '/'): names relative to directory descriptors, so that the
// kernel does not walk the entry's whole path again for every one of a torch's 12,000 files.
std::string check_entry_dir(int fd, std::string& rel, const EntryManifest& want,
                            std::size_t& seen) {
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    const int err = errno;
    ::close(fd);
    return fmt::format("cannot be read: {}", std::strerror(err));
  }
  std::unique_ptr<DIR, int (*)(DIR*)> guard(d, ::closedir);
  const std::size_t base = rel.size();
  while (true) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (e == nullptr) {
      if (errno != 0) return fmt::format("cannot be read: {}", std::strerror(errno));
      return {};
    }
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    rel.resize(base);
    rel += name;
    if (base == 0 && rel == kEntryManifest) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      return fmt::format("{}: cannot be read", rel);
    if (S_ISDIR(st.st_mode)) {
      const int sub =
          ::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) return fmt::format("cannot be read: {}", std::strerror(errno));
      rel += '/';
      if (std::string problem = check_entry_dir(sub, rel, want, seen); !problem.empty())
        return problem;
      continue;
    }
    auto w = want.find(rel);
    if (!S_ISREG(st.st_mode) || w == want.end())
      return fmt::format("{}: not one of the wheel's files", rel);
    if (static_cast<std::uint64_t>(st.st_size) != w->second.first ||
        record::mtime_ns(st) != w->second.second)
      return fmt::format("{}: modified since it was unpacked", rel);
    ++seen;
  }
}

}  // namespace

std::optional<EntryManifest> read_entry_manifest(const fs::path& dir) {
  auto rows = record::read_stat_file(dir / std::string(kEntryManifest));
  if (!rows) return std::nullopt;
  EntryManifest files;
  files.reserve(rows->size());
  for (auto& r : *rows)
    files.emplace(std::move(r.path), std::make_pair(r.size, r.mtime_ns));
  return files;
}

std::string verify_cache_entry(const fs::path& dir) {
  // A damaged line names no file: the file it stood for is then "not one of the wheel's".
  const auto want = read_entry_manifest(dir);
  if (!want) return "it has no manifest";
  std::size_t seen = 0;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot be read: {}", std::strerror(errno));
  std::string rel;
  if (std::string problem = check_entry_dir(fd, rel, *want, seen); !problem.empty()) return problem;
  if (seen != want->size())
    return fmt::format("{} of its {} files are missing", want->size() - seen, want->size());
  return {};
}

namespace {

// Issue 44 item 1: the file list is read again from the wheel itself, now that its bytes are
// the lock's, and checked against what the lock recorded at lock time; then cached for a later
// `check --env` (which reads no network). Errors: InvalidLockfile.
core::Status check_members(index::IndexClient& client, const CachedWheelRequest& request,
                           const std::string& archive, std::uint64_t size) {
  if (request.members_sha256.empty()) return {};
  auto members = index::read_wheel_members(archive, request.filename);
  if (!members || members->digest != request.members_sha256) {
    return std::unexpected(core::make_error(
        core::ErrorCode::InvalidLockfile,
        members ? fmt::format("the lock's record of {}'s files (members-sha256 {}) is not the "
                              "wheel's ({}), although the wheel's sha256 is the lock's: the "
                              "record was changed; nothing was installed",
                              request.filename, request.members_sha256, members->digest)
                : fmt::format("cannot read the file list of {}: {}; nothing was installed",
                              request.filename, members.error().message),
        index::redact_url(request.url)));
  }
  client.remember_members({request.url, size, request.sha256}, *members);
  return {};
}

}  // namespace

std::optional<std::vector<index::WheelMember>> cached_wheel_files(const fs::path& root,
                                                                  const std::string& sha256) {
  const bool hex = sha256.size() == 64 && std::all_of(sha256.begin(), sha256.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex) return std::nullopt;
  const fs::path dir = root / sha256;
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || !verify_cache_entry(dir).empty()) return std::nullopt;
  auto rows = record::read_stat_file(dir / std::string(kEntryManifest));
  if (!rows) return std::nullopt;
  std::vector<index::WheelMember> files;
  files.reserve(rows->size());
  for (auto& r : *rows)
    files.push_back({std::move(r.path), r.size, 0});
  return files;
}

core::Result<CachedWheel> cached_wheel(index::IndexClient& client, const fs::path& root,
                                       const CachedWheelRequest& request) {
  CachedWheel out;
  // The key is a path component: only a sha256 (the lock reader checks it too).
  const bool hex = request.sha256.size() == 64 &&
                   std::all_of(request.sha256.begin(), request.sha256.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex) {
    return std::unexpected(core::make_error(
        core::ErrorCode::InvalidLockfile,
        fmt::format("'{}' is not a sha256 (64 lowercase hex digits)", request.sha256),
        request.filename));
  }
  out.dir = root / request.sha256;
  std::error_code ec;
  if (fs::is_directory(out.dir, ec)) {
    // Shared while environments link from it: prune and discard leave it alone meanwhile.
    auto hold = lock_dir(out.dir, LOCK_SH);
    std::string problem = hold ? verify_cache_entry(out.dir) : "it cannot be locked";
    if (problem.empty()) {
      out.hit = true;
      out.hold = std::move(hold);
      touch(out.dir);
      return out;
    }
    hold.reset();
    out.stale = problem;
    discard_cached_wheel(root, request.sha256);
  }
  fs::create_directories(root / "partial", ec);
  if (ec) return std::unexpected(io_error("cannot create the wheel cache", root, ec));

  std::string archive;
  const fs::path partial = root / "partial" / request.sha256;
  if (index::is_file_url(request.url)) {
    auto p = index::file_url_to_path(request.url);
    if (!p) return std::unexpected(p.error());
    archive = *p;
  } else {
    archive = partial.string();
    out.downloaded = true;
  }
  index::DownloadRequest d;
  d.url = request.url;
  d.partial_path = partial.string();
  d.size = request.size;
  d.on_bytes = request.on_bytes;
  auto digest = client.download_file(d);
  if (!digest) return std::unexpected(digest.error());
  if (digest->sha256 != request.sha256) {
    if (out.downloaded) fs::remove(partial, ec);  // bad bytes never stay, not even partly
    return std::unexpected(core::make_error(
        core::ErrorCode::HashMismatch,
        fmt::format("hash mismatch: the lock says sha256 {}, the file has {} ({}); nothing "
                    "was installed",
                    request.sha256, digest->sha256, request.filename),
        index::redact_url(request.url)));
  }
  if (out.downloaded) out.bytes = digest->size;
  if (auto s = check_members(client, request, archive, digest->size); !s) {
    if (out.downloaded) fs::remove(partial, ec);
    return std::unexpected(s.error());
  }

  // A unique directory of our own, locked while we fill it (prune skips it), published whole
  // by one rename.
  std::string tmpl = (root / ".tmp-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return std::unexpected(core::make_error(
        core::ErrorCode::Io,
        fmt::format("cannot create a directory in the cache: {}", std::strerror(errno)),
        root.string()));
  }
  const fs::path tmp = tmpl;
  auto hold = lock_dir(tmp, LOCK_EX);
  auto files = index::unpack_wheel(archive, tmp.string(), request.filename);
  core::Status written =
      files ? write_manifest(tmp, *files) : core::Status(std::unexpected(files.error()));
  if (!written) {
    fs::remove_all(tmp, ec);
    return std::unexpected(written.error());
  }
  if (::rename(tmp.c_str(), out.dir.c_str()) != 0) {
    const int err = errno;
    // Another run published the same wheel meanwhile: theirs is used when it checks out.
    auto theirs = lock_dir(out.dir, LOCK_SH);
    if (theirs && verify_cache_entry(out.dir).empty()) {
      fs::remove_all(tmp, ec);
      out.hold = std::move(theirs);
      if (out.downloaded) fs::remove(partial, ec);
      return out;
    }
    theirs.reset();
    discard_cached_wheel(root, request.sha256);
    if (::rename(tmp.c_str(), out.dir.c_str()) != 0) {
      fs::remove_all(tmp, ec);
      return std::unexpected(core::make_error(
          core::ErrorCode::Io, fmt::format("cannot rename into the cache: {}", std::strerror(err)),
          out.dir.string()));
    }
  }
  // Ours, published: shared from now on, as any user's.
  if (hold) ::flock(*static_cast<int*>(hold.get()), LOCK_SH);
  out.hold = std::move(hold);
  if (out.downloaded) fs::remove(partial, ec);
  return out;
}

void discard_cached_wheel(const fs::path& root, const std::string& sha256) {
  std::error_code ec;
  std::string tmpl = (root / ".tmp-discard-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return;
  const fs::path doomed = fs::path(tmpl) / "entry";
  if (::rename((root / sha256).c_str(), doomed.c_str()) != 0) {
    fs::remove_all(tmpl, ec);
    return;
  }
  // A run still linking from it keeps it (prune removes it once nobody holds it).
  auto held = lock_dir(doomed, LOCK_EX | LOCK_NB);
  if (held) fs::remove_all(tmpl, ec);
}

core::Result<PruneResult> prune_wheel_cache(const fs::path& root, unsigned unused_days, bool all) {
  PruneResult out;
  std::error_code ec;
  if (!fs::exists(root, ec)) return out;
  const auto now = std::time(nullptr);
  const auto max_age = static_cast<std::time_t>(unused_days) * 24 * 3600;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(it->path());
  if (ec) return std::unexpected(io_error("cannot read the wheel cache", root, ec));
  for (const auto& p : entries) {
    const std::string name = p.filename().string();
    if (name == "partial") {
      std::vector<fs::path> partials;
      for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
        partials.push_back(it->path());
      for (const auto& f : partials) {
        const auto size = fs::file_size(f, ec);
        if (!ec) out.bytes += size;
        fs::remove(f, ec);
        ++out.leftovers;
      }
      continue;
    }
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;
    const bool leftover = name.starts_with(".tmp-");
    if (!leftover && !all && now - st.st_mtime < max_age) continue;
    // An unpacking in progress, or an entry an install is linking from: a live run's.
    auto held = lock_dir(p, LOCK_EX | LOCK_NB);
    if (!held && S_ISDIR(st.st_mode)) {
      ++out.in_use;
      continue;
    }
    if (name.starts_with(".tmp-discard-")) {
      // The entry inside is what a run may still hold.
      if (!lock_dir(p / "entry", LOCK_EX | LOCK_NB) && fs::is_directory(p / "entry", ec)) {
        ++out.in_use;
        continue;
      }
    }
    out.bytes += tree_size(p);
    fs::remove_all(p, ec);
    if (ec) return std::unexpected(io_error("cannot remove", p, ec));
    ++(leftover ? out.leftovers : out.entries);
  }
  return out;
}

}  // namespace gpulock::install

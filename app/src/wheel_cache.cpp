// The shared cache of unpacked wheels (app/wheel_cache.h).
#include "gpulock/app/wheel_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"

namespace gpulock::app {
namespace fs = std::filesystem;
namespace {

core::Error io_error(std::string_view what, const fs::path& path, const std::error_code& ec) {
  return core::make_error(core::ErrorCode::Io, fmt::format("{}: {}", what, ec.message()),
                          path.string());
}

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

core::Result<CachedWheel> cached_wheel(index::IndexClient& client, const fs::path& root,
                                       const CachedWheelRequest& request) {
  CachedWheel out;
  out.dir = root / request.sha256;
  std::error_code ec;
  if (fs::is_directory(out.dir, ec)) {
    out.hit = true;
    touch(out.dir);
    return out;
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
    fs::remove(partial, ec);  // bad bytes never stay, not even as a partial file
    return std::unexpected(core::make_error(
        core::ErrorCode::HashMismatch,
        fmt::format("hash mismatch: the lock says sha256 {}, the file has {} ({}); nothing "
                    "was installed",
                    request.sha256, digest->sha256, request.filename),
        index::redact_url(request.url)));
  }
  if (out.downloaded) out.bytes = digest->size;

  const fs::path tmp = root / fmt::format(".tmp-{}-{}", request.sha256, ::getpid());
  fs::remove_all(tmp, ec);
  auto files = index::unpack_wheel(archive, tmp.string(), request.filename);
  if (!files) {
    fs::remove_all(tmp, ec);
    return std::unexpected(files.error());
  }
  if (::rename(tmp.c_str(), out.dir.c_str()) != 0) {
    const int err = errno;
    fs::remove_all(tmp, ec);
    // Another run unpacked the same wheel meanwhile: theirs is as good.
    if (!fs::is_directory(out.dir, ec)) {
      return std::unexpected(core::make_error(
          core::ErrorCode::Io, fmt::format("cannot rename into the cache: {}", std::strerror(err)),
          out.dir.string()));
    }
  }
  if (out.downloaded) fs::remove(partial, ec);
  return out;
}

void discard_cached_wheel(const fs::path& root, const std::string& sha256) {
  std::error_code ec;
  const fs::path doomed = root / fmt::format(".tmp-discard-{}-{}", sha256, ::getpid());
  if (::rename((root / sha256).c_str(), doomed.c_str()) == 0) fs::remove_all(doomed, ec);
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
    out.bytes += tree_size(p);
    fs::remove_all(p, ec);
    if (ec) return std::unexpected(io_error("cannot remove", p, ec));
    ++(leftover ? out.leftovers : out.entries);
  }
  return out;
}

}  // namespace gpulock::app

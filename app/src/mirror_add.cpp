// `gpulock mirror add`: the files the locks name, downloaded in parallel into
// <cache>/partial/<sha256> (resumed there after an interruption), published into the store by
// an atomic rename only once their sha256 is the lock's; then their METADATA next to them, the
// manifest and the pages.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "gpulock/app/mirror.h"
#include "gpulock/core/filename.h"
#include "gpulock/core/sha256.h"
#include "gpulock/index/hash.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"

#include "mirror_internal.h"

namespace gpulock::app {
namespace fs = std::filesystem;
using core::ErrorCode;

namespace {

core::Error io_error(std::string_view what, const std::string& path, int err) {
  return core::make_error(ErrorCode::Io, fmt::format("{}: {}", what, std::strerror(err)), path);
}

core::Status fsync_path(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return std::unexpected(io_error("cannot open", path, errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return std::unexpected(io_error("cannot flush", path, err));
  return {};
}

// Copies `from` to `to` through a temporary file beside `to` (a file:// source, or a partial
// file on another file system than the mirror).
core::Status copy_into(const std::string& from, const std::string& to) {
  const std::string tmp = to + ".part";
  std::error_code ec;
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) return std::unexpected(core::make_error(ErrorCode::Io, ec.message(), tmp));
  if (auto s = fsync_path(tmp, false); !s) return s;
  if (::rename(tmp.c_str(), to.c_str()) != 0) {
    int err = errno;
    fs::remove(tmp, ec);
    return std::unexpected(io_error("cannot rename into the store", to, err));
  }
  return {};
}

// Moves a verified file into the store, atomically.
core::Status publish(const std::string& from, const std::string& to, bool keep_source) {
  std::error_code ec;
  fs::create_directories(fs::path(to).parent_path(), ec);
  if (ec) return std::unexpected(core::make_error(ErrorCode::Io, ec.message(), to));
  if (keep_source) {
    if (auto s = copy_into(from, to); !s) return s;
  } else if (::rename(from.c_str(), to.c_str()) != 0) {
    if (errno != EXDEV) return std::unexpected(io_error("cannot rename into the store", to, errno));
    if (auto s = copy_into(from, to); !s) return s;
    fs::remove(from, ec);
  }
  return fsync_path(fs::path(to).parent_path().string(), true);
}

struct Job {
  const MirrorEntry* file = nullptr;
  std::string dest;
};

class Downloader {
 public:
  Downloader(const MirrorAddRequest& request, MirrorAddResult& result, std::size_t total)
      : request_(request), result_(result), client_(request.client) {
    progress_.files_total = total;
    progress_.files_done = total;
    partial_dir_ = (fs::path(client_.options().cache_dir.empty() ? index::default_cache_dir()
                                                                 : client_.options().cache_dir) /
                    "partial")
                       .string();
  }

  core::Status run(std::vector<Job> jobs) {
    progress_.files_done -= jobs.size();
    std::error_code ec;
    fs::create_directories(partial_dir_, ec);
    if (ec) return std::unexpected(core::make_error(ErrorCode::Io, ec.message(), partial_dir_));
    jobs_ = std::move(jobs);
    const auto n = std::min<std::size_t>(std::max(1u, request_.jobs), jobs_.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < n; ++i)
      threads.emplace_back([this] { work(); });
    for (auto& t : threads)
      t.join();
    if (error_) return std::unexpected(*error_);
    return {};
  }

 private:
  void work() {
    while (true) {
      std::size_t i = next_++;
      if (i >= jobs_.size() || failed_) return;
      auto s = fetch(jobs_[i]);
      std::lock_guard<std::mutex> lock(mu_);
      if (!s) {
        if (!error_) error_ = s.error();
        failed_ = true;
        client_.cancel();
        return;
      }
      ++progress_.files_done;
      if (request_.on_progress) request_.on_progress(progress_);
    }
  }

  core::Status fetch(const Job& job) {
    const MirrorEntry& f = *job.file;
    const std::string partial = (fs::path(partial_dir_) / f.sha256).string();
    std::error_code ec;
    const bool resumed = fs::exists(partial, ec) && fs::file_size(partial, ec) > 0 && !ec;
    index::DownloadRequest d;
    d.url = f.url;
    d.partial_path = partial;
    if (f.size > 0) d.size = f.size;
    std::uint64_t last = 0;
    d.on_bytes = [&](std::uint64_t received) {
      std::lock_guard<std::mutex> lock(mu_);
      progress_.bytes += received - last;
      result_.bytes_received += received - last;
      last = received;
      if (request_.on_progress) request_.on_progress(progress_);
    };
    auto digest = client_.download_file(d);
    if (!digest) return std::unexpected(digest.error());
    if (digest->sha256 != f.sha256) {
      fs::remove(partial, ec);  // bad bytes never stay, not even as a partial file
      return std::unexpected(
          core::make_error(ErrorCode::HashMismatch,
                           fmt::format("hash mismatch: the lock says sha256 {}, the file has {} "
                                       "({}); nothing was added to the mirror",
                                       f.sha256, digest->sha256, f.filename),
                           index::redact_url(f.url)));
    }
    const bool local = index::is_file_url(f.url);
    std::string from = partial;
    if (local) {
      auto p = index::file_url_to_path(f.url);
      if (!p) return std::unexpected(p.error());
      from = *p;
    }
    if (auto s = publish(from, job.dest, local); !s) return s;
    std::lock_guard<std::mutex> lock(mu_);
    ++result_.downloaded;
    if (resumed && !local) ++result_.resumed;
    return {};
  }

  const MirrorAddRequest& request_;
  MirrorAddResult& result_;
  index::IndexClient client_;
  std::string partial_dir_;
  std::vector<Job> jobs_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  MirrorProgress progress_;
  std::optional<core::Error> error_;
};

// The `.metadata` file beside a stored wheel (PEP 658), derived from the wheel on every run (the
// wheel's bytes were checked against the lock just before): a `.metadata` found in the store is
// never trusted, and its hash never goes into the manifest. Returns the sha256 of the METADATA,
// empty for a file that is not a wheel.
core::Result<std::string> ensure_metadata(const std::string& wheel_path,
                                          const std::string& filename) {
  auto wheel = core::WheelFilename::parse(filename);
  if (!wheel) return std::string();  // not a wheel: no METADATA to offer
  auto text = index::read_wheel_metadata(wheel_path, &*wheel);
  if (!text) return std::unexpected(text.error());
  if (auto s = mirror_detail::write_if_changed(wheel_path + ".metadata", *text); !s)
    return std::unexpected(s.error());
  return core::sha256_hex(*text);
}

// The new entries of this run replace every earlier entry of the same locks; an entry that was
// there before keeps its `mirrored` time.
void merge_entries(MirrorManifest& manifest, std::vector<MirrorEntry> fresh,
                   const std::set<std::string>& locks) {
  std::map<std::tuple<std::string, std::string, std::string>, std::string> when;
  std::vector<MirrorEntry> kept;
  for (auto& e : manifest.entries) {
    if (locks.count(e.lock) != 0) {
      when[{e.lock, e.sha256, e.tree}] = e.mirrored;
    } else {
      kept.push_back(std::move(e));
    }
  }
  const std::string now = mirror_detail::now_rfc3339();
  for (auto& e : fresh) {
    auto it = when.find({e.lock, e.sha256, e.tree});
    e.mirrored = it != when.end() && !it->second.empty() ? it->second : now;
    kept.push_back(std::move(e));
  }
  manifest.entries = std::move(kept);
}

}  // namespace

core::Result<MirrorAddResult> mirror_add(const MirrorAddRequest& request) {
  MirrorAddResult result;
  std::vector<MirrorEntry> fresh;
  std::set<std::string> lock_names;
  for (const auto& lock : request.locks) {
    auto entries = mirror_detail::lock_entries(lock, result.skipped);
    if (!entries) return std::unexpected(entries.error());
    lock_names.insert(lock);
    for (auto& e : *entries)
      fresh.push_back(std::move(e));
  }
  // Every lock read and checked before the mirror is touched; then one run at a time.
  mirror_detail::MirrorLock hold;
  if (auto s = hold.acquire(request.dir, request.on_wait); !s) return std::unexpected(s.error());
  for (const auto& p : mirror_detail::store_leftovers(request.dir)) {
    std::error_code ec;
    if (fs::remove(p, ec)) ++result.leftovers;
  }
  auto manifest = read_mirror_manifest(request.dir);
  if (!manifest) return std::unexpected(manifest.error());

  // Each file once, by hash.
  std::map<std::string, const MirrorEntry*> files;
  for (const auto& e : fresh)
    files.emplace(e.sha256, &e);
  result.files = files.size();
  std::vector<Job> jobs;
  for (const auto& [sha, e] : files) {
    const std::string dest = (fs::path(request.dir) / mirror_store_path(sha, e->filename)).string();
    std::error_code ec;
    // A stored file is re-hashed: the store is a directory anyone with access could edit, and
    // its bytes must be the lock's before its pages and METADATA are derived from them.
    bool corrupt = false;
    if (fs::is_regular_file(dest, ec)) {
      auto d = index::sha256_file(dest);
      if (d && d->sha256 == sha) {
        ++result.present;
        continue;
      }
      corrupt = true;
    }
    if (request.client.offline) {
      result.missing.push_back(fmt::format("{} ({}){}", e->filename, e->lock,
                                           corrupt ? ", in the store with other bytes" : ""));
    } else {
      if (corrupt) ++result.replaced;
      jobs.push_back({e, dest});
    }
  }
  if (!result.missing.empty()) return result;
  if (!jobs.empty()) {
    Downloader downloader(request, result, files.size());
    if (auto s = downloader.run(std::move(jobs)); !s) return std::unexpected(s.error());
  }
  std::map<std::string, std::string> metadata;  // sha256 -> metadata sha256
  std::map<std::string, std::uint64_t> sizes;   // sha256 -> the stored (checked) file's size
  for (const auto& [sha, e] : files) {
    const std::string stored =
        (fs::path(request.dir) / mirror_store_path(sha, e->filename)).string();
    auto m = ensure_metadata(stored, e->filename);
    if (!m) return std::unexpected(m.error());
    metadata[sha] = *m;
    std::error_code ec;
    const auto size = fs::file_size(stored, ec);
    if (!ec) sizes[sha] = size;
  }
  for (auto& e : fresh) {
    e.metadata_sha256 = metadata[e.sha256];
    // The mirror holds the bytes, so its pages declare every size (PEP 700), also where the
    // source page and the lock had none (the PyTorch index declares none).
    if (e.size == 0) e.size = sizes[e.sha256];
  }
  merge_entries(*manifest, std::move(fresh), lock_names);
  if (auto s = write_mirror_manifest(request.dir, *manifest); !s) return std::unexpected(s.error());
  if (auto s = write_mirror_tree(request.dir, *manifest); !s) return std::unexpected(s.error());
  return result;
}

}  // namespace gpulock::app

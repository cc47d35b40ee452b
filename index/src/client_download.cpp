// IndexClient's whole-file downloads (`gpulock mirror add`): into a partial file that an
// interrupted run leaves behind and the next run continues with an HTTP Range request; the
// digest of the finished file is returned for the caller to compare before it uses the file.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "gpulock/index/hash.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"

#include "client_impl.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::TransportError;

namespace {

core::Error io_error(std::string_view what, const std::string& path) {
  return core::make_error(ErrorCode::Io, fmt::format("{}: {}", what, std::strerror(errno)), path);
}

// How long a download waits for another run downloading the same file into the same cache.
constexpr auto kMaxLockWait = std::chrono::minutes(10);

// An open partial file; closed on destruction.
class PartialFile {
 public:
  ~PartialFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  // `stop` says when to give up waiting for another run's hold (a cancel, an interrupt).
  core::Status open(const std::string& path, const std::function<bool()>& stop) {
    path_ = path;
    // Two runs sharing a cache never write one partial file at once: the second waits for the
    // first (bounded), then continues the file, or opens it afresh when the first moved it away.
    const auto deadline = std::chrono::steady_clock::now() + kMaxLockWait;
    struct stat st {};
    while (true) {
      fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) return std::unexpected(io_error("cannot open the partial download", path));
      while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || stop() ||
            std::chrono::steady_clock::now() >= deadline) {
          return std::unexpected(core::make_error(
              ErrorCode::Io, "another gpulock is downloading this file into the same cache", path));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (::fstat(fd_, &st) != 0) return std::unexpected(io_error("cannot stat", path));
      struct stat named {};
      if (::stat(path.c_str(), &named) == 0 && named.st_dev == st.st_dev &&
          named.st_ino == st.st_ino) {
        break;
      }
      ::close(fd_);  // renamed or removed while this run waited: not ours to write
      fd_ = -1;
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
    return {};
  }
  core::Status truncate(std::uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      return std::unexpected(io_error("cannot truncate the partial download", path_));
    }
    size_ = size;
    return {};
  }
  bool append(const char* data, std::size_t n) {
    while (n > 0) {
      ssize_t w = ::pwrite(fd_, data, n, static_cast<off_t>(size_));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      data += w;
      n -= static_cast<std::size_t>(w);
      size_ += static_cast<std::uint64_t>(w);
    }
    return true;
  }
  core::Status sync() {
    if (::fsync(fd_) != 0) return std::unexpected(io_error("cannot flush", path_));
    return {};
  }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace

core::Result<FileDigest> IndexClient::Impl::download_into(const DownloadRequest& job) {
  const std::string shown = redact_url(job.url);
  if (is_file_url(job.url)) {
    auto path = file_url_to_path(job.url);
    if (!path) return std::unexpected(path.error());
    // The caller copies it (a local file needs no partial). Regular files only, read no further
    // than a download would be.
    const std::uint64_t bound = job.size ? *job.size : options.max_download_bytes;
    return sha256_file(
        *path, bound,
        fmt::format("the file is larger than {} ({})", format_byte_size(bound),
                    job.size ? "the size the lock records" : "GPULOCK_MAX_DOWNLOAD_SIZE"));
  }
  if (options.offline) {
    return std::unexpected(
        core::make_error(ErrorCode::Offline, "--offline forbids downloading the file", shown));
  }
  PartialFile file;
  auto stop = [this] { return cancelled.load() || interrupted(); };
  if (auto s = file.open(job.partial_path, stop); !s) return std::unexpected(s.error());
  const std::uint64_t bound = job.size ? *job.size : options.max_download_bytes;
  if (file.size() > bound) {
    if (auto s = file.truncate(0); !s) return std::unexpected(s.error());
  }
  for (int pass = 0; pass < 2; ++pass) {
    const std::uint64_t base = file.size();
    if (job.size && base == *job.size) break;  // finished before; hashed below
    bool write_failed = false;
    HttpRequest req;
    req.url = job.url;
    req.identity_encoding = true;
    if (base > 0) req.range = fmt::format("{}-", base);
    req.max_body = bound - base;
    std::uint64_t received = 0;
    req.sink = [&](const char* data, std::size_t size) {
      if (!file.append(data, size)) {
        write_failed = true;
        return false;
      }
      received += size;
      if (job.on_bytes) job.on_bytes(received);
      return true;
    };
    auto reset = [&] {
      (void)file.truncate(base);
      received = 0;
    };
    auto response = request(std::move(req), RequestKind::Download, reset);
    if (!response) return std::unexpected(response.error());
    if (write_failed) {
      return std::unexpected(io_error("cannot write the partial download", job.partial_path));
    }
    if (base > 0 && (response->status == 200 || response->status == 416)) {
      // The server ignored the range, or the partial file is no prefix of the file: start over.
      if (auto s = file.truncate(0); !s) return std::unexpected(s.error());
      if (pass == 0) continue;
    }
    if (response->error == TransportError::TooLarge) {
      return std::unexpected(core::make_error(
          ErrorCode::IndexFormat,
          fmt::format("the file is larger than {} ({})", format_byte_size(bound),
                      job.size ? "the size the lock records" : "GPULOCK_MAX_DOWNLOAD_SIZE"),
          shown));
    }
    if (response->status < 200 || response->status >= 300) {
      return std::unexpected(status_error(response->status, shown));
    }
    break;
  }
  if (auto s = file.sync(); !s) return std::unexpected(s.error());
  return sha256_file(job.partial_path);
}

core::Result<long> IndexClient::Impl::probe_status(const std::string& url) {
  const std::string shown = redact_url(url);
  if (is_file_url(url)) {
    auto path = file_url_to_path(url);
    if (!path) return std::unexpected(path.error());
    struct stat st {};
    return ::stat(path->c_str(), &st) == 0 && S_ISREG(st.st_mode) ? 200L : 404L;
  }
  if (options.offline) {
    return std::unexpected(
        core::make_error(ErrorCode::Offline, "--offline forbids asking the index", shown));
  }
  HttpRequest req;
  req.url = url;
  req.identity_encoding = true;
  req.range = "0-0";
  req.max_body = 1;
  req.sink = [](const char*, std::size_t) { return true; };
  auto response = request(std::move(req), RequestKind::Download);
  if (!response) return std::unexpected(response.error());
  return response->status;
}

core::Result<FileDigest> IndexClient::download_file(const DownloadRequest& request) {
  return impl_->download_into(request);
}

core::Result<long> IndexClient::probe_url(std::string_view url) {
  return impl_->probe_status(std::string(strip_fragment(url)));
}

}  // namespace gpulock::index

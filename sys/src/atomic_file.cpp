#include "gpulock/sys/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <sys/stat.h>

namespace gpulock::sys {
namespace {

std::unexpected<core::Error> io_error(const std::filesystem::path& path, std::string_view what,
                                      int err) {
  return core::fail_at(core::ErrorCode::Io, fmt::format("{}: {}", what, std::strerror(err)),
                       path.string());
}

// Near enough this process's start (static initialization): a stale temporary is older.
const std::chrono::system_clock::time_point kProcessStart = std::chrono::system_clock::now();
constexpr std::int64_t kTimestampSlackNs = 2'000'000'000;

// The PID of a temporary name `.{base}.tmp-{pid}-{counter}-{8 hex digits}`, or 0.
pid_t temporary_pid(std::string_view name, std::string_view base) {
  const std::string prefix = fmt::format(".{}.tmp-", base);
  if (!name.starts_with(prefix)) return 0;
  name.remove_prefix(prefix.size());
  auto digits = [&](std::size_t max) -> std::string_view {
    std::size_t n = 0;
    while (n < name.size() && n < max && name[n] >= '0' && name[n] <= '9')
      ++n;
    std::string_view out = name.substr(0, n);
    name.remove_prefix(n);
    return out;
  };
  const std::string_view pid = digits(9);
  if (pid.empty() || pid.front() == '0' || !name.starts_with('-')) return 0;
  name.remove_prefix(1);
  if (digits(10).empty() || !name.starts_with('-')) return 0;
  name.remove_prefix(1);
  if (name.size() != 8 || name.find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return 0;
  pid_t out = 0;
  std::from_chars(pid.data(), pid.data() + pid.size(), out);  // at most 9 digits: fits
  return out;
}

void remove_stale_temporaries(const std::filesystem::path& dir, std::string_view base) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const int dfd = ::dirfd(d);
  const std::int64_t start_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(kProcessStart.time_since_epoch())
          .count();
  while (const dirent* e = ::readdir(d)) {
    const pid_t pid = temporary_pid(e->d_name, base);
    if (pid <= 0 || pid == ::getpid()) continue;
    struct stat st {};
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid()) {
      continue;
    }
    const std::int64_t mtime_ns =
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    // Older than this process by more than the file system's timestamp granularity: a file
    // written just now can carry a coarse mtime a few milliseconds before a fine-clock
    // kProcessStart (seen in CI when the process started milliseconds earlier), and FAT keeps
    // 2 s steps.
    if (mtime_ns >= start_ns - kTimestampSlackNs) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge (EPERM)
    ::unlinkat(dfd, e->d_name, 0);
  }
  ::closedir(d);
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

// Makes a rename into the directory of `path` durable.
core::Status flush_directory(const std::filesystem::path& path) {
  const int dfd = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return {};
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  // Some file systems refuse fsync on a directory (EINVAL); the data itself is safe then.
  if (rc != 0 && err != EINVAL && err != EROFS) {
    return io_error(path, "cannot flush the directory to disk", err);
  }
  return {};
}

}  // namespace

core::Result<AtomicFileWriter> AtomicFileWriter::open(const std::filesystem::path& path,
                                                      const AtomicWriteOptions& options) {
  const std::filesystem::path dir = directory_of(path);
  const std::string base = path.filename().string();
  if (base.empty() || base == "." || base == "..") {
    return core::fail_at(core::ErrorCode::Io, "not a file name", path.string());
  }
  if (options.create_directories) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return io_error(path, "cannot create its directory", ec.value());
  }

  if (options.remove_stale_temporaries) remove_stale_temporaries(dir, base);

  AtomicFileWriter w;
  w.path_ = path;
  w.on_temp_file_ = options.on_temp_file;
  w.durable_ = options.durable;
  // A name no other writer picks: pid, a process-wide counter and a random number; O_EXCL
  // refuses to reuse an existing file, and mode 0666 lets the umask decide, like a plain create.
  static std::atomic<unsigned> counter{0};
  // One per thread: opening a random_device for every write showed in a cold run's profile.
  thread_local std::random_device rd;
  std::string temp;
  for (int attempt = 0; attempt < 100 && w.fd_ < 0; ++attempt) {
    temp = (dir / fmt::format(".{}.tmp-{}-{}-{:08x}", base, ::getpid(), counter++, rd())).string();
    w.fd_ = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (w.fd_ < 0 && errno != EEXIST) {
      return io_error(path, "cannot create a temporary file next to it", errno);
    }
  }
  if (w.fd_ < 0) return io_error(path, "cannot create a temporary file next to it", EEXIST);
  // Only a file this writer created is ever removed by it.
  w.temp_path_ = std::move(temp);
  if (w.on_temp_file_) w.on_temp_file_(w.temp_path_, true);

  // An existing file keeps its permissions.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    if (::fchmod(w.fd_, st.st_mode & 07777) != 0) return io_error(path, "cannot set mode", errno);
  }
  return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      on_temp_file_(std::move(other.on_temp_file_)),
      durable_(other.durable_),
      temp_path_(std::exchange(other.temp_path_, {})),
      fd_(std::exchange(other.fd_, -1)) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    on_temp_file_ = std::move(other.on_temp_file_);
    durable_ = other.durable_;
    temp_path_ = std::exchange(other.temp_path_, {});
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() {
  discard();
}

void AtomicFileWriter::discard() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  if (temp_path_.empty()) return;
  ::unlink(temp_path_.c_str());
  const std::string gone = std::exchange(temp_path_, {});
  if (on_temp_file_) on_temp_file_(gone, false);
}

core::Status AtomicFileWriter::closed_error() const {
  return core::fail_at(core::ErrorCode::Io, "already committed or discarded", path_.string());
}

core::Status AtomicFileWriter::write(std::string_view data) {
  if (fd_ < 0) return closed_error();
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(path_, "cannot write", errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

core::Status AtomicFileWriter::write_at(std::uint64_t offset, std::string_view data) {
  if (fd_ < 0) return closed_error();
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(path_, "cannot write", errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
  return {};
}

core::Status AtomicFileWriter::commit() {
  if (fd_ < 0) return closed_error();
  // errno is read before discard() (close, unlink) can change it.
  if (durable_ && ::fsync(fd_) != 0) {
    auto failed = io_error(path_, "cannot flush to disk", errno);
    discard();
    return failed;
  }
  if (::close(std::exchange(fd_, -1)) != 0) {
    auto failed = io_error(path_, "cannot close", errno);
    discard();
    return failed;
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    auto failed = io_error(path_, "cannot replace the file", errno);
    discard();
    return failed;
  }
  const std::string renamed = std::exchange(temp_path_, {});
  core::Status result;
  if (durable_) result = flush_directory(path_);
  if (on_temp_file_) on_temp_file_(renamed, false);
  return result;
}

core::Status write_file_atomically(const std::filesystem::path& path, std::string_view content,
                                   const AtomicWriteOptions& options) {
  auto writer = AtomicFileWriter::open(path, options);
  if (!writer) return std::unexpected(std::move(writer.error()));
  if (auto written = writer->write(content); !written) return written;
  return writer->commit();
}

}  // namespace gpulock::sys

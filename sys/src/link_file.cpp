#include "gpulock/sys/link_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

namespace gpulock::sys {
namespace {

core::Error io_error(std::string_view what, const std::filesystem::path& path, int err) {
  return core::make_error(core::ErrorCode::Io, fmt::format("{}: {}", what, std::strerror(err)),
                          path.string());
}

// An open file descriptor, closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// A hard link the file system refuses this way falls back to a copy (another device, no
// hard links, too many links); any other failure is an error.
bool copy_instead(int err) {
  return err == EXDEV || err == EPERM || err == EMLINK || err == ENOTSUP;
}

// Copies (clone: reflinks) `from` into a new `to`. `cloned` says whether the reflink worked.
core::Status copy_or_clone(const std::filesystem::path& from, const std::filesystem::path& to,
                           bool try_clone, bool& cloned) {
  cloned = false;
  Fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) return std::unexpected(io_error("cannot read", from, errno));
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) return std::unexpected(io_error("cannot read", from, errno));
  Fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777));
  if (out.get() < 0) return std::unexpected(io_error("cannot create", to, errno));
  if (try_clone && ::ioctl(out.get(), FICLONE, in.get()) == 0) {
    cloned = true;
  } else {
    off_t left = st.st_size;
    bool fallback = false;
    while (left > 0 && !fallback) {
      ssize_t n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr,
                                    static_cast<std::size_t>(left), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        fallback = true;
        break;
      }
      if (n < 0) return std::unexpected(io_error("cannot write", to, errno));
      if (n == 0) break;
      left -= n;
    }
    if (fallback) {
      std::vector<char> buffer(std::size_t{1} << 20);
      while (true) {
        ssize_t n = ::read(in.get(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::unexpected(io_error("cannot read", from, errno));
        if (n == 0) break;
        const char* p = buffer.data();
        while (n > 0) {
          ssize_t w = ::write(out.get(), p, static_cast<std::size_t>(n));
          if (w < 0 && errno == EINTR) continue;
          if (w < 0) return std::unexpected(io_error("cannot write", to, errno));
          p += w;
          n -= w;
        }
      }
    }
  }
  // The umask applied at open(): the copy gets the source's bits, as pip's files have.
  if (::fchmod(out.get(), st.st_mode & 07777) != 0)
    return std::unexpected(io_error("cannot set the mode of", to, errno));
  if (::close(out.release()) != 0) return std::unexpected(io_error("cannot write", to, errno));
  return {};
}

}  // namespace

std::optional<LinkMode> parse_link_mode(std::string_view text) {
  if (text == "hardlink") return LinkMode::Hardlink;
  if (text == "clone") return LinkMode::Clone;
  if (text == "copy") return LinkMode::Copy;
  if (text == "symlink") return LinkMode::Symlink;
  return std::nullopt;
}

std::string_view link_mode_name(LinkMode mode) {
  switch (mode) {
    case LinkMode::Hardlink:
      return "hardlink";
    case LinkMode::Clone:
      return "clone";
    case LinkMode::Copy:
      return "copy";
    case LinkMode::Symlink:
      return "symlink";
  }
  return "copy";
}

core::Status copy_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  bool cloned = false;
  return copy_or_clone(from, to, false, cloned);
}

core::Result<LinkMode> link_file(const std::filesystem::path& from, const std::filesystem::path& to,
                                 LinkMode mode) {
  if (mode == LinkMode::Hardlink) {
    if (::link(from.c_str(), to.c_str()) == 0) return LinkMode::Hardlink;
    const int err = errno;
    if (!copy_instead(err)) return std::unexpected(io_error("cannot link", to, err));
  } else if (mode == LinkMode::Symlink) {
    if (::symlink(from.c_str(), to.c_str()) == 0) return LinkMode::Symlink;
    return std::unexpected(io_error("cannot link", to, errno));
  }
  bool cloned = false;
  if (auto s = copy_or_clone(from, to, mode == LinkMode::Clone, cloned); !s)
    return std::unexpected(s.error());
  return cloned ? LinkMode::Clone : LinkMode::Copy;
}

LinkDirs::~LinkDirs() {
  if (from_.fd >= 0) ::close(from_.fd);
  if (to_.fd >= 0) ::close(to_.fd);
}

int LinkDirs::open_dir(Dir& dir, std::string_view path) {
  if (dir.fd >= 0 && dir.path == path) return dir.fd;
  if (dir.fd >= 0) ::close(dir.fd);
  dir.path.assign(path);
  dir.fd = ::open(dir.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  return dir.fd;
}

core::Result<LinkMode> LinkDirs::link(const std::filesystem::path& from,
                                      const std::filesystem::path& to, LinkMode mode) {
  const std::string& f = from.native();
  const std::string& t = to.native();
  const auto fs = f.rfind('/');
  const auto ts = t.rfind('/');
  // Absolute paths below a directory ("/x" has the root as its directory: left to link_file).
  if (mode != LinkMode::Hardlink || fs == std::string::npos || ts == std::string::npos || fs == 0 ||
      ts == 0 || fs + 1 == f.size() || ts + 1 == t.size()) {
    return link_file(from, to, mode);
  }
  const int fd_from = open_dir(from_, std::string_view(f).substr(0, fs));
  const int fd_to = open_dir(to_, std::string_view(t).substr(0, ts));
  if (fd_from < 0 || fd_to < 0) return link_file(from, to, mode);
  if (::linkat(fd_from, f.c_str() + fs + 1, fd_to, t.c_str() + ts + 1, 0) == 0)
    return LinkMode::Hardlink;
  const int err = errno;
  if (!copy_instead(err)) return std::unexpected(io_error("cannot link", to, err));
  return link_file(from, to, mode);  // the copy link_file falls back to
}

}  // namespace gpulock::sys

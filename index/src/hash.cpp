#include "gpulock/index/hash.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/sha256.h"

#include "local_file.h"
#include "net_plugin.h"

namespace gpulock::index {

// OpenSSL's EVP (hardware-accelerated) through the network plugin, which is loaded on the first
// hash; should the plugin be missing, core's portable SHA-256 gives the same digests, slower.
struct Sha256::State {
  const detail::NetPluginTable* plugin = nullptr;
  void* ctx = nullptr;
  core::Sha256 portable;
  State() {
    if (auto p = detail::load_net_plugin(); p) {
      ctx = (*p)->sha256_new();
      if (ctx) plugin = *p;
    }
  }
  ~State() {
    if (plugin) plugin->sha256_free(ctx);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view data) {
  if (data.empty()) return;
  if (state_->plugin) {
    state_->plugin->sha256_update(state_->ctx, data.data(), data.size());
  } else {
    state_->portable.update(data);
  }
  size_ += data.size();
}

std::string Sha256::finish_hex() {
  core::Sha256::Digest digest{};
  if (state_->plugin) {
    state_->plugin->sha256_finish(state_->ctx, digest.data());
  } else {
    digest = state_->portable.finish();
  }
  size_ = 0;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (auto byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.finish_hex();
}

namespace detail {
namespace {

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

core::Status check_mode(const struct stat& st, const std::string& path) {
  if (S_ISREG(st.st_mode)) return {};
  return core::fail_at(core::ErrorCode::Io,
                       fmt::format("not a regular file ({}): gpulock reads only regular files",
                                   file_kind(st.st_mode)),
                       path);
}

}  // namespace

LocalFile::~LocalFile() {
  if (fd_ >= 0) ::close(fd_);
}

core::Status LocalFile::open(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    return core::fail_at(core::ErrorCode::Io, fmt::format("cannot open: {}", std::strerror(errno)),
                         path);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    return core::fail_at(core::ErrorCode::Io, fmt::format("cannot stat: {}", std::strerror(errno)),
                         path);
  }
  if (auto s = check_mode(st, path); !s) return s;
  size_ = static_cast<std::uint64_t>(st.st_size);
  return {};
}

core::Status require_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return core::fail_at(core::ErrorCode::Io, fmt::format("cannot open: {}", std::strerror(errno)),
                         path);
  }
  return check_mode(st, path);
}

}  // namespace detail

core::Result<FileDigest> sha256_file(const std::string& path, std::uint64_t max_bytes,
                                     std::string_view too_large) {
  detail::LocalFile file;
  if (auto s = file.open(path); !s) return std::unexpected(s.error());
  auto over = [&] {
    return core::fail_at(core::ErrorCode::IndexFormat,
                         too_large.empty()
                             ? fmt::format("the file is larger than {} bytes", max_bytes)
                             : std::string(too_large),
                         path);
  };
  if (max_bytes != 0 && file.size() > max_bytes) return over();
  Sha256 h;
  std::vector<char> buffer(1 << 20);
  while (true) {
    ssize_t n = ::read(file.fd(), buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::fail_at(core::ErrorCode::Io,
                           fmt::format("cannot read: {}", std::strerror(errno)), path);
    }
    if (n == 0) break;
    h.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    // A file that grows while read (or lies in fstat) is bounded all the same.
    if (max_bytes != 0 && h.size() > max_bytes) return over();
  }
  FileDigest d;
  d.size = h.size();
  d.sha256 = h.finish_hex();
  return d;
}

}  // namespace gpulock::index

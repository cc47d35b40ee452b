#include "gpulock/index/hash.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/sha256.h"

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

core::Result<FileDigest> sha256_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return core::fail_at(core::ErrorCode::Io, fmt::format("cannot open: {}", std::strerror(errno)),
                         path);
  }
  Sha256 h;
  std::vector<char> buffer(1 << 20);
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return core::fail_at(core::ErrorCode::Io, fmt::format("cannot read: {}", std::strerror(err)),
                           path);
    }
    if (n == 0) break;
    h.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
  }
  ::close(fd);
  FileDigest d;
  d.size = h.size();
  d.sha256 = h.finish_hex();
  return d;
}

}  // namespace gpulock::index

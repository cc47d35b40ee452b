#include "gpulock/index/hash.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <openssl/evp.h>

namespace gpulock::index {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
  State() : ctx(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
  ~State() { EVP_MD_CTX_free(ctx); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view data) {
  if (data.empty()) return;
  EVP_DigestUpdate(state_->ctx, data.data(), data.size());
  size_ += data.size();
}

std::string Sha256::finish_hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(state_->ctx, digest, &length);
  EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr);
  size_ = 0;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
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

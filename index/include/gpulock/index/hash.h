#pragma once
/// @file
/// SHA-256 of downloads, `.metadata` files and local files: OpenSSL libcrypto EVP, reached through
/// the network plugin libgpulock-net.so that the first hash loads (callers never see OpenSSL).
/// Small in-memory texts hashed on every run use core::sha256_hex (gpulock/core/sha256.h) instead,
/// which loads nothing.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::index {

/// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view data);
  /// Lowercase hex of the digest; the object is reset afterwards.
  [[nodiscard]] std::string finish_hex();
  /// Bytes passed to update() since construction or the last finish.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::uint64_t size_ = 0;
};

/// Lowercase hex SHA-256 of `data`.
[[nodiscard]] std::string sha256_hex(std::string_view data);

/// A file's digest and size.
struct FileDigest {
  std::string sha256;  ///< lowercase hex
  std::uint64_t size = 0;
};

/// Streams a local file through SHA-256: regular files only (a FIFO, a device such as
/// /dev/zero or a directory is refused without blocking). `max_bytes` (0: none) bounds what is
/// read: a larger file is IndexFormat with the message `too_large` (or a generic one).
/// Errors: Io naming the path.
[[nodiscard]] core::Result<FileDigest> sha256_file(const std::string& path,
                                                   std::uint64_t max_bytes = 0,
                                                   std::string_view too_large = {});

}  // namespace gpulock::index

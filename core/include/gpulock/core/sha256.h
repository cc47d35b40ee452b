#pragma once
/// @file
/// SHA-256 (FIPS 180-4 §6.2) in portable C++: pure computation, no I/O, no library.
///
/// Why two SHA-256 implementations: gpulock::index hashes downloads and `.metadata` files with
/// OpenSSL's EVP (fast, hardware-accelerated, loaded only when the network is used). The small
/// in-memory texts hashed on every run (the `[tool.gpulock.inputs]` record, requirement and
/// project files: a few hundred bytes to a few KB) use this one instead: loading libcrypto and
/// initializing OpenSSL 3's provider machinery costs far more than hashing them.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpulock::core {

/// Incremental SHA-256 (FIPS 180-4). Not constant-time-hardened beyond what the algorithm is;
/// meant for content digests, not for keyed secrets.
class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256() noexcept { reset(); }

  /// Feeds bytes; may be called any number of times.
  void update(std::string_view data) noexcept;
  /// The digest of everything fed since construction or the last finish; resets the state.
  [[nodiscard]] Digest finish() noexcept;
  /// finish() as 64 lowercase hex digits.
  [[nodiscard]] std::string finish_hex();
  /// Back to the initial state (FIPS 180-4 §5.3.3 initial hash value).
  void reset() noexcept;

 private:
  void compress(const std::uint8_t* block) noexcept;

  std::uint32_t h_[8];
  std::uint8_t buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes
};

/// Lowercase hex SHA-256 of `data`.
[[nodiscard]] std::string sha256_hex(std::string_view data);

}  // namespace gpulock::core

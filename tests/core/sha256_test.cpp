// core::Sha256 against the FIPS 180-4 examples (csrc.nist.gov, "Cryptographic Standards and
// Guidelines: Examples with Intermediate Values", SHA-256) and NIST CAVP SHA256ShortMsg vectors.
// The comparison with OpenSSL on random data lives in tests/index/hash_test.cpp (core's tests
// cannot link gpulock::index).
#include "gpulock/core/sha256.h"

#include <string>

#include <catch2/catch.hpp>

using gpulock::core::Sha256;
using gpulock::core::sha256_hex;

namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

}  // namespace

TEST_CASE("sha256: FIPS 180-4 examples", "[sha256]") {
  // Empty input: one padding block only.
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // One block.
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 448 bits: the length no longer fits in the first block, so padding adds a second one.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // 896 bits: two message blocks.
  CHECK(sha256_hex(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmn"
            "opqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  // One million 'a' (many blocks).
  CHECK(sha256_hex(std::string(1'000'000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: NIST CAVP short messages", "[sha256]") {
  CHECK(sha256_hex(from_hex("d3")) ==
        "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1");
  CHECK(sha256_hex(from_hex("11af")) ==
        "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98");
}

TEST_CASE("sha256: incremental updates equal one update, and finish resets", "[sha256]") {
  const std::string million(1'000'000, 'a');
  Sha256 h;
  // Odd piece sizes cross the 64-byte block boundary at every offset.
  std::size_t pos = 0, step = 1;
  while (pos < million.size()) {
    std::size_t n = std::min(step, million.size() - pos);
    h.update(std::string_view(million).substr(pos, n));
    pos += n;
    step = step % 131 + 7;
  }
  CHECK(h.finish_hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // After finish the object starts over.
  h.update("ab");
  h.update("");
  h.update("c");
  CHECK(h.finish_hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(h.finish_hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  auto raw = Sha256().finish();
  CHECK(raw[0] == 0xe3);
  CHECK(raw[31] == 0x55);
}

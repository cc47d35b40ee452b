// index::Sha256 (OpenSSL EVP through the network plugin) against core::Sha256 (portable FIPS
// 180-4): the same digests on random data of every length around the block boundaries, fed in
// random pieces. The two implementations share no code, so agreement checks both.
#include "gpulock/index/hash.h"

#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "gpulock/core/sha256.h"

#include "net_plugin.h"

using namespace gpulock;

TEST_CASE("index::sha256_hex (EVP) equals core::sha256_hex on random data", "[hash]") {
  std::mt19937_64 rng(20250917);
  std::uniform_int_distribution<int> byte(0, 255);
  auto random_bytes = [&](std::size_t n) {
    std::string s(n, '\0');
    for (auto& c : s)
      c = static_cast<char>(byte(rng));
    return s;
  };
  for (std::size_t n = 0; n <= 300; ++n) {
    std::string data = random_bytes(n);
    INFO("length " << n);
    REQUIRE(index::sha256_hex(data) == core::sha256_hex(data));
  }
  for (std::size_t n : {4095u, 4096u, 65537u, 1000003u}) {
    std::string data = random_bytes(n);
    index::Sha256 a;
    core::Sha256 b;
    std::size_t pos = 0;
    std::uniform_int_distribution<std::size_t> piece(0, 200);
    while (pos < data.size()) {
      std::size_t k = std::min(piece(rng), data.size() - pos);
      a.update(std::string_view(data).substr(pos, k));
      b.update(std::string_view(data).substr(pos, k));
      pos += k;
    }
    INFO("length " << n);
    CHECK(a.size() == n);
    CHECK(a.finish_hex() == b.finish_hex());
  }
  // index::Sha256 really went through the plugin (else it fell back to core's and the comparison
  // above compared core with itself).
  CHECK(index::detail::net_plugin_loaded());
}

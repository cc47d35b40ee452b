// The cache's hashes: hash64 for file names (keys) and checksum64 (CRC-32C, in hardware where
// the CPU has SSE4.2) for the payloads the header guards.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "cache.h"

namespace gpulock::index::detail {
namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int r) noexcept {
  return (x << r) | (x >> (64 - r));
}

std::uint64_t fmix(std::uint64_t k) noexcept {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

}  // namespace

std::uint64_t hash64(std::string_view data, std::uint64_t seed) noexcept {
  constexpr std::uint64_t c1 = 0x87c37b91114253d5ULL;
  constexpr std::uint64_t c2 = 0x4cf5ad432745937fULL;
  std::uint64_t h = seed ^ (data.size() * 0x9E3779B97F4A7C15ULL);
  const char* p = data.data();
  std::size_t n = data.size();
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    w *= c1;
    w = rotl(w, 31);
    w *= c2;
    h ^= w;
    h = rotl(h, 27) * 5 + 0x52dce729;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    w *= c1;
    w = rotl(w, 31);
    w *= c2;
    h ^= w;
  }
  return fmix(h);
}

namespace {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): SSE4.2's crc32 instruction where the CPU
// has it, else slicing-by-8 tables; both give the same values, so a cache moves between machines.
constexpr std::uint32_t kCrc32cPoly = 0x82F63B78u;

struct Crc32cTables {
  std::uint32_t t[8][256];
};

constexpr Crc32cTables make_crc32c_tables() {
  Crc32cTables tables{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ kCrc32cPoly : c >> 1;
    tables.t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) {
      std::uint32_t prev = tables.t[s - 1][i];
      tables.t[s][i] = (prev >> 8) ^ tables.t[0][prev & 0xff];
    }
  }
  return tables;
}

constexpr Crc32cTables kCrc32c = make_crc32c_tables();

// Both variants take and return the raw (not inverted) register.
std::uint32_t crc32c_portable(std::uint32_t crc, const char* p, std::size_t n) noexcept {
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= crc;
    crc = kCrc32c.t[7][w & 0xff] ^ kCrc32c.t[6][(w >> 8) & 0xff] ^ kCrc32c.t[5][(w >> 16) & 0xff] ^
          kCrc32c.t[4][(w >> 24) & 0xff] ^ kCrc32c.t[3][(w >> 32) & 0xff] ^
          kCrc32c.t[2][(w >> 40) & 0xff] ^ kCrc32c.t[1][(w >> 48) & 0xff] ^ kCrc32c.t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0)
    crc = (crc >> 8) ^ kCrc32c.t[0][(crc ^ static_cast<unsigned char>(*p++)) & 0xff];
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t crc, const char* p,
                                                             std::size_t n) noexcept {
  std::uint64_t c = crc;
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    c = __builtin_ia32_crc32di(c, w);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n-- > 0)
    c32 = __builtin_ia32_crc32qi(c32, static_cast<unsigned char>(*p++));
  return c32;
}

// Three streams of `n` bytes each, interleaved.
__attribute__((target("sse4.2"))) void crc32c_sse42_x3(std::uint32_t& a, std::uint32_t& b,
                                                       std::uint32_t& c, const char* pa,
                                                       const char* pb, const char* pc,
                                                       std::size_t n) noexcept {
  std::uint64_t ca = a, cb = b, cc = c;
  while (n >= 8) {
    std::uint64_t wa, wb, wc;
    std::memcpy(&wa, pa, 8);
    std::memcpy(&wb, pb, 8);
    std::memcpy(&wc, pc, 8);
    ca = __builtin_ia32_crc32di(ca, wa);
    cb = __builtin_ia32_crc32di(cb, wb);
    cc = __builtin_ia32_crc32di(cc, wc);
    pa += 8;
    pb += 8;
    pc += 8;
    n -= 8;
  }
  a = crc32c_sse42(static_cast<std::uint32_t>(ca), pa, n);
  b = crc32c_sse42(static_cast<std::uint32_t>(cb), pb, n);
  c = crc32c_sse42(static_cast<std::uint32_t>(cc), pc, n);
}
#endif

std::uint32_t crc32c(std::uint32_t crc, const char* p, std::size_t n) noexcept {
#if defined(__x86_64__)
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  if (hardware) return crc32c_sse42(crc, p, n);
#endif
  return crc32c_portable(crc, p, n);
}

}  // namespace

std::uint32_t crc32c(std::string_view data) noexcept {
  return ~crc32c(~0u, data.data(), data.size());
}

std::uint32_t crc32c_software(std::string_view data) noexcept {
  return ~crc32c_portable(~0u, data.data(), data.size());
}

namespace {

// The three streams' initial registers, and their mix into checksum64's value.
void checksum64_init(std::uint32_t crc[3], std::uint64_t seed) noexcept {
  auto s0 = static_cast<std::uint32_t>(seed);
  auto s1 = static_cast<std::uint32_t>(seed >> 32);
  crc[0] = ~s0;
  crc[1] = ~s1;
  crc[2] = ~(s0 ^ s1);
}

std::uint64_t checksum64_mix(const std::uint32_t crc[3], std::uint64_t size,
                             std::uint64_t seed) noexcept {
  std::uint64_t h =
      (static_cast<std::uint64_t>(crc[0]) << 32 | crc[1]) ^ fmix(crc[2] ^ size ^ seed);
  return fmix(h);
}

}  // namespace

std::uint64_t checksum64(std::string_view data, std::uint64_t seed, bool software) noexcept {
  // Three CRC-32C streams over the three thirds of the data, mixed with the length and the seed
  // into 64 bits. The hardware path runs the streams interleaved: the crc32 instruction has a
  // latency of 3 cycles and a throughput of 1, so three independent chains keep it busy.
  const std::size_t third = data.size() / 3;
  const char* pa = data.data();
  const char* pb = pa + third;
  const char* pc = pb + third;
  const std::size_t last = data.size() - 2 * third;  // third, third + 1 or third + 2
  std::uint32_t crc[3];
  checksum64_init(crc, seed);
  std::uint32_t a = crc[0], b = crc[1], c = crc[2];
#if defined(__x86_64__)
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  if (hardware && !software) {
    crc32c_sse42_x3(a, b, c, pa, pb, pc, third);
    c = crc32c_sse42(c, pc + third, last - third);
  } else
#endif
  {
    a = crc32c_portable(a, pa, third);
    b = crc32c_portable(b, pb, third);
    c = crc32c_portable(c, pc, last);
  }
  const std::uint32_t out[3] = {a, b, c};
  return checksum64_mix(out, data.size(), seed);
}

Checksum64Stream::Checksum64Stream(std::uint64_t total_size, std::uint64_t seed,
                                   bool software) noexcept
    : total_(total_size), seed_(seed), third_(total_size / 3), software_(software) {
  checksum64_init(crc_, seed);
}

void Checksum64Stream::update(std::string_view chunk) noexcept {
  // Each piece goes to the stream of the third it falls in; a CRC does not depend on how its
  // bytes are split, so the value is checksum64's. The streams run one after the other here,
  // not interleaved: a few milliseconds more on the largest pages, and no buffering.
  while (!chunk.empty()) {
    const std::uint64_t stream = consumed_ < third_ ? 0 : consumed_ < 2 * third_ ? 1 : 2;
    const std::uint64_t stream_end = stream < 2 ? (stream + 1) * third_ : ~std::uint64_t{0};
    const auto n =
        static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), stream_end - consumed_));
    std::uint32_t& crc = crc_[stream];
    crc = software_ ? crc32c_portable(crc, chunk.data(), n) : crc32c(crc, chunk.data(), n);
    chunk.remove_prefix(n);
    consumed_ += n;
  }
}

std::uint64_t Checksum64Stream::finish() const noexcept {
  return checksum64_mix(crc_, total_, seed_);
}

}  // namespace gpulock::index::detail

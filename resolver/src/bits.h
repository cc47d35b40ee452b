#pragma once
// Word-level bitset helpers for the solver's finite version domains (version_set.h).

#include <bit>
#include <cstdint>
#include <limits>

namespace gpulock::resolver::detail {

using Word = std::uint64_t;
inline constexpr std::uint32_t kNoBit = std::numeric_limits<std::uint32_t>::max();

inline std::uint32_t words_for(std::uint32_t bits) {
  return (bits + 63U) / 64U;
}
inline bool test_bit(const Word* w, std::uint32_t i) {
  return ((w[i >> 6U] >> (i & 63U)) & 1U) != 0;
}
inline void set_bit(Word* w, std::uint32_t i) {
  w[i >> 6U] |= Word{1} << (i & 63U);
}
inline void clear_bit(Word* w, std::uint32_t i) {
  w[i >> 6U] &= ~(Word{1} << (i & 63U));
}

inline bool any_bit(const Word* a, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i)
    if (a[i] != 0) return true;
  return false;
}
/// a is a subset of b.
inline bool subset(const Word* a, const Word* b, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i)
    if ((a[i] & ~b[i]) != 0) return false;
  return true;
}
inline bool disjoint(const Word* a, const Word* b, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i)
    if ((a[i] & b[i]) != 0) return false;
  return true;
}
inline bool equal(const Word* a, const Word* b, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
inline std::uint32_t count(const Word* a, std::uint32_t n) {
  std::uint32_t c = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    c += static_cast<std::uint32_t>(std::popcount(a[i]));
  return c;
}
/// Index of the lowest set bit, or kNoBit.
inline std::uint32_t lowest(const Word* a, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i)
    if (a[i] != 0) return i * 64U + static_cast<std::uint32_t>(std::countr_zero(a[i]));
  return kNoBit;
}
/// Lowest set bit of (a & b), or kNoBit.
inline std::uint32_t lowest_and(const Word* a, const Word* b, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    Word w = a[i] & b[i];
    if (w != 0) return i * 64U + static_cast<std::uint32_t>(std::countr_zero(w));
  }
  return kNoBit;
}

}  // namespace gpulock::resolver::detail

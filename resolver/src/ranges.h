#pragma once
// Sparse sets of candidate indices for the solver's finite version domains (version_set.h).
//
// A set is a sorted list of disjoint, non-adjacent half-open intervals over a package's
// candidate indices, flattened into boundaries: [b0, b1) ∪ [b2, b3) ∪ ... with
// b0 < b1 < b2 < ... The form is canonical (adjacent intervals are merged), so two sets are
// equal exactly when their boundary lists are. Most PubGrub terms are one or two intervals
// (`>=2.5`, `==1.7`, "all but the versions tried"), so every operation below costs
// O(intervals), not O(versions).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace gpulock::resolver::detail {

using Bound = std::uint32_t;
/// A view of a set's boundaries (into a pool or an owned vector).
using Set = std::span<const Bound>;
/// An owned set.
using OwnedSet = std::vector<Bound>;

inline constexpr std::uint32_t kNoBit = std::numeric_limits<std::uint32_t>::max();

/// The set [lo, hi) (empty when lo >= hi).
inline OwnedSet interval(Bound lo, Bound hi) {
  if (lo >= hi) return {};
  return {lo, hi};
}
inline OwnedSet single(Bound i) {
  return {i, i + 1};
}

/// Appends index `i` to a set being built in ascending order (i past every member).
inline void push_index(OwnedSet& s, Bound i) {
  if (!s.empty() && s.back() == i) {
    s.back() = i + 1;
  } else {
    s.push_back(i);
    s.push_back(i + 1);
  }
}

inline bool contains(Set s, Bound i) {
  auto pos = std::upper_bound(s.begin(), s.end(), i) - s.begin();
  return (pos & 1) != 0;
}

inline std::uint32_t count(Set s) {
  std::uint32_t c = 0;
  for (std::size_t k = 0; k + 1 < s.size(); k += 2)
    c += s[k + 1] - s[k];
  return c;
}

/// The set holds exactly one index.
inline bool is_single(Set s) {
  return s.size() == 2 && s[1] - s[0] == 1;
}

/// Lowest member, or kNoBit.
inline std::uint32_t lowest(Set s) {
  return s.empty() ? kNoBit : s[0];
}

inline bool equal(Set a, Set b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

/// Walks the boundaries of `a` and `b` in order; at each point where op(in a, in b) changes,
/// calls emit(point) (which returns false to stop). op(false, false) must be false.
template <typename Op, typename Emit>
inline void sweep(Set a, Set b, Op op, Emit emit) {
  std::size_t i = 0;
  std::size_t j = 0;
  const std::size_t na = a.size();
  const std::size_t nb = b.size();
  bool ina = false;
  bool inb = false;
  bool cur = false;
  while (i < na || j < nb) {
    Bound x = (j >= nb || (i < na && a[i] <= b[j])) ? a[i] : b[j];
    if (i < na && a[i] == x) {
      ina = !ina;
      ++i;
    }
    if (j < nb && b[j] == x) {
      inb = !inb;
      ++j;
    }
    bool v = op(ina, inb);
    if (v != cur) {
      cur = v;
      if (!emit(x)) return;
    }
  }
}

struct And {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct AndNot {
  bool operator()(bool a, bool b) const { return a && !b; }
};
struct Or {
  bool operator()(bool a, bool b) const { return a || b; }
};

/// out = op(a, b). `out` must not be the storage of `a` or `b`.
template <typename Op>
inline void combine(Set a, Set b, Op op, OwnedSet& out) {
  out.clear();
  sweep(a, b, op, [&](Bound x) {
    out.push_back(x);
    return true;
  });
}
template <typename Op>
inline OwnedSet combined(Set a, Set b, Op op) {
  OwnedSet out;
  out.reserve(a.size() + b.size());
  combine(a, b, op, out);
  return out;
}

/// Does op(a, b) hold anywhere?
template <typename Op>
inline bool any(Set a, Set b, Op op) {
  bool found = false;
  sweep(a, b, op, [&](Bound) {
    found = true;
    return false;
  });
  return found;
}

/// a is a subset of b.
inline bool subset(Set a, Set b) {
  return !any(a, b, AndNot{});
}
inline bool disjoint(Set a, Set b) {
  return !any(a, b, And{});
}

/// Lowest member of (a & b), or kNoBit.
inline std::uint32_t lowest_and(Set a, Set b) {
  std::uint32_t out = kNoBit;
  sweep(a, b, And{}, [&](Bound x) {
    out = x;
    return false;
  });
  return out;
}

/// Calls f(i) for every member, ascending.
template <typename F>
inline void for_each_index(Set s, F f) {
  for (std::size_t k = 0; k + 1 < s.size(); k += 2)
    for (Bound i = s[k]; i < s[k + 1]; ++i)
      f(i);
}

}  // namespace gpulock::resolver::detail

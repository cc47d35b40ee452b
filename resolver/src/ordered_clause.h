#pragma once
// The candidates of an ordered clause (`<X`, `<=X`, `>=X`, `>X`) in O(log V), for a domain
// whose preference order is newest first (ranges.h, version_set.h).
//
// Exactness does not rest on a model of PEP 440 here: membership is always decided by
// core::Specifier::contains. `<`, `<=` and `>=` are monotone in PEP 440 order (core compares
// the candidate with one bound, its local label ignored for `<=` and `>=`), so their boundary is
// found by binary search on contains itself. `>X` is "public(v) > X" (monotone) minus some of
// X's own family (same epoch and release: X's post-releases and local versions), so its
// boundary is found by binary search on public(v) > X and contains is asked of every candidate
// from there while the candidate still has X's release; past that block it holds.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"

#include "ranges.h"

namespace gpulock::resolver::detail {

/// Same epoch and release (trailing zeros ignored: 1.7 and 1.7.0 are one release).
inline bool same_release(const core::Version& a, const core::Version& b) {
  if (a.epoch() != b.epoch()) return false;
  auto ra = a.release();
  auto rb = b.release();
  std::size_t n = std::max(ra.size(), rb.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t x = i < ra.size() ? ra[i] : 0;
    std::uint64_t y = i < rb.size() ? rb[i] : 0;
    if (x != y) return false;
  }
  return true;
}

/// `versions` are the candidates in preference order, strictly descending in PEP 440 order.
/// Writes the candidates `clause` contains (pre-releases included) to `out` and returns true,
/// or returns false when the clause is not one of the ordered operators handled here.
inline bool ordered_clause_members(std::span<const core::Version> versions,
                                   const core::Specifier& clause, OwnedSet& out) {
  using core::Operator;
  const Operator op = clause.op();
  if (clause.wildcard()) return false;
  if (op != Operator::Less && op != Operator::LessEqual && op != Operator::GreaterEqual &&
      op != Operator::Greater) {
    return false;
  }
  const auto n = static_cast<std::uint32_t>(versions.size());
  // Ascending position j is candidate index n - 1 - j.
  auto at = [&](std::uint32_t j) -> const core::Version& { return versions[n - 1 - j]; };
  auto in = [&](std::uint32_t j) { return clause.contains(at(j), /*prereleases=*/true); };
  // First ascending position where `pred` holds (pred monotone: false then true).
  auto first_true = [&](auto pred) {
    std::uint32_t lo = 0;
    std::uint32_t hi = n;
    while (lo < hi) {
      std::uint32_t mid = lo + (hi - lo) / 2;
      if (pred(mid)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  };
  out.clear();
  if (op == Operator::Less || op == Operator::LessEqual) {
    // Members: ascending [0, p) = indices [n - p, n).
    std::uint32_t p = first_true([&](std::uint32_t j) { return !in(j); });
    out = interval(n - p, n);
    return true;
  }
  if (op == Operator::GreaterEqual) {
    // Members: ascending [p, n) = indices [0, n - p).
    std::uint32_t p = first_true(in);
    out = interval(0, n - p);
    return true;
  }
  // `>`: above the boundary, X's family is asked one by one.
  const core::Version& x = clause.version();
  std::uint32_t p = first_true([&](std::uint32_t j) { return at(j).public_version() > x; });
  std::uint32_t end = p;
  std::vector<std::uint32_t> family;  // ascending positions in [p, end) that are members
  while (end < n && same_release(at(end), x)) {
    if (in(end)) family.push_back(end);
    ++end;
  }
  // Indices ascending: [0, n - end) (past the family: all members), then the family members.
  out = interval(0, n - end);
  for (auto j = family.rbegin(); j != family.rend(); ++j)
    push_index(out, n - 1 - *j);
  return true;
}

}  // namespace gpulock::resolver::detail

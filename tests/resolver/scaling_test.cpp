// The solver's work grows linearly with the number of versions it walks down (issue 27): counted
// in incompatibilities visited by unit propagation (SolveStats::visits), not timed, so the test is
// deterministic.

#include <fmt/format.h>

#include "support.h"

using namespace resolver_test;

namespace {

// The root requires a and b; a 1.k depends on c==1.k, b on c==1.1: a walks down V versions.
SolveStats walk_down(std::size_t n) {
  InMemoryProvider p;
  for (std::size_t k = 1; k <= n; ++k) {
    add(p, "a", fmt::format("1.{}", k), {fmt::format("c==1.{}", k)});
    add(p, "c", fmt::format("1.{}", k));
  }
  add(p, "b", "1.0", {"c==1.1"});
  auto out = solve_ok(p, request({"a", "b"}));
  const auto* s = std::get_if<Solution>(&out);
  REQUIRE(s != nullptr);
  CHECK(versions(*s).at("a") == "1.1");
  return s->stats;
}

// boto3 1.k depends on botocore>=1.k,<1.(k+1); botocore past 1.(V/10) needs urllib3>=2, which
// the user excludes: both walk down to the newest pair that fits.
SolveStats pairs(std::size_t n) {
  InMemoryProvider p;
  for (std::size_t k = 1; k <= n; ++k) {
    add(p, "boto3", fmt::format("1.{}", k), {fmt::format("botocore>=1.{},<1.{}", k, k + 1)});
    add(p, "botocore", fmt::format("1.{}", k), {k > n / 10 ? "urllib3>=2" : "urllib3>=1.25,<2"});
  }
  add(p, "urllib3", "1.26.20");
  add(p, "urllib3", "2.2.3");
  auto out = solve_ok(p, request({"boto3", "urllib3<2"}));
  const auto* s = std::get_if<Solution>(&out);
  REQUIRE(s != nullptr);
  CHECK(versions(*s).at("boto3") == fmt::format("1.{}", n / 10));
  return s->stats;
}

}  // namespace

TEST_CASE("walking down V versions visits O(V) incompatibilities", "[resolver][scaling]") {
  auto small = walk_down(500);
  auto large = walk_down(2000);
  // Linear: about 4x for 4x the versions (quadratic would be 16x).
  CHECK(large.visits <= 5 * small.visits);
  CHECK(large.visits <= 20 * 2000);
}

TEST_CASE("co-versioned pairs walk down to the newest pair that fits", "[resolver][scaling]") {
  auto small = pairs(500);
  auto large = pairs(2000);
  CHECK(large.propagations <= 5 * small.propagations);
  // Not yet linear in visits: botocore's merged `urllib3>=2` fact is widened in place at every
  // step, which resets botocore's settled prefix (see Solver::settle).
}

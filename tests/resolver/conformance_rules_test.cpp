// Resolver rules of issue 20 (uv's packse scenarios and pip 26): what a decision allows is undone
// with it, the pre-release rule holds for every operator, and a package whose candidates keep
// failing against an earlier decision is decided before it. Each case failed before the fix.

#include "support.h"

using namespace resolver_test;

TEST_CASE("a pre-release allowance from a rejected parent is undone", "[resolver][prerelease]") {
  // packse transitive-prerelease-backtracks: a 2.0.0 names c>=2.0.0b1, but c 2.0.0b1 needs
  // d==2.0.0 against the user's d==1.0.0, so a 2.0.0 is rejected; a 1.0.0's c>=1.0.0 names no
  // pre-release, so c takes its final 1.0.0, not 1.5.0a1.
  InMemoryProvider p;
  add(p, "a", "1.0.0", {"c>=1.0.0"});
  add(p, "a", "2.0.0", {"c>=2.0.0b1"});
  add(p, "c", "1.0.0");
  add(p, "c", "1.5.0a1");
  add(p, "c", "2.0.0b1", {"d==2.0.0"});
  add(p, "d", "1.0.0");
  add(p, "d", "2.0.0");
  CHECK(solution_of(p, request({"a", "d==1.0.0"})) ==
        std::map<std::string, std::string>{{"a", "1.0.0"}, {"c", "1.0.0"}, {"d", "1.0.0"}});
}

TEST_CASE("a yanked pin from a rejected parent is undone", "[resolver][yanked]") {
  // b 2.0 pins the yanked c==1.0 and needs d>=2, which the user's d<2 rules out; after the
  // backtrack to b 1.0 (c>=0.9), the yanked c 1.0 is no longer pinned: c 0.9 is taken.
  InMemoryProvider p;
  add(p, "b", "1.0", {"c>=0.9"});
  add(p, "b", "2.0", {"c==1.0", "d>=2"});
  add(p, "c", "0.9");
  add(p, "c", "1.0");
  add(p, "d", "1.0");
  add(p, "d", "2.0");
  REQUIRE(p.set_yanked("c", "1.0"));
  CHECK(solution_of(p, request({"b", "d<2"})) ==
        std::map<std::string, std::string>{{"b", "1.0"}, {"c", "0.9"}, {"d", "1.0"}});
}

TEST_CASE("<V and >V name pre-releases too (packaging 26.3)", "[resolver][prerelease]") {
  InMemoryProvider p;
  add(p, "c", "0.4");
  add(p, "c", "1.0.0");
  add(p, "c", "2.0.0a1");
  add(p, "d", "1.0.0");
  add(p, "d", "1.1.0a1");
  CHECK(solution_of(p, request({"c>0.5a1"})) ==
        std::map<std::string, std::string>{{"c", "2.0.0a1"}});
  CHECK(solution_of(p, request({"c>=0.5a1"})) ==
        std::map<std::string, std::string>{{"c", "2.0.0a1"}});
  CHECK(solution_of(p, request({"d<1.1.0a2"})) ==
        std::map<std::string, std::string>{{"d", "1.1.0a1"}});
  CHECK(solution_of(p, request({"d<1.1"})) == std::map<std::string, std::string>{{"d", "1.0.0"}});
}

TEST_CASE("<V.postN admits pre-releases of V", "[resolver][prerelease]") {
  InMemoryProvider p;
  add(p, "a", "1.2.3a1");
  add(p, "a", "1.2.3.post1");
  SolveOptions o;
  o.prerelease = PrereleasePolicy::Allow;
  CHECK(solution_of(p, request({"a<1.2.3.post1"}), o) ==
        std::map<std::string, std::string>{{"a", "1.2.3a1"}});
  CHECK(solution_of(p, request({"a<1.2.3.post1"})) ==
        std::map<std::string, std::string>{{"a", "1.2.3a1"}});
}

TEST_CASE("a package rejected against an earlier decision is decided first",
          "[resolver][priority]") {
  // packse wrong-backtracking-basic: deciding a 2.0.0 first walks b down to 1.0.0, a valid but
  // worse solution; uv and pip give a 1.0.0 and b 2.0.9.
  InMemoryProvider p;
  add(p, "a", "1.0.0");
  add(p, "a", "2.0.0");
  add(p, "too-old", "1.0.0");
  add(p, "b", "1.0.0", {"too-old"});
  for (int i = 0; i <= 9; ++i)
    add(p, "b", "2.0." + std::to_string(i), {"a==1.0.0"});
  CHECK(solution_of(p, request({"a", "b"})) ==
        std::map<std::string, std::string>{{"a", "1.0.0"}, {"b", "2.0.9"}});

  // wrong-backtracking-indirect: the same through b-inner.
  InMemoryProvider q;
  add(q, "a", "1.0.0");
  add(q, "a", "2.0.0");
  add(q, "too-old", "1.0.0");
  add(q, "b", "1.0.0", {"b-inner"});
  add(q, "b-inner", "1.0.0", {"too-old"});
  for (int i = 0; i <= 9; ++i)
    add(q, "b-inner", "2.0." + std::to_string(i), {"a==1.0.0"});
  CHECK(solution_of(q, request({"a", "b"})) ==
        std::map<std::string, std::string>{{"a", "1.0.0"}, {"b", "1.0.0"}, {"b-inner", "2.0.9"}});
}

// Every example of dart pub's doc/solver.md §Examples, with `^X.Y.Z` written as the PEP 440
// range `>=X.Y.Z,<X+1.0.0`, and the exact explanation text for the two failing ones.

#include "support.h"

using namespace resolver_test;

// https://github.com/dart-lang/pub/blob/master/doc/solver.md#no-conflicts
TEST_CASE("pub example: no conflicts", "[resolver][pub]") {
  InMemoryProvider p;
  add(p, "foo", "1.0.0", {"bar>=1.0.0,<2.0.0"});
  add(p, "bar", "1.0.0");
  add(p, "bar", "2.0.0");
  auto out = solve_ok(p, request({"foo>=1.0.0,<2.0.0"}));
  REQUIRE(std::holds_alternative<Solution>(out));
  const auto& s = std::get<Solution>(out);
  CHECK(versions(s) == std::map<std::string, std::string>{{"bar", "1.0.0"}, {"foo", "1.0.0"}});
  CHECK(s.stats.conflicts == 0);
  CHECK(s.stats.decisions == 3);  // root, foo, bar
}

// https://github.com/dart-lang/pub/blob/master/doc/solver.md#avoiding-conflict-during-decision-making
TEST_CASE("pub example: avoiding conflict during decision making", "[resolver][pub]") {
  InMemoryProvider p;
  add(p, "foo", "1.1.0", {"bar>=2.0.0,<3.0.0"});
  add(p, "foo", "1.0.0");
  add(p, "bar", "1.0.0");
  add(p, "bar", "1.1.0");
  add(p, "bar", "2.0.0");
  auto out = solve_ok(p, request({"foo>=1.0.0,<2.0.0", "bar>=1.0.0,<2.0.0"}));
  REQUIRE(std::holds_alternative<Solution>(out));
  const auto& s = std::get<Solution>(out);
  CHECK(versions(s) == std::map<std::string, std::string>{{"bar", "1.1.0"}, {"foo", "1.0.0"}});
  // foo 1.1.0 is never decided: its dependency would conflict, so `not foo>=1.1.0` is derived.
  CHECK(s.stats.conflicts == 0);
  CHECK(s.stats.decisions == 3);
}

// https://github.com/dart-lang/pub/blob/master/doc/solver.md#performing-conflict-resolution
TEST_CASE("pub example: performing conflict resolution", "[resolver][pub]") {
  InMemoryProvider p;
  add(p, "foo", "2.0.0", {"bar>=1.0.0,<2.0.0"});
  add(p, "foo", "1.0.0");
  add(p, "bar", "1.0.0", {"foo>=1.0.0,<2.0.0"});
  auto out = solve_ok(p, request({"foo>=1.0.0"}));
  REQUIRE(std::holds_alternative<Solution>(out));
  const auto& s = std::get<Solution>(out);
  CHECK(versions(s) == std::map<std::string, std::string>{{"foo", "1.0.0"}});
  // One conflict ({bar any, not foo ^1.0.0} at step 7), one learned incompatibility
  // ({foo >=2.0.0}, step 9), one backjump.
  CHECK(s.stats.conflicts == 1);
  CHECK(s.stats.learned == 1);
  CHECK(s.stats.backtracks == 1);
}

// https://github.com/dart-lang/pub/blob/master/doc/solver.md#conflict-resolution-with-a-partial-satisfier
TEST_CASE("pub example: conflict resolution with a partial satisfier", "[resolver][pub]") {
  InMemoryProvider p;
  add(p, "foo", "1.1.0", {"left>=1.0.0,<2.0.0", "right>=1.0.0,<2.0.0"});
  add(p, "foo", "1.0.0");
  add(p, "left", "1.0.0", {"shared>=1.0.0"});
  add(p, "right", "1.0.0", {"shared<2.0.0"});
  add(p, "shared", "2.0.0");
  add(p, "shared", "1.0.0", {"target>=1.0.0,<2.0.0"});
  add(p, "target", "2.0.0");
  add(p, "target", "1.0.0");
  auto out = solve_ok(p, request({"foo>=1.0.0,<2.0.0", "target>=2.0.0,<3.0.0"}));
  REQUIRE(std::holds_alternative<Solution>(out));
  const auto& s = std::get<Solution>(out);
  CHECK(versions(s) == std::map<std::string, std::string>{{"foo", "1.0.0"}, {"target", "2.0.0"}});
  CHECK(s.stats.conflicts >= 1);
}

// https://github.com/dart-lang/pub/blob/master/doc/solver.md#linear-error-reporting
TEST_CASE("pub example: linear error reporting", "[resolver][pub][report]") {
  InMemoryProvider p;
  add(p, "foo", "1.0.0", {"bar>=2.0.0,<3.0.0"});
  add(p, "bar", "2.0.0", {"baz>=3.0.0,<4.0.0"});
  add(p, "baz", "1.0.0");
  add(p, "baz", "3.0.0");
  CHECK(explanation_of(p, request({"foo>=1.0.0,<2.0.0", "baz>=1.0.0,<2.0.0"})) ==
        "Because foo depends on bar>=2.0.0,<3.0.0 and bar depends on baz>=3.0.0,<4.0.0, foo "
        "requires baz>=3.0.0,<4.0.0.\n"
        "And because you require both foo>=1.0.0,<2.0.0 and baz>=1.0.0,<2.0.0, version solving "
        "failed.");
}

// https://github.com/dart-lang/pub/blob/master/doc/solver.md#branching-error-reporting
TEST_CASE("pub example: branching error reporting", "[resolver][pub][report]") {
  InMemoryProvider p;
  add(p, "foo", "1.0.0", {"a>=1.0.0,<2.0.0", "b>=1.0.0,<2.0.0"});
  add(p, "foo", "1.1.0", {"x>=1.0.0,<2.0.0", "y>=1.0.0,<2.0.0"});
  add(p, "a", "1.0.0", {"b>=2.0.0,<3.0.0"});
  add(p, "b", "1.0.0");
  add(p, "b", "2.0.0");
  add(p, "x", "1.0.0", {"y>=2.0.0,<3.0.0"});
  add(p, "y", "1.0.0");
  add(p, "y", "2.0.0");
  auto out = solve_ok(p, request({"foo>=1.0.0,<2.0.0"}));
  REQUIRE(std::holds_alternative<NoSolution>(out));
  const auto& ns = std::get<NoSolution>(out);
  CHECK(report(ns, p).to_string() ==
        "Because foo==1.0.0 depends on a>=1.0.0,<2.0.0 and a depends on b>=2.0.0,<3.0.0, "
        "foo==1.0.0 requires b>=2.0.0,<3.0.0.\n"
        "And because foo==1.0.0 depends on b>=1.0.0,<2.0.0, foo==1.0.0 cannot be used. (1)\n"
        "\n"
        "Because foo==1.1.0 depends on x>=1.0.0,<2.0.0 and x depends on y>=2.0.0,<3.0.0, "
        "foo==1.1.0 requires y>=2.0.0,<3.0.0.\n"
        "And because foo==1.1.0 depends on y>=1.0.0,<2.0.0, foo==1.1.0 cannot be used.\n"
        "And because foo==1.0.0 cannot be used (1), foo cannot be used.\n"
        "And because you require foo>=1.0.0,<2.0.0, version solving failed.");
  // The tree itself: {root} <- {foo} <- ({foo==1.0.0}, {foo==1.1.0}).
  const auto& tree = ns.tree;
  const auto& root = tree.nodes[tree.root];
  CHECK(root.kind == NodeKind::Derived);
  REQUIRE(root.terms.size() == 1);
  CHECK(root.terms[0].package().is_root);
  const auto& foo = tree.nodes[root.cause1];
  REQUIRE(foo.terms.size() == 1);
  CHECK(foo.terms[0].to_string() == "foo");
  CHECK(tree.nodes[root.cause2].kind == NodeKind::Dependency);
}

TEST_CASE("report numbers a derivation that is used twice", "[resolver][report]") {
  // Hand-built tree: D = {a} (shared) is a cause of both {b==1.0} and the root.
  auto info = [](std::string name, std::vector<std::string> vs) {
    auto p = std::make_shared<PackageInfo>();
    p->name = std::move(name);
    auto v = std::make_shared<std::vector<gpulock::core::Version>>();
    auto asc = std::make_shared<std::vector<std::uint32_t>>();
    for (std::size_t i = 0; i < vs.size(); ++i) {
      v->push_back(*gpulock::core::Version::parse(vs[i]));
      asc->push_back(static_cast<std::uint32_t>(vs.size() - 1 - i));
    }
    p->versions = v;
    p->ascending = asc;
    return std::shared_ptr<const PackageInfo>(p);
  };
  auto root = std::make_shared<PackageInfo>();
  root->is_root = true;
  root->versions = std::make_shared<std::vector<gpulock::core::Version>>(1);
  root->ascending = std::make_shared<std::vector<std::uint32_t>>(1, 0);
  auto a = info("a", {"1.0"});
  auto b = info("b", {"1.0"});
  auto c = info("c", {"1.0"});
  auto x = info("x", {"2.0", "1.0"});  // preference order: bit 0 = 2.0, bit 1 = 1.0
  auto term = [](std::shared_ptr<const PackageInfo> p, bool pos, std::uint64_t bits,
                 std::optional<std::string> spec = std::nullopt) {
    Term t;
    t.positive = pos;
    t.versions = VersionSet(std::move(p), {bits});
    t.specifier = std::move(spec);
    return t;
  };
  DerivationTree tree;
  auto node = [&](NodeKind k, std::vector<Term> terms, std::size_t c1 = 0, std::size_t c2 = 0) {
    DerivationNode n;
    n.kind = k;
    n.terms = std::move(terms);
    n.cause1 = c1;
    n.cause2 = c2;
    tree.nodes.push_back(std::move(n));
    return tree.nodes.size() - 1;
  };
  // root requires x; x 1.0 depends on b, b on a; x 2.0 depends on a; a depends on c, which
  // has only an sdist. {a} is used twice.
  std::size_t a_dep = node(NodeKind::Dependency, {term(a, true, 1), term(c, false, 1, "")});
  std::size_t c_bad = node(NodeKind::Unavailable, {term(c, true, 1)});
  tree.nodes[c_bad].reason = {UnavailableKind::OnlySdist, "", {}};
  std::size_t a_no = node(NodeKind::Derived, {term(a, true, 1)}, a_dep, c_bad);
  tree.nodes[a_no].shared_id = 1;
  std::size_t b_dep = node(NodeKind::Dependency, {term(b, true, 1), term(a, false, 1, "")});
  std::size_t b_no = node(NodeKind::Derived, {term(b, true, 1)}, b_dep, a_no);
  std::size_t x1_dep = node(NodeKind::Dependency, {term(x, true, 2), term(b, false, 1, "")});
  std::size_t x1_no = node(NodeKind::Derived, {term(x, true, 2)}, x1_dep, b_no);
  std::size_t x2_dep = node(NodeKind::Dependency, {term(x, true, 1), term(a, false, 1, "")});
  std::size_t x2_no = node(NodeKind::Derived, {term(x, true, 1)}, x2_dep, a_no);
  std::size_t x_no = node(NodeKind::Derived, {term(x, true, 3)}, x1_no, x2_no);
  std::size_t r_x = node(NodeKind::Dependency, {term(root, true, 1), term(x, false, 3, "")});
  tree.root = node(NodeKind::Derived, {term(root, true, 1)}, r_x, x_no);
  NoSolution ns{tree, {}};
  CHECK(report(ns).to_string() ==
        "Because a depends on c and c has only a source distribution (building from source is "
        "not supported), a cannot be used. (1)\n"
        "And because x==1.0 depends on b and b depends on a, x==1.0 cannot be used. (2)\n"
        "\n"
        "Because a cannot be used (1) and x==2.0 depends on a, x==2.0 cannot be used.\n"
        "And because x==1.0 cannot be used (2), x cannot be used.\n"
        "And because you require x, version solving failed.");
}

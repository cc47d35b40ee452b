// Property tests on seeded random registries (pubgrub-rs tests/proptest.rs, uv's idea of an
// oracle): the solver agrees with a brute-force search on small registries, every solution
// satisfies every constraint, is locally optimal for the preference order, the same input
// gives the same solution and report, and removing a dependency never breaks a solvable case.

#include <cstdlib>
#include <random>

#include "support.h"

using namespace resolver_test;
using gpulock::core::SpecifierSet;
using gpulock::core::Version;

namespace {

struct RVersion {
  std::string version;
  std::vector<std::string> deps;
  bool unavailable = false;
};
struct RPackage {
  std::string name;
  std::vector<RVersion> versions;
};
struct Registry {
  std::vector<RPackage> packages;
  std::vector<std::string> root;
  bool disallow = false;
};

// Operands are final releases only, so no requirement names a pre-release.
const std::vector<std::string> kOperands = {"0.9", "1.0", "1.1", "1.2", "2.0", "3.0"};
const std::vector<std::string> kVersions = {"0.9", "1.0",   "1.0.post1", "1.1rc1",    "1.1",
                                            "1.2", "2.0a1", "2.0",       "2.0+local", "3.0"};

// Operands come mostly from the target's own final releases, so requirements overlap and
// solvable cases need backtracking; no operand is a pre-release, so no requirement names one.
std::string random_spec(std::mt19937& rng, const RPackage& target) {
  std::vector<std::string> finals;
  for (const auto& v : target.versions) {
    if (v.version.find_first_of("abr+") == std::string::npos &&
        v.version.find("post") == std::string::npos) {
      finals.push_back(v.version);
    }
  }
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  auto op = [&]() { return (finals.empty() || rng() % 10 < 3) ? pick(kOperands) : pick(finals); };
  switch (rng() % 14) {
    case 0:
    case 1:
      return "";
    case 2:
    case 3:
      return ">=" + op();
    case 4:
    case 5:
      return "<" + op();
    case 6:
      return "==" + op();
    case 7:
      return "!=" + op();
    case 8:
      return ">" + op();
    case 9:
      return "<=" + op();
    case 10:
      return "~=" + op();
    case 11:
      return rng() % 2 ? "==1.*" : "!=2.*";
    case 12:
      return ">=" + op() + ",<" + op();
    default:
      return "<=" + op() + ",!=" + op();
  }
}

// A random registry. With `planted`, a hidden assignment is made valid first (its versions
// are available and their requirements, and the root's, hold for it), so the registry is
// solvable while newer versions carry random, often conflicting requirements.
Registry generate(unsigned seed, std::size_t min_packages, std::size_t max_packages,
                  std::size_t max_versions, unsigned dep_percent, bool planted = false) {
  std::mt19937 rng(seed);
  Registry r;
  r.disallow = rng() % 5 == 0;
  std::size_t n = min_packages + rng() % (max_packages - min_packages + 1);
  for (std::size_t i = 0; i < n; ++i) {
    RPackage p{"p" + std::to_string(i), {}};
    std::vector<std::string> pool = kVersions;
    std::shuffle(pool.begin(), pool.end(), rng);
    std::size_t k = 1 + rng() % max_versions;
    for (std::size_t v = 0; v < k; ++v) {
      RVersion rv;
      rv.version = pool[v];
      rv.unavailable = rng() % 15 == 0;
      p.versions.push_back(std::move(rv));
    }
    r.packages.push_back(std::move(p));
  }
  // hidden[i]: the planted version of package i, or -1.
  std::vector<int> hidden(n, -1);
  if (planted) {
    for (std::size_t i = 0; i < n; ++i) {
      if (rng() % 4 == 0) continue;
      auto& vs = r.packages[i].versions;
      std::size_t k = rng() % vs.size();
      bool pre = Version::parse(vs[k].version)->is_prerelease();
      if (r.disallow && pre) continue;
      vs[k].unavailable = false;
      hidden[i] = static_cast<int>(k);
    }
  }
  // A requirement on q that the planted version of q satisfies.
  auto spec_for = [&](std::size_t q) {
    if (hidden[q] < 0) return random_spec(rng, r.packages[q]);
    auto v = *Version::parse(r.packages[q].versions[static_cast<std::size_t>(hidden[q])].version);
    for (int attempt = 0; attempt < 20; ++attempt) {
      std::string s = random_spec(rng, r.packages[q]);
      if (SpecifierSet::parse(s)->contains(v, true)) return s;
    }
    return std::string();
  };
  for (std::size_t i = 0; i < n; ++i) {
    auto& p = r.packages[i];
    for (std::size_t k = 0; k < p.versions.size(); ++k) {
      bool in_hidden = hidden[i] == static_cast<int>(k);
      for (std::size_t q = 0; q < n; ++q) {
        if (q == i || rng() % 100 >= dep_percent) continue;
        if (in_hidden && hidden[q] < 0) continue;
        p.versions[k].deps.push_back(r.packages[q].name +
                                     (in_hidden ? spec_for(q) : random_spec(rng, r.packages[q])));
      }
    }
  }
  std::size_t nroot = 1 + rng() % 3;
  for (std::size_t i = 0; i < nroot; ++i) {
    std::size_t q = rng() % n;
    if (planted && hidden[q] < 0) continue;
    r.root.push_back(r.packages[q].name +
                     (planted ? spec_for(q) : random_spec(rng, r.packages[q])));
  }
  return r;
}

std::unique_ptr<InMemoryProvider> provider_for(const Registry& r) {
  auto p = std::make_unique<InMemoryProvider>();
  for (const auto& pkg : r.packages) {
    for (const auto& v : pkg.versions) {
      add(*p, pkg.name, v.version, v.deps);
      if (v.unavailable) {
        REQUIRE(p->set_unavailable(pkg.name, v.version, {UnavailableKind::Other, "is broken", {}}));
      }
    }
  }
  return p;
}

SolveOptions options_for(const Registry& r) {
  SolveOptions o;
  if (r.disallow) o.prerelease = PrereleasePolicy::Disallow;
  return o;
}

// The registry in checkable form.
struct Model {
  struct Edge {
    std::size_t to;  // package index, or npos for a package outside the registry
    SpecifierSet spec;
  };
  struct V {
    Version version;
    bool eligible;
    std::vector<Edge> deps;
  };
  std::vector<std::string> names;
  std::vector<std::vector<V>> versions;
  std::vector<Edge> root;

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  explicit Model(const Registry& r) {
    for (const auto& p : r.packages)
      names.push_back(p.name);
    auto edge = [&](const std::string& text) {
      Dependency d = dep(text);
      auto it = std::find(names.begin(), names.end(), d.name);
      return Edge{it == names.end() ? npos : static_cast<std::size_t>(it - names.begin()),
                  d.specifier};
    };
    for (const auto& p : r.packages) {
      std::vector<V> vs;
      for (const auto& v : p.versions) {
        V mv{*Version::parse(v.version), true, {}};
        mv.eligible = !v.unavailable && !(r.disallow && mv.version.is_prerelease());
        for (const auto& d : v.deps)
          mv.deps.push_back(edge(d));
        vs.push_back(std::move(mv));
      }
      versions.push_back(std::move(vs));
    }
    for (const auto& d : r.root)
      root.push_back(edge(d));
  }

  // choice[i]: index into versions[i], or -1 for "not selected".
  bool edge_ok(const Edge& e, const std::vector<int>& choice) const {
    if (e.to == npos || choice[e.to] < 0) return false;
    return e.spec.contains(versions[e.to][static_cast<std::size_t>(choice[e.to])].version, true);
  }
  bool valid(const std::vector<int>& choice) const {
    for (const auto& e : root)
      if (!edge_ok(e, choice)) return false;
    for (std::size_t i = 0; i < choice.size(); ++i) {
      if (choice[i] < 0) continue;
      const V& v = versions[i][static_cast<std::size_t>(choice[i])];
      if (!v.eligible) return false;
      for (const auto& e : v.deps)
        if (!edge_ok(e, choice)) return false;
    }
    return true;
  }
  bool brute_force() const {
    std::vector<int> choice(names.size(), -1);
    return search(choice, 0);
  }
  // Depth-first over packages in index order; a partial assignment is pruned as soon as an
  // edge between assigned packages (or from the root to one) fails.
  bool search(std::vector<int>& choice, std::size_t i) const {
    if (i == names.size()) return valid(choice);
    for (int c = -1; c < static_cast<int>(versions[i].size()); ++c) {
      if (c >= 0 && !versions[i][static_cast<std::size_t>(c)].eligible) continue;
      choice[i] = c;
      if (consistent(choice, i) && search(choice, i + 1)) return true;
    }
    choice[i] = -1;
    return false;
  }
  // Edges whose both ends are among packages 0..i.
  bool consistent(const std::vector<int>& choice, std::size_t i) const {
    auto decided = [&](std::size_t to) { return to != npos && to <= i; };
    for (const auto& e : root)
      if ((decided(e.to) || e.to == npos) && !edge_ok(e, choice)) return false;
    for (std::size_t k = 0; k <= i; ++k) {
      if (choice[k] < 0) continue;
      for (const auto& e : versions[k][static_cast<std::size_t>(choice[k])].deps)
        if ((decided(e.to) || e.to == npos) && !edge_ok(e, choice)) return false;
    }
    return true;
  }
  std::vector<int> choice_of(const Solution& s) const {
    std::vector<int> choice(names.size(), -1);
    for (const auto& p : s.packages) {
      auto it = std::find(names.begin(), names.end(), p.name);
      REQUIRE(it != names.end());
      std::size_t i = static_cast<std::size_t>(it - names.begin());
      int found = -1;
      for (std::size_t k = 0; k < versions[i].size(); ++k)
        if (versions[i][k].version == p.version) found = static_cast<int>(k);
      REQUIRE(found >= 0);
      choice[i] = found;
    }
    return choice;
  }
  // Preference: newest first, final releases before pre-releases (if-necessary; no
  // requirement names a pre-release here).
  static bool better(const Version& w, const Version& v) {
    if (w.is_prerelease() != v.is_prerelease()) return !w.is_prerelease();
    return v < w;
  }
};

// Every selected package keeps its version unless switching only it to a better candidate
// is invalid (doc: a decision takes the best candidate its partial solution allows, and
// derivations and learned incompatibilities are implied by the registry).
void check_locally_optimal(const Model& m, const std::vector<int>& choice) {
  for (std::size_t i = 0; i < choice.size(); ++i) {
    if (choice[i] < 0) continue;
    const Version& v = m.versions[i][static_cast<std::size_t>(choice[i])].version;
    for (std::size_t k = 0; k < m.versions[i].size(); ++k) {
      if (!Model::better(m.versions[i][k].version, v)) continue;
      std::vector<int> other = choice;
      other[i] = static_cast<int>(k);
      INFO(m.names[i] << " " << m.versions[i][k].version.to_string() << " would be better than "
                      << v.to_string());
      CHECK_FALSE(m.valid(other));
    }
  }
}

std::string describe(const Registry& r) {
  std::string out = "root:";
  for (const auto& d : r.root)
    out += " " + d;
  out += r.disallow ? " (disallow)\n" : "\n";
  for (const auto& p : r.packages) {
    for (const auto& v : p.versions) {
      out += p.name + " " + v.version + (v.unavailable ? " (unavailable)" : "") + ":";
      for (const auto& d : v.deps)
        out += " " + d;
      out += "\n";
    }
  }
  return out;
}

// GPULOCK_RESOLVER_SEEDS raises the number of seeds for a soak run.
unsigned seed_count(unsigned fallback) {
  const char* s = std::getenv("GPULOCK_RESOLVER_SEEDS");
  if (s == nullptr || *s == '\0') return fallback;
  return static_cast<unsigned>(std::strtoul(s, nullptr, 10));
}

}  // namespace

TEST_CASE("random registries agree with brute force", "[resolver][random]") {
  std::size_t solvable = 0;
  std::size_t unsolvable = 0;
  std::size_t backtracked = 0;  // solvable cases that needed conflict resolution
  const unsigned seeds = seed_count(600);
  for (unsigned seed = 1; seed <= seeds; ++seed) {
    Registry r = generate(seed, 5, 9, 8, 50, /*planted=*/seed % 2 == 0);
    INFO("seed " << seed << "\n" << describe(r));
    Model m(r);
    auto p = provider_for(r);
    auto out = solve_ok(*p, request(r.root), options_for(r));
    bool expected = m.brute_force();
    REQUIRE(std::holds_alternative<Solution>(out) == expected);
    if (auto* s = std::get_if<Solution>(&out)) {
      if (s->stats.backtracks > 0) ++backtracked;
      ++solvable;
      auto choice = m.choice_of(*s);
      CHECK(m.valid(choice));
      check_locally_optimal(m, choice);
      for (const auto& c : s->packages)
        CHECK_FALSE(c.required_by.empty());
    } else {
      ++unsolvable;
      std::string text = report(std::get<NoSolution>(out), *p).to_string();
      CHECK_FALSE(text.empty());
      CHECK(text.find("version solving failed") != std::string::npos);
    }
  }
  // The generator produces both outcomes in fair numbers.
  CHECK(solvable > seeds / 3);
  CHECK(unsolvable > seeds / 3);
  CHECK(backtracked > seeds / 6);
}

TEST_CASE("same input, same solution and report", "[resolver][random]") {
  for (unsigned seed = 1000; seed < 1060; ++seed) {
    Registry r = generate(seed, 8, 25, 8, 15);
    INFO("seed " << seed << "\n" << describe(r));
    auto p1 = provider_for(r);
    auto p2 = provider_for(r);
    auto o1 = solve_ok(*p1, request(r.root), options_for(r));
    auto o2 = solve_ok(*p2, request(r.root), options_for(r));
    REQUIRE(o1.index() == o2.index());
    if (auto* s1 = std::get_if<Solution>(&o1)) {
      const auto& s2 = std::get<Solution>(o2);
      CHECK(versions(*s1) == versions(s2));
      CHECK(s1->stats.decisions == s2.stats.decisions);
      CHECK(s1->stats.conflicts == s2.stats.conflicts);
      Model m(r);
      CHECK(m.valid(m.choice_of(*s1)));
    } else {
      CHECK(report(std::get<NoSolution>(o1), *p1).to_string() ==
            report(std::get<NoSolution>(o2), *p2).to_string());
      CHECK(std::get<NoSolution>(o1).tree.to_debug_string() ==
            std::get<NoSolution>(o2).tree.to_debug_string());
    }
  }
}

TEST_CASE("removing a dependency cannot break a solvable case", "[resolver][random]") {
  std::size_t checked = 0;
  for (unsigned seed = 2000; seed < 2200; ++seed) {
    Registry r = generate(seed, 2, 6, 4, 35);
    auto p = provider_for(r);
    auto out = solve_ok(*p, request(r.root), options_for(r));
    if (!std::holds_alternative<Solution>(out)) continue;
    std::mt19937 rng(seed);
    auto& pkg = r.packages[rng() % r.packages.size()];
    auto& ver = pkg.versions[rng() % pkg.versions.size()];
    if (ver.deps.empty()) continue;
    ver.deps.erase(ver.deps.begin() + static_cast<std::ptrdiff_t>(rng() % ver.deps.size()));
    INFO("seed " << seed << "\n" << describe(r));
    auto p2 = provider_for(r);
    CHECK(std::holds_alternative<Solution>(solve_ok(*p2, request(r.root), options_for(r))));
    ++checked;
  }
  CHECK(checked > 20);
}

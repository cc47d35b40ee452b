#pragma once
// Helpers shared by the resolver tests.

#include <map>
#include <string>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/resolver/resolver.h"

namespace resolver_test {

using namespace gpulock::resolver;

inline Dependency dep(std::string_view text) {
  auto d = parse_dependency(text);
  if (!d) FAIL("bad dependency " << std::string(text) << ": " << d.error().message);
  return *d;
}

inline SolveRequest request(const std::vector<std::string>& reqs,
                            const std::vector<std::string>& constraints = {}) {
  SolveRequest r;
  for (const auto& s : reqs)
    r.requirements.push_back(dep(s));
  for (const auto& s : constraints)
    r.constraints.push_back(dep(s));
  return r;
}

inline void add(InMemoryProvider& p, std::string_view name, std::string_view version,
                const std::vector<std::string>& deps = {}) {
  auto st = p.add(name, version, deps);
  if (!st) FAIL("add failed: " << st.error().message);
}

/// name -> version of every selected package (virtual ones included).
inline std::map<std::string, std::string> versions(const Solution& s) {
  std::map<std::string, std::string> out;
  for (const auto& p : s.packages)
    out[p.name] = p.version.to_string();
  return out;
}

inline Outcome solve_ok(Provider& p, const SolveRequest& r, const SolveOptions& o = {}) {
  auto out = solve(p, r, o);
  if (!out) FAIL("solve failed: " << out.error().to_string());
  return std::move(*out);
}

inline std::map<std::string, std::string> solution_of(Provider& p, const SolveRequest& r,
                                                      const SolveOptions& o = {}) {
  auto out = solve_ok(p, r, o);
  if (auto* ns = std::get_if<NoSolution>(&out)) {
    FAIL("no solution:\n" << report(*ns, p).to_string() << "\n" << ns->tree.to_debug_string());
  }
  return versions(std::get<Solution>(out));
}

inline std::string explanation_of(Provider& p, const SolveRequest& r, const SolveOptions& o = {}) {
  auto out = solve_ok(p, r, o);
  if (auto* s = std::get_if<Solution>(&out)) {
    std::string got;
    for (const auto& [n, v] : versions(*s))
      got += n + "==" + v + " ";
    FAIL("expected no solution, got " << got);
  }
  return report(std::get<NoSolution>(out), p).to_string();
}

}  // namespace resolver_test

// The solver's results: the Solution, or the NoSolution with its derivation tree.

#include "solver_impl.h"

namespace gpulock::resolver::pubgrub {

// ------------------------------------------------------------------------------------------
// Results

Term Solver::export_term(const ITerm& t) const {
  Term out;
  out.positive = t.positive;
  Set s = tset(t);
  out.versions =
      VersionSet::from_bounds(pkgs_[t.pkg].info, std::vector<std::uint32_t>(s.begin(), s.end()));
  if (t.text != kNone) out.specifier = strings_[t.text];
  return out;
}

NoSolution Solver::build_no_solution(IncompatId terminal) const {
  NoSolution out;
  // Nodes are incompatibilities (role 0) plus, for an empty-dependency derivation, its two
  // facts materialized here (role 1: the dependency, role 2: "no version").
  struct Item {
    IncompatId id;
    int role;
  };
  auto key = [](Item it) {
    return static_cast<std::uint64_t>(it.id) * 3 + static_cast<std::uint64_t>(it.role);
  };
  std::unordered_map<std::uint64_t, std::size_t> index;
  std::vector<Item> order;
  std::vector<std::size_t> parents;
  // Pre-order walk, cause1 first; a node reached again only gains a parent.
  std::vector<Item> stack{{terminal, 0}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    if (auto found = index.find(key(it)); found != index.end()) {
      ++parents[found->second];
      continue;
    }
    index.emplace(key(it), order.size());
    order.push_back(it);
    parents.push_back(1);
    if (it.role != 0) continue;
    const Incompat& inc = incompats_[it.id];
    if (inc.empty_dep != kNone) {
      stack.push_back({it.id, 2});
      stack.push_back({it.id, 1});
    } else if (inc.kind == NodeKind::Derived) {
      stack.push_back({inc.cause2, 0});
      stack.push_back({inc.cause1, 0});
    }
  }
  auto empty_term = [&](PackageId q, bool positive, std::uint32_t text) {
    Term t;
    t.positive = positive;
    t.versions = VersionSet::from_bounds(pkgs_[q].info, {});
    t.specifier = strings_[text];
    return t;
  };
  std::size_t shared = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Incompat& inc = incompats_[order[i].id];
    DerivationNode node;
    if (order[i].role == 1) {
      node.kind = NodeKind::Dependency;
      node.terms.push_back(export_term(terms_[inc.first]));
      node.terms.push_back(empty_term(inc.empty_dep, false, inc.text));
    } else if (order[i].role == 2) {
      node.kind = NodeKind::NoVersions;
      node.terms.push_back(empty_term(inc.empty_dep, true, inc.text));
    } else {
      node.kind = inc.kind;
      for (std::uint32_t k = 0; k < inc.count; ++k) {
        node.terms.push_back(export_term(terms_[inc.first + k]));
      }
      if (inc.reason != kNone) node.reason = reasons_[inc.reason];
      if (inc.kind == NodeKind::Constraint || inc.kind == NodeKind::Conflict)
        node.constraint = strings_[inc.text];
      if (inc.empty_dep != kNone) {
        node.cause1 = index.at(key({order[i].id, 1}));
        node.cause2 = index.at(key({order[i].id, 2}));
      } else if (inc.kind == NodeKind::Derived) {
        node.cause1 = index.at(key({inc.cause1, 0}));
        node.cause2 = index.at(key({inc.cause2, 0}));
      }
      if (inc.kind == NodeKind::Derived && i != 0 && parents[i] >= 2) node.shared_id = ++shared;
    }
    out.tree.nodes.push_back(std::move(node));
  }
  out.tree.root = 0;
  out.stats = stats_;
  return out;
}

Solution Solver::build_solution() const {
  Solution out;
  std::unordered_map<PackageId, std::size_t> slot;  // base package -> index in out.packages
  std::uint32_t order = 0;
  std::vector<std::pair<PackageId, std::uint32_t>> decisions;
  for (const Assignment& a : asg_) {
    if (a.cause != kNone) continue;
    decisions.emplace_back(a.pkg, a.bit);
    if (a.pkg == kRoot) continue;
    const Package& pk = pkgs_[a.pkg];
    if (pk.base != a.pkg) {
      ++order;
      continue;
    }
    ChosenPackage c;
    c.name = pk.name;
    c.version = (*domains_[pk.domain].versions)[a.bit];
    c.candidate_index = a.bit;
    c.is_virtual = pk.is_virtual;
    c.decision_level = a.level;
    c.decision_order = order++;
    slot.emplace(a.pkg, out.packages.size());
    out.packages.push_back(std::move(c));
  }
  for (const Assignment& a : asg_) {
    if (a.cause != kNone || a.pkg == kRoot) continue;
    const Package& pk = pkgs_[a.pkg];
    if (pk.base == a.pkg) continue;
    if (auto it = slot.find(pk.base); it != slot.end())
      out.packages[it->second].extras.push_back(pk.extra);
  }
  for (const auto& [p, bit] : decisions) {
    auto it = deps_of_.find(pair_key(p, bit));
    if (it == deps_of_.end()) continue;
    const Package& pk = pkgs_[p];
    for (const Edge& e : it->second) {
      auto s = slot.find(pkgs_[e.to].base);
      if (s == slot.end()) continue;
      Requirer r;
      if (p != kRoot) {
        r.package = pk.info->display_name();
        r.version = (*domains_[pk.domain].versions)[bit];
      }
      r.requirement = strings_[e.text];
      out.packages[s->second].required_by.push_back(std::move(r));
    }
  }
  for (auto& c : out.packages)
    std::sort(c.extras.begin(), c.extras.end());
  std::sort(out.packages.begin(), out.packages.end(),
            [](const ChosenPackage& a, const ChosenPackage& b) { return a.name < b.name; });
  out.stats = stats_;
  return out;
}

}  // namespace gpulock::resolver::pubgrub

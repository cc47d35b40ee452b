// The Reporter's headline (issue 16 item 10): the one sentence that names why resolution
// failed, found among the proof's facts in named steps.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "report_impl.h"

namespace gpulock::resolver::reporting {

namespace {

void add_unique(std::vector<std::string>& v, std::string s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
}

}  // namespace

// A fact of the proof as found in the tree (collapsed dependencies count as dependencies).
bool Reporter::leaf(std::size_t i) const {
  return node(i).kind != NodeKind::Derived || collapsed_dependency(i).has_value();
}

// The proof's leaves, each once, in the order the proof reaches them (cause1 first).
std::vector<std::size_t> Reporter::leaves() const {
  std::vector<std::size_t> out;
  std::set<std::size_t> seen;
  std::vector<std::size_t> stack{tree_.root};
  while (!stack.empty()) {
    std::size_t i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    if (leaf(i)) {
      out.push_back(i);
      continue;
    }
    stack.push_back(node(i).cause2);
    stack.push_back(node(i).cause1);
  }
  return out;
}

// A fact that stops candidates by itself: no version, a build that cannot be used, a
// constraint or a conflict rule (a dependency only leads somewhere).
bool Reporter::blocking(std::size_t i) const {
  const auto& n = node(i);
  if (collapsed_dependency(i) || n.terms.empty()) return false;
  return n.kind == NodeKind::NoVersions || n.kind == NodeKind::Unavailable ||
         n.kind == NodeKind::Constraint || n.kind == NodeKind::Conflict;
}

std::optional<Reporter::Edge> Reporter::edge_of(std::size_t i) const {
  if (auto dep = collapsed_dependency(i))
    return Edge{&node(*dep).terms[0].package(), &node(*dep).terms[1], i};
  const auto& n = node(i);
  if (n.kind == NodeKind::Dependency && n.terms.size() == 2)
    return Edge{&n.terms[0].package(), &n.terms[1], i};
  return std::nullopt;
}

// Sets deciding_ to the facts it names.
std::string Reporter::headline() {
  if (is_external(tree_.root)) return fact(tree_.root).text;
  const auto order = leaves();
  std::vector<Edge> edges;
  for (auto i : order) {
    if (auto e = edge_of(i)) edges.push_back(*e);
  }
  std::map<std::string, Reach> reach;
  std::vector<std::string> required;
  reach_from_requirements(edges, reach, required);
  // 1. A blocking fact nearest to the requirements.
  if (auto text = headline_blocking(order, edges, reach)) return *text;
  // 2. A package that two requirements need in sets that do not meet.
  if (auto text = headline_clash(edges, reach)) return *text;
  // 2b. Builds that need different variants (a virtual package): the facts that say so.
  if (auto text = headline_variants(edges)) return *text;
  // 3. The requirements the proof uses.
  if (required.empty()) return "the requirements cannot be satisfied together";
  return "you require " + join_or(required, "and") + ", which cannot be satisfied together";
}

// Each package's distance from the requirements (reach), and the requirements the root names
// (required), from the proof's dependency facts.
void Reporter::reach_from_requirements(const std::vector<Edge>& edges,
                                       std::map<std::string, Reach>& reach,
                                       std::vector<std::string>& required) const {
  for (const auto& e : edges) {
    if (!e.from->is_root) continue;
    std::string text = term_text(*e.to);
    std::string key = e.to->package().display_name();
    if (!reach.contains(key)) reach[key] = Reach{0, text, &e.to->package(), nullptr};
    if (std::find(required.begin(), required.end(), text) == required.end())
      required.push_back(text);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& e : edges) {
      if (e.from->is_root) continue;
      auto from = reach.find(e.from->display_name());
      if (from == reach.end()) continue;
      std::string key = e.to->package().display_name();
      auto it = reach.find(key);
      if (it == reach.end() || it->second.dist > from->second.dist + 1) {
        reach[key] =
            Reach{from->second.dist + 1, from->second.origin, from->second.origin_package, e.from};
        changed = true;
      }
    }
  }
}

// 1. A blocking fact nearest to the requirements.
std::optional<std::string> Reporter::headline_blocking(const std::vector<std::size_t>& order,
                                                       const std::vector<Edge>& edges,
                                                       const std::map<std::string, Reach>& reach) {
  std::optional<std::size_t> deciding;
  std::size_t best = static_cast<std::size_t>(-1);
  for (auto i : order) {
    if (!blocking(i)) continue;
    auto it = reach.find(subject_of(i)->display_name());
    std::size_t d = it == reach.end() ? static_cast<std::size_t>(-2) : it->second.dist;
    if (d < best) {
      best = d;
      deciding = i;
    }
  }
  if (deciding) {
    deciding_ = {*deciding};
    std::string text = fact(*deciding).text;
    // The same reason for other candidates of the same package is counted, not repeated.
    const auto& dn = node(*deciding);
    std::size_t same = 0;
    for (auto i : order) {
      const auto& n = node(i);
      if (i == *deciding || !blocking(i)) continue;
      if (n.kind == dn.kind &&
          subject_of(i)->display_name() == subject_of(*deciding)->display_name() &&
          n.reason.kind == dn.reason.kind) {
        ++same;
      }
    }
    if (same != 0) {
      text += fmt_same(same, subject_of(*deciding)->display_name());
    }
    const PackageInfo* about = subject_of(*deciding);
    auto it = reach.find(about->display_name());
    if (it == reach.end()) return text;
    if (about->is_virtual) {
      // A fact about CUDA or Python is read with the dependency that needs it: "torch needs
      // CUDA and --driver none means no GPU".
      const PackageInfo* parent = it->second.parent;
      for (const auto& e : edges) {
        if (e.from != parent || e.to->package().display_name() != about->display_name()) continue;
        text = facts_and(e.leaf, *deciding);
        break;
      }
      if (parent == nullptr) return text;
      about = parent;
      it = reach.find(about->display_name());
      if (it == reach.end()) return text;
    }
    if (it->second.dist == 0 || about->is_virtual) return text;
    return text + ", and " + it->second.origin + " needs " + about->display_name();
  }
  return std::nullopt;
}

// 2. A package that two requirements need in sets that do not meet.
std::optional<std::string> Reporter::headline_clash(const std::vector<Edge>& edges,
                                                    const std::map<std::string, Reach>& reach) {
  // Items of one requirement's need: the sets it needs through one package ("" when direct).
  struct Item {
    std::string via;
    std::vector<std::string> sets;
  };
  struct Need {
    std::string origin;
    std::vector<Item> items;
  };
  std::vector<std::string> packages;
  for (const auto& e : edges) {
    const auto& p = e.to->package();
    if (p.is_virtual || p.is_root) continue;
    if (std::find(packages.begin(), packages.end(), p.display_name()) == packages.end()) {
      packages.push_back(p.display_name());
    }
  }
  for (const auto& name : packages) {
    std::vector<Need> needs;
    std::optional<std::string> yours;
    for (const auto& e : edges) {
      if (e.to->package().display_name() != name) continue;
      if (e.from->is_root) {
        yours = term_text(*e.to);
        continue;
      }
      auto from = reach.find(e.from->display_name());
      if (from == reach.end()) continue;
      auto it = std::find_if(needs.begin(), needs.end(),
                             [&](const Need& n) { return n.origin == from->second.origin; });
      if (it == needs.end()) it = needs.insert(needs.end(), Need{from->second.origin, {}});
      std::string via =
          e.from == from->second.origin_package ? std::string() : e.from->display_name();
      auto item = std::find_if(it->items.begin(), it->items.end(),
                               [&](const Item& x) { return x.via == via; });
      if (item == it->items.end()) item = it->items.insert(it->items.end(), Item{via, {}});
      add_unique(item->sets, term_text(*e.to));
    }
    // Two requirements, or one that needs the package along two paths.
    bool two_paths = needs.size() == 1 && needs[0].items.size() >= 2;
    if (needs.size() + (yours ? 1 : 0) < 2 && !two_paths) continue;
    std::vector<std::string> parts;
    for (const auto& n : needs) {
      std::vector<std::string> items;
      for (const auto& item : n.items) {
        items.push_back(join_or(item.sets, "or") +
                        (item.via.empty() ? "" : " (through " + item.via + ")"));
      }
      parts.push_back(n.origin + " needs " + (items.size() > 1 ? "both " : "") +
                      join_or(items, "and"));
    }
    if (yours) parts.push_back("you require " + *yours);
    for (const auto& e : edges) {
      if (e.to->package().display_name() == name) deciding_.insert(e.leaf);
    }
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (i != 0) out += (i + 1 == parts.size()) ? ", and " : ", ";
      out += parts[i];
    }
    return out;
  }
  return std::nullopt;
}

// 2b. Builds that need different variants (a virtual package): the facts that say so.
std::optional<std::string> Reporter::headline_variants(const std::vector<Edge>& edges) {
  for (const auto& e : edges) {
    const auto& p = e.to->package();
    if (!p.is_virtual) continue;
    std::vector<std::string> facts;
    std::vector<const PackageInfo*> froms;
    for (const auto& other : edges) {
      if (&other.to->package() != &p && other.to->package().display_name() != p.display_name())
        continue;
      if (std::find(froms.begin(), froms.end(), other.from) != froms.end()) continue;
      froms.push_back(other.from);
      add_unique(facts, fact(other.leaf).text);
    }
    if (facts.size() >= 2) {
      for (const auto& other : edges) {
        if (other.to->package().display_name() == p.display_name()) deciding_.insert(other.leaf);
      }
      return join_or(facts, "and");
    }
  }
  return std::nullopt;
}

}  // namespace gpulock::resolver::reporting

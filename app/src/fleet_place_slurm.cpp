// `gpulock fleet place --emit slurm` (app/fleet.h place_slurm, issue 45 item 3): a `--constraint`
// over the Slurm nodes' ActiveFeatures when some select exactly the nodes the lock fits (checked
// against every Slurm node of the inventory, as the k8s selector is against the labelled nodes),
// else the `--nodelist`, saying why.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpulock/app/fleet.h"

namespace gpulock::app {
namespace {

using Nodes = std::set<std::string>;

// A feature a constraint can name: no operator, bracket, count or space of Slurm's syntax.
bool plain_feature(std::string_view f) {
  return !f.empty() && f.size() <= 128 && f.find_first_of("&|[]*(),! \t\"'") == std::string::npos;
}

// Features ORed: the fewest that only fitting nodes carry and that together cover them.
std::vector<std::string> or_cover(const std::map<std::string, Nodes>& carriers, const Nodes& fit) {
  std::vector<std::string> picked;
  Nodes covered;
  while (covered != fit) {
    const std::string* best = nullptr;
    std::size_t gain = 0;
    for (const auto& [f, nodes] : carriers) {
      if (!std::includes(fit.begin(), fit.end(), nodes.begin(), nodes.end())) continue;
      std::size_t g = 0;
      for (const auto& n : nodes)
        g += covered.count(n) == 0 ? std::size_t{1} : std::size_t{0};
      if (g > gain) best = &f, gain = g;
    }
    if (best == nullptr) return {};
    picked.push_back(*best);
    covered.insert(carriers.at(*best).begin(), carriers.at(*best).end());
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// Features ANDed: the fewest that every fitting node carries whose common nodes are the fitting.
std::vector<std::string> and_cover(const std::map<std::string, Nodes>& carriers, const Nodes& fit,
                                   const Nodes& all) {
  std::vector<std::string> picked;
  Nodes selected = all;
  while (selected != fit) {
    const std::string* best = nullptr;
    std::size_t left = selected.size();
    for (const auto& [f, nodes] : carriers) {
      if (!std::includes(nodes.begin(), nodes.end(), fit.begin(), fit.end())) continue;
      std::size_t n = 0;
      for (const auto& s : selected)
        n += nodes.count(s);
      if (n < left) best = &f, left = n;
    }
    if (best == nullptr) return {};
    picked.push_back(*best);
    Nodes next;
    for (const auto& s : selected)
      if (carriers.at(*best).count(s) != 0) next.insert(s);
    selected = std::move(next);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// Why features cannot tell the nodes apart: a fitting node every feature of which a node the
// lock does not fit also carries (": gpu13's features are all on gpu15, which it does not fit").
std::string twin_of(const FleetResult& r, const Nodes& fit) {
  for (const auto& a : r.nodes) {
    if (!a.host.featured || fit.count(a.host.name) == 0) continue;
    for (const auto& b : r.nodes) {
      if (!b.host.featured || fit.count(b.host.name) != 0) continue;
      const bool all = std::all_of(a.host.features.begin(), a.host.features.end(), [&](auto& f) {
        return std::find(b.host.features.begin(), b.host.features.end(), f) !=
               b.host.features.end();
      });
      if (all)
        return fmt::format(": {}'s features ({}) are all on {}, which it does not fit", a.host.name,
                           a.host.features.empty()
                               ? std::string("none")
                               : fmt::format("{}", fmt::join(a.host.features, ",")),
                           b.host.name);
    }
  }
  return {};
}

SlurmPlacement place_on_slurm(const FleetResult& r, std::size_t lock) {
  SlurmPlacement p;
  Nodes fit, all, unfeatured;
  std::map<std::string, Nodes> carriers;
  for (std::size_t n : r.locks[lock].nodes) {
    p.nodelist.push_back(r.nodes[n].host.name);
    fit.insert(r.nodes[n].host.name);
    if (!r.nodes[n].host.featured) unfeatured.insert(r.nodes[n].host.name);
  }
  for (const auto& node : r.nodes) {
    if (!node.host.featured) continue;
    all.insert(node.host.name);
    for (const auto& f : node.host.features)
      if (plain_feature(f)) carriers[f].insert(node.host.name);
  }
  if (fit.empty()) {
    p.why_not = "the lock fits no node";
    return p;
  }
  if (!unfeatured.empty()) {
    p.why_not = fmt::format(
        "not every node it fits is a Slurm node with ActiveFeatures (scontrol show node -o): {}",
        fmt::join(unfeatured, ", "));
    return p;
  }
  auto picked = or_cover(carriers, fit);
  std::string op = "|";
  if (picked.empty()) picked = and_cover(carriers, fit, all), op = "&";
  if (picked.empty()) {
    p.why_not = "no ActiveFeatures select exactly the nodes it fits" + twin_of(r, fit);
    return p;
  }
  p.constraint = fmt::format("{}", fmt::join(picked, op));
  // Checked against every Slurm node of the inventory, as sbatch would apply it.
  for (const auto& node : r.nodes) {
    if (!node.host.featured) continue;
    const bool picked_node = satisfies(p.constraint, node.host.features);
    const bool fits = fit.count(node.host.name) != 0;
    if (picked_node && !fits) p.extra.push_back(node.host.name);
    if (!picked_node && fits) p.missing.push_back(node.host.name);
  }
  return p;
}

}  // namespace

bool satisfies(std::string_view constraint, const std::vector<std::string>& features) {
  if (constraint.empty()) return true;
  const bool any = constraint.find('|') != std::string_view::npos;
  const char sep = any ? '|' : '&';
  for (;;) {
    const auto at = constraint.find(sep);
    const auto f = constraint.substr(0, at);
    const bool has = std::find(features.begin(), features.end(), f) != features.end();
    if (any && has) return true;
    if (!any && !has) return false;
    if (at == std::string_view::npos) return !any;
    constraint.remove_prefix(at + 1);
  }
}

std::vector<SlurmPlacement> place_slurm(const FleetResult& result) {
  std::vector<SlurmPlacement> out;
  for (std::size_t i = 0; i < result.locks.size(); ++i)
    out.push_back(place_on_slurm(result, i));
  return out;
}

}  // namespace gpulock::app

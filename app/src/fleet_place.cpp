// `gpulock fleet place --emit k8s` (app/fleet.h place_k8s, issue 45 item 3): a required
// nodeAffinity per lock over the GPU Feature Discovery labels, and the check that it selects
// exactly the inventory's nodes the fit rule (gpu::lock_fits) lets the lock run on.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpulock/app/fleet.h"

namespace gpulock::app {
namespace {

const std::string* label_of(const std::vector<std::pair<std::string, std::string>>& labels,
                            std::string_view key) {
  for (const auto& [k, v] : labels)
    if (k == key) return &v;
  return nullptr;
}

// The GFD label families of the CUDA ceiling the labelled GPU nodes carry: the newer
// `cuda.runtime-version.*` and the older `cuda.runtime.*` (a term for each; a node with either
// is selected).
std::vector<std::string> runtime_families(const FleetResult& r) {
  bool newer = false, older = false;
  for (const auto& n : r.nodes) {
    if (!n.host.labelled) continue;
    newer = newer || label_of(n.host.labels, "nvidia.com/cuda.runtime-version.major") != nullptr;
    older = older || label_of(n.host.labels, "nvidia.com/cuda.runtime.major") != nullptr;
  }
  std::vector<std::string> out;
  if (newer) out.emplace_back("nvidia.com/cuda.runtime-version");
  if (older) out.emplace_back("nvidia.com/cuda.runtime");
  return out;
}

std::string k8s_arch(std::string_view cpu) {
  if (cpu == "x86_64") return "amd64";
  if (cpu == "aarch64") return "arm64";
  return std::string(cpu);
}

// The lock's platforms as `kubernetes.io/arch` values; empty: any.
std::vector<std::string> arch_values(const gpu::LockFacts& facts) {
  std::set<std::string> archs;
  for (const auto& tag : facts.platforms) {
    auto p = gpu::platform_of_tag(tag);
    if (p && p->os == "linux") archs.insert(k8s_arch(p->cpu));
  }
  return {archs.begin(), archs.end()};
}

// The ceiling part: alternatives, each a list of expressions (ORed across alternatives).
std::vector<std::vector<SelectorExpression>> ceiling_terms(const gpu::LockFacts& facts,
                                                           const std::string& family) {
  const auto major = family + ".major";
  const auto minor = family + ".minor";
  const auto c = *facts.cuda;
  if (facts.compat == gpu::CudaCompat::Minor || c.minor == 0)
    return {{{major, "Gt", {fmt::format("{}", c.major - 1)}}}};
  return {{{major, "Gt", {fmt::format("{}", c.major)}}},
          {{major, "In", {fmt::format("{}", c.major)}},
           {minor, "Gt", {fmt::format("{}", c.minor - 1)}}}};
}

// The compute capabilities among the inventory's GPUs the lock has kernels for, by major.
std::map<std::uint32_t, std::set<std::uint32_t>> kernel_archs(const FleetResult& r,
                                                              const gpu::LockFacts& facts) {
  std::set<gpu::ComputeCapability> seen;
  for (const auto& n : r.nodes)
    for (const auto& a : n.host.machine.archs)
      seen.insert(a);
  std::map<std::uint32_t, std::set<std::uint32_t>> out;
  for (const auto& cc : seen) {
    // A machine that differs from any the lock runs on only in this GPU.
    gpu::Machine m;
    m.driver = gpu::DriverVersion::parse("999.99.99").value();
    m.ceiling = gpu::CudaVersion{99, 9};
    m.archs = {cc};
    gpu::LockFacts f = facts;
    f.platforms.clear();
    if (f.cpu.empty()) f.cpu = "x86_64";
    if (gpu::lock_fits(f, m).fits) out[cc.major].insert(cc.minor);
  }
  return out;
}

std::vector<std::string> numbers(const std::set<std::uint32_t>& values) {
  std::vector<std::string> out;
  for (auto v : values)
    out.push_back(fmt::format("{}", v));
  return out;
}

LockPlacement place_one(const FleetResult& r, std::size_t lock) {
  const auto& facts = r.facts[lock];
  LockPlacement p;
  std::vector<SelectorExpression> common;
  if (auto archs = arch_values(facts); !archs.empty())
    common.push_back({"kubernetes.io/arch", "In", archs});
  if (!facts.cuda_builds) {
    p.terms.push_back(common);
  } else {
    const auto families = runtime_families(r);
    if (families.empty() || !facts.cuda) {
      p.problem = facts.cuda ? "no labelled node carries nvidia.com/cuda.runtime-version.major "
                               "or nvidia.com/cuda.runtime.major"
                             : "the lock records no CUDA version";
      return p;
    }
    const auto by_major = kernel_archs(r, facts);
    if (by_major.empty()) {
      p.problem = "the lock has kernels for none of the inventory's GPUs";
      return p;
    }
    for (const auto& family : families) {
      for (const auto& ceiling : ceiling_terms(facts, family)) {
        // Majors of the same minors share a term (8.0 and 9.0: major In [8, 9], minor In [0]).
        std::map<std::set<std::uint32_t>, std::set<std::uint32_t>> by_minors;
        for (const auto& [major, minors] : by_major)
          by_minors[minors].insert(major);
        for (const auto& [minors, majors] : by_minors) {
          auto term = common;
          term.insert(term.end(), ceiling.begin(), ceiling.end());
          term.push_back({"nvidia.com/gpu.compute.major", "In", numbers(majors)});
          term.push_back({"nvidia.com/gpu.compute.minor", "In", numbers(minors)});
          p.terms.push_back(std::move(term));
        }
      }
    }
  }
  for (std::size_t n = 0; n < r.nodes.size(); ++n) {
    const auto& node = r.nodes[n];
    if (!node.host.labelled) {
      p.unlabelled.push_back(node.host.name);
      continue;
    }
    const bool picked = std::any_of(p.terms.begin(), p.terms.end(),
                                    [&](const auto& t) { return selects(t, node.host.labels); });
    const bool fits = node.fits[lock].fits;
    if (picked && !fits) p.extra.push_back(node.host.name);
    if (!picked && fits) p.missing.push_back(node.host.name);
  }
  return p;
}

}  // namespace

bool selects(const std::vector<SelectorExpression>& term,
             const std::vector<std::pair<std::string, std::string>>& labels) {
  for (const auto& e : term) {
    const std::string* v = label_of(labels, e.key);
    if (v == nullptr) return false;
    if (e.op == "In") {
      if (std::find(e.values.begin(), e.values.end(), *v) == e.values.end()) return false;
    } else if (e.op == "Gt") {
      long long have = 0, than = 0;
      auto parse = [](const std::string& s, long long& out) {
        if (s.empty() || s.size() > 12) return false;
        std::size_t i = s[0] == '-' ? 1 : 0;
        if (i == s.size()) return false;
        out = 0;
        for (; i < s.size(); ++i) {
          if (s[i] < '0' || s[i] > '9') return false;
          out = out * 10 + (s[i] - '0');
        }
        if (s[0] == '-') out = -out;
        return true;
      };
      if (!parse(*v, have) || e.values.empty() || !parse(e.values[0], than) || have <= than)
        return false;
    } else {
      return false;
    }
  }
  return true;
}

std::vector<LockPlacement> place_k8s(const FleetResult& result) {
  std::vector<LockPlacement> out;
  for (std::size_t i = 0; i < result.locks.size() && i < result.facts.size(); ++i)
    out.push_back(place_one(result, i));
  return out;
}

}  // namespace gpulock::app

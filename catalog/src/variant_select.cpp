// PEP 825 variant selection with gpulock's policy (shared/data/gpu-stacks.md §7.5, §7.9). Pure.

#include "gpulock/catalog/variant_select.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpulock::catalog {
namespace {

// nvidia-variant-provider's features, in its priority order.
constexpr std::string_view kNvidiaFeatures[] = {"cuda_version_lower_bound",
                                                "cuda_version_upper_bound", "sm_arch"};

std::optional<std::uint32_t> number(std::string_view s) {
  std::uint32_t out = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return out;
}

// "86_real" -> {8.6, false}; "120_virtual" -> {12.0, true} (PTX).
std::optional<std::pair<gpu::ComputeCapability, bool>> sm_value(std::string_view v) {
  bool real = v.ends_with("_real");
  bool virt = v.ends_with("_virtual");
  if (!real && !virt) return std::nullopt;
  auto digits = v.substr(0, v.find('_'));
  auto n = number(digits);
  if (!n || *n < 10) return std::nullopt;
  return std::pair{gpu::ComputeCapability{*n / 10, *n % 10}, virt};
}

// Does a wheel whose sm_arch lists `values` run on `gpu`? SASS of the same major and a minor
// <= the GPU's, or PTX for an arch <= the GPU's (JIT).
bool sm_runs_on(const std::vector<std::string>& values, gpu::ComputeCapability gpu) {
  return std::any_of(values.begin(), values.end(), [&](const std::string& v) {
    auto sm = sm_value(v);
    if (!sm) return false;
    if (sm->second) return !(gpu < sm->first);
    return sm->first.major == gpu.major && sm->first.minor <= gpu.minor;
  });
}

using Key = std::tuple<std::size_t, std::size_t, std::size_t>;

}  // namespace

std::vector<std::string> nvidia_feature_values(std::string_view feature,
                                               const gpu::GpuContext& machine) {
  std::vector<std::string> out;
  if (machine.no_gpu || !machine.ceiling) return out;
  const auto umd = *machine.ceiling;
  if (feature == "cuda_version_lower_bound") {
    for (std::uint32_t m = umd.minor + 1; m-- > 0;)
      out.push_back(fmt::format("{}.{}", umd.major, m));
    out.push_back(fmt::format("{}", umd.major));
    for (std::uint32_t major = umd.major; major-- > 11;) {
      for (std::uint32_t m = 21; m-- > 0;)
        out.push_back(fmt::format("{}.{}", major, m));
      out.push_back(fmt::format("{}", major));
    }
  } else if (feature == "cuda_version_upper_bound") {
    for (std::uint32_t major = 15; major >= umd.major; --major) {
      for (std::uint32_t m = 21; m-- > 0;) {
        if (major == umd.major && m <= umd.minor) break;
        out.push_back(fmt::format("{}.{}", major, m));
      }
      if (major > umd.major) out.push_back(fmt::format("{}", major));
    }
  } else if (feature == "sm_arch" && !machine.archs.empty()) {
    auto top = *std::max_element(machine.archs.begin(), machine.archs.end());
    for (std::uint32_t m = top.minor + 1; m-- > 0;)
      out.push_back(fmt::format("{}{}_real", top.major, m));
    out.push_back(fmt::format("{}0_virtual", top.major));
  }
  return out;
}

std::optional<gpu::ArchList> arch_list_of_variant(const index::VariantProperties& props) {
  auto nv = props.find("nvidia");
  if (nv == props.end()) return std::nullopt;
  auto sm = nv->second.find("sm_arch");
  if (sm == nv->second.end()) return std::nullopt;
  gpu::ArchList list;
  list.source = "PEP 825 variant property nvidia :: sm_arch";
  for (const auto& value : sm->second) {
    auto parsed = sm_value(value);
    if (!parsed) continue;
    if (!parsed->second) {
      list.cubins.push_back(parsed->first);
    } else if (!list.ptx || *list.ptx < parsed->first) {
      list.ptx = parsed->first;
    }
  }
  std::sort(list.cubins.begin(), list.cubins.end());
  return list;
}

namespace {

// One release's metadata judged on one machine: each label's sort keys, or why it cannot be used.
struct Judge {
  const index::VariantsJson& metadata;
  const gpu::GpuContext& machine;
  VariantPolicy policy;

  std::vector<std::string> values_of(const std::string& ns, const std::string& feature) const {
    if (ns == "nvidia") return nvidia_feature_values(feature, machine);
    auto s = metadata.static_properties.find(ns);
    if (s == metadata.static_properties.end()) return {};
    auto f = s->second.find(feature);
    return f == s->second.end() ? std::vector<std::string>{} : f->second;
  }

  std::size_t feature_index(const std::string& ns, const std::string& feature) const {
    if (ns == "nvidia") {
      for (std::size_t i = 0; i < std::size(kNvidiaFeatures); ++i) {
        if (kNvidiaFeatures[i] == feature) return i;
      }
      return std::size(kNvidiaFeatures);
    }
    auto s = metadata.static_properties.find(ns);
    if (s == metadata.static_properties.end()) return 0;
    return static_cast<std::size_t>(std::distance(s->second.begin(), s->second.find(feature)));
  }

  // gpulock's policy: kernels for every GPU, and the build's CUDA under the ceiling.
  std::string policy_problem(const std::string& label,
                             const index::VariantProperties& props) const {
    if (policy != VariantPolicy::Gpulock) return {};
    if (auto nv = props.find("nvidia"); nv != props.end()) {
      if (auto sm = nv->second.find("sm_arch"); sm != nv->second.end()) {
        for (const auto& gpu : machine.archs) {
          if (!sm_runs_on(sm->second, gpu)) {
            return fmt::format("has no kernels for your GPU's {} (sm_arch {})", gpu.to_string(),
                               fmt::join(sm->second, ", "));
          }
        }
      }
    }
    auto cuda = gpu::cuda_of_variant_label(label);
    if (!cuda || !machine.ceiling || gpu::ceiling_allows(*machine.ceiling, *cuda, machine.compat)) {
      return {};
    }
    return machine.compat == gpu::CudaCompat::Strict
               ? fmt::format(
                     "was built with CUDA {}, above your driver's CUDA {} (strict ceiling; "
                     "--cuda-compat minor allows it)",
                     cuda->to_string(), machine.ceiling->to_string())
               : fmt::format("was built with CUDA {}, and your driver runs CUDA {}.x",
                             cuda->to_string(), machine.ceiling->major);
  }

  // PEP 825: every declared feature needs a compatible value; the keys of its best values.
  std::string keys_of(const index::VariantProperties& props, std::vector<Key>& keys) const {
    const auto& ns_order = metadata.namespace_priorities;
    for (const auto& [ns, features] : props) {
      auto nsi = static_cast<std::size_t>(
          std::distance(ns_order.begin(), std::find(ns_order.begin(), ns_order.end(), ns)));
      for (const auto& [feature, wheel_values] : features) {
        auto host = values_of(ns, feature);
        std::optional<std::size_t> best;
        for (const auto& v : wheel_values) {
          auto at = std::find(host.begin(), host.end(), v);
          auto i = static_cast<std::size_t>(at - host.begin());
          if (at != host.end() && (!best || i < *best)) best = i;
        }
        if (!best) {
          return host.empty()
                     ? fmt::format("needs {} :: {}, which this machine does not have", ns, feature)
                     : fmt::format("needs {} :: {} :: {}, which this machine does not support", ns,
                                   feature, fmt::join(wheel_values, " | "));
        }
        keys.emplace_back(nsi, feature_index(ns, feature), *best);
      }
    }
    std::sort(keys.begin(), keys.end());
    return {};
  }
};

}  // namespace

VariantSelection select_variant(const index::VariantsJson& metadata,
                                const std::vector<std::string>& labels,
                                const gpu::GpuContext& machine, VariantPolicy policy,
                                bool gpu_asked) {
  VariantSelection out;
  Judge judge{metadata, machine, policy};
  std::vector<std::pair<std::vector<Key>, std::string>> groups;
  for (const auto& label : labels) {
    if (label == "null") {
      out.null_available = metadata.variants.contains("null");
      continue;
    }
    auto it = metadata.variants.find(label);
    if (it == metadata.variants.end()) {
      out.rejected[label] = "its label is not in the variant metadata";
      continue;
    }
    std::vector<Key> keys;
    std::string why = judge.keys_of(it->second, keys);
    if (why.empty()) why = judge.policy_problem(label, it->second);
    if (!why.empty()) {
      out.rejected[label] = std::move(why);
      continue;
    }
    groups.emplace_back(std::move(keys), label);
  }
  // PEP 825: lexicographic on the sorted keys; a prefix sorts after the longer list; then label.
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    const auto& ka = a.first;
    const auto& kb = b.first;
    auto n = std::min(ka.size(), kb.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (ka[i] != kb[i]) return ka[i] < kb[i];
    }
    if (ka.size() != kb.size()) return ka.size() > kb.size();
    return a.second < b.second;
  });
  for (const auto& g : groups)
    out.order.push_back(g.second);
  if (!out.order.empty()) {
    out.chosen = out.order.front();
  } else if (out.null_available && !gpu_asked) {
    out.chosen = "null";
  } else {
    std::vector<std::string> reasons;
    for (const auto& [label, why] : out.rejected)
      reasons.push_back(fmt::format("{} {}", label, why));
    out.problem = fmt::format("no variant that fits this machine ({}){}", fmt::join(reasons, "; "),
                              out.null_available && gpu_asked
                                  ? "; the null variant (no GPU code) is not chosen silently "
                                    "when a GPU was asked for"
                                  : "");
  }
  if (!out.chosen.empty() && out.chosen != "null") {
    for (const auto& [ns, features] : metadata.variants.at(out.chosen)) {
      for (const auto& [feature, values] : features) {
        auto host = judge.values_of(ns, feature);
        for (const auto& v : values) {
          if (std::find(host.begin(), host.end(), v) != host.end())
            out.properties.push_back(fmt::format("{} :: {} :: {}", ns, feature, v));
        }
      }
    }
  }
  return out;
}

}  // namespace gpulock::catalog

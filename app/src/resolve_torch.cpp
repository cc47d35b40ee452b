// The torch-family sources of a resolve (issue 16 item 1): the variant indexes --torch-backend
// and --nightly name, the check that they have the torch-family requirements before solving,
// and the choice of one nightly build date for the whole family.

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>

#include "gpulock/core/civil_date.h"
#include "gpulock/core/name.h"
#include "gpulock/core/text.h"
#include "gpulock/index/page.h"
#include "gpulock/index/url.h"

#include "resolve_steps.h"

namespace gpulock::app::detail {
namespace {

using core::ErrorCode;

// CUDA variants PyTorch publishes indexes for (shared/data: torch_releases, nightly matrix).
constexpr std::array<std::string_view, 10> kKnownVariants = {
    "cu118", "cu121", "cu124", "cu126", "cu128", "cu129", "cu130", "cu132", "cu134", "cu135"};

// --nightly: the latest build date every requested dated torch-family member has, not after DATE.
core::Result<std::optional<std::string>> choose_nightly_date(
    index::IndexClient& client, const catalog::ProviderConfig& config,
    const std::vector<resolver::Dependency>& deps, const NightlyDate& nightly,
    std::vector<std::string>& members) {
  // Dates compared as build tags (YYYYMMDD: text order is date order).
  std::optional<std::string> cap;
  if (!nightly.is_latest()) cap = nightly.build_tag();
  if (config.exclude_newer) {
    // A nightly counts as published at midnight UTC of its build date (as the provider's
    // --exclude-newer filter has it), so the cutoff's own day is the last date allowed.
    auto day = core::civil_from_micros(*config.exclude_newer).date;
    std::string last = NightlyDate::on(day).build_tag();
    if (!cap || last < *cap) cap = last;
  }
  core::TagRanker ranker(config.target.supported);
  std::optional<std::set<std::string>> common;
  for (const auto& d : deps) {
    if (!gpu::is_torch_family(d.name) ||
        std::find(members.begin(), members.end(), d.name) != members.end())
      continue;
    // Variants above the driver's ceiling are there for explanations only: their dates do not
    // count.
    for (const auto& s : config.torch) {
      if (!s.above_ceiling) client.prefetch_project(s.source, d.name);
    }
    std::set<std::string> dates;
    bool dated = false;  // has nightly builds at all (pytorch-triton has none: it follows pins)
    for (const auto& s : config.torch) {
      if (s.above_ceiling) continue;
      auto page = client.fetch_project(s.source, d.name);
      if (!page) return std::unexpected(page.error());
      if (!(*page)->found) continue;
      for (const auto& f : (*page)->files) {
        if (!f.is_wheel() || !ranker.rank(f.tags())) continue;
        const auto& v = f.version();
        auto built =
            v.dev() ? NightlyDate::from_build_tag(fmt::format("{}", *v.dev())) : std::nullopt;
        if (!built) continue;
        std::string date = built->build_tag();
        dated = true;
        if (cap && date > *cap) continue;
        dates.insert(date);
      }
    }
    if (!dated) continue;  // an undated member (pytorch-triton) follows its pins
    members.push_back(d.name);
    if (!common) {
      common = std::move(dates);
    } else {
      std::set<std::string> both;
      std::set_intersection(common->begin(), common->end(), dates.begin(), dates.end(),
                            std::inserter(both, both.end()));
      common = std::move(both);
    }
  }
  if (!common) return std::optional<std::string>{};
  if (common->empty()) return std::optional<std::string>{std::string()};
  return std::optional<std::string>{*common->rbegin()};
}

// The variants a PyTorch index base has, from its all-variant page `<base>/torch/` (what
// download.pytorch.org serves), else by probing the known variants' torch pages. "cpu" and
// "cuXYZ" names, CUDA ones in numeric order, cpu first.
std::vector<std::string> torch_index_variants(index::IndexClient& client, const std::string& base,
                                              bool nightly) {
  std::set<std::string> found;
  auto add_label = [&](const core::Version& v) {
    auto label = gpu::classify_build(v);
    if (label.kind == gpu::BuildKind::Cuda && label.cuda)
      found.insert(gpu::variant_name(*label.cuda));
    if (label.kind == gpu::BuildKind::Cpu) found.insert("cpu");
  };
  std::string root = base + (nightly ? "/nightly" : "");
  auto all = index::IndexSource::simple(root + "/", "pytorch-all");
  all.forbidden_means_missing = true;
  auto page = client.fetch_project(all, "torch");
  if (page && (*page)->found) {
    for (const auto& f : (*page)->files)
      add_label(f.version());
    for (const auto& o : (*page)->omitted)
      add_label(o.version);
  } else {
    std::vector<index::IndexSource> probes;
    for (auto v : kKnownVariants)
      probes.push_back(index::IndexSource::simple(fmt::format("{}/{}/", root, v), std::string(v)));
    probes.push_back(index::IndexSource::simple(root + "/cpu/", "cpu"));
    for (auto& s : probes) {
      s.forbidden_means_missing = true;
      client.prefetch_project(s, "torch");
    }
    for (const auto& s : probes) {
      auto p = client.fetch_project(s, "torch");
      if (p && (*p)->found && !((*p)->files.empty() && (*p)->omitted.empty())) found.insert(s.name);
    }
  }
  std::vector<std::string> out(found.begin(), found.end());
  auto cuda_of = [](const std::string& v) -> std::int64_t {
    if (v == "cpu") return -1;
    auto l = gpu::classify_build(*core::Version::parse("0+" + v));
    return l.cuda ? static_cast<std::int64_t>(l.cuda->major * 100 + l.cuda->minor) : -2;
  };
  std::sort(out.begin(), out.end(),
            [&](const auto& a, const auto& b) { return cuda_of(a) < cuda_of(b); });
  return out;
}

// "cpu, cu118 (driver >= 520.61.05), cu126 (driver >= 560.28.03)": each variant and what it needs.
std::string describe_variants(const std::vector<std::string>& variants, gpu::CudaCompat compat) {
  std::string out;
  for (const auto& v : variants) {
    if (!out.empty()) out += ", ";
    out += v;
    if (v == "cpu") continue;
    auto cuda = gpu::classify_build(*core::Version::parse("0+" + v)).cuda;
    if (!cuda) continue;
    if (auto md = gpu::min_driver_for_cuda(*cuda, compat))
      out += fmt::format(" (driver >= {})", md->to_string());
  }
  return out;
}

// Issue 16 item 1: when the user asked for a torch source (--torch-backend, --nightly), the torch
// family never comes from anywhere else. Before solving, the torch-family requirements' pages
// are looked up on the torch sources: a requested variant without them is an error (exit 4)
// naming the URL and the variants the index has; in auto mode, no usable variant at all is an
// explained no-solution that names the variants and the driver each needs.
struct TorchSourceProblem {
  std::optional<core::Error> error;  ///< an explicitly requested source is missing
  std::vector<std::string> lines;    ///< an explanation (no solution)
  std::vector<std::string> hints;
  bool cpu_variant =
      false;  ///< the index has CPU builds (the workflow tries `--torch-backend cpu`)
};

std::optional<TorchSourceProblem> check_torch_sources(
    index::IndexClient& client, const ResolveRequest& request,
    const std::vector<catalog::SourceSpec>& torch,
    const std::vector<resolver::Dependency>& requirements, const gpu::GpuContext& gpu) {
  std::vector<std::string> wanted;
  for (const auto& d : requirements) {
    if (gpu::is_torch_family(d.name) &&
        std::find(wanted.begin(), wanted.end(), d.name) == wanted.end()) {
      wanted.push_back(d.name);
    }
  }
  if (wanted.empty()) return std::nullopt;
  bool nightly = request.nightly.has_value();
  const TorchBackend backend = request.torch_backend.value_or(TorchBackend::automatic());
  bool explicit_variant = backend.kind() != TorchBackend::Kind::Auto;
  std::string base =
      std::string(core::trim_slash(index::url_from_user_input(request.torch_index_base)));
  std::string where = index::redact_url(base + (nightly ? "/nightly/" : "/"));
  std::vector<const catalog::SourceSpec*> usable;  // within the ceiling
  for (const auto& s : torch) {
    if (s.above_ceiling) continue;
    usable.push_back(&s);
    for (const auto& name : wanted)
      client.prefetch_project(s.source, name);
    // The provider reads the root listing before any other name's page (first-index): in the
    // same round trip as the torch pages (issue 27).
    client.prefetch_project_list(s.source);
  }
  // Which wanted names no usable torch source has.
  std::vector<std::string> missing;
  for (const auto& name : wanted) {
    bool found = false;
    for (const auto* sp : usable) {
      const auto& s = *sp;
      auto page = client.fetch_project(s.source, name);
      if (!page) {
        TorchSourceProblem p;
        p.error = page.error();
        return p;
      }
      if ((*page)->found && !((*page)->files.empty() && (*page)->omitted.empty())) found = true;
    }
    if (!found) missing.push_back(name);
  }
  if (missing.empty()) return std::nullopt;
  auto variants = torch_index_variants(client, base, nightly);
  std::string listing = variants.empty() ? fmt::format(
                                               "no PyTorch variant index was found under {} (is "
                                               "--torch-index-base right?)",
                                               where)
                                         : fmt::format("variants on {}: {}", where,
                                                       describe_variants(variants, gpu.compat));
  bool torch_missing = std::find(missing.begin(), missing.end(), wanted.front()) != missing.end();
  TorchSourceProblem p;
  if ((explicit_variant && torch.size() == 1 && torch_missing) || variants.empty()) {
    // A variant the user named that does not exist (a 403/404 for its pages), or no PyTorch
    // index at all under the base (a typo in --torch-index-base).
    std::string url = index::redact_url(
        torch.size() == 1 ? torch.front().source.url + wanted.front() + "/" : where);
    if (variants.empty() && torch.size() != 1) {
      p.error = core::make_error(
          ErrorCode::NotFound,
          "no PyTorch variant index was found here (is --torch-index-base right?)", url);
      return p;
    }
    p.error = core::make_error(
                  ErrorCode::NotFound,
                  fmt::format("not found: the PyTorch index has no {}{} for --torch-backend {}",
                              nightly ? "nightly " : "", wanted.front(), backend.to_string()),
                  url)
                  .with_hint(listing);
    return p;
  }
  if (usable.empty() || torch_missing) {
    // auto: no variant within the driver's ceiling has the family (or none exists at all).
    std::string who = gpu.driver ? fmt::format("your driver {}", gpu.driver->to_string())
                                 : std::string("your driver");
    std::string ceiling =
        gpu.ceiling ? fmt::format(" (CUDA <= {})", gpu.ceiling->to_string()) : std::string();
    if (gpu.no_gpu) {
      p.lines.push_back(
          fmt::format("There is no {}CPU variant of {} on {}, and --driver none means no GPU.",
                      nightly ? "nightly " : "", wanted.front(), where));
    } else {
      p.lines.push_back(fmt::format("No {}variant of {} on {} runs on {}{}.",
                                    nightly ? "nightly " : "", wanted.front(), where, who,
                                    ceiling));
    }
    p.lines.push_back(fmt::format(
        "The index has: {}.",
        variants.empty() ? std::string("no variants") : describe_variants(variants, gpu.compat)));
    p.cpu_variant = std::find(variants.begin(), variants.end(), "cpu") != variants.end();
    if (!variants.empty() && gpu.ceiling)
      p.hints.push_back("a newer driver runs a newer variant (see the list above)");
    return p;
  }
  // A family member the torch sources lack (torchaudio nightlies, a variant without torchaudio).
  std::string names;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  }
  std::string used;
  for (const auto* s : usable) {
    const catalog::Variant* v = s->variant();
    used += (used.empty() ? "" : ", ") + (v == nullptr ? s->source.name
                                          : v->cuda    ? gpu::variant_name(*v->cuda)
                                                       : std::string("cpu"));
  }
  p.lines.push_back(fmt::format(
      "There are no {}{} builds on {} for {} (a torch-family package is taken only from the "
      "PyTorch index you asked for).",
      nightly ? "nightly " : "", names, where, used));
  p.hints.push_back(listing);
  return p;
}

}  // namespace

// The torch-family variant sources for --torch-backend / --nightly.
core::Result<std::vector<catalog::SourceSpec>> torch_sources(const ResolveRequest& request,
                                                             const gpu::GpuContext& gpu) {
  std::vector<catalog::SourceSpec> out;
  bool nightly = request.nightly.has_value();
  const TorchBackend backend = request.torch_backend.value_or(TorchBackend::automatic());
  std::string base =
      std::string(core::trim_slash(index::url_from_user_input(request.torch_index_base))) +
      (nightly ? "/nightly" : "");
  auto add = [&](const TorchBackend& variant) {
    const std::string name = variant.to_string();
    catalog::SourceSpec s = make_source(
        fmt::format("{}/{}/", base, name),
        fmt::format("pytorch-{}{}", nightly ? "nightly-" : "", name), catalog::Role::Family);
    s.source.forbidden_means_missing = true;
    // The cpu variant has no CUDA (TorchBackend::cuda_version is nullopt for it).
    s.type.kind = catalog::Variant{variant.cuda_version(), nightly};
    out.push_back(std::move(s));
  };
  if (backend.kind() == TorchBackend::Kind::Cpu) {
    add(backend);
  } else if (backend.kind() == TorchBackend::Kind::Auto) {
    if (gpu.no_gpu) {
      add(TorchBackend::cpu());
    } else if (gpu.ceiling) {
      // Newest first; ranking inside the merged source decides anyway. Variants above the
      // ceiling stay visible to the explanation (issue 16 item 6): their builds are candidates
      // the provider marks unavailable ("needs CUDA 12.6 and your driver ... <= 12.4").
      for (auto it = kKnownVariants.rbegin(); it != kKnownVariants.rend(); ++it) {
        auto variant = TorchBackend::parse(*it);
        if (!variant) continue;
        add(*variant);
        out.back().above_ceiling =
            !gpu::ceiling_allows(*gpu.ceiling, *variant->cuda_version(), gpu.compat);
      }
    }
  } else {
    add(backend);  // one cuXYZ variant
  }
  return out;
}

core::Result<bool> torch_sources_fail(index::IndexClient& client, const ResolveRequest& request,
                                      const ResolvePlan& plan, ResolveResult& result) {
  auto problem =
      check_torch_sources(client, request, plan.config.torch, plan.requirements, plan.gpu.context);
  if (!problem) return false;
  if (problem->error) return std::unexpected(*problem->error);
  result.solved = false;
  result.explanation.lines = std::move(problem->lines);
  result.explanation.hints = std::move(problem->hints);
  lead_with_first_line(result.explanation);
  if (problem->cpu_variant) {
    if (auto cpu = try_command(request, plan.run, {{"--torch-backend", "cpu"}},
                               focus_of(plan.requirements), &client)) {
      result.explanation.hints.insert(result.explanation.hints.begin(),
                                      fmt::format("for CPU builds: {}", tried_text(*cpu)));
    }
  }
  return true;
}

core::Result<bool> choose_nightly(index::IndexClient& client, const ResolveRequest& request,
                                  ResolvePlan& plan, ResolveResult& result) {
  std::vector<std::string> members;
  auto date =
      choose_nightly_date(client, plan.config, plan.requirements, *request.nightly, members);
  if (!date) return std::unexpected(date.error());
  if (*date && (*date)->empty()) {
    result.solved = false;
    std::string who;
    for (std::size_t i = 0; i < members.size(); ++i) {
      who += (i == 0 ? "" : i + 1 == members.size() ? " and " : ", ") + members[i];
    }
    result.explanation.lines.push_back(
        fmt::format("No nightly build date {}has all of {} for {}-{}.",
                    request.nightly->is_latest()
                        ? ""
                        : fmt::format("on or before {} ", request.nightly->to_string()),
                    who, result.target.tags.interpreter_tag(), result.target.platform));
    result.explanation.hints.push_back(
        "try a later --nightly date, or fewer torch-family packages");
    lead_with_first_line(result.explanation);
    return true;
  }
  if (*date) plan.config.nightly_date = NightlyDate::from_build_tag(**date);
  return false;
}

}  // namespace gpulock::app::detail

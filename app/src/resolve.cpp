#include "gpulock/app/resolve.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "gpulock/app/command_line.h"
#include "gpulock/app/gpu_policy.h"
#include "gpulock/app/machine.h"
#include "gpulock/app/project_file.h"
#include "gpulock/app/requirements_file.h"
#include "gpulock/app/version.h"
#include "gpulock/core/civil_date.h"
#include "gpulock/core/name.h"
#include "gpulock/core/sha256.h"
#include "gpulock/core/text.h"
#include "gpulock/index/page.h"
#include "gpulock/index/url.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/probe/machine.h"

#include "resolve_inputs.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;

// CUDA variants PyTorch publishes indexes for (shared/data: torch_releases, nightly matrix).
constexpr std::array<std::string_view, 10> kKnownVariants = {"cu118", "cu121", "cu124", "cu126", "cu128",
                                                             "cu129", "cu130", "cu132", "cu134", "cu135"};

std::int64_t clock_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::unexpected<core::Error> usage(std::string message, std::vector<std::string> hints = {}) {
  core::Error e;
  e.code = ErrorCode::Usage;
  e.message = std::move(message);
  e.hints = std::move(hints);
  return std::unexpected(e);
}

lock::TomlDatetime to_toml_datetime(std::int64_t micros) {
  const core::CivilTime t = core::civil_from_micros(micros);
  lock::TomlDatetime dt;
  dt.date = {static_cast<std::int32_t>(t.date.year), static_cast<std::uint8_t>(t.date.month),
             static_cast<std::uint8_t>(t.date.day)};
  dt.time = {static_cast<std::uint8_t>(t.hour), static_cast<std::uint8_t>(t.minute),
             static_cast<std::uint8_t>(t.second), t.micros * 1000};
  dt.offset_minutes = 0;
  return dt;
}

// The lock file's directory, for recording input paths relative to it.
fs::path lock_dir_of(const std::string& output) {
  std::error_code ec;
  if (output == "-") {
    auto cwd = fs::current_path(ec);
    return ec ? fs::path(".") : cwd;
  }
  fs::path p = fs::absolute(output, ec);
  return ec ? fs::path(output).parent_path() : p.parent_path();
}

// Dependencies for the solver from requirement entries, with markers applied for the target.
std::vector<resolver::Dependency> to_dependencies(const std::vector<RequirementEntry>& entries,
                                                  const core::Environment& env) {
  std::vector<resolver::Dependency> out;
  for (const auto& e : entries) {
    const auto& r = e.requirement;
    if (!r.marker.empty() && !r.marker.matches(env, "")) continue;
    resolver::Dependency d;
    d.name = core::normalize_name(r.name);
    for (const auto& x : r.extras) d.extras.push_back(core::normalize_extra(x));
    d.specifier = r.specifier;
    out.push_back(std::move(d));
  }
  return out;
}

struct GpuSetup {
  GpuContext context;
  std::optional<probe::MachineInfo> machine;
};

core::Result<GpuSetup> detect_gpu(const ResolveRequest& request) {
  GpuSetup setup;
  probe::OverrideFlags flags;
  flags.driver = request.driver == "auto" ? "" : request.driver;
  flags.cuda_ceiling = request.cuda_ceiling;
  flags.gpu_arch = request.gpu_arch;
  auto info = probe_machine(flags);
  if (!info) return std::unexpected(info.error());
  auto& ctx = setup.context;
  ctx.no_gpu = info->status == probe::MachineStatus::NoGpuOverride;
  if (info->driver) ctx.driver = info->driver->value;
  if (info->cuda_ceiling && !ctx.no_gpu) {
    ctx.ceiling = info->cuda_ceiling->value;
    ctx.method = std::string(probe::method_name(info->cuda_ceiling->method));
  }
  if (info->gpu_archs) ctx.archs = info->gpu_archs->value;
  if (request.cuda_compat == "minor") {
    ctx.compat = probe::CudaCompat::Minor;
  } else if (request.cuda_compat != "strict") {
    return usage(fmt::format("invalid --cuda-compat {}: expected strict or minor", core::quote_for_message(request.cuda_compat)));
  }
  setup.machine = std::move(*info);
  return setup;
}

SourceSpec make_source(std::string_view url, std::string name, std::string role) {
  SourceSpec s;
  s.source = index::IndexSource::simple(url, std::move(name));
  s.role = std::move(role);
  return s;
}

// The torch-family variant sources for --torch-backend / --nightly.
core::Result<std::vector<SourceSpec>> torch_sources(const ResolveRequest& request, const GpuContext& gpu) {
  std::vector<SourceSpec> out;
  bool nightly = !request.nightly.empty();
  std::string backend = request.torch_backend.empty() ? "auto" : request.torch_backend;
  // Checked before any text is parsed as a variant (issue 21: 'cu!' dereferenced a failed parse).
  if (auto e = torch_backend_error(backend); !e.empty()) return usage(e);
  std::string base = std::string(core::trim_slash(index::url_from_user_input(request.torch_index_base))) + (nightly ? "/nightly" : "");
  auto add = [&](std::string_view variant) {
    SourceSpec s = make_source(fmt::format("{}/{}/", base, variant), fmt::format("pytorch-{}{}", nightly ? "nightly-" : "", variant), "torch");
    s.source.forbidden_means_missing = true;
    s.nightly = nightly;
    if (variant == "cpu") {
      s.cpu_variant = true;
    } else {
      s.variant = classify_build(*core::Version::parse(fmt::format("0+{}", variant))).cuda;
    }
    out.push_back(std::move(s));
  };
  if (backend == "cpu") {
    add("cpu");
  } else if (backend == "auto") {
    if (gpu.no_gpu) {
      add("cpu");
    } else if (gpu.ceiling) {
      // Newest first; ranking inside the merged source decides anyway. Variants above the
      // ceiling stay visible to the explanation (issue 16 item 6): their builds are candidates
      // the provider marks unavailable ("needs CUDA 12.6 and your driver ... <= 12.4").
      for (auto it = kKnownVariants.rbegin(); it != kKnownVariants.rend(); ++it) {
        auto cuda = classify_build(*core::Version::parse(fmt::format("0+{}", *it))).cuda;
        if (!cuda) continue;
        add(*it);
        out.back().above_ceiling = !probe::ceiling_allows(*gpu.ceiling, *cuda, gpu.compat);
      }
    }
  } else {
    add(backend);  // cuXYZ, checked above
  }
  return out;
}

bool mentions_cuda_linked(const std::vector<resolver::Dependency>& deps) {
  return std::any_of(deps.begin(), deps.end(), [](const resolver::Dependency& d) { return is_cuda_linked(d.name); });
}

// --nightly: the latest build date every requested dated torch-family member has, not after DATE.
core::Result<std::optional<std::string>> choose_nightly_date(index::IndexClient& client, const ProviderConfig& config,
                                                             const std::vector<resolver::Dependency>& deps,
                                                             std::string_view nightly, std::vector<std::string>& members) {
  std::optional<std::string> cap;
  if (nightly != "latest") {
    if (auto why = nightly_value_error(nightly); !why.empty()) return usage(fmt::format("invalid --nightly: {}", why));
    cap = fmt::format("{}{}{}", nightly.substr(0, 4), nightly.substr(5, 2), nightly.substr(8, 2));
  }
  if (config.exclude_newer) {
    // A nightly counts as published at midnight UTC of its build date (as the provider's
    // --exclude-newer filter has it), so the cutoff's own day is the last date allowed.
    auto day = to_toml_datetime(*config.exclude_newer).date;
    std::string last = fmt::format("{:04}{:02}{:02}", day.year, static_cast<unsigned>(day.month), static_cast<unsigned>(day.day));
    if (!cap || last < *cap) cap = last;
  }
  core::TagRanker ranker(config.target.supported);
  std::optional<std::set<std::string>> common;
  for (const auto& d : deps) {
    if (!is_torch_family(d.name) || std::find(members.begin(), members.end(), d.name) != members.end()) continue;
    // Variants above the driver's ceiling are there for explanations only: their dates do not count.
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
        if (!v.dev() || *v.dev() < 20000101 || *v.dev() > 29991231) continue;
        std::string date = fmt::format("{}", *v.dev());
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
      std::set_intersection(common->begin(), common->end(), dates.begin(), dates.end(), std::inserter(both, both.end()));
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
std::vector<std::string> torch_index_variants(index::IndexClient& client, const std::string& base, bool nightly) {
  std::set<std::string> found;
  auto add_label = [&](const core::Version& v) {
    auto label = classify_build(v);
    if (label.kind == BuildKind::Cuda && label.cuda) found.insert(variant_name(*label.cuda));
    if (label.kind == BuildKind::Cpu) found.insert("cpu");
  };
  std::string root = base + (nightly ? "/nightly" : "");
  auto all = index::IndexSource::simple(root + "/", "pytorch-all");
  all.forbidden_means_missing = true;
  auto page = client.fetch_project(all, "torch");
  if (page && (*page)->found) {
    for (const auto& f : (*page)->files) add_label(f.version());
    for (const auto& o : (*page)->omitted) add_label(o.version);
  } else {
    std::vector<index::IndexSource> probes;
    for (auto v : kKnownVariants) probes.push_back(index::IndexSource::simple(fmt::format("{}/{}/", root, v), std::string(v)));
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
    auto l = classify_build(*core::Version::parse("0+" + v));
    return l.cuda ? static_cast<std::int64_t>(l.cuda->major * 100 + l.cuda->minor) : -2;
  };
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return cuda_of(a) < cuda_of(b); });
  return out;
}

// "cpu, cu118 (driver >= 520.61.05), cu126 (driver >= 560.28.03)": each variant and what it needs.
std::string describe_variants(const std::vector<std::string>& variants, probe::CudaCompat compat) {
  std::string out;
  for (const auto& v : variants) {
    if (!out.empty()) out += ", ";
    out += v;
    if (v == "cpu") continue;
    auto cuda = classify_build(*core::Version::parse("0+" + v)).cuda;
    if (!cuda) continue;
    if (auto md = probe::min_driver_for_cuda(*cuda, compat)) out += fmt::format(" (driver >= {})", md->to_string());
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
  bool cpu_variant = false;  ///< the index has CPU builds (the workflow tries `--torch-backend cpu`)
};

std::optional<TorchSourceProblem> check_torch_sources(index::IndexClient& client, const ResolveRequest& request,
                                                      const std::vector<SourceSpec>& torch,
                                                      const std::vector<resolver::Dependency>& requirements,
                                                      const GpuContext& gpu) {
  std::vector<std::string> wanted;
  for (const auto& d : requirements) {
    if (is_torch_family(d.name) && std::find(wanted.begin(), wanted.end(), d.name) == wanted.end()) {
      wanted.push_back(d.name);
    }
  }
  if (wanted.empty()) return std::nullopt;
  bool nightly = !request.nightly.empty();
  std::string backend = request.torch_backend.empty() ? "auto" : request.torch_backend;
  bool explicit_variant = backend != "auto";
  std::string base = std::string(core::trim_slash(index::url_from_user_input(request.torch_index_base)));
  std::string where = index::redact_url(base + (nightly ? "/nightly/" : "/"));
  std::vector<const SourceSpec*> usable;  // within the ceiling
  for (const auto& s : torch) {
    if (s.above_ceiling) continue;
    usable.push_back(&s);
    for (const auto& name : wanted) client.prefetch_project(s.source, name);
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
  std::string listing = variants.empty() ? fmt::format("no PyTorch variant index was found under {} (is "
                                                       "--torch-index-base right?)",
                                                       where)
                                         : fmt::format("variants on {}: {}", where, describe_variants(variants, gpu.compat));
  bool torch_missing = std::find(missing.begin(), missing.end(), wanted.front()) != missing.end();
  TorchSourceProblem p;
  if ((explicit_variant && torch.size() == 1 && torch_missing) || variants.empty()) {
    // A variant the user named that does not exist (a 403/404 for its pages), or no PyTorch
    // index at all under the base (a typo in --torch-index-base).
    core::Error e;
    e.code = ErrorCode::NotFound;
    std::string url = index::redact_url(torch.size() == 1 ? torch.front().source.url + wanted.front() + "/" : where);
    if (variants.empty() && torch.size() != 1) {
      e.message = "no PyTorch variant index was found here (is --torch-index-base right?)";
      e.where = url;
      p.error = std::move(e);
      return p;
    }
    e.message = fmt::format("not found: the PyTorch index has no {}{} for --torch-backend {}", nightly ? "nightly " : "",
                            wanted.front(), backend);
    e.where = url;
    e.hints.push_back(listing);
    p.error = std::move(e);
    return p;
  }
  if (usable.empty() || torch_missing) {
    // auto: no variant within the driver's ceiling has the family (or none exists at all).
    std::string who = gpu.driver ? fmt::format("your driver {}", gpu.driver->to_string()) : std::string("your driver");
    std::string ceiling = gpu.ceiling ? fmt::format(" (CUDA <= {})", gpu.ceiling->to_string()) : std::string();
    if (gpu.no_gpu) {
      p.lines.push_back(fmt::format("There is no {}CPU variant of {} on {}, and --driver none means no GPU.",
                                    nightly ? "nightly " : "", wanted.front(), where));
    } else {
      p.lines.push_back(fmt::format("No {}variant of {} on {} runs on {}{}.", nightly ? "nightly " : "", wanted.front(),
                                    where, who, ceiling));
    }
    p.lines.push_back(fmt::format("The index has: {}.", variants.empty() ? std::string("no variants") :
                                                          describe_variants(variants, gpu.compat)));
    p.cpu_variant = std::find(variants.begin(), variants.end(), "cpu") != variants.end();
    if (!variants.empty() && gpu.ceiling) p.hints.push_back("a newer driver runs a newer variant (see the list above)");
    return p;
  }
  // A family member the torch sources lack (torchaudio nightlies, a variant without torchaudio).
  std::string names;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  }
  std::string used;
  for (const auto* s : usable) {
    used += (used.empty() ? "" : ", ") +
            (s->cpu_variant ? std::string("cpu") : s->variant ? variant_name(*s->variant) : s->source.name);
  }
  p.lines.push_back(fmt::format("There are no {}{} builds on {} for {} (a torch-family package is taken only from the "
                                "PyTorch index you asked for).",
                                nightly ? "nightly " : "", names, where, used));
  p.hints.push_back(listing);
  return p;
}

// Does the existing lock's [tool.gpulock.gpu] describe the machine being resolved for?
bool same_gpu_facts(const lock::Lock& old, const GpuContext& ctx) {
  const auto* g = old.gpulock ? (old.gpulock->gpu ? &*old.gpulock->gpu : nullptr) : nullptr;
  bool now_gpu = ctx.ceiling.has_value() || ctx.no_gpu;
  if (g == nullptr) return !now_gpu;
  std::string driver = ctx.no_gpu ? "none" : ctx.driver ? ctx.driver->to_string() : "";
  std::string ceiling = ctx.ceiling ? ctx.ceiling->to_string() : "";
  std::string compat = ctx.compat == probe::CudaCompat::Minor ? "minor" : "strict";
  std::vector<std::string> archs;
  for (const auto& a : ctx.archs) archs.push_back(a.to_string());
  return g->driver.value_or("") == driver && g->cuda_ceiling.value_or("") == ceiling &&
         g->compat.value_or("strict") == compat && g->archs == archs;
}

// A package whose build depends on the machine's CUDA: the torch family, nvidia-* and cuda-*.
bool is_cuda_bound(std::string_view name, const core::Version& v) {
  return is_torch_family(name) || cuda_need_of_package(name, v).has_value() || classify_build(v).kind != BuildKind::Unlabeled;
}

struct UnknownProjects {
  std::vector<std::string> lines;  ///< "'x' is not on URL."
  std::vector<std::string> hints;  ///< close names that exist
};

// Issue 16 item 9: a requirement whose project no index has reads as "'x' is not on URL", with
// close names that exist; an index that answered 404 for every project asked (two or more) is
// an error naming it (exit 4): its URL is wrong.
core::Result<UnknownProjects> unknown_projects(index::IndexClient& client, const IndexProvider& provider,
                                               const std::vector<resolver::Dependency>& requirements) {
  UnknownProjects out;
  auto& lines = out.lines;
  auto missing = provider.projects_not_found();
  if (missing.empty()) return out;
  if (!provider.any_project_found() && missing.size() >= 2) {
    std::string where;
    for (const auto* s : provider.sources_for(missing.front())) {
      where += (where.empty() ? "" : ", ") + index::redact_url(s->source.url);
    }
    std::string names;
    for (std::size_t i = 0; i < missing.size() && i < 3; ++i) names += (i == 0 ? "" : ", ") + missing[i];
    core::Error e;
    e.code = ErrorCode::NotFound;
    e.where = where;
    e.message = fmt::format("none of the projects asked for is here ({}{}): is the index URL right?", names,
                            missing.size() > 3 ? ", ..." : "");
    return std::unexpected(e);
  }
  for (const auto& d : requirements) {
    if (std::find(missing.begin(), missing.end(), d.name) == missing.end()) continue;
    std::string where;
    auto sources = provider.sources_for(d.name);
    for (const auto* s : sources) where += (where.empty() ? "" : ", ") + index::redact_url(s->source.url);
    lines.push_back(fmt::format("'{}' is not on {}.", d.name, where.empty() ? std::string("any index") : where));
    // Close names: the name without separators, and torch-family names it is close to.
    std::string squashed;
    for (char c : d.name) {
      if (c != '-') squashed += c;
    }
    std::vector<std::string> candidates;
    if (squashed != d.name) candidates.push_back(squashed);
    for (const auto& s : sources) {
      for (const auto& c : candidates) client.prefetch_project(s->source, c);
    }
    for (const auto& c : candidates) {
      for (const auto* s : provider.sources_for(c)) {
        auto page = client.fetch_project(s->source, c);
        if (page && (*page)->found) {
          out.hints.push_back(fmt::format("did you mean '{}'?", c));
          break;
        }
      }
    }
  }
  return out;
}

// One flag of a suggested command, applied to a request (the flags hints suggest).
void apply_edit(ResolveRequest& r, const FlagEdit& e) {
  if (e.flag == "--torch-backend") {
    r.torch_backend = e.value;
  } else if (e.flag == "--driver") {
    r.driver = e.value;
  } else if (e.flag == "--cuda-compat") {
    r.cuda_compat = e.value;
  } else if (e.flag == "--index") {
    r.named_indexes.push_back(e.value);
  } else if (e.flag == "--index-for") {
    r.index_for.push_back(e.value);
  } else if (e.flag == "--upgrade-package") {
    r.upgrade_packages.push_back(e.value);
  }
}

// A command a hint would suggest, tried first (issue 16 item 8: hints that work when followed):
// this run with `edits`, resolved dry. When it solves: the complete command and what it locks
// of the first of `focus` (normalized names) the lock has ("torch 2.12.1+cpu").
struct TriedCommand {
  std::string command;
  std::string locks;
};

std::optional<TriedCommand> try_command(const ResolveRequest& request, const std::vector<FlagEdit>& edits,
                                        const std::vector<std::string>& focus) {
  if (request.dry_run) return std::nullopt;
  ResolveRequest r = request;
  r.dry_run = true;
  for (const auto& e : edits) apply_edit(r, e);
  auto tried = resolve(r);
  if (!tried || !tried->solved) return std::nullopt;
  TriedCommand t{command_with(request.command_line, edits), {}};
  for (const auto& name : focus) {
    auto p = std::find_if(tried->lock.packages.begin(), tried->lock.packages.end(),
                          [&](const lock::Package& q) { return q.name == name && q.version; });
    if (p == tried->lock.packages.end()) continue;
    t.locks = fmt::format("{} {}", p->name, *p->version);
    break;
  }
  return t;
}

// "`COMMAND` locks torch X" (or "`COMMAND` finds a solution").
// An explanation gpulock wrote itself (no PubGrub proof, or a fact that comes before one) leads
// with its first sentence: that sentence becomes the headline.
void lead_with_first_line(resolver::Report& r) {
  if (r.lines.empty()) return;
  std::string first = std::move(r.lines.front());
  r.lines.erase(r.lines.begin());
  if (!r.brief.empty() && r.brief.front() == first) {
    r.brief.erase(r.brief.begin());
  } else if (r.brief.empty()) {
    r.brief = r.lines;
  }
  if (first.ends_with('.')) first.pop_back();
  if (first.size() > 1 && first[0] >= 'A' && first[0] <= 'Z' && !(first[1] >= 'A' && first[1] <= 'Z')) {
    first[0] = core::ascii_lower(first[0]);
  }
  r.headline = std::move(first);
}

std::string tried_text(const TriedCommand& t) {
  return t.locks.empty() ? fmt::format("`{}` finds a solution", t.command)
                         : fmt::format("`{}` locks {}", t.command, t.locks);
}

// What a tried command is judged by: torch, else the requirements' names in order.
std::vector<std::string> focus_of(const std::vector<resolver::Dependency>& requirements) {
  std::vector<std::string> out{"torch"};
  for (const auto& d : requirements) out.push_back(d.name);
  return out;
}

std::string dashed_date(std::string_view yyyymmdd) {
  return fmt::format("{}-{}-{}", yyyymmdd.substr(0, 4), yyyymmdd.substr(4, 2), yyyymmdd.substr(6, 2));
}

}  // namespace

std::string torch_backend_error(std::string_view value) {
  if (value.empty() || value == "auto" || value == "cpu") return {};
  bool digits = value.size() >= 5 && value.size() <= 6 && value.starts_with("cu") &&
                std::all_of(value.begin() + 2, value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) {
    auto v = core::Version::parse(fmt::format("0+{}", value));
    if (v && classify_build(*v).kind == BuildKind::Cuda) return {};
  }
  return fmt::format("invalid --torch-backend {}: expected auto, cpu or cuXYZ (e.g. cu124)", core::quote_for_message(value));
}

std::string nightly_value_error(std::string_view value) {
  if (value == "latest") return {};
  auto digits = [&](std::size_t at, std::size_t n) {
    for (std::size_t i = at; i < at + n; ++i) {
      if (value[i] < '0' || value[i] > '9') return false;
    }
    return true;
  };
  if (value.size() == 10 && value[4] == '-' && value[7] == '-' && digits(0, 4) && digits(5, 2) && digits(8, 2)) {
    int month = (value[5] - '0') * 10 + (value[6] - '0');
    int day = (value[8] - '0') * 10 + (value[9] - '0');
    if (month >= 1 && month <= 12 && day >= 1 && day <= 31) return {};
  }
  return fmt::format("expected a build date YYYY-MM-DD (UTC) or latest, got '{}'", value);
}

core::Result<std::int64_t> parse_exclude_newer(std::string_view text, std::int64_t now_micros) {
  auto bad = [&] {
    return usage(fmt::format("invalid --exclude-newer {}: expected a date (2025-06-01), a timestamp "
                             "(2025-06-01T12:00:00Z) or a duration (7d, 12h, P7D)",
                             core::quote_for_message(text)));
  };
  if (text.empty()) return bad();
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    auto t = index::parse_timestamp(fmt::format("{}T00:00:00Z", text));
    if (!t) return bad();
    return *t;
  }
  if (auto t = index::parse_timestamp(text)) return *t;
  // Durations: 7d, 12h, 30m, 2w, or ISO 8601 P7D / PT12H.
  std::string_view d = text;
  bool iso = d.starts_with("P") || d.starts_with("p");
  if (iso) {
    d.remove_prefix(1);
    if (d.starts_with("T") || d.starts_with("t")) d.remove_prefix(1);
  }
  if (d.size() < 2) return bad();
  char unit = static_cast<char>(std::tolower(static_cast<unsigned char>(d.back())));
  std::string_view number = d.substr(0, d.size() - 1);
  std::int64_t n = 0;
  for (char c : number) {
    if (c < '0' || c > '9') return bad();
    n = n * 10 + (c - '0');
    if (n > 100000) return bad();
  }
  std::int64_t seconds = 0;
  switch (unit) {
    case 'w': seconds = n * 7 * 86400; break;
    case 'd': seconds = n * 86400; break;
    case 'h': seconds = n * 3600; break;
    case 'm': seconds = n * 60; break;
    case 's': seconds = n; break;
    default: return bad();
  }
  return now_micros - seconds * 1'000'000;
}

core::Result<ResolveResult> resolve(const ResolveRequest& request, const ResolveObserver& observer) {
  auto start = std::chrono::steady_clock::now();
  auto phase = [&](std::string_view what) {
    if (observer.on_phase) observer.on_phase(what);
  };
  ResolveResult result;
  std::int64_t now = request.now_micros != 0 ? request.now_micros : clock_micros();

  // Flags that take a fixed set of values.
  IndexStrategy strategy = IndexStrategy::FirstIndex;
  if (request.index_strategy == "unsafe-best-match") {
    strategy = IndexStrategy::UnsafeBestMatch;
  } else if (request.index_strategy != "first-index") {
    return usage(fmt::format("invalid --index-strategy {}: expected first-index or unsafe-best-match",
                             core::quote_for_message(request.index_strategy)));
  }
  resolver::SolveOptions solve_options;
  if (request.prerelease == "allow") {
    solve_options.prerelease = resolver::PrereleasePolicy::Allow;
  } else if (request.prerelease == "disallow") {
    solve_options.prerelease = resolver::PrereleasePolicy::Disallow;
  } else if (request.prerelease != "if-necessary") {
    return usage(fmt::format("invalid --prerelease {}: expected if-necessary, allow or disallow",
                             core::quote_for_message(request.prerelease)));
  }
  std::optional<std::int64_t> exclude_newer;
  if (!request.exclude_newer.empty()) {
    auto t = parse_exclude_newer(request.exclude_newer, now);
    if (!t) return std::unexpected(t.error());
    exclude_newer = *t;
  }

  // Inputs.
  auto t_inputs = std::chrono::steady_clock::now();
  auto inputs = detail::read_resolve_inputs(request);
  if (!inputs) return std::unexpected(inputs.error());
  if (inputs->req.requirements.empty()) {
    return usage("nothing to resolve: give requirements, -r FILE or --project PYPROJECT",
                 {"for example: gpulock resolve torch torchvision --torch-backend auto"});
  }
  if (inputs->req.pre) solve_options.prerelease = resolver::PrereleasePolicy::Allow;
  std::vector<std::string> input_paths;
  for (const auto& f : inputs->req.files) input_paths.push_back(f.path);
  for (const auto& [path, content] : inputs->project_files) input_paths.push_back(path);
  if (!request.project.empty()) input_paths.push_back(request.project);
  auto existing_output = check_output(request.output, request.force, input_paths);
  if (!existing_output) return std::unexpected(existing_output.error());
  result.timings.inputs_ms = elapsed_ms(t_inputs);

  // Target.
  auto target = make_target(request.target);
  if (!target) return std::unexpected(target.error());
  result.target = *target;
  auto requirements = to_dependencies(inputs->req.requirements, target->environment);
  auto constraints = to_dependencies(inputs->req.constraints, target->environment);
  // `name @ URL` (issue 17 item 5): that package comes from the URL only. Two different URLs for
  // one name cannot both be honoured.
  std::map<std::string, std::string, std::less<>> direct;
  for (const auto& e : inputs->req.requirements) {
    const auto& r = e.requirement;
    if (r.url.empty() || (!r.marker.empty() && !r.marker.matches(target->environment, ""))) continue;
    std::string name = core::normalize_name(r.name);
    auto [it, inserted] = direct.emplace(name, r.url);
    if (!inserted && it->second != r.url) {
      return usage(fmt::format("{} has two direct references ({} and {})", name, index::redact_url(it->second),
                               index::redact_url(r.url)));
    }
  }

  // GPU facts: detection runs only when no driver was given (`--driver VERSION|none` describe
  // the target machine instead).
  phase("Detecting the machine");
  auto t_machine = std::chrono::steady_clock::now();
  auto gpu = detect_gpu(request);
  if (!gpu) return std::unexpected(gpu.error());
  result.timings.machine_ms = elapsed_ms(t_machine);
  bool cpu_backend = request.torch_backend == "cpu";
  if (!gpu->context.ceiling && !gpu->context.no_gpu && !cpu_backend && mentions_cuda_linked(requirements)) {
    core::Error e;
    e.code = ErrorCode::Usage;
    e.message = "no NVIDIA driver was found, so gpulock cannot tell which CUDA build of torch this machine runs";
    if (gpu->machine && !gpu->machine->verdict.empty()) e.context.push_back(gpu->machine->verdict);
    e.hints = {"lock for another machine: add --driver VERSION with the version `gpulock probe --machine` prints "
               "there, or --cuda-ceiling X.Y"};
    // CPU builds, when this index has them: tried first (issue 16 item 8).
    std::optional<TriedCommand> cpu = try_command(request, {{"--driver", "none"}}, focus_of(requirements));
    if (!cpu && request.torch_backend.empty()) cpu = try_command(request, {{"--torch-backend", "cpu"}}, focus_of(requirements));
    if (cpu) e.hints.push_back(fmt::format("lock CPU builds: {}", tried_text(*cpu)));
    e.hints.push_back("see what gpulock detects: gpulock probe --machine");
    return std::unexpected(e);
  }
  // A machine described by flags without its GPUs (issue 16): the arch lists cannot be checked.
  const bool driver_given = (request.driver != "auto" && request.driver != "none") || !request.cuda_ceiling.empty();
  if (driver_given && gpu->context.archs.empty() && !gpu->context.no_gpu && !cpu_backend &&
      mentions_cuda_linked(requirements)) {
    result.warnings.push_back(fmt::format(
        "{} without --gpu-arch: builds are not checked against any GPU (`gpulock probe --machine` on that machine "
        "prints its archs)",
        request.driver != "auto" ? fmt::format("--driver {}", request.driver)
                                 : fmt::format("--cuda-ceiling {}", request.cuda_ceiling)));
  }
  if (gpu->context.compat == probe::CudaCompat::Minor) {
    result.warnings.push_back(
        "--cuda-compat minor: CUDA builds newer than the driver run through minor-version compatibility, without PTX "
        "JIT for newer PTX; kernels not compiled for your GPU will fail to load");
  }
  if (gpu->machine) {
    for (const auto& w : gpu->machine->warnings) result.warnings.push_back(w);
  }

  // Sources, in first-index priority order.
  ProviderConfig config;
  config.strategy = strategy;
  config.target = std::move(*target);  // its supported-tag list is long: moved, not copied
  config.exclude_newer = exclude_newer;
  config.direct = std::move(direct);
  config.gpu = gpu->context;
  config.command_line = request.command_line;
  std::vector<SourceSpec> named;
  for (const auto& item : request.named_indexes) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return usage(fmt::format("invalid --index {}: expected NAME=URL", core::quote_for_message(item)));
    }
    named.push_back(make_source(index::url_from_user_input(item.substr(eq + 1)), item.substr(0, eq), "pinned"));
  }
  for (const auto& item : request.index_for) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return usage(fmt::format("invalid --index-for {}: expected GLOB=NAME", core::quote_for_message(item)));
    }
    std::string name = item.substr(eq + 1);
    auto it = std::find_if(named.begin(), named.end(), [&](const SourceSpec& s) { return s.source.name == name; });
    if (it == named.end()) {
      return usage(fmt::format("--index-for {} names the index {}, which no --index NAME=URL defines",
                               core::quote_for_message(item), core::quote_for_message(name)));
    }
    // The glob is matched against normalized names, so it is normalized the same way (issue 21:
    // `Torch*` never matched `torch`); normalize_name keeps the glob characters as they are.
    config.pinned.emplace_back(core::normalize_name(item.substr(0, eq)), *it);
  }
  const bool torch_requested = !request.torch_backend.empty() || !request.nightly.empty();
  if (torch_requested) {
    auto torch = torch_sources(request, gpu->context);
    if (!torch) return std::unexpected(torch.error());
    config.torch = std::move(*torch);
    config.torch_requested = true;
  }
  int extra_number = 0;
  for (const auto& g : detail::general_indexes(request, inputs->req)) {
    if (g.role == "default") {
      config.general.push_back(make_source(g.url, "default", "default"));
    } else if (g.role == "extra") {
      config.general.push_back(make_source(g.url, fmt::format("extra-{}", ++extra_number), "extra"));
    } else {
      SourceSpec s;
      s.source = index::IndexSource::find_links(g.url, "find-links");
      s.role = "find-links";
      config.general.push_back(std::move(s));
    }
  }

  // Stable re-locking: the existing output lock's pins are preferences. Its bytes are kept to
  // leave an unchanged lock untouched (no write, no fsync) at the end.
  std::optional<std::string> existing_text = std::move(*existing_output);
  if (existing_text && !request.upgrade) {
    auto old = lock::parse_lock(*existing_text, request.output);
    if (!old) {
      result.warnings.push_back(fmt::format("ignoring the existing lock: {}", old.error().to_string()));
    } else {
      std::set<std::string> upgrade;
      for (const auto& n : request.upgrade_packages) upgrade.insert(core::normalize_name(n));
      // Pins of CUDA-bound packages were chosen for the machine the old lock names: on another
      // machine (driver, ceiling, archs, compat) they are not preferences (issue 16 item 4).
      bool same_machine = same_gpu_facts(old->lock, gpu->context);
      for (const auto& p : old->lock.packages) {
        if (!p.version || upgrade.contains(p.name)) continue;
        auto v = core::Version::parse(*p.version);
        if (!v) continue;
        if (!same_machine && is_cuda_bound(p.name, *v)) continue;
        config.preferences.emplace(p.name, *v);
      }
    }
  }

  index::ClientOptions client_options = request.client;
  if (observer.on_index_event) client_options.observer = observer.on_index_event;
  // Pages come back with only the wheels this target can install as files (the rest summarized
  // by version): a warm run decodes, ranks and frees a few percent of a big page's files. A wheel
  // is kept when one of its tags is supported, as core::TagRanker::rank would find it.
  auto supported = std::make_shared<std::unordered_set<std::string>>();
  supported->reserve(result.target.supported.size());
  for (const auto& t : result.target.supported) {
    std::string key;
    key.reserve(t.interpreter.size() + t.abi.size() + t.platform.size() + 2);
    key.append(t.interpreter).append(1, '-').append(t.abi).append(1, '-').append(t.platform);
    supported->insert(std::move(key));
  }
  client_options.keep_wheel = [supported](std::span<const core::Tag> tags) {
    std::string key;
    for (const auto& t : tags) {
      key.assign(t.interpreter).append(1, '-').append(t.abi).append(1, '-').append(t.platform);
      if (supported->contains(key)) return true;
    }
    return false;
  };
  index::IndexClient client(client_options);

  if (torch_requested) {
    phase("Checking the PyTorch index");
    if (auto problem = check_torch_sources(client, request, config.torch, requirements, gpu->context)) {
      if (problem->error) return std::unexpected(*problem->error);
      result.solved = false;
      result.explanation.lines = std::move(problem->lines);
      result.explanation.hints = std::move(problem->hints);
      lead_with_first_line(result.explanation);
      if (problem->cpu_variant) {
        if (auto cpu = try_command(request, {{"--torch-backend", "cpu"}}, focus_of(requirements))) {
          result.explanation.hints.insert(result.explanation.hints.begin(),
                                          fmt::format("for CPU builds: {}", tried_text(*cpu)));
        }
      }
      result.index_stats = client.stats();
      result.timings.total_ms = elapsed_ms(start);
      return result;
    }
  }

  std::vector<std::string> nightly_members;
  if (!request.nightly.empty()) {
    phase("Choosing the nightly date");
    auto date = choose_nightly_date(client, config, requirements, request.nightly, nightly_members);
    if (!date) return std::unexpected(date.error());
    if (*date && (*date)->empty()) {
      result.solved = false;
      std::string who;
      for (std::size_t i = 0; i < nightly_members.size(); ++i) {
        who += (i == 0 ? "" : i + 1 == nightly_members.size() ? " and " : ", ") + nightly_members[i];
      }
      result.explanation.lines.push_back(
          fmt::format("No nightly build date {}has all of {} for {}-{}.",
                      request.nightly == "latest" ? "" : fmt::format("on or before {} ", request.nightly), who,
                      result.target.tags.interpreter_tag(), result.target.platform));
      result.explanation.hints.push_back("try a later --nightly date, or fewer torch-family packages");
      lead_with_first_line(result.explanation);
      result.index_stats = client.stats();
      return result;
    }
    if (*date) config.nightly_date = **date;
  }

  // Solve.
  phase("Resolving");
  auto t_solve = std::chrono::steady_clock::now();
  // The provider takes the config (no copy of the target's long tag list); the lock's records
  // below need only the sources and the nightly date, kept here.
  const auto pinned_sources = config.pinned;
  const auto torch_sources = config.torch;
  const auto general_sources = config.general;
  const auto nightly_date = config.nightly_date;
  IndexProvider provider(client, std::move(config));
  resolver::SolveRequest solve_request{requirements, constraints};
  auto outcome = resolver::solve(provider, solve_request, solve_options);
  result.timings.solve_ms = elapsed_ms(t_solve);
  if (!outcome) return std::unexpected(outcome.error());
  for (auto& w : provider.warnings()) result.warnings.push_back(std::move(w));

  if (auto* failure = std::get_if<resolver::NoSolution>(&*outcome)) {
    result.solved = false;
    auto unknown = unknown_projects(client, provider, requirements);
    if (!unknown) return std::unexpected(unknown.error());
    // Pages the hints compare are fetched now, never while the proof is rendered (issue 21).
    provider.fetch_hint_pages(failure->tree);
    for (auto& w : provider.warnings()) {
      if (std::find(result.warnings.begin(), result.warnings.end(), w) == result.warnings.end()) {
        result.warnings.push_back(std::move(w));
      }
    }
    result.explanation = resolver::report(*failure, provider);
    // Builds above the ceiling that the explanation names: the driver the lowest one needs.
    for (const auto& d : requirements) {
      bool mentioned = std::any_of(result.explanation.lines.begin(), result.explanation.lines.end(), [&](const std::string& l) {
        return l.find(d.name) != std::string::npos && l.find("needs a newer CUDA than") != std::string::npos;
      });
      if (!mentioned) continue;
      if (auto hint = provider.cuda_too_new_hint(d.name)) result.explanation.hints.push_back(*hint);
    }
    // The fixes the explanation points at, as complete commands, each tried first (issue 16
    // item 8): a variant with kernels for the GPU, minor-version compatibility, CPU builds.
    for (const auto& backend : provider.arch_fix_backends()) {
      if (backend == request.torch_backend) continue;
      if (auto t = try_command(request, {{"--torch-backend", backend}}, focus_of(requirements))) {
        result.explanation.hints.push_back(fmt::format("{}, which has kernels for your GPU", tried_text(*t)));
      }
    }
    if (provider.cuda_hinted() && !request.dry_run) {
      if (gpu->context.no_gpu && request.torch_backend != "cpu") {
        if (auto t = try_command(request, {{"--torch-backend", "cpu"}}, focus_of(requirements))) {
          result.explanation.hints.push_back(fmt::format("for CPU builds: {}", tried_text(*t)));
        }
      } else if (!gpu->context.no_gpu && gpu->context.ceiling && gpu->context.compat == probe::CudaCompat::Strict) {
        if (auto t = try_command(request, {{"--cuda-compat", "minor"}}, focus_of(requirements))) {
          result.explanation.hints.push_back(
              fmt::format("or allow minor-version compatibility: {}", tried_text(*t)));
        }
      }
    }
    if (!unknown->lines.empty()) {
      // Lead with the deciding fact: a project that is on no index (issue 16 item 9).
      auto& lines = result.explanation.lines;
      lines.insert(lines.begin(), unknown->lines.begin(), unknown->lines.end());
      auto& brief = result.explanation.brief;
      brief.insert(brief.begin(), unknown->lines.begin(), unknown->lines.end());
      lead_with_first_line(result.explanation);
      auto& hints = result.explanation.hints;
      hints.insert(hints.begin(), unknown->hints.begin(), unknown->hints.end());
    }
    result.solve_stats = failure->stats;
    result.index_stats = client.stats();
    result.timings.total_ms = elapsed_ms(start);
    return result;
  }
  const auto& solution = std::get<resolver::Solution>(*outcome);
  for (auto& line : provider.kept_pins_beaten(solution, request.output)) result.warnings.push_back(std::move(line));
  result.solved = true;
  result.solve_stats = solution.stats;

  // The lock.
  phase("Writing the lock");
  auto t_lock = std::chrono::steady_clock::now();
  fs::path lock_dir = lock_dir_of(request.output);
  lock::Lock& lk = result.lock;
  lk.created_by = fmt::format("gpulock {}", version());
  lk.environments = std::vector<std::string>{result.target.environment_marker()};
  lk.requires_python = fmt::format("=={}.*", result.target.python_version);
  lk.extras = std::vector<std::string>{};
  lk.dependency_groups = std::vector<std::string>{};
  lk.default_groups = std::vector<std::string>{};
  std::optional<CudaVersion> locked_cuda;
  std::optional<std::string> cudnn, variant;
  // The provider holds its own copy of the config, so sources are matched by URL.
  std::set<std::string> used_sources;
  const resolver::ChosenPackage* torch = nullptr;
  for (const auto& chosen : solution.packages) {
    if (chosen.is_virtual) continue;
    auto sel = provider.selection(chosen.name, chosen.candidate_index);
    if (sel.file == nullptr) {
      return core::fail(ErrorCode::Internal, fmt::format("no file recorded for {} {}", chosen.name, chosen.version.to_string()));
    }
    lock::Package p;
    p.name = chosen.name;
    p.version = chosen.version.to_string();
    if (sel.source && sel.source->source.kind == index::SourceKind::SimpleApi) {
      p.index = index::redact_url(sel.source->source.url);
      used_sources.insert(sel.source->source.url);
    }
    lock::FileEntry f;
    f.url = index::redact_url(sel.file->url());
    if (index::url_basename(sel.file->url()) != sel.file->filename()) f.name = sel.file->filename();
    f.size = sel.file->size();
    if (sel.file->upload_time()) f.upload_time = to_toml_datetime(*sel.file->upload_time());
    for (const auto& h : sel.file->hashes()) f.hashes[h.algorithm] = h.hex;
    const bool direct_ref = sel.source != nullptr && sel.source->role == "direct";
    if (direct_ref) {
      // A direct URL wheel is a PEP 751 archive; its URL is written without credentials.
      f.url = index::strip_credentials(sel.file->url());
      f.name.reset();
    }
    if (f.hashes.find("sha256") == f.hashes.end()) {
      // Nightly links carry no hash: download once, streaming, to record sha256 and size.
      phase(fmt::format("Hashing {}", sel.file->filename()));
      auto digest = client.fetch_file_digest(sel.file->url());
      if (!digest) return std::unexpected(digest.error());
      f.hashes["sha256"] = digest->sha256;
      if (!f.size) f.size = digest->size;
    }
    if (direct_ref) {
      p.archive = std::move(f);
    } else {
      p.wheels = std::vector<lock::FileEntry>{std::move(f)};
    }
    lk.packages.push_back(std::move(p));

    if (chosen.name == "torch") torch = &chosen;
    if (chosen.name.starts_with("nvidia-cudnn-")) cudnn = chosen.version.to_string();
    if (sel.cuda && (!locked_cuda || *sel.cuda > *locked_cuda)) locked_cuda = sel.cuda;
    if (chosen.name == "torch") {
      if (sel.build.kind == BuildKind::Cuda && sel.cuda) variant = variant_name(*sel.cuda);
      else if (sel.build.kind == BuildKind::Cpu) variant = "cpu";
      else if (sel.cuda) variant = variant_name(*sel.cuda);
    }

    PackageWhy why;
    why.name = chosen.name;
    why.version = chosen.version.to_string();
    why.source = sel.source ? index::redact_url(sel.source->source.url) : "";
    why.file = sel.file->filename();
    why.required_by = chosen.required_by;
    if (sel.cuda) {
      why.notes.push_back(sel.cuda_minor_exact ? fmt::format("needs CUDA {}", sel.cuda->to_string())
                                               : fmt::format("needs CUDA {}.x", sel.cuda->major));
    }
    if (chosen.version.is_prerelease()) why.notes.push_back("a pre-release");
    if (is_torch_family(chosen.name)) {
      for (auto& s : provider.skipped_before(chosen.name, chosen.candidate_index, &solution)) {
        // Versions the requirements never allowed (`torch<2.6`, an `==` pin) explain themselves.
        if (s.kind == "excluded") continue;
        why.skipped.push_back({s.version.to_string(), std::move(s.kind), std::move(s.reason), std::move(s.hint)});
      }
    }
    result.why.push_back(std::move(why));
  }

  // [tool.gpulock].
  lock::GpulockTool tool;
  tool.inputs = detail::make_inputs_record(request, *inputs, lock_dir);
  tool.target = lock::GpulockTarget{result.target.python_version, result.target.platform, {}, {}};

  const auto& ctx = gpu->context;
  if (ctx.ceiling || ctx.no_gpu || locked_cuda) {
    lock::GpulockGpu g;
    if (ctx.driver) g.driver = ctx.driver->to_string();
    if (ctx.no_gpu) g.driver = "none";
    if (ctx.ceiling) g.cuda_ceiling = ctx.ceiling->to_string();
    if (!ctx.method.empty()) g.method = ctx.method;
    g.compat = ctx.compat == probe::CudaCompat::Minor ? "minor" : "strict";
    for (const auto& a : ctx.archs) g.archs.push_back(a.to_string());
    g.variant = variant;
    if (locked_cuda) {
      g.cuda = locked_cuda->to_string();
      if (auto md = probe::min_driver_for_cuda(*locked_cuda, ctx.compat)) g.min_driver = md->to_string();
    }
    g.cudnn = cudnn;
    tool.gpu = std::move(g);
  }
  if (exclude_newer || nightly_date) {
    lock::GpulockSnapshot snap;
    if (exclude_newer) snap.exclude_newer = to_toml_datetime(*exclude_newer);
    if (nightly_date) snap.nightly = dashed_date(*nightly_date);
    tool.snapshot = std::move(snap);
  }
  auto add_record = [&](const SourceSpec& s) {
    tool.indexes.push_back({s.source.name, index::redact_url(s.source.url), s.role, {}});
  };
  for (const auto& [glob, s] : pinned_sources) add_record(s);
  for (const auto& s : torch_sources) {
    if (used_sources.contains(s.source.url)) add_record(s);
  }
  for (const auto& s : general_sources) add_record(s);
  lk.gpulock = std::move(tool);
  lk.command = request.command_line;

  if (torch != nullptr) {
    auto sel = provider.selection("torch", torch->candidate_index);
    std::string v = torch->version.to_string();
    // Credit the driver only when the driver decided (issue 16 item 7): when a newer build was
    // passed over for a conflict, say that the other requirements limited it, naming the
    // requirement when one alone explains it.
    const PackageWhy::Skipped* conflict = nullptr;
    auto twhy = std::find_if(result.why.begin(), result.why.end(), [](const PackageWhy& w) { return w.name == "torch"; });
    if (twhy != result.why.end()) {
      auto k = std::find_if(twhy->skipped.begin(), twhy->skipped.end(),
                            [](const PackageWhy::Skipped& x) { return x.kind == "conflict"; });
      if (k != twhy->skipped.end()) conflict = &*k;
    }
    const bool blocker_named = conflict != nullptr && !conflict->reason.starts_with("conflicts with");
    if (conflict != nullptr && !conflict->hint.empty()) result.hints.push_back(conflict->hint);
    const std::string cpu_newer = blocker_named ? fmt::format("; torch {} {}", conflict->version, conflict->reason) : "";
    if (ctx.no_gpu) {
      result.gpu_summary = fmt::format("torch {}: a CPU build, because --driver none means no GPU{}", v, cpu_newer);
    } else if (sel.cuda && ctx.ceiling) {
      std::string archs;
      for (const auto& a : ctx.archs) archs += (archs.empty() ? "" : ", ") + a.to_string();
      // Under --cuda-compat minor a build may be newer than the ceiling, within its major.
      std::string how = *sel.cuda > *ctx.ceiling
                            ? fmt::format("CUDA {} on {} through minor-version compatibility", sel.cuda->to_string(),
                                          ctx.ceiling->to_string())
                            : fmt::format("CUDA {} <= {}{}", sel.cuda->to_string(), ctx.ceiling->to_string(),
                                          ctx.compat == probe::CudaCompat::Minor ? ", minor-version compatibility" : "");
      // A build whose arch list is unknown is bounded by what its CUDA can build: say "assumed".
      std::string kernels = archs.empty()       ? std::string()
                            : sel.archs_assumed ? fmt::format("; kernels for {} assumed (no arch list is known for "
                                                              "this build; CUDA {} can build for {})",
                                                              archs, sel.cuda->to_string(), archs)
                                                : fmt::format(" with kernels for {}", archs);
      std::string newer = blocker_named ? fmt::format("torch {} {}", conflict->version, conflict->reason)
                                : std::string("newer builds it runs conflict with the other requirements (see --explain)");
      result.gpu_summary =
          conflict ? fmt::format("torch {}: the newest torch that fits the other requirements; your driver {}runs it ({}){}; {}",
                                 v, ctx.driver ? ctx.driver->to_string() + " " : "", how, kernels, newer)
                   : fmt::format("torch {}: the newest torch whose CUDA build your driver {}runs ({}){}", v,
                                 ctx.driver ? ctx.driver->to_string() + " " : "", how, kernels);
    } else if (sel.build.kind == BuildKind::Cpu) {
      result.gpu_summary = fmt::format("torch {}: a CPU build{}", v, cpu_newer);
    }
  }

  result.lock_text = lock::to_toml(lk, lock::WriteOptions{request.command_line});
  if (!request.dry_run && request.output != "-" && existing_text != result.lock_text) {
    auto written = write_output(request.output, result.lock_text);
    if (!written) return std::unexpected(written.error());
  }
  result.timings.lock_ms = elapsed_ms(t_lock);
  result.index_stats = client.stats();
  result.timings.total_ms = elapsed_ms(start);
  return result;
}

}  // namespace gpulock::app

// The plan of a resolve: everything decided before an index is asked (issue 21). Flags are
// parsed, inputs read, the target made, the machine described (detected or given by flags), the
// sources listed in first-index order and the old lock's pins taken as preferences.

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpulock/app/machine.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/text.h"
#include "gpulock/index/url.h"

#include "resolve_steps.h"

namespace gpulock::app::detail {
namespace {

using core::ErrorCode;

// Dependencies for the solver from requirement entries, with markers applied for the target.
std::vector<resolver::Dependency> to_dependencies(const std::vector<RequirementEntry>& entries,
                                                  const core::Environment& env) {
  std::vector<resolver::Dependency> out;
  for (const auto& e : entries) {
    const auto& r = e.requirement;
    if (!r.marker.empty() && !r.marker.matches(env, "")) continue;
    resolver::Dependency d;
    d.name = core::normalize_name(r.name);
    for (const auto& x : r.extras)
      d.extras.push_back(core::normalize_extra(x));
    d.specifier = r.specifier;
    out.push_back(std::move(d));
  }
  return out;
}

core::Result<GpuSetup> detect_gpu(const ResolveRequest& request, bool machine_as_given) {
  GpuSetup setup;
  probe::OverrideFlags flags;
  // Probe's overrides read --driver together with GPULOCK_DRIVER: auto is "not given".
  const gpu::DriverSpec driver = driver_of(request);
  flags.driver = driver.is_auto() ? "" : driver.to_string();
  flags.cuda_ceiling = request.machine.cuda_ceiling;
  flags.gpu_arch = request.machine.gpu_arch;
  auto& ctx = setup.context;
  ctx.compat = request.cuda_compat;
  if (machine_as_given) {
    // A declared target's machine: its keys alone, never GPULOCK_* variables or this machine.
    auto options =
        probe::detect_options_from_env(flags, [](const char*) -> const char* { return nullptr; });
    if (!options) return std::unexpected(options.error());
    const auto& ov = options->overrides;
    ctx.no_gpu = ov.no_driver;
    if (ov.driver) ctx.driver = *ov.driver;
    if (!ctx.no_gpu && ov.cuda_ceiling) {
      ctx.ceiling = ov.cuda_ceiling;
      ctx.ceiling_method = std::string(probe::method_name(probe::Method::Override));
    } else if (!ctx.no_gpu && ov.driver) {
      ctx.ceiling = gpu::cuda_ceiling_for_driver(*ov.driver);
      if (ctx.ceiling) {
        ctx.ceiling_method = std::string(probe::method_name(probe::Method::DriverTable));
      }
    }
    if (ov.gpu_archs) ctx.archs = *ov.gpu_archs;
    return setup;
  }
  auto info = probe_machine(flags);
  if (!info) return std::unexpected(info.error());
  // This machine as the fit rule reads it (probe::fit_machine), the one gpu::Machine; without
  // a GPU no ceiling is kept.
  static_cast<gpu::Machine&>(ctx) = probe::fit_machine(*info);
  if (ctx.no_gpu) {
    ctx.ceiling.reset();
    ctx.ceiling_method.clear();
  }
  setup.machine = std::move(*info);
  return setup;
}

bool mentions_cuda_linked(const std::vector<resolver::Dependency>& deps) {
  return std::any_of(deps.begin(), deps.end(),
                     [](const resolver::Dependency& d) { return gpu::is_cuda_linked(d.name); });
}

// Does the existing lock's [tool.gpulock.gpu] describe the machine being resolved for?
bool same_gpu_facts(const lock::Lock& old, const gpu::GpuContext& ctx) {
  const auto* g = old.gpulock ? (old.gpulock->gpu ? &*old.gpulock->gpu : nullptr) : nullptr;
  bool now_gpu = ctx.ceiling.has_value() || ctx.no_gpu;
  if (g == nullptr) return !now_gpu;
  std::optional<gpu::DriverSpec> driver;
  if (ctx.no_gpu) {
    driver = gpu::DriverSpec::none();
  } else if (ctx.driver) {
    driver = gpu::DriverSpec::of(*ctx.driver);
  }
  return g->driver == driver && g->cuda_ceiling == ctx.ceiling &&
         g->compat.value_or(gpu::CudaCompat::Strict) == ctx.compat && g->archs == ctx.archs;
}

// A package whose build depends on the machine's CUDA: the torch family, nvidia-* and cuda-*.
bool is_cuda_bound(std::string_view name, const core::Version& v) {
  return gpu::is_torch_family(name) || gpu::cuda_need_of_package(name, v).has_value() ||
         gpu::classify_build(v).kind != gpu::BuildKind::Unlabeled;
}

// --index-strategy, --prerelease and --exclude-newer (typed already: only the relative cutoff
// needs the time of the run).
void apply_flag_values(const ResolveRequest& request, std::int64_t now, ResolvePlan& plan) {
  plan.config.strategy = request.index_strategy;
  plan.config.allow_incomplete = request.allow_incomplete;
  plan.solve_options.prerelease = request.prerelease;
  if (request.exclude_newer) plan.exclude_newer = request.exclude_newer->cutoff(now);
}

// The requirements, constraints and project files; the output checked against them.
core::Status read_inputs(const ResolveRequest& request, ResolvePlan& plan) {
  auto inputs = read_resolve_inputs(request);
  if (!inputs) return std::unexpected(inputs.error());
  if (inputs->req.requirements.empty()) {
    return usage("nothing to resolve: give requirements, -r FILE or --project PYPROJECT",
                 {"for example: gpulock resolve torch torchvision --torch-backend auto"});
  }
  if (inputs->req.pre) plan.solve_options.prerelease = resolver::PrereleasePolicy::Allow;
  std::vector<std::string> input_paths;
  for (const auto& f : inputs->req.files)
    input_paths.push_back(f.path);
  for (const auto& [path, content] : inputs->project_files)
    input_paths.push_back(path);
  if (!request.project.empty()) input_paths.push_back(request.project);
  auto existing_output = check_output(request.output, request.force, input_paths);
  if (!existing_output) return std::unexpected(existing_output.error());
  plan.existing_text = std::move(*existing_output);
  plan.inputs = std::move(*inputs);
  return {};
}

// The target, the requirements under its markers, and the direct references.
core::Status apply_target(const ResolveRequest& request, ResolvePlan& plan, ResolveResult& result) {
  auto target = make_target(request.target);
  if (!target) return std::unexpected(target.error());
  result.target = *target;
  plan.requirements = to_dependencies(plan.inputs.req.requirements, target->environment);
  plan.constraints = to_dependencies(plan.inputs.req.constraints, target->environment);
  // Versions aligned across targets (resolve_targets): `==V` matches V with any local label.
  for (const auto& [name, version] : plan.run.align_pins) {
    auto spec = core::SpecifierSet::parse("==" + version);
    if (!spec) return std::unexpected(spec.error());
    plan.constraints.push_back({name, {}, std::move(*spec)});
  }
  // `name @ URL` (issue 17 item 5): that package comes from the URL only. Two different URLs for
  // one name cannot both be honoured.
  for (const auto& e : plan.inputs.req.requirements) {
    const auto& r = e.requirement;
    if (r.url.empty() || (!r.marker.empty() && !r.marker.matches(target->environment, "")))
      continue;
    std::string name = core::normalize_name(r.name);
    auto [it, inserted] = plan.config.direct.emplace(name, r.url);
    if (!inserted && it->second != r.url) {
      return usage(fmt::format("{} has two direct references ({} and {})", name,
                               index::redact_url(it->second), index::redact_url(r.url)));
    }
  }
  plan.config.target = std::move(*target);  // its supported-tag list is long: moved, not copied
  return {};
}

// GPU facts: detection runs only when no driver was given (`--driver VERSION|none` describe the
// target machine instead). No driver and CUDA-linked requirements is an error with hints.
core::Status describe_machine(const ResolveRequest& request, ResolvePlan& plan,
                              ResolveResult& result) {
  auto t_machine = std::chrono::steady_clock::now();
  auto gpu = detect_gpu(request, plan.run.machine_as_given);
  if (!gpu) return std::unexpected(gpu.error());
  result.timings.machine_ms = elapsed_ms(t_machine);
  const auto& requirements = plan.requirements;
  bool cpu_backend =
      request.torch_backend && request.torch_backend->kind() == TorchBackend::Kind::Cpu;
  if (!gpu->context.ceiling && !gpu->context.no_gpu && !cpu_backend &&
      mentions_cuda_linked(requirements)) {
    core::Error e = core::make_error(ErrorCode::Usage,
                                     "no NVIDIA driver was found, so gpulock cannot tell which "
                                     "CUDA build of torch this machine runs");
    if (gpu->machine && !gpu->machine->verdict.empty()) e.context.push_back(gpu->machine->verdict);
    e.hints = {
        "lock for another machine: add --driver VERSION with the version `gpulock probe --machine` "
        "prints "
        "there, or --cuda-ceiling X.Y"};
    // CPU builds, when this index has them: tried first (issue 16 item 8).
    std::optional<TriedCommand> cpu =
        try_command(request, plan.run, {{"--driver", "none"}}, focus_of(requirements));
    if (!cpu && !request.torch_backend)
      cpu = try_command(request, plan.run, {{"--torch-backend", "cpu"}}, focus_of(requirements));
    if (cpu) e.hints.push_back(fmt::format("lock CPU builds: {}", tried_text(*cpu)));
    e.hints.push_back("see what gpulock detects: gpulock probe --machine");
    return std::unexpected(e);
  }
  // A machine described by flags without its GPUs (issue 16): the arch lists cannot be checked.
  const gpu::DriverSpec driver = driver_of(request);
  const bool driver_given = driver.version().has_value() || !request.machine.cuda_ceiling.empty();
  if (driver_given && gpu->context.archs.empty() && !gpu->context.no_gpu && !cpu_backend &&
      mentions_cuda_linked(requirements)) {
    result.warnings.push_back(fmt::format(
        "{} without --gpu-arch: builds are not checked against any GPU (`gpulock probe --machine` "
        "on that machine "
        "prints its archs)",
        !driver.is_auto() ? fmt::format("--driver {}", driver.to_string())
                          : fmt::format("--cuda-ceiling {}", request.machine.cuda_ceiling)));
  }
  if (gpu->context.compat == gpu::CudaCompat::Minor) {
    result.warnings.push_back(
        "--cuda-compat minor: CUDA builds newer than the driver run through minor-version "
        "compatibility, without PTX "
        "JIT for newer PTX; kernels not compiled for your GPU will fail to load");
  }
  if (gpu->machine) {
    for (const auto& w : gpu->machine->warnings)
      result.warnings.push_back(w);
  }
  plan.config.gpu = gpu->context;
  plan.gpu = std::move(*gpu);
  return {};
}

// Sources, in first-index priority order: --index NAME=URL pinned by --index-for, the torch
// variants, then --index-url, --extra-index-url and --find-links.
core::Status list_sources(const ResolveRequest& request, ResolvePlan& plan) {
  auto& config = plan.config;
  std::vector<catalog::SourceSpec> named;
  for (const auto& ix : request.named_indexes) {
    named.push_back(
        make_source(index::url_from_user_input(ix.url), ix.name, catalog::Role::Pinned));
    named.back().origin = user_origin(request, "index");
  }
  for (const auto& pin : request.index_for) {
    auto it = std::find_if(named.begin(), named.end(), [&](const catalog::SourceSpec& s) {
      return s.source.name == pin.index;
    });
    if (it == named.end()) {
      return usage(fmt::format(
          "--index-for {} names the index {}, which no --index NAME=URL defines",
          core::quote_for_message(pin.to_string()), core::quote_for_message(pin.index)));
    }
    // The glob was normalized like a name when it was parsed (IndexPin), so `Torch*` matches
    // `torch` (issue 21).
    config.pinned.emplace_back(pin.glob, *it);
  }
  // Configured pins with a marker ([tool.uv.sources], issue 26): those whose marker matches the
  // target, as uv picks a source per platform.
  for (const auto& marked : request.index_for_when) {
    auto marker = core::Marker::parse(marked.marker);
    if (!marker) return std::unexpected(marker.error());
    if (!marker->matches(config.target.environment, "")) continue;
    auto it = std::find_if(named.begin(), named.end(), [&](const catalog::SourceSpec& s) {
      return s.source.name == marked.pin.index;
    });
    if (it == named.end()) {
      return usage(
          fmt::format("the configured index-for {} names the index {}, which no index "
                      "NAME=URL defines",
                      core::quote_for_message(marked.pin.to_string()),
                      core::quote_for_message(marked.pin.index)));
    }
    config.pinned.emplace_back(marked.pin.glob, *it);
  }
  plan.torch_requested = request.torch_backend || request.nightly;
  if (plan.torch_requested) {
    auto torch = torch_sources(request, plan.gpu.context);
    if (!torch) return std::unexpected(torch.error());
    config.torch = std::move(*torch);
    for (auto& t : config.torch)
      t.origin = user_origin(request, "torch-index-base");
    config.torch_requested = true;
  }
  int extra_number = 0;
  for (const auto& g : general_indexes(request, plan.inputs.req)) {
    if (g.type.is<catalog::FindLinks>()) {
      catalog::SourceSpec s;
      s.source = index::IndexSource::find_links(g.url, "find-links");
      s.type = g.type;
      config.general.push_back(std::move(s));
    } else if (g.type.role == catalog::Role::Default) {
      config.general.push_back(make_source(g.url, "default", catalog::Role::Default));
    } else {
      config.general.push_back(
          make_source(g.url, fmt::format("extra-{}", ++extra_number), catalog::Role::Extra));
    }
    config.general.back().origin = g.origin;
  }
  return {};
}

// Stable re-locking: the existing output lock's pins are preferences.
void prefer_old_pins(const ResolveRequest& request, ResolvePlan& plan, ResolveResult& result) {
  if (!plan.existing_text || request.upgrade) return;
  auto old = lock::parse_lock(*plan.existing_text, request.output);
  if (!old) {
    result.warnings.push_back(
        fmt::format("ignoring the existing lock: {}", old.error().to_string()));
    return;
  }
  std::set<std::string> upgrade;
  for (const auto& n : request.upgrade_packages)
    upgrade.insert(core::normalize_name(n));
  // Pins of CUDA-bound packages were chosen for the machine the old lock names: on another
  // machine (driver, ceiling, archs, compat) they are not preferences (issue 16 item 4).
  bool same_machine = same_gpu_facts(old->lock, plan.gpu.context);
  for (const auto& p : old->lock.packages) {
    if (!p.version || upgrade.contains(p.name)) continue;
    auto v = core::Version::parse(*p.version);
    if (!v) continue;
    if (!same_machine && is_cuda_bound(p.name, *v)) continue;
    plan.config.preferences.emplace(p.name, *v);
  }
}

}  // namespace

catalog::SourceSpec make_source(std::string_view url, std::string name, catalog::Role role) {
  catalog::SourceSpec s;
  s.source = index::IndexSource::simple(url, std::move(name));
  s.type = {catalog::Simple{}, role};
  return s;
}

core::Result<ResolvePlan> make_plan(const ResolveRequest& request, const ResolveRun& run,
                                    std::int64_t now_micros, ResolveResult& result,
                                    const Phase& phase) {
  ResolvePlan plan;
  plan.run = run;
  // Issue 41 item 3: --nightly never yields a non-nightly torch-family build, and
  // unsafe-best-match would merge the stable builds of every other index into the family's.
  if (request.nightly && request.index_strategy == IndexStrategy::UnsafeBestMatch) {
    return usage(
        "--nightly cannot be combined with --index-strategy unsafe-best-match: the torch family "
        "comes only from the nightly index, and unsafe-best-match would merge stable builds from "
        "the other indexes",
        {"drop --index-strategy unsafe-best-match (or --nightly for a stable build); to take one "
         "name from another index, use --index NAME=URL --index-for PACKAGE=NAME"});
  }
  apply_flag_values(request, now_micros, plan);
  auto t_inputs = std::chrono::steady_clock::now();
  if (auto s = read_inputs(request, plan); !s) return std::unexpected(s.error());
  result.timings.inputs_ms = elapsed_ms(t_inputs);
  if (auto s = apply_target(request, plan, result); !s) return std::unexpected(s.error());
  phase("Detecting the machine");
  if (auto s = describe_machine(request, plan, result); !s) return std::unexpected(s.error());
  plan.config.exclude_newer = plan.exclude_newer;
  if (auto s = list_sources(request, plan); !s) return std::unexpected(s.error());
  prefer_old_pins(request, plan, result);
  return plan;
}

}  // namespace gpulock::app::detail

// app::resolve(): the resolve workflow, one step per phase (resolve_steps.h has the data flow):
// the plan, the torch sources and nightly date, the solve, then the lock or the explanation.
// This file also holds what every step shares: usage errors and the hint commands tried first.

#include "gpulock/app/resolve.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <span>
#include <unordered_set>

#include <fmt/format.h>

#include "gpulock/core/civil_date.h"
#include "gpulock/core/text.h"
#include "gpulock/gpu/gpu_stacks.h"
#include "gpulock/index/url.h"

#include "resolve_steps.h"

namespace gpulock::app {
namespace {

using core::ErrorCode;

std::int64_t clock_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One flag of a suggested command, applied to a request (the flags hints suggest), through the
// flag's own parser: the command a hint prints is exactly what was tried. A value that does not
// parse (none does: gpulock writes them) leaves the request as it was.
void apply_edit(ResolveRequest& r, const FlagEdit& e) {
  if (e.flag == "--torch-backend") {
    if (auto v = TorchBackend::parse(e.value)) r.torch_backend = *v;
  } else if (e.flag == "--driver") {
    if (auto v = gpu::DriverSpec::parse(e.value)) r.driver = *v;
  } else if (e.flag == "--cuda-compat") {
    if (auto v = gpu::parse_cuda_compat(e.value)) r.cuda_compat = *v;
  } else if (e.flag == "--index") {
    if (auto v = index::NamedIndex::parse(e.value)) r.named_indexes.push_back(*v);
  } else if (e.flag == "--index-for") {
    if (auto v = index::IndexPin::parse(e.value)) r.index_for.push_back(*v);
  } else if (e.flag == "--upgrade-package") {
    r.upgrade_packages.push_back(e.value);
  }
}

}  // namespace

namespace detail {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

std::unexpected<core::Error> usage(std::string message, std::vector<std::string> hints) {
  core::Error e = core::make_error(ErrorCode::Usage, std::move(message));
  e.hints = std::move(hints);
  return std::unexpected(e);
}

std::optional<TriedCommand> try_command(const ResolveRequest& request,
                                        const std::vector<FlagEdit>& edits,
                                        const std::vector<std::string>& focus,
                                        index::IndexClient* client) {
  if (request.dry_run) return std::nullopt;
  ResolveRequest r = request;
  r.dry_run = true;
  for (const auto& e : edits)
    apply_edit(r, e);
  auto tried = client != nullptr ? resolve(r, {}, *client) : resolve(r);
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
  if (first.size() > 1 && first[0] >= 'A' && first[0] <= 'Z' &&
      !(first[1] >= 'A' && first[1] <= 'Z')) {
    first[0] = core::ascii_lower(first[0]);
  }
  r.headline = std::move(first);
}

std::string tried_text(const TriedCommand& t) {
  return t.locks.empty() ? fmt::format("`{}` finds a solution", t.command)
                         : fmt::format("`{}` locks {}", t.command, t.locks);
}

std::vector<std::string> focus_of(const std::vector<resolver::Dependency>& requirements) {
  std::vector<std::string> out{"torch"};
  for (const auto& d : requirements)
    out.push_back(d.name);
  return out;
}

}  // namespace detail

// Pages come back with only the wheels these targets can install as files (the rest summarized
// by version): a warm run decodes, ranks and frees a few percent of a big page's files. A wheel
// is kept when one of its tags is supported, as core::TagRanker::rank would find it.
index::ClientOptions client_options_for(const ResolveRequest& request,
                                        const ResolveObserver& observer,
                                        std::span<const Target> targets) {
  index::ClientOptions client_options = request.client;
  if (observer.on_index_event) client_options.observer = observer.on_index_event;
  auto supported = std::make_shared<std::unordered_set<std::string>>();
  for (const auto& target : targets) {
    supported->reserve(supported->size() + target.supported.size());
    for (const auto& t : target.supported) {
      std::string key;
      key.reserve(t.interpreter.size() + t.abi.size() + t.platform.size() + 2);
      key.append(t.interpreter).append(1, '-').append(t.abi).append(1, '-').append(t.platform);
      supported->insert(std::move(key));
    }
  }
  client_options.keep_wheel = [supported](std::span<const core::Tag> tags) {
    std::string key;
    for (const auto& t : tags) {
      key.assign(t.interpreter).append(1, '-').append(t.abi).append(1, '-').append(t.platform);
      if (supported->contains(key)) return true;
    }
    return false;
  };
  return client_options;
}

namespace {

// Issue 43 item 5: "kept X K from L; V is newer for this machine (--upgrade-package X)" claims
// what `--upgrade-package X` gives, so it is printed only when that very edit, solved on the
// same client, locks a version of X newer than K, and V is the version it locked. A dry run
// (a hint being tried) confirms nothing and says nothing.
std::vector<std::string> confirmed_kept_pins(const ResolveRequest& request,
                                             index::IndexClient& client,
                                             const std::vector<catalog::KeptPin>& kept) {
  std::vector<std::string> out;
  if (request.dry_run) return out;
  for (const auto& k : kept) {
    auto tried = detail::try_command(request, {{"--upgrade-package", k.name}}, {k.name}, &client);
    if (!tried || tried->locks.empty()) continue;
    std::string_view locked = tried->locks;
    locked.remove_prefix(std::min(locked.size(), k.name.size() + 1));
    auto newer = core::Version::parse(locked);
    auto old = core::Version::parse(k.kept);
    if (!newer || !old || !(*old < *newer)) continue;
    out.push_back(
        fmt::format("kept {} {} from {}; {} is newer for this machine (--upgrade-package {})",
                    k.name, k.kept, request.output, locked, k.name));
  }
  return out;
}

core::Result<ResolveResult> run_resolve(const ResolveRequest& request,
                                        const ResolveObserver& observer,
                                        index::IndexClient* shared_client);

// After a solve: `--find-links` pages that name another torch build than the one resolved are
// swapped for that build's page and the resolve runs once more (the coupled wheels on them,
// `+pt211cu128`, fit only their torch build). nullopt when no page needs it.
core::Result<std::optional<ResolveResult>> follow_find_links(const ResolveRequest& request,
                                                             const ResolveObserver& observer,
                                                             index::IndexClient& client,
                                                             const catalog::IndexProvider& provider,
                                                             const resolver::Solution* solution) {
  if (request.find_links_followed || request.find_links.empty()) return std::nullopt;
  auto torch = catalog::torch_build_tag(provider.catalog(), solution);
  if (!torch) return std::nullopt;
  ResolveRequest again = request;
  again.find_links_followed = true;
  std::vector<std::string> notes;
  for (auto& url : again.find_links) {
    auto followed = gpu::gpu_stacks().follow_find_links(url, *torch);
    if (!followed) continue;
    notes.push_back(fmt::format(
        "--find-links {} is for another torch build than torch {}: read {} instead (its wheels "
        "are built for one torch build)",
        index::redact_url(url), *torch, index::redact_url(*followed)));
    url = *followed;
  }
  if (notes.empty()) return std::nullopt;
  auto result = run_resolve(again, observer, &client);
  if (!result) return std::unexpected(result.error());
  result->warnings.insert(result->warnings.begin(), notes.begin(), notes.end());
  return std::optional<ResolveResult>(std::move(*result));
}

// The workflow, through `shared_client` or a client of its own.
core::Result<ResolveResult> run_resolve(const ResolveRequest& request,
                                        const ResolveObserver& observer,
                                        index::IndexClient* shared_client) {
  using namespace detail;
  auto start = std::chrono::steady_clock::now();
  Phase phase = [&](std::string_view what) {
    if (observer.on_phase) observer.on_phase(what);
  };
  ResolveResult result;
  std::int64_t now = request.now_micros != 0 ? request.now_micros : clock_micros();
  auto plan = make_plan(request, now, result, phase);
  if (!plan) return std::unexpected(plan.error());

  std::optional<index::IndexClient> own_client;
  if (shared_client == nullptr)
    own_client.emplace(client_options_for(request, observer, std::span(&result.target, 1)));
  index::IndexClient& client = shared_client != nullptr ? *shared_client : *own_client;
  auto finish = [&]() -> core::Result<ResolveResult> {
    result.index_stats = client.stats();
    result.timings.total_ms = elapsed_ms(start);
    return std::move(result);
  };
  if (plan->torch_requested) {
    phase("Checking the PyTorch index");
    auto ended = torch_sources_fail(client, request, *plan, result);
    if (!ended) return std::unexpected(ended.error());
    if (*ended) return finish();
  }
  if (request.nightly) {
    phase("Choosing the nightly date");
    auto ended = choose_nightly(client, request, *plan, result);
    if (!ended) return std::unexpected(ended.error());
    if (*ended) return finish();
  }

  // Solve. The catalog takes the config (no copy of the target's long tag list); the lock's
  // records need only the sources and the nightly date, kept here.
  phase("Resolving");
  auto t_solve = std::chrono::steady_clock::now();
  SourceRecords sources{plan->config.pinned, plan->config.torch, plan->config.general,
                        plan->config.nightly_date};
  catalog::Catalog candidates(client, std::move(plan->config));
  catalog::IndexProvider provider(candidates, [&request](const catalog::Hint& h) {
    return hint_text(h, request.command_line);
  });
  resolver::SolveRequest solve_request{plan->requirements, plan->constraints};
  auto outcome = resolver::solve(provider, solve_request, plan->solve_options);
  result.timings.solve_ms = elapsed_ms(t_solve);
  if (!outcome) return std::unexpected(outcome.error());
  for (auto& w : catalog::warnings(candidates))
    result.warnings.push_back(std::move(w));

  {
    const auto* solved = std::get_if<resolver::Solution>(&*outcome);
    auto followed = follow_find_links(request, observer, client, provider, solved);
    if (!followed) return std::unexpected(followed.error());
    if (*followed) return std::move(**followed);
  }
  if (auto* failure = std::get_if<resolver::NoSolution>(&*outcome)) {
    if (auto s = explain_no_solution(request, *plan, client, provider, *failure, result); !s) {
      return std::unexpected(s.error());
    }
    return finish();
  }
  const auto& solution = std::get<resolver::Solution>(*outcome);
  for (auto& line :
       confirmed_kept_pins(request, client, catalog::kept_pins_beaten(candidates, solution)))
    result.warnings.push_back(std::move(line));
  // Issue 41 item 4: a build passed over because the torch source lacks a name it owns is said,
  // never silent.
  for (const auto& m : catalog::missing_from_torch_source(candidates, provider.hint_writer())) {
    if (solution.find(m.name) != nullptr) continue;
    result.warnings.push_back(fmt::format("{} (that build was passed over); {}", m.line, m.hint));
  }
  result.solved = true;
  result.solve_stats = solution.stats;
  if (auto s = write_lock(request, *plan, sources, client, provider, solution, result, phase); !s) {
    return std::unexpected(s.error());
  }
  return finish();
}

}  // namespace

core::Result<ResolveResult> resolve(const ResolveRequest& request,
                                    const ResolveObserver& observer) {
  return run_resolve(request, observer, nullptr);
}

core::Result<ResolveResult> resolve(const ResolveRequest& request, const ResolveObserver& observer,
                                    index::IndexClient& client) {
  return run_resolve(request, observer, &client);
}

}  // namespace gpulock::app

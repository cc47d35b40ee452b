// A failed solve explained (issues 16 items 8-10): projects no index has come first, then the
// PubGrub proof with its headline, and the fixes it points at as complete commands, each tried
// before it is given.

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/index/url.h"

#include "resolve_steps.h"

namespace gpulock::app::detail {
namespace {

using core::ErrorCode;

struct UnknownProjects {
  std::vector<std::string> lines;  ///< "'x' is not on URL."
  std::vector<std::string> hints;  ///< close names that exist
};

// Issue 16 item 9: a requirement whose project no index has reads as "'x' is not on URL", with
// close names that exist; an index that answered 404 for every project asked (two or more) is
// an error naming it (exit 4): its URL is wrong.
core::Result<UnknownProjects> unknown_projects(
    index::IndexClient& client, const IndexProvider& provider,
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
    for (std::size_t i = 0; i < missing.size() && i < 3; ++i)
      names += (i == 0 ? "" : ", ") + missing[i];
    return std::unexpected(core::make_error(
        ErrorCode::NotFound,
        fmt::format("none of the projects asked for is here ({}{}): is the index URL right?", names,
                    missing.size() > 3 ? ", ..." : ""),
        where));
  }
  for (const auto& d : requirements) {
    if (std::find(missing.begin(), missing.end(), d.name) == missing.end()) continue;
    std::string where;
    auto sources = provider.sources_for(d.name);
    for (const auto* s : sources)
      where += (where.empty() ? "" : ", ") + index::redact_url(s->source.url);
    lines.push_back(fmt::format("'{}' is not on {}.", d.name,
                                where.empty() ? std::string("any index") : where));
    // Close names: the name without separators, and torch-family names it is close to.
    std::string squashed;
    for (char c : d.name) {
      if (c != '-') squashed += c;
    }
    std::vector<std::string> candidates;
    if (squashed != d.name) candidates.push_back(squashed);
    for (const auto& s : sources) {
      for (const auto& c : candidates)
        client.prefetch_project(s->source, c);
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

}  // namespace

core::Status explain_no_solution(const ResolveRequest& request, const ResolvePlan& plan,
                                 index::IndexClient& client, IndexProvider& provider,
                                 const resolver::NoSolution& failure, ResolveResult& result) {
  result.solved = false;
  auto unknown = unknown_projects(client, provider, plan.requirements);
  if (!unknown) return std::unexpected(unknown.error());
  // Pages the hints compare are fetched now, never while the proof is rendered (issue 21).
  provider.fetch_hint_pages(failure.tree);
  for (auto& w : provider.warnings()) {
    if (std::find(result.warnings.begin(), result.warnings.end(), w) == result.warnings.end()) {
      result.warnings.push_back(std::move(w));
    }
  }
  result.explanation = resolver::report(failure, provider);
  // Builds above the ceiling that the explanation names: the driver the lowest one needs.
  for (const auto& d : plan.requirements) {
    bool mentioned = std::any_of(result.explanation.lines.begin(), result.explanation.lines.end(),
                                 [&](const std::string& l) {
                                   return l.find(d.name) != std::string::npos &&
                                          l.find("needs a newer CUDA than") != std::string::npos;
                                 });
    if (!mentioned) continue;
    if (auto hint = provider.cuda_too_new_hint(d.name)) result.explanation.hints.push_back(*hint);
  }
  // The fixes the explanation points at, as complete commands, each tried first (issue 16
  // item 8): a variant with kernels for the GPU, minor-version compatibility, CPU builds.
  for (const auto& backend : provider.arch_fix_backends()) {
    if (request.torch_backend && backend == request.torch_backend->to_string()) continue;
    if (auto t =
            try_command(request, {{"--torch-backend", backend}}, focus_of(plan.requirements))) {
      result.explanation.hints.push_back(
          fmt::format("{}, which has kernels for your GPU", tried_text(*t)));
    }
  }
  if (provider.cuda_hinted() && !request.dry_run) {
    if (plan.gpu.context.no_gpu &&
        !(request.torch_backend && request.torch_backend->kind() == TorchBackend::Kind::Cpu)) {
      if (auto t =
              try_command(request, {{"--torch-backend", "cpu"}}, focus_of(plan.requirements))) {
        result.explanation.hints.push_back(fmt::format("for CPU builds: {}", tried_text(*t)));
      }
    } else if (!plan.gpu.context.no_gpu && plan.gpu.context.ceiling &&
               plan.gpu.context.compat == probe::CudaCompat::Strict) {
      if (auto t =
              try_command(request, {{"--cuda-compat", "minor"}}, focus_of(plan.requirements))) {
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
  result.solve_stats = failure.stats;
  return {};
}

}  // namespace gpulock::app::detail

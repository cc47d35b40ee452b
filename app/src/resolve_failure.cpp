// A failed solve explained (issues 16 items 8-10): projects no index has come first, then the
// PubGrub proof with its headline, and the fixes it points at as complete commands, each tried
// before it is given.

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/gpu/gpu_stacks.h"
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
    index::IndexClient& client, const catalog::IndexProvider& provider,
    const std::vector<resolver::Dependency>& requirements) {
  UnknownProjects out;
  auto& lines = out.lines;
  auto missing = catalog::projects_not_found(provider.catalog());
  if (missing.empty()) return out;
  if (!catalog::any_project_found(provider.catalog()) && missing.size() >= 2) {
    std::string where;
    for (const auto* s : catalog::sources_for(provider.catalog(), missing.front())) {
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
    auto sources = catalog::sources_for(provider.catalog(), d.name);
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
      for (const auto* s : catalog::sources_for(provider.catalog(), c)) {
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

// "jax[cuda12]" -> {"jax", "cuda12"}.
std::pair<std::string_view, std::string_view> form_parts(std::string_view form) {
  auto open = form.find('[');
  if (open == std::string_view::npos) return {form, {}};
  return {form.substr(0, open), form.substr(open + 1, form.size() - open - 2)};
}

bool requirement_is(const resolver::Dependency& d, std::string_view form) {
  auto [name, extra] = form_parts(form);
  if (d.name != name) return false;
  if (extra.empty()) return d.extras.empty();
  return std::find(d.extras.begin(), d.extras.end(), extra) != d.extras.end();
}

// Issue 23: two CUDA majors' libraries in one directory. The fact leads the explanation, in one
// sentence naming both packages and the directory; the fixes are the same stack for the other
// major (the table's `major-fix` rows) and torch from a variant of the other side's major (tried
// first, dry).
void explain_shared_dirs(const ResolveRequest& request, const ResolvePlan& plan,
                         const catalog::IndexProvider& provider,
                         const resolver::DerivationTree& tree, ResolveResult& result) {
  bool majors = std::any_of(tree.nodes.begin(), tree.nodes.end(), [](const auto& node) {
    return std::any_of(node.terms.begin(), node.terms.end(),
                       [](const resolver::Term& t) { return t.package().name == gpu::kCudaMajor; });
  });
  if (!majors) return;
  // A conflict of the proof: one of its two libraries is in it, and two different packages
  // require them (not two builds of one package that the solver tried in turn).
  auto in_tree = [&](std::string_view name) {
    return std::any_of(tree.nodes.begin(), tree.nodes.end(), [&](const auto& node) {
      return std::any_of(node.terms.begin(), node.terms.end(),
                         [&](const resolver::Term& t) { return t.package().name == name; });
    });
  };
  auto base = [](std::string_view who) { return who.substr(0, who.find('[')); };
  auto conflicts = catalog::shared_dir_conflicts(provider.catalog());
  auto it = std::find_if(conflicts.begin(), conflicts.end(), [&](const gpu::SharedDirConflict& x) {
    return (in_tree(x.first.package) || in_tree(x.second.package)) &&
           base(x.first.required_by) != base(x.second.required_by);
  });
  if (it == conflicts.end()) return;
  const auto& c = *it;
  auto& lines = result.explanation.lines;
  lines.insert(lines.begin(), gpu::shared_dir_text(c));
  auto& brief = result.explanation.brief;
  brief.insert(brief.begin(), gpu::shared_dir_text(c));
  lead_with_first_line(result.explanation);
  std::vector<std::string> hints;
  for (const auto& d : plan.requirements) {
    for (const auto& fix : gpu::gpu_stacks().major_fixes) {
      bool is12 = requirement_is(d, fix.cuda12), is13 = requirement_is(d, fix.cuda13);
      if (!is12 && !is13) continue;
      std::uint32_t other = is12 ? 13 : 12;
      if (c.first.major != other && c.second.major != other) continue;
      hints.push_back(fmt::format("for CUDA {} libraries throughout: {}", other,
                                  is12 ? fix.cuda13 : fix.cuda12));
      break;
    }
    if (d.name != "torch" || plan.run.trial) continue;
    // torch on the other side's major: its variants of that major, newest first.
    bool torch_first =
        c.first.required_by.starts_with("torch") || c.first.required_by.starts_with("cuda-toolkit");
    std::uint32_t major = torch_first ? c.second.major : c.first.major;
    static constexpr std::string_view kVariants[] = {"cu130", "cu129", "cu128", "cu126"};
    for (auto backend : kVariants) {
      if (backend.substr(2, 2) != fmt::format("{}", major)) continue;
      if (request.torch_backend && request.torch_backend->to_string() == backend) continue;
      if (auto t = try_command(request, plan.run, {{"--torch-backend", std::string(backend)}},
                               focus_of(plan.requirements))) {
        hints.push_back(fmt::format("torch from /whl/{}: {}", backend, tried_text(*t)));
        break;
      }
    }
  }
  auto& h = result.explanation.hints;
  h.insert(h.begin(), hints.begin(), hints.end());
}

// Issue 23: a CUDA 13 stack (`jax[cuda13]`, `cupy-cuda13x`) on a driver below CUDA 13 or a GPU
// below CUDA 13's arch floor: the same stack for CUDA 12 (the table's `major-fix` rows).
void hint_cuda12_stack(const ResolvePlan& plan, const resolver::DerivationTree& tree,
                       ResolveResult& result) {
  bool ceiling = false, arch = false;
  // The lowest CUDA version that a package of the proof asks for (`X needs CUDA >= 13.0`).
  std::optional<core::Version> needed;
  for (const auto& node : tree.nodes) {
    if (node.kind == resolver::NodeKind::Unavailable &&
        node.reason.kind == resolver::UnavailableKind::GpuArchMissing) {
      arch = true;
    }
    for (const auto& t : node.terms)
      ceiling = ceiling || t.package().name == gpu::kCuda;
    if (node.kind == resolver::NodeKind::Dependency && node.terms.size() == 2 &&
        node.terms[1].package().name == gpu::kCuda) {
      // The edge's specifier is `>=X.Y` (gpu_policy_facts.cpp); the set itself holds only the
      // ceiling, the one version the machine offers.
      const auto& spec = node.terms[1].specifier;
      if (!spec || !spec->starts_with(">=")) continue;
      auto floor = core::Version::parse(std::string_view(*spec).substr(2));
      if (floor && (!needed || *floor < *needed)) needed = *floor;
    }
  }
  const auto& ctx = plan.gpu.context;
  ceiling = ceiling && ctx.ceiling && ctx.ceiling->major < 13 && !ctx.no_gpu;
  if (!ceiling && !arch) return;
  std::string why;
  if (ceiling) {
    auto driver = gpu::min_driver_for_cuda({13, 0}, gpu::CudaCompat::Strict);
    why = fmt::format("CUDA 13 wheels need a driver >= {} and your ceiling is {}",
                      driver ? driver->to_string() : std::string("580"), ctx.ceiling->to_string());
  } else {
    auto floor = gpu::gpu_stacks().arch_floor(13);
    why = fmt::format("CUDA 13 wheels start at {}",
                      floor ? floor->to_string() : std::string("sm_75"));
  }
  auto& hints = result.explanation.hints;
  auto lead = [&](std::string hint) {
    // The generic "a newer CUDA build needs a driver >= <next minor's>" would point at a CUDA
    // 12 driver: this hint names CUDA 13's.
    std::erase_if(hints, [](const std::string& h) {
      return h.starts_with("a newer CUDA build needs a driver >= ");
    });
    hints.insert(hints.begin(), std::move(hint));
  };
  for (const auto& d : plan.requirements) {
    for (const auto& fix : gpu::gpu_stacks().major_fixes) {
      if (!requirement_is(d, fix.cuda13)) continue;
      lead(fmt::format("{}; for CUDA 12 wheels: {}", why, fix.cuda12));
      return;
    }
  }
  if (!ceiling || !needed || needed->release_at(0) < 13) return;
  // A project whose releases change CUDA major (onnxruntime-gpu 1.29+ is CUDA 13): its CUDA 12
  // releases, from the table's `need-release` rows.
  for (const auto& d : plan.requirements) {
    for (const auto& row : gpu::gpu_stacks().need_by_release) {
      if (row.package != d.name || row.major != 12) continue;
      lead(fmt::format("{}; for CUDA 12 wheels: {}{}", why, d.name, row.versions_text));
      return;
    }
  }
  lead(why);
}

// Issue 23: two packages that install one import package (`cupy-cuda12x`, `cupy-cuda13x`): one
// sentence naming both leads the explanation.
std::optional<std::string> import_package_conflict(const resolver::DerivationTree& tree) {
  for (const auto& node : tree.nodes) {
    if (node.kind != resolver::NodeKind::Derived || node.terms.size() != 2) continue;
    // {cupy-cuda12x, cupy-cuda13x}: derived from their two `__import_cupy` edges.
    const auto& c1 = tree.nodes[node.cause1];
    const auto& c2 = tree.nodes[node.cause2];
    if (c1.kind != resolver::NodeKind::Dependency || c2.kind != resolver::NodeKind::Dependency ||
        c1.terms.size() != 2 || c2.terms.size() != 2) {
      continue;
    }
    const auto& import = c1.terms[1].package().name;
    if (!import.starts_with(gpu::kImportPrefix) || c2.terms[1].package().name != import) continue;
    return fmt::format(
        "{} and {} both provide the import package `{}`, and only one of them can be installed",
        c1.terms[0].package().display_name(), c2.terms[0].package().display_name(),
        import.substr(gpu::kImportPrefix.size()));
  }
  return std::nullopt;
}

}  // namespace

std::string hint_text(const catalog::Hint& hint, std::string_view command_line) {
  if (hint.edits.empty()) return hint.text_before + hint.text_after;
  return hint.text_before + core::command_with(command_line, hint.edits) + hint.text_after;
}

core::Status explain_no_solution(const ResolveRequest& request, const ResolvePlan& plan,
                                 index::IndexClient& client, catalog::IndexProvider& provider,
                                 const resolver::NoSolution& failure, ResolveResult& result) {
  result.solved = false;
  auto unknown = unknown_projects(client, provider, plan.requirements);
  if (!unknown) return std::unexpected(unknown.error());
  // Pages the hints compare are fetched now, never while the proof is rendered (issue 21).
  catalog::fetch_hint_pages(provider.catalog(), failure.tree);
  // Proven words (issue 43 item 5): the fix hints the explanation would give, tried first.
  confirm_fix_hints(request, plan.run, client, provider.catalog(), &failure.tree, nullptr);
  for (auto& w : catalog::warnings(provider.catalog())) {
    if (std::find(result.warnings.begin(), result.warnings.end(), w) == result.warnings.end()) {
      result.warnings.push_back(std::move(w));
    }
  }
  result.explanation = resolver::report(failure, provider);
  explain_shared_dirs(request, plan, provider, failure.tree, result);
  hint_cuda12_stack(plan, failure.tree, result);
  if (auto import = import_package_conflict(failure.tree)) {
    result.explanation.lines.insert(result.explanation.lines.begin(), *import);
    result.explanation.brief.insert(result.explanation.brief.begin(), *import);
    lead_with_first_line(result.explanation);
  }
  if (auto pins = catalog::library_pin_conflict(provider.catalog(), failure.tree)) {
    result.explanation.lines.insert(result.explanation.lines.begin(), *pins);
    result.explanation.brief.insert(result.explanation.brief.begin(), *pins);
    lead_with_first_line(result.explanation);
  }
  // Builds above the ceiling that the explanation names: the driver the lowest one needs.
  for (const auto& d : plan.requirements) {
    bool mentioned = std::any_of(result.explanation.lines.begin(), result.explanation.lines.end(),
                                 [&](const std::string& l) {
                                   return l.find(d.name) != std::string::npos &&
                                          l.find("needs a newer CUDA than") != std::string::npos;
                                 });
    if (!mentioned) continue;
    if (auto hint = catalog::cuda_too_new_hint(provider.catalog(), d.name, d.specifier)) {
      result.explanation.hints.push_back(*hint);
    }
  }
  // The fixes the explanation points at, as complete commands, each tried first (issue 16
  // item 8): a variant with kernels for the GPU, minor-version compatibility, CPU builds.
  for (const auto& backend : catalog::arch_fix_backends(provider.catalog())) {
    if (request.torch_backend && backend == request.torch_backend->to_string()) continue;
    if (auto t = try_command(request, plan.run, {{"--torch-backend", backend}},
                             focus_of(plan.requirements), &client)) {
      result.explanation.hints.push_back(
          fmt::format("{}, which has kernels for your GPU", tried_text(*t)));
    }
  }
  if (catalog::cuda_hinted(provider.catalog()) && !plan.run.trial) {
    if (plan.gpu.context.no_gpu &&
        !(request.torch_backend && request.torch_backend->kind() == TorchBackend::Kind::Cpu)) {
      if (auto t = try_command(request, plan.run, {{"--torch-backend", "cpu"}},
                               focus_of(plan.requirements), &client)) {
        result.explanation.hints.push_back(fmt::format("for CPU builds: {}", tried_text(*t)));
      }
    } else if (!plan.gpu.context.no_gpu && plan.gpu.context.ceiling &&
               plan.gpu.context.compat == gpu::CudaCompat::Strict) {
      if (auto t = try_command(request, plan.run, {{"--cuda-compat", "minor"}},
                               focus_of(plan.requirements), &client)) {
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
  // Issue 41 item 4: a name the torch source owns and lacks leads, with its way out before any
  // driver hint.
  std::vector<std::string> missing_lines, missing_hints;
  for (const auto& m :
       catalog::missing_from_torch_source(provider.catalog(), provider.hint_writer())) {
    bool in_proof =
        std::any_of(failure.tree.nodes.begin(), failure.tree.nodes.end(), [&](const auto& node) {
          return std::any_of(node.terms.begin(), node.terms.end(),
                             [&](const auto& t) { return t.package().name == m.name; });
        });
    if (!in_proof) continue;
    missing_lines.push_back(m.line);
    missing_hints.push_back(m.hint);
  }
  if (!missing_lines.empty()) {
    auto& lines = result.explanation.lines;
    lines.insert(lines.begin(), missing_lines.begin(), missing_lines.end());
    auto& brief = result.explanation.brief;
    brief.insert(brief.begin(), missing_lines.begin(), missing_lines.end());
    lead_with_first_line(result.explanation);
    auto& hints = result.explanation.hints;
    hints.insert(hints.begin(), missing_hints.begin(), missing_hints.end());
  }
  result.solve_stats = failure.stats;
  return {};
}

}  // namespace gpulock::app::detail

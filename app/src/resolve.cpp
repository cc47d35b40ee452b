// app::resolve(): the resolve workflow as a session (resolve_session.h), one step per phase
// (resolve_steps.h has the data flow): the plan, the torch sources and nightly date, the solve,
// then the lock or the explanation. This file also holds what every step shares: usage errors
// and the hint commands tried first.

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

// How many times the solve runs again after judging the chosen wheels' files (issue 44).
constexpr int kWheelFileRounds = 8;

using core::ErrorCode;

std::int64_t clock_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One flag of a suggested command, applied to a request through the flag's row of the options
// table (resolve_request.h), so through its own parser: the command a hint prints is exactly
// what was tried. A value that does not parse (none does: gpulock writes them) leaves the
// request as it was.
void apply_edit(ResolveRequest& r, const FlagEdit& e) {
  if (const RequestOption* option = find_request_option(e.flag)) {
    (void)option->apply(r, e.value);
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

std::optional<TriedCommand> try_command(const ResolveRequest& request, const ResolveRun& run,
                                        const std::vector<FlagEdit>& edits,
                                        const std::vector<std::string>& focus,
                                        index::IndexClient* client) {
  if (run.trial) return std::nullopt;
  ResolveRequest r = request;
  for (const auto& e : edits)
    apply_edit(r, e);
  ResolveRun trial = run;
  trial.trial = true;
  ResolveSession session(r, std::move(trial), {}, client);
  auto solved = session.plan_and_solve();
  if (!solved || *solved == nullptr) return std::nullopt;
  TriedCommand t{command_with(request.command_line, edits), {}, {}};
  for (const auto& name : focus) {
    const auto* chosen = (*solved)->find(name);
    if (chosen == nullptr || chosen->is_virtual) continue;
    t.locks = fmt::format("{} {}", chosen->name, chosen->version.to_string());
    t.version = chosen->version;
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
// same client, locks a version of X newer than K, and V is the version it locked. A trial
// confirms nothing and says nothing.
std::vector<std::string> confirmed_kept_pins(const ResolveRequest& request, const ResolveRun& run,
                                             index::IndexClient& client,
                                             const std::vector<catalog::KeptPin>& kept) {
  std::vector<std::string> out;
  if (run.trial) return out;
  for (const auto& k : kept) {
    auto tried = try_command(request, run, {{"--upgrade-package", k.name}}, {k.name}, &client);
    if (!tried || !tried->version) continue;
    auto old = core::Version::parse(k.kept);
    if (!old || !(*old < *tried->version)) continue;
    out.push_back(
        fmt::format("kept {} {} from {}; {} is newer for this machine (--upgrade-package {})",
                    k.name, k.kept, request.output, tried->version->to_string(), k.name));
  }
  return out;
}

// Whether `hint`'s edits, solved on the same client, give what `fix` claims: a solution, and
// with a focus, that package locked newer than the build that was passed over.
bool fix_works(const ResolveRequest& request, const ResolveRun& run, index::IndexClient& client,
               const catalog::FixHint& fix, const catalog::Hint& hint) {
  std::vector<std::string> focus;
  if (!fix.focus.empty()) focus.push_back(fix.focus);
  auto tried = try_command(request, run, hint.edits, focus, &client);
  if (!tried) return false;
  if (fix.focus.empty() || !fix.newer_than) return true;
  return tried->version && *fix.newer_than < *tried->version;
}

}  // namespace

void confirm_fix_hints(const ResolveRequest& request, const ResolveRun& run,
                       index::IndexClient& client, catalog::Catalog& catalog,
                       const resolver::DerivationTree* tree, const resolver::Solution* solution) {
  if (run.trial) return;
  std::vector<catalog::HintVerdict> verdicts;
  for (const auto& fix : catalog::fix_hints(catalog, tree, solution)) {
    catalog::HintVerdict v{fix.key, fix_works(request, run, client, fix, fix.hint), std::nullopt};
    for (std::size_t i = 0; !v.confirmed && !v.instead && i < fix.alternatives.size(); ++i) {
      if (fix_works(request, run, client, fix, fix.alternatives[i]))
        v.instead = fix.alternatives[i];
    }
    verdicts.push_back(std::move(v));
  }
  catalog::set_hint_verdicts(catalog, verdicts);
}

// What the solve leaves for write(): the catalog (it answers the questions the lock and the
// explanation ask, catalog/after_solve.h) and its adapter, the sources as given, and the outcome.
struct SolveState {
  SourceRecords sources;
  std::unique_ptr<catalog::Catalog> catalog;
  std::unique_ptr<catalog::IndexProvider> provider;
  resolver::Outcome outcome;
  // The last solve's wheels still gave new findings after kWheelFileRounds solves: its set may
  // break a rule between its wheels (issue 44; write() looks).
  bool unsettled = false;
};

ResolveSession::ResolveSession(const ResolveRequest& request, ResolveRun run,
                               const ResolveObserver& observer, index::IndexClient* client)
    : request_(request),
      run_(std::move(run)),
      observer_(observer),
      start_(std::chrono::steady_clock::now()),
      client_(client) {}

ResolveSession::~ResolveSession() = default;

void ResolveSession::phase(std::string_view what) const {
  if (observer_.on_phase) observer_.on_phase(what);
}

core::Status ResolveSession::plan() {
  std::int64_t now = run_.now_micros != 0 ? run_.now_micros : clock_micros();
  auto made = make_plan(request_, run_, now, result_, [this](std::string_view w) { phase(w); });
  if (!made) return std::unexpected(made.error());
  plan_ = std::make_unique<ResolvePlan>(std::move(*made));
  if (client_ == nullptr) {
    own_client_.emplace(client_options_for(request_, observer_, std::span(&result_.target, 1)));
    client_ = &*own_client_;
  }
  return {};
}

core::Result<bool> ResolveSession::solve() {
  index::IndexClient& client = *client_;
  ResolvePlan& plan = *plan_;
  if (plan.torch_requested) {
    phase("Checking the PyTorch index");
    auto ended = torch_sources_fail(client, request_, plan, result_);
    if (!ended) return std::unexpected(ended.error());
    if (*ended) return false;
  }
  if (request_.nightly) {
    phase("Choosing the nightly date");
    auto ended = choose_nightly(client, request_, plan, result_);
    if (!ended) return std::unexpected(ended.error());
    if (*ended) return false;
  }

  // Solve. The catalog takes the config (no copy of the target's long tag list); the lock's
  // records need only the sources and the nightly date, kept here. Its hints are rendered as this
  // run's command line with their edits (detail::hint_text).
  phase("Resolving");
  auto t_solve = std::chrono::steady_clock::now();
  SourceRecords sources{plan.config.pinned, plan.config.torch, plan.config.general,
                        plan.config.nightly_date};
  auto candidates = std::make_unique<catalog::Catalog>(client, std::move(plan.config));
  auto provider = std::make_unique<catalog::IndexProvider>(
      *candidates, [this](const catalog::Hint& h) { return hint_text(h, request_.command_line); });
  resolver::SolveRequest solve_request{plan.requirements, plan.constraints};
  auto outcome = resolver::solve(*provider, solve_request, plan.solve_options);
  // Issue 44 item 3: the chosen wheels' file lists are judged (catalog::judge_wheel_files). A
  // wheel whose own files leave a hazard is offered again as yanked, so it stays only where a
  // requirement pins it exactly; two wheels writing one path get a conflict rule. The solve then
  // runs again. Each round judges only what is new; a solution that gives nothing new breaks no
  // rule (the solver kept every one found). After the last round, write() looks at the set.
  bool unsettled = false;
  for (int round = 0; outcome; ++round) {
    const auto* solution = std::get_if<resolver::Solution>(&*outcome);
    if (solution == nullptr || catalog::judge_wheel_files(*candidates, *solution) == 0) break;
    if (round == kWheelFileRounds) {
      unsettled = true;
      break;
    }
    outcome = resolver::solve(*provider, solve_request, plan.solve_options);
  }
  result_.timings.solve_ms = elapsed_ms(t_solve);
  if (!outcome) return std::unexpected(outcome.error());
  for (auto& w : catalog::warnings(*candidates))
    result_.warnings.push_back(std::move(w));
  solved_ =
      std::make_unique<SolveState>(SolveState{std::move(sources), std::move(candidates),
                                              std::move(provider), std::move(*outcome), unsettled});

  // `--find-links` pages that name another torch build than the one resolved are swapped for
  // that build's page and the resolve runs once more (the coupled wheels on them, `+pt211cu128`,
  // fit only their torch build).
  if (run_.find_links_followed || request_.find_links.empty()) return true;
  auto torch = catalog::torch_build_tag(*solved_->catalog,
                                        std::get_if<resolver::Solution>(&solved_->outcome));
  if (!torch) return true;
  auto again = std::make_unique<ResolveRequest>(request_);
  std::vector<std::string> notes;
  for (auto& url : again->find_links) {
    auto followed = gpu::gpu_stacks().follow_find_links(url, *torch);
    if (!followed) continue;
    notes.push_back(fmt::format(
        "--find-links {} is for another torch build than torch {}: read {} instead (its wheels "
        "are built for one torch build)",
        index::redact_url(url), *torch, index::redact_url(*followed)));
    url = *followed;
  }
  if (notes.empty()) return true;
  ResolveRun run = run_;
  run.find_links_followed = true;
  followed_request_ = std::move(again);
  followed_ =
      std::make_unique<ResolveSession>(*followed_request_, std::move(run), observer_, &client);
  result_.warnings = std::move(notes);
  return false;
}

core::Status ResolveSession::write() {
  auto& provider = *solved_->provider;
  if (auto* failure = std::get_if<resolver::NoSolution>(&solved_->outcome)) {
    return explain_no_solution(request_, *plan_, *client_, provider, *failure, result_);
  }
  const auto& solution = std::get<resolver::Solution>(solved_->outcome);
  // Proven words (issue 43 item 5): the fix hints the warnings and skipped reasons would give,
  // tried before they are worded.
  confirm_fix_hints(request_, run_, *client_, *solved_->catalog, nullptr, &solution);
  for (auto& line : confirmed_kept_pins(request_, run_, *client_,
                                        catalog::kept_pins_beaten(*solved_->catalog, solution)))
    result_.warnings.push_back(std::move(line));
  // Issue 41 item 4: a build passed over because the torch source lacks a name it owns is said,
  // never silent.
  for (const auto& m :
       catalog::missing_from_torch_source(*solved_->catalog, provider.hint_writer())) {
    if (solution.find(m.name) != nullptr) continue;
    result_.warnings.push_back(fmt::format("{} (that build was passed over); {}", m.line, m.hint));
  }
  if (solved_->unsettled && !request_.allow_incomplete) {
    // The rounds ended with a set that still breaks a rule between its wheels.
    auto conflicts = catalog::set_conflicts(*solved_->catalog, solution);
    if (!conflicts.empty()) {
      resolver::Report& r = result_.explanation;
      r.headline = conflicts.front().text;
      r.lines.push_back(fmt::format(
          "The solves stopped after {} rounds, each avoiding the conflicts the one before found, "
          "at a set that still breaks a rule between its wheels:",
          kWheelFileRounds));
      for (const auto& c : conflicts)
        r.lines.push_back(c.text);
      r.brief = r.lines;
      r.hints.push_back(
          "--allow-incomplete locks this set anyway, with a warning and the "
          "conflict recorded in the lock");
      return {};
    }
  }
  result_.solved = true;
  result_.solve_stats = solution.stats;
  return write_lock(request_, *plan_, solved_->sources, *client_, provider, solution, result_,
                    [this](std::string_view w) { phase(w); });
}

ResolveResult ResolveSession::finish() {
  result_.index_stats = client_->stats();
  result_.timings.total_ms = elapsed_ms(start_);
  return std::move(result_);
}

core::Result<ResolveResult> ResolveSession::run() {
  if (auto s = plan(); !s) return std::unexpected(s.error());
  auto go_on = solve();
  if (!go_on) return std::unexpected(go_on.error());
  if (followed_) {
    // The notes on the pages swapped come first, then the second run's own words.
    auto result = followed_->run();
    if (!result) return std::unexpected(result.error());
    result->warnings.insert(result->warnings.begin(), result_.warnings.begin(),
                            result_.warnings.end());
    return result;
  }
  if (*go_on) {
    if (auto s = write(); !s) return std::unexpected(s.error());
  }
  return finish();
}

core::Result<const resolver::Solution*> ResolveSession::plan_and_solve() {
  if (auto s = plan(); !s) return std::unexpected(s.error());
  auto go_on = solve();
  if (!go_on) return std::unexpected(go_on.error());
  if (followed_) return followed_->plan_and_solve();
  if (!*go_on) return nullptr;
  return std::get_if<resolver::Solution>(&solved_->outcome);
}

}  // namespace detail

core::Result<ResolveResult> resolve(const ResolveRequest& request,
                                    const ResolveObserver& observer) {
  return detail::ResolveSession(request, {}, observer, nullptr).run();
}

}  // namespace gpulock::app

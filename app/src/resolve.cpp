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

#include "resolve_steps.h"

namespace gpulock::app {
namespace {

using core::ErrorCode;

std::int64_t clock_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
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

// Pages come back with only the wheels this target can install as files (the rest summarized
// by version): a warm run decodes, ranks and frees a few percent of a big page's files. A wheel
// is kept when one of its tags is supported, as core::TagRanker::rank would find it.
index::ClientOptions client_options_for(const ResolveRequest& request, const ResolveObserver& observer,
                                        const Target& target) {
  index::ClientOptions client_options = request.client;
  if (observer.on_index_event) client_options.observer = observer.on_index_event;
  auto supported = std::make_shared<std::unordered_set<std::string>>();
  supported->reserve(target.supported.size());
  for (const auto& t : target.supported) {
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
  return client_options;
}

}  // namespace

namespace detail {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::unexpected<core::Error> usage(std::string message, std::vector<std::string> hints) {
  core::Error e = core::make_error(ErrorCode::Usage, std::move(message));
  e.hints = std::move(hints);
  return std::unexpected(e);
}

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

std::vector<std::string> focus_of(const std::vector<resolver::Dependency>& requirements) {
  std::vector<std::string> out{"torch"};
  for (const auto& d : requirements) out.push_back(d.name);
  return out;
}

}  // namespace detail

using detail::usage;

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
  using namespace detail;
  auto start = std::chrono::steady_clock::now();
  Phase phase = [&](std::string_view what) {
    if (observer.on_phase) observer.on_phase(what);
  };
  ResolveResult result;
  std::int64_t now = request.now_micros != 0 ? request.now_micros : clock_micros();
  auto plan = make_plan(request, now, result, phase);
  if (!plan) return std::unexpected(plan.error());

  index::IndexClient client(client_options_for(request, observer, result.target));
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
  if (!request.nightly.empty()) {
    phase("Choosing the nightly date");
    auto ended = choose_nightly(client, request, *plan, result);
    if (!ended) return std::unexpected(ended.error());
    if (*ended) return finish();
  }

  // Solve. The provider takes the config (no copy of the target's long tag list); the lock's
  // records need only the sources and the nightly date, kept here.
  phase("Resolving");
  auto t_solve = std::chrono::steady_clock::now();
  SourceRecords sources{plan->config.pinned, plan->config.torch, plan->config.general, plan->config.nightly_date};
  IndexProvider provider(client, std::move(plan->config));
  resolver::SolveRequest solve_request{plan->requirements, plan->constraints};
  auto outcome = resolver::solve(provider, solve_request, plan->solve_options);
  result.timings.solve_ms = elapsed_ms(t_solve);
  if (!outcome) return std::unexpected(outcome.error());
  for (auto& w : provider.warnings()) result.warnings.push_back(std::move(w));

  if (auto* failure = std::get_if<resolver::NoSolution>(&*outcome)) {
    if (auto s = explain_no_solution(request, *plan, client, provider, *failure, result); !s) {
      return std::unexpected(s.error());
    }
    return finish();
  }
  const auto& solution = std::get<resolver::Solution>(*outcome);
  for (auto& line : provider.kept_pins_beaten(solution, request.output)) result.warnings.push_back(std::move(line));
  result.solved = true;
  result.solve_stats = solution.stats;
  if (auto s = write_lock(request, *plan, sources, client, provider, solution, result, phase); !s) {
    return std::unexpected(s.error());
  }
  return finish();
}

}  // namespace gpulock::app

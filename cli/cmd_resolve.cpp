// `gpulock resolve`: compute one consistent set of wheels for the target and write it as a
// PEP 751 pylock.toml (DESIGN.md §Commands). Progress on a TTY, the result on stdout/stderr,
// `--explain` for people and `--report FILE` or `--json` (the report on stdout; schema in
// docs/schemas/resolve.schema.json, with targets resolve-targets.schema.json) for tools.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/resolve.h"
#include "gpulock/app/targets.h"
#include "gpulock/catalog/source.h"
#include "gpulock/index/url.h"

#include "cache_flags.h"
#include "command.h"
#include "config_flags.h"
#include "exit_codes.h"
#include "json_writer.h"
#include "resolve_flags.h"

namespace gpulock::cli {
namespace {

struct ResolveArgs {
  ResolveFlags flags;
  bool all_targets = false;          ///< --all-targets
  std::vector<std::string> targets;  ///< --target NAME
  bool independent_targets = false;  ///< --independent-targets
  bool explain = false;
  bool json = false;  ///< --json: the report on stdout, the lock to -o (default pylock.toml)
  std::string report;
  CacheFlags cache;
};

std::string requirer_text(const resolver::Requirer& r) {
  if (r.package.empty()) return fmt::format("you ({})", r.requirement);
  return fmt::format("{} {} ({})", r.package, r.version ? r.version->to_string() : "",
                     r.requirement);
}

std::string report_json(const app::ResolveResult& result, const app::ResolveRequest& request) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.resolve-report/2");
  w.field("solved", result.solved);
  w.field("output", request.output);
  w.key("target").begin_object();
  w.field("python", result.target.python_version);
  w.field("platform", result.target.platform);
  w.end_object();
  if (!result.gpu_summary.empty()) w.field("gpu", result.gpu_summary);
  w.key("packages").begin_array();
  for (const auto& p : result.why) {
    w.begin_object();
    w.field("name", p.name);
    w.field("version", p.version);
    w.field("index", p.source);
    w.field("file", p.file);
    w.key("required_by").begin_array();
    for (const auto& r : p.required_by) {
      w.begin_object();
      w.field("package", r.package.empty() ? std::string("(requirements)") : r.package);
      if (r.version) w.field("version", r.version->to_string());
      w.field("requirement", r.requirement);
      w.end_object();
    }
    w.end_array();
    w.field("notes", p.notes);
    w.key("skipped").begin_array();
    for (const auto& sk : p.skipped) {
      w.begin_object();
      w.field("version", sk.version);
      w.field("kind", sk.kind);
      w.field("reason", sk.reason);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  if (!result.solved) {
    w.field("headline", result.explanation.headline);
    w.field("explanation", result.explanation.lines);
    w.field("hints", result.explanation.hints);
  }
  w.field("warnings", result.warnings);
  w.key("timings_ms").begin_object();
  w.field("total", result.timings.total_ms);
  w.field("machine", result.timings.machine_ms);
  w.field("inputs", result.timings.inputs_ms);
  w.field("solve", result.timings.solve_ms);
  w.field("lock", result.timings.lock_ms);
  w.end_object();
  const auto& s = result.index_stats;
  w.key("requests").begin_object();
  w.field("total", s.requests);
  w.field("pages", s.page_requests);
  w.field("metadata", s.metadata_requests);
  w.field("range", s.range_requests);
  w.field("download", s.download_requests);
  w.field("digest", s.digest_requests);
  w.field("not_modified", s.not_modified);
  w.field("page_cache_hits", s.page_cache_hits);
  w.field("metadata_cache_hits", s.metadata_cache_hits);
  w.field("bytes_received", s.bytes_received);
  // Issue 44: wheel file lists, by how they were read.
  w.field("members_range", s.range_members);
  w.field("members_download", s.downloaded_members);
  w.field("members_cache_hits", s.members_cache_hits);
  w.end_object();
  const auto& st = result.solve_stats;
  w.key("solver").begin_object();
  w.field("decisions", static_cast<std::uint64_t>(st.decisions));
  w.field("conflicts", static_cast<std::uint64_t>(st.conflicts));
  w.field("backtracks", static_cast<std::uint64_t>(st.backtracks));
  w.field("packages", static_cast<std::uint64_t>(st.packages));
  w.end_object();
  w.end_object();
  return w.str();
}

std::string explain_text(const app::ResolveResult& result) {
  std::string out;
  out += fmt::format("Target: Python {} on {}\n", result.target.python_version,
                     result.target.platform);
  if (!result.gpu_summary.empty()) out += result.gpu_summary + "\n";
  for (const auto& p : result.why) {
    out += fmt::format("{} {}\n", p.name, p.version);
    out += fmt::format("  from {} ({})\n",
                       p.source.empty() ? std::string("(find-links)") : p.source, p.file);
    for (const auto& r : p.required_by)
      out += fmt::format("  required by {}\n", requirer_text(r));
    for (const auto& n : p.notes)
      out += fmt::format("  {}\n", n);
    // Candidates preferred over this one that were passed over (torch family), a few at most.
    constexpr std::size_t kShown = 5;
    for (std::size_t i = 0; i < p.skipped.size() && i < kShown; ++i) {
      out +=
          fmt::format("  skipped {} {}: {}\n", p.name, p.skipped[i].version, p.skipped[i].reason);
    }
    if (p.skipped.size() > kShown) {
      out += fmt::format("  skipped {} more newer candidate{} (see --report)\n",
                         p.skipped.size() - kShown, p.skipped.size() - kShown == 1 ? "" : "s");
    }
  }
  return out;
}

// The setting that names a source of `role` ("" for none: a direct reference).
std::string_view key_of_source(const catalog::Source& source) {
  if (source.is<catalog::Direct>()) return "";
  if (source.is<catalog::FindLinks>()) return "find-links";
  switch (source.role) {
    case catalog::Role::Pinned:
      return "index";
    case catalog::Role::Family:
      return "torch-backend";
    case catalog::Role::Default:
      return "index-url";
    case catalog::Role::Extra:
      break;
  }
  return "extra-index-url";
}

// Where an index of the lock came from: the setting of its role.
std::string index_origin(const app::Config& config, std::string_view role) {
  const auto source = catalog::read_recorded_role(role);
  std::string_view key = source ? key_of_source(*source) : "";
  const app::Setting* s = key.empty() ? nullptr : config.find(key);
  if (s == nullptr && source && source->role == catalog::Role::Family) s = config.find("nightly");
  if (s == nullptr) return "default";
  return s->origin.to_string();
}

// What a resolve shows while it runs (one command or a set of targets): -v, every index page
// asked for and every cache hit (-vv: metadata too); else on a TTY one progress line, metadata
// fetched / requested (and pages), cache hits counted as fetched so a warm run shows its totals.
// Nothing when stderr is not a terminal.
app::ResolveObserver resolve_observer(Terminal& term) {
  struct Counts {
    std::atomic<std::uint64_t> meta_done{0}, meta_total{0}, pages_done{0}, pages_total{0};
  };
  auto counts = std::make_shared<Counts>();
  auto mutex = std::make_shared<std::mutex>();
  app::ResolveObserver observer;
  if (term.verbosity() >= 1 && !term.quiet()) {
    // -v: every index page asked for and every cache hit, one line each (-vv: metadata too).
    observer.on_index_event = [&term, mutex](const index::ClientEvent& e) {
      using Kind = index::RequestKind;
      using Type = index::ClientEvent::Type;
      const int level = e.kind == Kind::Page ? 1 : 2;
      std::string line;
      if (e.type == Type::CacheHit) {
        line = fmt::format("cache {} {}", index::request_kind_name(e.kind), e.url);
      } else if (e.type == Type::RequestFinished) {
        line = fmt::format(
            "fetch {} {} ({}, {})", index::request_kind_name(e.kind), e.url,
            e.status == 0 ? std::string("no response") : fmt::format("HTTP {}", e.status),
            index::format_byte_size(e.bytes));
      } else if (e.type == Type::Retry) {
        line = fmt::format("retry {} {}: {}", index::request_kind_name(e.kind), e.url, e.message);
      } else {
        return;
      }
      // No control byte from a server reaches the terminal (issue 17).
      for (char& c : line) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
      }
      std::lock_guard lock(*mutex);
      term.info(line, level);
    };
  } else if (term.stderr_is_tty() && !term.quiet()) {
    observer.on_index_event = [&term, counts, mutex](const index::ClientEvent& e) {
      using Kind = index::RequestKind;
      using Type = index::ClientEvent::Type;
      bool meta = e.kind == Kind::Metadata || e.kind == Kind::Range || e.kind == Kind::Download;
      bool page = e.kind == Kind::Page;
      if (!meta && !page) return;
      auto& done = meta ? counts->meta_done : counts->pages_done;
      auto& total = meta ? counts->meta_total : counts->pages_total;
      if (e.type == Type::RequestStarted) {
        ++total;
      } else if (e.type == Type::RequestFinished) {
        ++done;
      } else if (e.type == Type::CacheHit) {
        ++total;
        ++done;
      } else {
        return;
      }
      std::lock_guard lock(*mutex);
      term.progress(fmt::format("Resolving  {}/{} metadata fetched, {}/{} pages",
                                counts->meta_done.load(), counts->meta_total.load(),
                                counts->pages_done.load(), counts->pages_total.load()));
    };
    observer.on_phase = [&term, mutex](std::string_view what) {
      std::lock_guard lock(*mutex);
      term.progress(std::string(what));
    };
  }
  return observer;
}

// No solution: the deciding fact first; the proof trimmed of what does not lead to it, whole
// under --explain (issue 16 item 10); then the hints.
int report_no_solution(Terminal& term, const app::ResolveResult& result, bool explain) {
  const auto& why = result.explanation;
  term.error("no solution: " +
             (why.headline.empty()
                  ? std::string("the requirements cannot be satisfied together for this target")
                  : why.headline));
  std::string text;
  for (const auto& line : explain || why.brief.empty() ? why.lines : why.brief) {
    text += line.empty() ? "\n" : "  " + line + "\n";
  }
  term.err(text);
  for (const auto& h : why.hints)
    term.hint(h);
  return kExitFinding;
}

// `resolve --all-targets --json`: each target's outcome, the set written or not.
std::string targets_json(const app::TargetsOutcome& outcomes, bool all) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.resolve-targets/1");
  w.field("solved", all);
  w.field("written", all);
  w.key("targets").begin_array();
  for (const auto& o : outcomes.targets) {
    w.begin_object();
    w.field("name", o.name);
    w.field("output", o.output);
    w.field("solved", o.result.solved);
    w.field("packages", static_cast<std::uint64_t>(o.result.lock.packages.size()));
    w.key("gpu").value_or_null(o.result.gpu_summary);
    w.key("headline")
        .value_or_null(o.result.solved ? std::string() : o.result.explanation.headline);
    w.field("warnings", o.result.warnings);
    w.end_object();
  }
  w.end_array();
  w.field("alignment", outcomes.alignment);
  w.end_object();
  return w.str();
}

// `resolve --all-targets` / `--target NAME` (issue 22): every declared target's lock, written as
// a set only when every target solved.
int run_targets(Context& ctx, const ResolveArgs& a, app::ResolveRequest request,
                const CLI::App& sub) {
  auto& term = ctx.term;
  for (const char* machine_flag : {"--driver", "--cuda-ceiling", "--gpu-arch", "--python",
                                   "--python-version", "--platform", "--report"}) {
    if (sub.get_option(machine_flag)->count() > 0) {
      return report_error(
          term, core::make_error(
                    core::ErrorCode::Usage,
                    fmt::format("{} with {}: each target declares its own machine", machine_flag,
                                a.all_targets ? "--all-targets" : "--target")));
    }
  }
  std::error_code ec;
  auto declared = app::read_targets(request.project, std::filesystem::current_path(ec));
  if (!declared) return report_error(term, declared.error());
  std::vector<app::TargetSpec> chosen;
  for (const auto& t : declared->targets) {
    if (a.all_targets || std::find(a.targets.begin(), a.targets.end(), t.name) != a.targets.end())
      chosen.push_back(t);
  }
  for (const auto& name : a.targets) {
    if (std::none_of(chosen.begin(), chosen.end(),
                     [&](const app::TargetSpec& t) { return t.name == name; })) {
      return report_error(
          term, core::make_error(core::ErrorCode::Usage,
                                 fmt::format("no target '{}' in {}", name, declared->file)));
    }
  }
  // Locks go beside the file that declares the targets, or into -o DIR.
  std::filesystem::path dir = std::filesystem::path(declared->file).parent_path();
  if (sub.get_option("--output")->count() > 0) {
    if (!std::filesystem::is_directory(request.output, ec)) {
      return report_error(
          term, core::make_error(core::ErrorCode::Usage,
                                 fmt::format("-o {} is not a directory: with targets, -o names the "
                                             "directory of the pylock.<name>.toml locks",
                                             request.output)));
    }
    dir = request.output;
  }
  request.command_line = index::redact_text(ctx.command_line);
  app::ResolveObserver observer = resolve_observer(term);
  auto outcomes = app::resolve_targets(request, chosen, dir, observer,
                                       app::TargetsOptions{a.independent_targets});
  term.progress("");
  if (!outcomes) return report_error(term, outcomes.error());
  bool all = std::all_of(outcomes->targets.begin(), outcomes->targets.end(),
                         [](const app::TargetOutcome& o) { return o.result.solved; });
  for (const auto& o : outcomes->targets) {
    for (const auto& w : o.result.warnings)
      term.warning(fmt::format("target '{}': {}", o.name, w));
    if (!o.result.solved) {
      const auto& why = o.result.explanation;
      term.error(fmt::format("no solution for target '{}': {}", o.name, why.headline));
      std::string text;
      for (const auto& line : why.brief.empty() ? why.lines : why.brief)
        text += line.empty() ? "\n" : "  " + line + "\n";
      term.err(text);
      continue;
    }
    if (term.quiet()) continue;
    std::size_t n = o.result.lock.packages.size();
    term.err(
        fmt::format("target {}: {} package{}{}{}\n", o.name, n, n == 1 ? "" : "s",
                    all ? fmt::format("; wrote {}", o.output) : std::string(),
                    o.result.gpu_summary.empty() ? std::string() : "\n  " + o.result.gpu_summary));
  }
  if (a.json) term.out(targets_json(*outcomes, all));
  if (!all) {
    term.err("No lock was changed: every target must solve for the set to be written.\n");
    return kExitFinding;
  }
  // Where a target could not take the version the others share (--independent-targets: none).
  if (!term.quiet()) {
    for (const auto& line : outcomes->alignment)
      term.err(line + "\n");
  }
  return kExitSuccess;
}

RunFn setup(CLI::App& sub) {
  auto a = std::make_shared<ResolveArgs>();
  auto& r = a->flags.request;
  // What is resolved and for which target: declared once, with check (resolve_flags.h).
  (void)add_resolve_input_flags(sub, a->flags);
  add_resolve_source_and_machine_flags(sub, a->flags);
  sub.add_option("-o,--output", r.output, "Lock file to write ('-' for stdout)")
      ->capture_default_str();
  sub.add_flag("--force", r.force, "Replace an existing -o file even when it is not a lock");
  sub.add_flag("-U,--upgrade", r.upgrade, "Ignore the existing lock's pins");
  sub.add_option("-P,--upgrade-package", r.upgrade_packages,
                 "Ignore the existing lock's pin of this package");
  sub.add_option("--cache-dir", a->cache.cache_dir,
                 "Cache directory (default $GPULOCK_CACHE_DIR, $XDG_CACHE_HOME/gpulock)");
  sub.add_flag("--offline", a->cache.offline, "Use only the cache; no network");
  sub.add_flag("--refresh", a->cache.refresh, "Revalidate every cached index page");
  sub.add_flag("--no-cache", a->cache.no_cache, "Neither read nor write the cache");
  add_limit_options(sub, a->cache);
  sub.add_option("--allow-insecure-host", a->cache.insecure_hosts,
                 "Follow an https -> http redirect to HOST (repeatable)");
  sub.add_option("--report", a->report,
                 "Write a JSON report (docs/schemas/resolve.schema.json; '-' for stdout)");
  sub.add_flag("--json", a->json,
               "Print the report (as --report writes it) on stdout; the lock goes to -o "
               "(default pylock.toml), never to stdout");
  sub.add_flag("--explain", a->explain,
               "Print why each package was chosen, or the whole proof when there is no solution");
  sub.add_flag("--all-targets", a->all_targets,
               "Lock every target the project declares ([tool.gpulock.targets] or gpulock.toml) as "
               "pylock.<name>.toml");
  sub.add_option("--target", a->targets, "Lock this declared target (repeatable)");
  sub.add_flag("--independent-targets", a->independent_targets,
               "Give each target its own newest versions (default: a package several targets "
               "lock has the same public version in each that can take it)");

  return [a, &sub](Context& ctx) -> int {
    auto& term = ctx.term;
    if (auto s = a->flags.finish(); !s) return report_error(term, s.error());
    // Beneath the flags: GPULOCK_*, uv's and pip's variables and files (issue 26).
    auto config = apply_project_config(sub, a->flags);
    if (!config) return report_error(term, config.error());
    for (const auto& w : config->warnings)
      term.warning(w);
    auto request = a->flags.request;
    // The cache flags (--cache-dir, --offline, --refresh, --no-cache, --allow-insecure-host)
    // apply to a set of targets too.
    auto client = cache_client_options(a->cache);
    if (!client) return report_error(term, client.error());
    request.client = std::move(*client);
    if (a->json && request.output == "-") {
      // One JSON document on stdout: the lock cannot share it.
      return report_error(
          term, core::make_error(core::ErrorCode::Usage,
                                 "--json and -o - both write to stdout; give -o a file (default "
                                 "pylock.toml)"));
    }
    if (a->all_targets || !a->targets.empty()) return run_targets(ctx, *a, std::move(request), sub);
    if (a->report == "-" && request.output == "-") {
      return report_error(
          term,
          core::make_error(core::ErrorCode::Usage,
                           "--report - and -o - both write to stdout; give one of them a file"));
    }
    const bool report_stdout = a->json || a->report == "-";
    request.command_line = index::redact_text(ctx.command_line);

    app::ResolveObserver observer = resolve_observer(term);
    auto result = app::resolve(request, observer);
    term.progress("");
    if (!result) return report_error(term, result.error());
    for (const auto& w : result->warnings)
      term.warning(w);
    if (result->solved && result->lock.gpulock) {
      // In first-index order, each with the setting it came from.
      for (const auto& ix : result->lock.gpulock->indexes) {
        term.info(fmt::format("index {} ({}): {}  # {}", ix.name, ix.role, ix.url,
                              index_origin(*config, ix.role)),
                  1);
      }
    }
    if (report_stdout) term.out(report_json(*result, request));
    if (!a->report.empty() && a->report != "-") {
      auto written = app::write_output(a->report, report_json(*result, request));
      if (!written) {
        auto e = written.error();
        if (result->solved && request.output != "-") {
          e.message += fmt::format(" (the lock was written to {})", request.output);
        }
        return report_error(term, e);
      }
    }
    if (!result->solved) return report_no_solution(term, *result, a->explain);
    if (request.output == "-") term.out(result->lock_text);
    // With --json stdout holds the report alone.
    if (a->explain) a->json ? term.err(explain_text(*result)) : term.out(explain_text(*result));
    if (!term.quiet()) {
      std::size_t n = result->lock.packages.size();
      std::string where = request.output == "-" ? "stdout" : request.output;
      term.err(fmt::format("Resolved {} package{} in {:.0f} ms; wrote {}\n", n, n == 1 ? "" : "s",
                           result->timings.total_ms, where));
      if (!result->gpu_summary.empty()) term.err(result->gpu_summary + "\n");
      for (const auto& h : result->hints)
        term.hint(h);
    }
    return kExitSuccess;
  };
}

const bool registered = register_command(
    {"resolve", "Resolve requirements for this machine's GPU and write pylock.toml", 10, &setup});

}  // namespace
}  // namespace gpulock::cli

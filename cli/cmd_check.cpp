// `gpulock check`: does the lock still describe what is run? (DESIGN.md §Commands; issue "Drift
// detection for CI"). Layers inputs, env, machine, index (app/check.h); output as text grouped
// by layer, JSON (schema `gpulock.check/1`, docs/schemas/check.schema.json, docs/commands/check.md)
// or GitHub Actions annotations (`::error file=pylock.toml,line=N::message`). Exit 0 clean, 1 drift
// found.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/check.h"
#include "gpulock/app/command_line.h"
#include "gpulock/app/machine.h"
#include "gpulock/app/requirements_file.h"
#include "gpulock/app/targets.h"
#include "gpulock/lock/lockfile.h"

#include "cache_flags.h"
#include "command.h"
#include "config_flags.h"
#include "exit_codes.h"
#include "json_writer.h"
#include "lock_choice.h"
#include "machine_flags.h"
#include "resolve_flags.h"

namespace gpulock::cli {
namespace {

struct CheckArgs {
  app::CheckRequest request;
  ResolveFlags given;  // resolve's input flags, declared once for both (resolve_flags.h)
  std::string output;  // -o/--output: resolve's name for the lock
  std::string format = "text";
  bool json = false;
  bool all_targets = false;                 // --all-targets
  CacheFlags cache;                         // check has no --refresh
  std::vector<CLI::Option*> input_options;  // resolve's input flags: any given -> compare
};

std::string counts_text(std::size_t errors, std::size_t warnings) {
  std::vector<std::string> parts;
  if (errors) parts.push_back(fmt::format("{} error{}", errors, errors == 1 ? "" : "s"));
  if (warnings) parts.push_back(fmt::format("{} warning{}", warnings, warnings == 1 ? "" : "s"));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string layer_status(const app::CheckResult& r, app::CheckLayer layer,
                         std::size_t* errors = nullptr, std::size_t* warnings = nullptr) {
  std::size_t e = 0, w = 0;
  for (const auto& d : r.drifts) {
    if (d.layer != layer) continue;
    if (d.severity == app::DriftSeverity::Error) ++e;
    if (d.severity == app::DriftSeverity::Warning) ++w;
  }
  if (errors) *errors = e;
  if (warnings) *warnings = w;
  if (!r.layer(layer).checked) return "not-checked";
  return e ? "drift" : w ? "warning" : "ok";
}

Style severity_style(app::DriftSeverity s) {
  switch (s) {
    case app::DriftSeverity::Error:
      return Style::Red;
    case app::DriftSeverity::Warning:
      return Style::Yellow;
    case app::DriftSeverity::Info:
      return Style::Cyan;
  }
  return Style::Plain;
}

std::string text_report(const app::CheckResult& r, const Terminal& term) {
  std::string out;
  for (const auto& layer : r.layers) {
    const std::string name(app::check_layer_name(layer.layer));
    std::size_t errors = 0, warnings = 0;
    std::string status = layer_status(r, layer.layer, &errors, &warnings);
    if (status == "not-checked") {
      out += fmt::format("{}: {}\n", term.paint(Style::Bold, name),
                         term.paint(Style::Dim, layer.summary));
      continue;
    }
    std::string head =
        status == "ok" ? term.paint(Style::Green, "ok")
        : status == "drift"
            ? term.paint(Style::Red, "drift") + " (" + counts_text(errors, warnings) + ")"
            : term.paint(Style::Yellow, counts_text(errors, warnings));
    out += fmt::format("{}: {}\n", term.paint(Style::Bold, name), head);
    if (!layer.summary.empty()) out += fmt::format("  {}\n", layer.summary);
    for (const auto& n : layer.notes)
      out += fmt::format("  note: {}\n", n);
    std::vector<const app::Drift*> mine;
    for (const auto& d : r.drifts) {
      if (d.layer == layer.layer) mine.push_back(&d);
    }
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const auto& d = *mine[i];
      std::string where = d.line ? fmt::format("{}:{}: ", r.lock_path, d.line) : std::string();
      out +=
          fmt::format("  {}: {}{}\n",
                      term.paint(severity_style(d.severity), app::drift_severity_name(d.severity)),
                      where, d.message);
      for (const auto& x : d.details)
        out += fmt::format("      {}\n", x);
      // The same advice for several lines in a row is given once, after the last of them.
      const bool same_next = i + 1 < mine.size() && mine[i + 1]->hint == d.hint;
      if (!d.hint.empty() && !same_next) {
        out += fmt::format("    {}: {}\n", term.paint(Style::Cyan, "hint"), d.hint);
      }
    }
  }
  std::size_t errors = r.count(app::DriftSeverity::Error),
              warnings = r.count(app::DriftSeverity::Warning);
  if (errors) {
    out += fmt::format("\n{}: {}: {}\n", r.lock_path, term.paint(Style::Red, "drift found"),
                       counts_text(errors, warnings));
  } else {
    out += fmt::format("\n{}: {}{}\n", r.lock_path, term.paint(Style::Green, "no drift"),
                       warnings ? ", " + counts_text(0, warnings) : std::string());
  }
  return out;
}

std::string json_report(const app::CheckResult& r) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.check/1");
  w.field("lock", r.lock_path);
  w.field("ok", !r.drift_found());
  w.field("strict", r.strict);
  w.key("counts").begin_object();
  w.field("error", static_cast<std::uint64_t>(r.count(app::DriftSeverity::Error)));
  w.field("warning", static_cast<std::uint64_t>(r.count(app::DriftSeverity::Warning)));
  w.field("info", static_cast<std::uint64_t>(r.count(app::DriftSeverity::Info)));
  w.end_object();
  w.key("layers").begin_array();
  for (const auto& layer : r.layers) {
    w.begin_object();
    w.field("name", app::check_layer_name(layer.layer));
    w.field("checked", layer.checked);
    w.field("status", layer_status(r, layer.layer));
    w.field("summary", layer.summary);
    w.field("notes", layer.notes);
    w.end_object();
  }
  w.end_array();
  w.key("drifts").begin_array();
  for (const auto& d : r.drifts) {
    w.begin_object();
    w.field("layer", app::check_layer_name(d.layer));
    w.field("kind", d.kind);
    w.field("severity", app::drift_severity_name(d.severity));
    w.field("subject", d.subject);
    w.field("message", d.message);
    w.field("details", d.details);
    w.field("hint", d.hint);
    w.field("file", r.lock_path);
    w.key("line");
    if (d.line)
      w.value(static_cast<std::uint64_t>(d.line));
    else
      w.null();
    w.field("expected", d.expected);
    w.field("actual", d.actual);
    w.end_object();
  }
  w.end_array();
  w.field("warnings", r.warnings);
  w.end_object();
  return w.str();
}

// GitHub Actions workflow commands: data escapes %, CR, LF; properties also ':' and ','.
std::string gh_data(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string gh_property(std::string_view s) {
  std::string out;
  for (char c : gh_data(s)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

std::string github_report(const app::CheckResult& r) {
  std::string out;
  for (const auto& d : r.drifts) {
    std::string_view command = d.severity == app::DriftSeverity::Error     ? "error"
                               : d.severity == app::DriftSeverity::Warning ? "warning"
                                                                           : "notice";
    std::string props = "file=" + gh_property(r.lock_path);
    if (d.line) props += fmt::format(",line={}", d.line);
    std::string message = d.message;
    for (const auto& x : d.details)
      message += "\n  " + x;
    if (!d.hint.empty()) message += "\nhint: " + d.hint;
    out += fmt::format("::{} {}::{}\n", command, props, gh_data(message));
  }
  std::size_t errors = r.count(app::DriftSeverity::Error),
              warnings = r.count(app::DriftSeverity::Warning);
  std::vector<std::string> checked;
  for (const auto& layer : r.layers) {
    if (layer.checked) checked.emplace_back(app::check_layer_name(layer.layer));
  }
  out += fmt::format(
      "gpulock check {} ({}): {}\n", r.lock_path, fmt::join(checked, ", "),
      errors ? "drift found: " + counts_text(errors, warnings)
             : "no drift" + (warnings ? ", " + counts_text(0, warnings) : std::string()));
  return out;
}

// One lock's report in `format`.
std::string report(const app::CheckResult& r, const std::string& format, const Terminal& term) {
  if (format == "json") return json_report(r);
  if (format == "github") return github_report(r);
  return text_report(r, term);
}

// `check --all-targets` (issue 22, for CI without a GPU): every declared target's lock against
// the shared inputs and the indexes (the layers asked for, else inputs and index), and against
// its declaration: a target whose declared machine or Pythons changed needs a new lock.
int check_all_targets(Context& ctx, const CheckArgs& a, app::CheckRequest request,
                      const std::string& format) {
  auto& term = ctx.term;
  std::error_code ec;
  auto declared = app::read_targets(a.given.request.project, std::filesystem::current_path(ec));
  if (!declared) return report_error(term, declared.error());
  if (!request.inputs && !request.env && !request.machine && !request.index)
    request.inputs = request.index = true;
  const std::filesystem::path dir = std::filesystem::path(declared->file).parent_path();
  int exit = kExitSuccess;
  std::vector<std::string> json;
  // The command the locks were made with (their indexes and inputs): the re-lock's.
  std::string command;
  for (const auto& t : declared->targets) {
    const std::string path = (dir / fmt::format("pylock.{}.toml", t.name)).string();
    if (!std::filesystem::exists(path, ec)) {
      term.error(fmt::format("target '{}' has no lock: {} is missing", t.name, path));
      term.hint("gpulock resolve --all-targets writes every target's lock");
      exit = kExitFinding;
      continue;
    }
    app::CheckRequest r = request;
    r.lock = path;
    auto result = app::check(r);
    if (!result) return report_error(term, result.error());
    for (const auto& w : result->warnings)
      term.warning(w);
    if (result->drift_found()) exit = kExitFinding;
    std::vector<std::string> differences;
    if (auto text = app::read_text_file(path)) {
      if (auto parsed = lock::parse_lock(*text, path)) {
        differences = app::target_differences(t, parsed->lock);
        if (command.empty()) command = parsed->lock.command;
      }
    }
    for (const auto& line : differences) {
      term.error(fmt::format("{}: target '{}' {}", path, t.name, line));
      exit = kExitFinding;
    }
    if (format == "json") {
      json.push_back(json_report(*result));
    } else {
      term.out(report(*result, format, term));
    }
  }
  if (format == "json") term.out(fmt::format("[\n{}]\n", fmt::join(json, ",\n")));
  if (exit != kExitSuccess && format == "text")
    term.hint(fmt::format("{} re-locks every target as a set", app::relock_all_targets(command)));
  return exit;
}

// `check` without --lock in a project of target locks and no pylock.toml: the lock this machine
// picks (as `install` does). Returns the exit code when the command ends here.
std::optional<int> pick_target_lock(Context& ctx, app::CheckRequest& request) {
  std::error_code ec;
  auto locks = app::lock_files(".");
  if (std::filesystem::exists("pylock.toml", ec) || !locks || locks->empty()) return std::nullopt;
  auto here = app::choose_lock_here(".", request.machine_flags, request.python);
  if (!here) return report_error(ctx.term, here.error());
  warn_python_unasked(ctx.term, *here);
  const auto* choice = &here->choice;
  if (!choice->chosen) return report_no_fit(ctx.term, *choice);
  request.lock = *choice->chosen;
  for (const auto& f : choice->locks) {
    if (f.path == *choice->chosen)
      ctx.term.err(fmt::format("checking {}, the lock this machine picks ({})\n", f.path, f.why));
  }
  return std::nullopt;
}

// `--index NAME=URL` is resolve's named index; here --index is the layer flag and takes no
// value, so the pair would otherwise be read as a requirement argument. Returns the exit code
// when the command ends here.
std::optional<int> refuse_named_index(Terminal& term, const CheckArgs& a) {
  for (const auto& r : a.given.request.requirements) {
    const auto eq = r.find('=');
    if (eq == std::string::npos || eq == 0 || r.find("://", eq) == std::string::npos ||
        r.find_first_of("<>!~=") < eq) {
      continue;
    }
    term.error(fmt::format(
        "'{}' looks like resolve's --index NAME=URL, which check does not take: --index "
        "selects the index layer here",
        r));
    term.hint(
        "leave out --index NAME=URL and --index-for; the lock records its indexes "
        "and `check --index` reads them from it");
    return kExitUsage;
  }
  return std::nullopt;
}

// Resolve's input flags, given: the request's inputs to compare with the lock's record. Returns
// the exit code when the command ends here.
std::optional<int> add_given_inputs(Terminal& term, const CLI::App& sub, CheckArgs& a,
                                    app::CheckRequest& request) {
  if (auto s = a.given.finish(); !s) return report_error(term, s.error());
  // Compared as resolve would run: the configuration beneath the flags (issue 26).
  auto config = apply_project_config(sub, a.given);
  if (!config) return report_error(term, config.error());
  request.given = a.given.request;
  // The machine flags describe this machine; with --inputs they are also compared with the
  // machine the lock was resolved for, when it was given by flags (issue 16).
  if (auto driver = gpu::DriverSpec::parse(request.machine_flags.driver); !driver) {
    return report_error(term, driver.error());
  }
  request.given->machine = request.machine_flags;
  return std::nullopt;
}

RunFn setup(CLI::App& sub) {
  auto a = std::make_shared<CheckArgs>();
  auto& q = a->request;
  sub.add_option("--lock", q.lock, "The lock to check")->capture_default_str();
  sub.add_flag("--inputs", q.inputs, "Check the lock's recorded inputs (files, flags) [offline]");
  sub.add_flag("--env", q.env, "Check an installed environment against the lock [offline]");
  sub.add_option("--python", q.python,
                 "The environment's interpreter (default: $VIRTUAL_ENV/bin/python)");
  sub.add_flag("--machine", q.machine,
               "Check this machine's driver and GPUs against the lock [offline]");
  sub.add_flag("--index", q.index, "Check the locked files on their indexes [network]");
  sub.add_option("--mirror", q.mirror,
                 "With --index: say whether this mirror (URL or directory) has pruned files");
  sub.add_option("--format", a->format, "Output: text, json or github (annotations)")
      ->check(CLI::IsMember({"text", "json", "github"}))
      ->capture_default_str();
  sub.add_flag("--json", a->json, "Same as --format json");
  sub.add_flag("--strict", q.strict,
               "Warnings fail too; pip, setuptools and wheel count as extra packages");
  sub.add_flag(
      "--deep", q.deep,
      "Verify installed torch and nvidia-* files against RECORD; hash unhashed index files");
  add_machine_flags(sub, q.machine_flags, MachineRole::Describe);
  sub.add_option("--cache-dir", a->cache.cache_dir,
                 "Cache directory (default $GPULOCK_CACHE_DIR, $XDG_CACHE_HOME/gpulock)");
  sub.add_flag("--offline", a->cache.offline, "Use only the cache (with --index)");
  sub.add_flag("--no-cache", a->cache.no_cache, "Neither read nor write the cache");
  add_limit_options(sub, a->cache);
  sub.add_option("--allow-insecure-host", a->cache.insecure_hosts,
                 "Follow an https -> http redirect to HOST (repeatable)");

  // Resolve's input flags, as resolve declares them: given, they are compared with the lock's
  // record.
  a->input_options = add_resolve_input_flags(sub, a->given);
  sub.add_option("-o,--output", a->output, "The lock, as resolve names it (same as --lock)");
  sub.add_flag("--all-targets", a->all_targets,
               "Check every declared target's pylock.<name>.toml (inputs and index unless layers "
               "are given; no GPU needed)");

  return [a, &sub](Context& ctx) -> int {
    auto& term = ctx.term;
    app::CheckRequest request = a->request;
    if (request.index && request.mirror.empty()) {
      auto mirror = configured_mirror();  // GPULOCK_MIRROR, a `mirror` key (issue 26)
      if (!mirror) return report_error(term, mirror.error());
      request.mirror = *mirror;
    }
    const bool lock_given = sub.get_option("--lock")->count() > 0 || !a->output.empty();
    if (!a->output.empty()) {
      if (request.lock != "pylock.toml" && request.lock != a->output) {
        term.error(
            fmt::format("--lock {} and -o {} name different locks", request.lock, a->output));
        return kExitUsage;
      }
      request.lock = a->output;
    }
    if (request.index) {
      if (auto ended = refuse_named_index(term, *a)) return *ended;
    }
    bool any_input = false;
    for (const auto* o : a->input_options)
      any_input = any_input || o->count() > 0;
    if (any_input) {
      if (auto ended = add_given_inputs(term, sub, *a, request)) return *ended;
    }
    auto client = cache_client_options(a->cache);
    if (!client) return report_error(term, client.error());
    request.client = std::move(*client);
    const std::string format = a->json ? "json" : a->format;
    if (a->all_targets) {
      if (lock_given) {
        term.error("--all-targets checks every target's lock: leave out --lock");
        return kExitUsage;
      }
      return check_all_targets(ctx, *a, request, format);
    }
    if (!lock_given) {
      if (auto ended = pick_target_lock(ctx, request)) return *ended;
    }

    auto result = app::check(request);
    if (!result) return report_error(term, result.error());
    for (const auto& w : result->warnings)
      term.warning(w);
    if (format == "json") {
      term.out(json_report(*result));
    } else if (format == "github") {
      term.out(github_report(*result));
    } else {
      term.out(text_report(*result, term));
    }
    return result->drift_found() ? kExitFinding : kExitSuccess;
  };
}

const bool registered = register_command(
    {"check",
     "Check that the lock still matches its inputs, the environment, this machine and the indexes",
     50, &setup});

}  // namespace
}  // namespace gpulock::cli

// `gpulock install`: make an environment exactly the lock (issue 25; app/install.h), with
// gpulock's own wheel installer and shared cache, or with pip (`--installer pip`: the lock as
// direct URLs with hashes, --no-deps; pip's output streamed, pip's exit status kept), then
// probe the environment (DESIGN.md §Commands). The probe's verdict decides: exit 1 when it
// fails. A wheel whose sha256 is not the lock's is exit 4, the environment unchanged.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "gpulock/app/check.h"
#include "gpulock/app/install.h"
#include "gpulock/app/machine.h"
#include "gpulock/app/targets.h"
#include "gpulock/app/venv.h"
#include "gpulock/install/installer.h"
#include "gpulock/sys/env.h"

#include "command.h"
#include "config_flags.h"
#include "exit_codes.h"
#include "json_writer.h"
#include "lock_choice.h"
#include "machine_flags.h"
#include "probe_render.h"

namespace gpulock::cli {
namespace {

struct InstallArgs {
  std::string lock = "pylock.toml";
  bool lock_given = false;
  std::string target;           ///< --target NAME: pylock.NAME.toml
  bool print_target = false;    ///< --print-target
  app::MachineRequest machine;  ///< --driver, --cuda-ceiling, --gpu-arch (this machine, described)
  std::string python;
  bool no_probe = false;
  bool json = false;
  bool run_kernels = false;
  bool require_gpu = false;
  std::string mirror;
  std::string mirror_fallback;
  // The native installer (issue 25).
  std::string installer = "native";
  /// `installer` parsed (install::parse_kind); nullopt: it does not parse (refused when the
  /// install starts).
  std::optional<install::Kind> kind = install::Kind::Native;
  std::string venv;
  bool system = false;
  bool exact = false;
  bool no_remove = false;
  bool dry_run = false;
  bool locked = false;        ///< --locked: a stale lock is a finding (exit 1), nothing installed
  double lock_timeout = 600;  ///< seconds
  bool no_wait = false;
  std::string link_mode = "hardlink";
  std::string cache_dir;
  unsigned jobs = 8;
};

std::string argv_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    out += plain ? a : "'" + a + "'";
  }
  return out;
}

// The directory has pylock.<name>.toml locks (app::lock_files), not only pylock.toml.
bool has_target_locks(const std::filesystem::path& dir) {
  auto locks = app::lock_files(dir);
  return locks && std::any_of(locks->begin(), locks->end(), [](const std::filesystem::path& p) {
           return p.filename() != "pylock.toml";
         });
}

// The venv the native installer will make (--venv DIR, else ./.venv without --python and
// $VIRTUAL_ENV) when it does not exist yet; nullopt when the environment is there or given.
std::optional<std::filesystem::path> venv_to_make(const InstallArgs& args) {
  if (args.kind != install::Kind::Native || !args.python.empty()) return std::nullopt;
  std::filesystem::path venv = args.venv;
  if (venv.empty()) {
    if (sys::env_value("VIRTUAL_ENV")) return std::nullopt;
    venv = ".venv";
  }
  std::error_code ec;
  if (std::filesystem::exists(venv / "bin" / "python", ec)) return std::nullopt;
  return venv;
}

// The interpreter of an existing environment (--python, --venv DIR, $VIRTUAL_ENV, ./.venv), or
// "" (python3 on PATH).
std::string environment_python(const InstallArgs& args) {
  if (!args.python.empty()) return args.python;
  std::filesystem::path venv = args.venv;
  if (venv.empty()) {
    if (auto v = sys::env_value("VIRTUAL_ENV"))
      return (std::filesystem::path(*v) / "bin" / "python").string();
    venv = ".venv";
  }
  std::error_code ec;
  if (args.kind == install::Kind::Native && std::filesystem::exists(venv / "bin" / "python", ec))
    return (venv / "bin" / "python").string();
  return {};
}

// Without --lock, where the project has pylock.<name>.toml locks (issue 22): the lock that fits
// this machine, or --target's. Returns the exit code when the command ends here.
std::optional<int> pick_lock(Context& ctx, InstallArgs& args) {
  // --print-target with --lock L: L's verdict alone; nothing is ever installed.
  if (args.lock_given && !args.print_target) return std::nullopt;
  if (!args.lock_given && args.target.empty() && !args.print_target && !has_target_locks("."))
    return std::nullopt;
  if (args.lock_given && !args.target.empty()) {
    return report_error(ctx.term, core::make_error(core::ErrorCode::Usage,
                                                   "--lock and --target name the lock twice; "
                                                   "give one"));
  }
  std::vector<std::filesystem::path> only;
  if (args.lock_given) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(args.lock, ec)) {
      return report_error(
          ctx.term,
          core::make_error(core::ErrorCode::Io, "cannot read the lock: no such file", args.lock));
    }
    only.push_back(args.lock);
  }
  if (!args.target.empty()) {
    std::string path = fmt::format("pylock.{}.toml", args.target);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return report_error(ctx.term, core::make_error(core::ErrorCode::Usage,
                                                     fmt::format("--target {}: there is no {}",
                                                                 args.target, path)));
    }
    args.lock = path;
    if (!args.print_target) return std::nullopt;
  }
  // The Python that will run the lock (--python, the environment's, else python3 on PATH): its
  // version and tags are compared with each lock's target. A venv still to be made (issue 25):
  // the interpreters on PATH are, in turn, and the lock fits when one of them runs it.
  const auto venv = venv_to_make(args);
  app::PathPythons pythons;
  auto here = venv ? app::choose_lock_for_new_venv(".", args.machine, pythons, only)
                   : app::choose_lock_here(".", args.machine, environment_python(args), only);
  if (!here) return report_error(ctx.term, here.error());
  warn_python_unasked(ctx.term, *here);
  auto* choice = &here->choice;
  if (!args.target.empty()) choice->chosen = args.lock;
  if (args.print_target && args.json) {
    JsonWriter w;
    w.begin_object();
    w.key("chosen").value(choice->chosen);
    w.field("cpu_fallback", choice->cpu_fallback);
    w.key("python").value(here->python);
    w.key("locks").begin_array();
    for (const auto& f : choice->locks) {
      w.begin_object();
      w.field("path", f.path);
      w.field("target", f.target);
      if (venv) w.key("venv_python").value_or_null(f.python);
      w.field("fits", f.fits);
      w.field("gpu", f.gpu);
      w.key("cuda").value_or_null(f.cuda, [](const gpu::CudaVersion& c) { return c.to_string(); });
      w.field("why", f.why);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    ctx.term.out(w.str());
    return choice->chosen ? kExitSuccess : kExitFinding;
  }
  if (args.print_target) {
    std::string text;
    for (const auto& f : choice->locks)
      text += fmt::format("{} (target {}): {}\n", f.path, f.target, f.why);
    text += choice->chosen ? fmt::format("install would use {}\n", *choice->chosen)
                           : "no lock fits this machine\n";
    ctx.term.out(text);
    return choice->chosen ? kExitSuccess : kExitFinding;
  }
  if (!choice->chosen) {
    const int exit = report_no_fit(ctx.term, *choice);
    ctx.term.hint("resolve a target for this machine, or give --lock or --target");
    return exit;
  }
  if (choice->cpu_fallback) {
    for (const auto& f : choice->locks) {
      if (f.gpu) ctx.term.warning(fmt::format("{} does not fit: {}", f.path, f.why));
    }
  }
  ctx.term.info(fmt::format("{} fits this machine", *choice->chosen), 0);
  if (venv) {
    for (const auto& f : choice->locks) {
      if (f.path == *choice->chosen && !f.python.empty()) {
        ctx.term.info(fmt::format("{} will be made with {}, the first interpreter on PATH it "
                                  "accepts",
                                  venv->string(), f.python),
                      0);
      }
    }
  }
  args.lock = *choice->chosen;
  return std::nullopt;
}

void report_mirror(Context& ctx, const InstallArgs& args, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    // A fallback is news (the lock's URL is gone); --mirror asked for every file.
    const std::string line = fmt::format("{}: from the mirror {}", name,
                                         args.mirror.empty() ? args.mirror_fallback : args.mirror);
    if (args.mirror.empty() && !ctx.term.quiet()) {
      ctx.term.err(line + "\n");
    } else {
      ctx.term.info(line);
    }
  }
}

int run_pip_install(Context& ctx, InstallArgs& args, app::InstallRequest& request) {
  // With --json stdout carries the report alone: pip's output goes to stderr.
  auto on_output = [&](std::string_view chunk, bool is_stderr) {
    if (is_stderr || args.json) {
      ctx.term.err(chunk);
    } else {
      ctx.term.out(chunk);
    }
  };
  ctx.term.info(fmt::format("installing {} with pip", args.lock));
  install::Observer observer;
  observer.output = on_output;
  auto result = app::install(request, observer);
  if (!result) return report_error(ctx.term, result.error());
  report_mirror(ctx, args, result->from_mirror);
  if (const auto& pip = result->applied; pip.pip_exit_code != 0) {
    std::string how = pip.pip_timed_out ? std::string("was stopped")
                      : pip.pip_exit_code > 128
                          ? fmt::format("was killed by signal {}", pip.pip_exit_code - 128)
                          : fmt::format("failed with exit code {}", pip.pip_exit_code);
    ctx.term.error(fmt::format("pip install {} ({})", how, argv_text(pip.pip_argv)));
    if (pip.hash_mismatch) {
      // A downloaded file that is not the locked one: an index/hash failure (exit 4).
      ctx.term.hint(
          "a downloaded file does not have the sha256 the lock records (hash mismatch); "
          "nothing was installed from it and nothing was probed");
      return exit_code_for(core::ErrorCode::HashMismatch);
    }
    ctx.term.hint("pip's own messages above say why; nothing was probed");
    return pip.pip_exit_code;
  }
  if (!result->probe) return kExitSuccess;
  if (!args.json) ctx.term.out("\n");
  ctx.term.out(args.json ? render_probe_json(*result->probe)
                         : render_probe_text(*result->probe, ctx.term));
  return result->probe->ok() ? kExitSuccess : kExitFinding;
}

std::string human_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string plan_text(const app::InstallResult& r) {
  std::string text = fmt::format(
      "{} {} into {} (Python {}{}):\n", r.dry_run ? "Would sync" : "Syncing", r.lock,
      r.plan.prefix.string(), r.plan.python_version,
      r.would_create_with.empty() ? "" : ", a new venv made with " + r.would_create_with);
  // "(12.3 MiB)", or nothing when the lock gives no size (the PyTorch index does not).
  auto size = [](std::uint64_t n) { return n > 0 ? fmt::format(" ({})", human_size(n)) : ""; };
  for (const auto& item : r.plan.sync.items) {
    std::string what;
    switch (item.action) {
      case install::SyncAction::Install:
        what = fmt::format("{} {}{}", item.name, item.version, size(item.size));
        break;
      case install::SyncAction::Replace:
        what = fmt::format("{} {}{}: {}", item.name, item.version, size(item.size), item.reason);
        break;
      case install::SyncAction::Remove:
        what = fmt::format("{} {}{}", item.name, item.installed_version, size(item.size));
        break;
      case install::SyncAction::Unchanged:
        what = fmt::format("{} {}", item.name, item.version);
        break;
      case install::SyncAction::Keep:
        what = fmt::format("{} {}: {}", item.name, item.installed_version, item.reason);
        break;
    }
    text += fmt::format("  {:<9}  {}\n", install::sync_action_name(item.action), what);
  }
  const auto& p = r.plan.sync;
  text += fmt::format(
      "{} to install ({}), {} to replace ({}), {} to remove, {} unchanged",
      p.count(install::SyncAction::Install), human_size(p.bytes(install::SyncAction::Install)),
      p.count(install::SyncAction::Replace), human_size(p.bytes(install::SyncAction::Replace)),
      p.count(install::SyncAction::Remove), p.count(install::SyncAction::Unchanged));
  if (auto keep = p.count(install::SyncAction::Keep)) text += fmt::format(", {} kept", keep);
  return text + "\n";
}

std::string plan_json(const app::InstallResult& r) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.install-plan/1");
  w.field("lock", r.lock);
  w.field("python", r.plan.python);
  w.field("prefix", r.plan.prefix.string());
  w.field("python_version", r.plan.python_version);
  w.field("dry_run", r.dry_run);
  w.field("created", r.created);
  w.key("would_create_with").value_or_null(r.would_create_with);
  w.key("actions").begin_array();
  for (const auto& item : r.plan.sync.items) {
    w.begin_object();
    w.field("action", std::string(install::sync_action_name(item.action)));
    w.field("name", item.name);
    w.key("version").value_or_null(item.version);
    w.key("installed_version").value_or_null(item.installed_version);
    w.field("size", static_cast<std::uint64_t>(item.size));
    w.key("file").value_or_null(item.filename);
    w.key("reason").value_or_null(item.reason);
    w.end_object();
  }
  w.end_array();
  w.key("summary").begin_object();
  for (auto a :
       {install::SyncAction::Install, install::SyncAction::Replace, install::SyncAction::Remove,
        install::SyncAction::Unchanged, install::SyncAction::Keep}) {
    w.field(install::sync_action_name(a), static_cast<std::uint64_t>(r.plan.sync.count(a)));
  }
  w.end_object();
  w.end_object();
  return w.str();
}

int run_native_install(Context& ctx, InstallArgs& args, app::InstallRequest& request) {
  auto mode = sys::parse_link_mode(args.link_mode);
  if (!mode) {
    return report_error(ctx.term,
                        core::make_error(core::ErrorCode::Usage,
                                         fmt::format("invalid --link-mode '{}': expected hardlink, "
                                                     "clone, copy or symlink",
                                                     args.link_mode)));
  }
  request.options.link_mode = *mode;
  request.venv = args.venv;
  request.options.system = args.system;
  request.options.exact = args.exact;
  request.options.no_remove = args.no_remove;
  request.options.dry_run = args.dry_run;
  request.options.lock_timeout =
      args.no_wait ? std::chrono::milliseconds(0)
                   : std::chrono::milliseconds(static_cast<std::int64_t>(args.lock_timeout * 1000));
  request.options.jobs = args.jobs;
  if (!args.cache_dir.empty()) request.options.client.cache_dir = args.cache_dir;
  install::Observer observer;
  observer.info = [&](std::string_view line) { ctx.term.info(line, 0); };
  observer.progress = [&](std::size_t done, std::size_t total, std::uint64_t bytes,
                          std::uint64_t expected) {
    ctx.term.progress(fmt::format("Fetching {}/{} wheels, {} of {}", done, total, human_size(bytes),
                                  human_size(expected)));
  };
  const auto start = std::chrono::steady_clock::now();
  auto result = app::install(request, observer);
  if (!result) {
    if (result.error().code == core::ErrorCode::HashMismatch) {
      ctx.term.error(result.error());
      ctx.term.hint("the environment was not changed");
      return exit_code_for(core::ErrorCode::HashMismatch);
    }
    return report_error(ctx.term, result.error());
  }
  for (const auto& w : result->warnings)
    ctx.term.warning(w);
  report_mirror(ctx, args, result->from_mirror);
  if (args.dry_run) {
    ctx.term.out(args.json ? plan_json(*result) : plan_text(*result));
    return kExitSuccess;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& p = result->plan.sync;
  // The venv's creation (interpreter asked, `-m venv`) apart from the sync itself (issue 41).
  std::string summary = fmt::format(
      "{}{} installed, {} replaced, {} removed, {} unchanged in {:.2f} s ({} from the cache, {} "
      "downloaded, {})",
      result->created ? fmt::format("venv created in {:.2f} s; ", result->venv_seconds) : "",
      p.count(install::SyncAction::Install), p.count(install::SyncAction::Replace),
      p.count(install::SyncAction::Remove), p.count(install::SyncAction::Unchanged),
      std::max(0.0, seconds - result->venv_seconds), result->applied.cache_hits,
      result->applied.downloaded, human_size(result->applied.downloaded_bytes));
  if (ctx.term.quiet()) {
    // -q: the plan and the summary are progress, not results (errors and warnings still show).
  } else if (args.json) {
    ctx.term.err(plan_text(*result) + summary + "\n");
  } else {
    ctx.term.out(plan_text(*result) + summary + "\n");
  }
  if (!result->probe) {
    if (args.json) ctx.term.out(plan_json(*result));
    return kExitSuccess;
  }
  if (!args.json) ctx.term.out("\n");
  ctx.term.out(args.json ? render_probe_json(*result->probe)
                         : render_probe_text(*result->probe, ctx.term));
  return result->probe->ok() ? kExitSuccess : kExitFinding;
}

// The lock's recorded inputs against the files and flags they name now (check --inputs): the
// changes, one line each (none when the lock records no inputs, or cannot be read: that is the
// install's own error), and the command that made the lock.
struct StaleInputs {
  std::vector<std::string> changes;
  std::string lock_command;
};

StaleInputs stale_inputs(const std::string& lock) {
  app::CheckRequest cr;
  cr.lock = lock;
  cr.inputs = true;
  auto r = app::check(cr);
  StaleInputs out;
  if (!r) return out;
  for (const auto& d : r->drifts) {
    if (d.layer == app::CheckLayer::Inputs && d.severity == app::DriftSeverity::Error)
      out.changes.push_back(d.message);
  }
  out.lock_command = r->lock_command;
  return out;
}

int run_install(Context& ctx, InstallArgs& args) {
  auto kind = install::parse_kind(args.installer);
  args.kind = kind ? std::optional<install::Kind>(*kind) : std::nullopt;
  if (auto ended = pick_lock(ctx, args)) return *ended;
  // A stale lock (issue 41): its inputs changed since it was made. Said before the sync;
  // --locked refuses to install it (uv sync --locked).
  if (auto [changes, lock_command] = stale_inputs(args.lock); !changes.empty()) {
    const std::string what = fmt::format(
        "{} is stale: {}{}", args.lock, changes.front(),
        changes.size() > 1 ? fmt::format(" (and {} more changes)", changes.size() - 1) : "");
    if (args.locked) {
      ctx.term.error(fmt::format("--locked: {}", what));
      // The lock's own command locks again; a lock without one names no command.
      ctx.term.hint(fmt::format(
          "`gpulock check --inputs --lock {}` lists the changes; {}; nothing was installed",
          args.lock,
          lock_command.empty() ? std::string("resolve it again")
                               : fmt::format("`{}` locks again", lock_command)));
      return kExitFinding;
    }
    ctx.term.warning(
        fmt::format("{}; installing it as it is (`gpulock check --inputs --lock {}` "
                    "lists the changes, --locked refuses a stale lock)",
                    what, args.lock));
  }
  app::InstallRequest request;
  request.lock = args.lock;
  request.python = args.python;
  request.probe = !args.no_probe;
  request.probe_request.run_kernels = args.run_kernels;
  request.probe_request.require_gpu = args.require_gpu;
  // The machine described by --driver/--cuda-ceiling/--gpu-arch is the one the probe reports.
  request.probe_request.machine = args.machine;
  request.mirror = args.mirror;
  request.mirror_fallback = args.mirror_fallback;
  if (request.mirror.empty() && request.mirror_fallback.empty()) {
    auto mirror = configured_mirror();  // GPULOCK_MIRROR, a `mirror` key (issue 26)
    if (!mirror) return report_error(ctx.term, mirror.error());
    request.mirror = args.mirror = *mirror;
  }
  if (!kind) return report_error(ctx.term, kind.error());
  request.installer = *kind;
  const bool native = *kind == install::Kind::Native;
  if (!args.mirror_fallback.empty() || native) {
    auto client = index::ClientOptions::from_environment();
    if (!client) return report_error(ctx.term, client.error());
    request.options.client = *client;
  }
  if (native) return run_native_install(ctx, args, request);
  if (!args.venv.empty() || args.dry_run || args.exact || args.no_remove) {
    return report_error(ctx.term,
                        core::make_error(core::ErrorCode::Usage,
                                         "--venv, --dry-run, --exact and --no-remove are the "
                                         "native installer's; --installer pip installs as pip "
                                         "does"));
  }
  return run_pip_install(ctx, args, request);
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<InstallArgs>();
  sub.add_option("--lock", args->lock,
                 "The lock to install (default: pylock.toml, or the pylock.<name>.toml that fits "
                 "this machine)");
  sub.add_option("--target", args->target,
                 "Install the lock of this declared target (pylock.NAME.toml)");
  sub.add_flag("--print-target", args->print_target,
               "Print which lock fits this machine and why, and install nothing");
  add_machine_flags(sub, args->machine, MachineRole::Describe);
  sub.add_option("--python", args->python,
                 "The interpreter whose environment to install into (default: "
                 "$VIRTUAL_ENV/bin/python, else python3)");
  sub.add_option("--installer", args->installer,
                 "native (default: gpulock syncs the environment itself, from a shared cache "
                 "of unpacked wheels) or pip (pip install --no-deps --require-hashes)");
  sub.add_option("--venv", args->venv,
                 "Sync this virtual environment, created when missing (with the first "
                 "interpreter on PATH the lock accepts)");
  sub.add_flag("--system", args->system,
               "Allow an interpreter that is not a virtual environment; nothing is removed");
  sub.add_flag("--exact", args->exact,
               "Remove the tool packages (pip, setuptools, wheel) too when the lock does not "
               "name them");
  sub.add_flag("--no-remove", args->no_remove, "Keep packages the lock does not name");
  sub.add_flag("--locked", args->locked,
               "Exit 1, installing nothing, when the lock's recorded inputs changed since it was "
               "made");
  sub.add_flag("--dry-run", args->dry_run,
               "Print the plan (install, replace, remove, unchanged) and change nothing");
  sub.add_option("--link-mode", args->link_mode,
                 "How files come from the cache: hardlink (default), clone, copy, symlink");
  sub.add_option("--cache-dir", args->cache_dir,
                 "The cache directory (default: $GPULOCK_CACHE_DIR, else "
                 "$XDG_CACHE_HOME/gpulock)");
  sub.add_option("--jobs", args->jobs, "Parallel downloads (default 8)");
  auto* lock_timeout =
      sub.add_option("--lock-timeout", args->lock_timeout,
                     "Seconds to wait for another sync of the same environment (default 600); "
                     "then exit 74")
          ->check(CLI::Range(0.0, 1e7));
  sub.add_flag("--no-wait", args->no_wait,
               "Exit 74 at once when another sync of the environment is running")
      ->excludes(lock_timeout);
  sub.add_flag("--no-probe", args->no_probe, "Do not probe the environment after installing");
  sub.add_flag("--json", args->json,
               "Print the probe report (--dry-run, --no-probe: the plan) as JSON; other output "
               "to stderr");
  sub.add_flag("--run-kernels", args->run_kernels,
               "With a GPU: create a cuDNN handle and run a small convolution");
  sub.add_flag("--require-gpu", args->require_gpu,
               "Fail when the lock is for CUDA and no GPU is usable here");
  auto* mirror = sub.add_option("--mirror", args->mirror,
                                "Take every locked file from this mirror (URL or directory; "
                                "gpulock mirror add), by its hash");
  sub.add_option("--mirror-fallback", args->mirror_fallback,
                 "Take a locked file from this mirror when its URL is gone (404/410)")
      ->excludes(mirror);
  return [args, &sub](Context& ctx) {
    args->lock_given = sub.get_option("--lock")->count() > 0;
    return run_install(ctx, *args);
  };
}

const bool registered = register_command(
    {"install",
     "Make an environment exactly the lock (native installer, shared cache), then probe it", 45,
     &setup});

}  // namespace
}  // namespace gpulock::cli

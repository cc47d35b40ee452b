// `gpulock install`: install a lock with pip, exactly (direct URLs with hashes, --no-deps), then
// probe the environment (DESIGN.md §Commands; issue "Post-install: `gpulock install` and the
// cuDNN/CUDA load probe"). pip's output is streamed as it comes; when pip fails, gpulock says so
// and exits with pip's exit status. After pip, the probe's verdict decides: exit 1 when it fails.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "gpulock/app/install.h"
#include "gpulock/app/machine.h"
#include "gpulock/app/targets.h"

#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"
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

// Without --lock, where the project has pylock.<name>.toml locks (issue 22): the lock that fits
// this machine, or --target's. Returns the exit code when the command ends here.
std::optional<int> pick_lock(Context& ctx, InstallArgs& args) {
  if (args.lock_given || (args.target.empty() && !args.print_target && !has_target_locks(".")))
    return std::nullopt;
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
  auto machine = app::probe_machine(args.machine);
  if (!machine) return report_error(ctx.term, machine.error());
  // The Python that will run the lock (--python, else python3 on PATH): its version and tags
  // are compared with each lock's target. One that cannot be asked leaves them uncompared.
  auto python = app::make_target(app::TargetRequest{args.python, {}, {}, {}});
  if (!python) {
    ctx.term.warning(
        fmt::format("the locks' Python and platform are not compared: {}", python.error().message));
  }
  auto choice = app::choose_lock(".", *machine, python ? &*python : nullptr);
  if (!choice) return report_error(ctx.term, choice.error());
  if (!args.target.empty()) choice->chosen = args.lock;
  if (args.print_target && args.json) {
    JsonWriter w;
    w.begin_object();
    w.key("chosen").value(choice->chosen);
    w.field("cpu_fallback", choice->cpu_fallback);
    w.key("python").value_or_null(python ? python->python_version : std::string());
    w.key("locks").begin_array();
    for (const auto& f : choice->locks) {
      w.begin_object();
      w.field("path", f.path);
      w.field("target", f.target);
      w.field("fits", f.fits);
      w.field("gpu", f.gpu);
      w.key("cuda").value_or_null(f.cuda, [](const app::CudaVersion& c) { return c.to_string(); });
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
    ctx.term.error("no lock fits this machine");
    std::string text;
    for (const auto& f : choice->locks)
      text += fmt::format("  {}: {}\n", f.path, f.why);
    ctx.term.err(text);
    ctx.term.hint("resolve a target for this machine, or give --lock or --target");
    return kExitFinding;
  }
  if (choice->cpu_fallback) {
    for (const auto& f : choice->locks) {
      if (f.gpu) ctx.term.warning(fmt::format("{} does not fit: {}", f.path, f.why));
    }
  }
  ctx.term.info(fmt::format("{} fits this machine", *choice->chosen), 0);
  args.lock = *choice->chosen;
  return std::nullopt;
}

int run_install(Context& ctx, InstallArgs& args) {
  if (auto ended = pick_lock(ctx, args)) return *ended;
  app::InstallRequest request;
  request.lock = args.lock;
  request.python = args.python;
  request.probe = !args.no_probe;
  request.probe_request.run_kernels = args.run_kernels;
  request.probe_request.require_gpu = args.require_gpu;
  request.mirror = args.mirror;
  request.mirror_fallback = args.mirror_fallback;
  if (!args.mirror_fallback.empty()) {
    auto client = index::ClientOptions::from_environment();
    if (!client) return report_error(ctx.term, client.error());
    request.client = *client;
  }
  // With --json stdout carries the report alone: pip's output goes to stderr.
  auto on_output = [&](std::string_view chunk, bool is_stderr) {
    if (is_stderr || args.json) {
      ctx.term.err(chunk);
    } else {
      ctx.term.out(chunk);
    }
  };
  ctx.term.info(fmt::format("installing {} with pip", args.lock));
  auto result = app::install_lock(request, on_output);
  if (!result) return report_error(ctx.term, result.error());
  for (const auto& name : result->from_mirror) {
    // A fallback is news (the lock's URL is gone); --mirror asked for every file.
    const std::string line = fmt::format("{}: from the mirror {}", name,
                                         args.mirror.empty() ? args.mirror_fallback : args.mirror);
    if (args.mirror.empty() && !ctx.term.quiet()) {
      ctx.term.err(line + "\n");
    } else {
      ctx.term.info(line);
    }
  }
  if (result->pip_exit_code != 0) {
    std::string how = result->pip_timed_out ? std::string("was stopped")
                      : result->pip_exit_code > 128
                          ? fmt::format("was killed by signal {}", result->pip_exit_code - 128)
                          : fmt::format("failed with exit code {}", result->pip_exit_code);
    ctx.term.error(fmt::format("pip install {} ({})", how, argv_text(result->pip_argv)));
    if (result->hash_mismatch) {
      // A downloaded file that is not the locked one: an index/hash failure (exit 4).
      ctx.term.hint(
          "a downloaded file does not have the sha256 the lock records (hash mismatch); "
          "nothing was installed from it and nothing was probed");
      return exit_code_for(core::ErrorCode::HashMismatch);
    }
    ctx.term.hint("pip's own messages above say why; nothing was probed");
    return result->pip_exit_code;
  }
  if (!result->probe) return kExitSuccess;
  if (!args.json) ctx.term.out("\n");
  ctx.term.out(args.json ? render_probe_json(*result->probe)
                         : render_probe_text(*result->probe, ctx.term));
  return result->probe->ok() ? kExitSuccess : kExitFinding;
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
  sub.add_option("--driver", args->machine.driver,
                 "Describe this machine: driver version, or none");
  sub.add_option("--cuda-ceiling", args->machine.cuda_ceiling,
                 "Describe this machine: CUDA ceiling, e.g. 12.4");
  sub.add_option("--gpu-arch", args->machine.gpu_arch,
                 "Describe this machine: GPU architectures, e.g. sm_90");
  sub.add_option("--python", args->python,
                 "The interpreter whose environment to install into (default: "
                 "$VIRTUAL_ENV/bin/python, else python3)");
  sub.add_flag("--no-probe", args->no_probe, "Do not probe the environment after pip");
  sub.add_flag("--json", args->json, "Print the probe report as JSON (pip's output to stderr)");
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
    {"install", "Install a lock with pip (exact URLs and hashes), then probe the environment", 45,
     &setup});

}  // namespace
}  // namespace gpulock::cli

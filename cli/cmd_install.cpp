// `gpulock install`: install a lock with pip, exactly (direct URLs with hashes, --no-deps), then
// probe the environment (DESIGN.md §Commands; issue "Post-install: `gpulock install` and the
// cuDNN/CUDA load probe"). pip's output is streamed as it comes; when pip fails, gpulock says so
// and exits with pip's exit status. After pip, the probe's verdict decides: exit 1 when it fails.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "gpulock/app/install.h"

#include "command.h"
#include "exit_codes.h"
#include "probe_render.h"

namespace gpulock::cli {
namespace {

struct InstallArgs {
  std::string lock = "pylock.toml";
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

int run_install(Context& ctx, const InstallArgs& args) {
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
  sub.add_option("--lock", args->lock, "The lock to install (default: pylock.toml)");
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
  return [args](Context& ctx) { return run_install(ctx, *args); };
}

const bool registered = register_command(
    {"install", "Install a lock with pip (exact URLs and hashes), then probe the environment", 45,
     &setup});

}  // namespace
}  // namespace gpulock::cli

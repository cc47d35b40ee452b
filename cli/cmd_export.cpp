// `gpulock export`: a lock as a hashed pip requirements file (DESIGN.md §Commands).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "gpulock/core/tags.h"
#include "gpulock/lock/atomic_file.h"
#include "gpulock/lock/export.h"
#include "gpulock/lock/lockfile.h"

#include "command.h"
#include "exit_codes.h"

namespace gpulock::cli {
namespace {

struct ExportArgs {
  std::string lock = "pylock.toml";
  std::string format = "requirements-txt";
  std::string output;
  bool urls = false;
  std::string python_version;
  std::string platform;
};

int run_export(Context& ctx, const ExportArgs& args) {
  auto file = lock::read_lock_file(args.lock);
  if (!file) return report_error(ctx.term, file.error());
  for (const auto& w : file->warnings)
    ctx.term.warning(w.to_string());

  lock::ExportOptions options;
  options.direct_urls = args.urls;
  options.source_name = args.lock;
  const std::filesystem::path lock_path(args.lock);
  options.lock_dir = lock_path.has_parent_path() ? lock_path.parent_path() : ".";

  // The target chooses the wheel of a direct URL: the flags, else the lock's own target.
  std::string python = args.python_version;
  std::string platform = args.platform;
  if (args.urls && python.empty() && file->lock.gpulock && file->lock.gpulock->target) {
    python = file->lock.gpulock->target->python;
    platform = file->lock.gpulock->target->platform;
  }
  if (!python.empty() && !platform.empty()) {
    auto target = core::TagTarget::from_platform_tag(python, platform);
    if (!target) {
      core::Error e = target.error();
      if (args.python_version.empty()) {
        e = e.located(args.lock).with_context("while reading [tool.gpulock.target]");
      } else {
        e.code = core::ErrorCode::Usage;
      }
      return report_error(ctx.term, e);
    }
    options.target_tags = core::supported_tags(*target);
  }

  auto text = lock::export_requirements(file->lock, options);
  if (!text) {
    core::Error e = text.error();
    if (e.where.empty()) e.where = args.lock;
    return report_error(ctx.term, e);
  }
  if (args.output.empty() || args.output == "-") {
    ctx.term.out(*text);
    return kExitSuccess;
  }
  if (auto s = lock::write_file_atomically(args.output, *text); !s) {
    return report_error(ctx.term, s.error());
  }
  ctx.term.info(fmt::format("wrote {}", args.output));
  return kExitSuccess;
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<ExportArgs>();
  sub.add_option("--lock", args->lock, "The lock file to export")->capture_default_str();
  sub.add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"requirements-txt"}))
      ->capture_default_str();
  sub.add_option("-o,--output", args->output,
                 "Write to FILE (atomically) instead of standard output");
  sub.add_flag("--urls,--direct-urls", args->urls,
               "Write 'name @ URL' lines (the locked file itself) instead of 'name==version'");
  auto* py = sub.add_option("--python-version", args->python_version,
                            "Target Python (X.Y) to choose each package's wheel for --urls");
  auto* plat = sub.add_option("--platform", args->platform,
                              "Target platform tag to choose each package's wheel for --urls");
  py->needs(plat);
  plat->needs(py);
  sub.footer(
      "Install the result with: pip install --no-deps --require-hashes -r FILE\n"
      "Without --python-version/--platform, --urls uses the lock's [tool.gpulock.target].");
  return [args](Context& ctx) { return run_export(ctx, *args); };
}

const bool registered =
    register_command({"export", "Write a lock as a hashed pip requirements file", 30, &setup});

}  // namespace
}  // namespace gpulock::cli

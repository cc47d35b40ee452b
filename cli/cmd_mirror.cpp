// `gpulock mirror` (issue 24, "Durable locks"): add (download every file some locks name into
// a content-addressed store with a static index over it), verify, gc, rewrite-lock. Exit codes:
// 0 done; 1 a finding (--offline: files missing; verify: corruption); 4 a download or hash
// failure; 3 a bad lock; 74 a local file. `--json` on add, verify and gc: one JSON document on
// stdout (docs/schemas/mirror-add.schema.json, mirror-verify..., mirror-gc...), the same exit.
#include <chrono>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/mirror.h"

#include "cache_flags.h"
#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"

namespace gpulock::cli {
namespace {

struct MirrorArgs {
  std::vector<std::string> locks;
  std::string to;
  std::string dir;
  std::vector<std::string> keep;
  std::string base_url;
  unsigned jobs = 8;
  CacheFlags cache;
  bool json = false;  ///< add, verify, gc: the result as JSON on stdout
};

// "812 bytes", "101.6 KiB", "3.2 GiB".
std::string mib(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

// The summary line of a subcommand: on stderr, unless -q.
void summary(Context& ctx, const std::string& line) {
  if (!ctx.term.quiet()) ctx.term.err(line + "\n");
}

int run_add(Context& ctx, const MirrorArgs& args) {
  auto client = cache_client_options(args.cache);
  if (!client) return report_error(ctx.term, client.error());
  app::MirrorAddRequest request;
  request.locks = args.locks;
  request.dir = args.to;
  request.client = *client;
  request.jobs = args.jobs;
  if (ctx.term.stderr_is_tty()) {
    request.on_progress = [&ctx](const app::MirrorProgress& p) {
      ctx.term.progress(
          fmt::format("Mirroring  {}/{} files  {}", p.files_done, p.files_total, mib(p.bytes)));
    };
  }
  request.on_wait = [&ctx](const std::string& lock_file) {
    ctx.term.progress("");
    ctx.term.err(fmt::format("waiting for another gpulock using the mirror ({})\n", lock_file));
  };
  const auto started = std::chrono::steady_clock::now();
  auto result = app::mirror_add(request);
  ctx.term.progress("");
  if (!result) return report_error(ctx.term, result.error());
  for (const auto& s : result->skipped)
    ctx.term.warning(fmt::format("not mirrored: {}", s));
  if (result->replaced > 0) {
    ctx.term.warning(
        fmt::format("{} files in the store were not the bytes the locks name; "
                    "fetched them again",
                    result->replaced));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (args.json) {
    JsonWriter w;
    w.begin_object();
    w.field("schema", "gpulock.mirror-add/1");
    w.field("dir", args.to);
    w.field("locks", args.locks);
    w.field("offline", args.cache.offline);
    w.field("ok", result->missing.empty());
    w.field("files", static_cast<std::uint64_t>(result->files));
    w.field("present", static_cast<std::uint64_t>(result->present));
    w.field("downloaded", static_cast<std::uint64_t>(result->downloaded));
    w.field("resumed", static_cast<std::uint64_t>(result->resumed));
    w.field("replaced", static_cast<std::uint64_t>(result->replaced));
    w.field("leftovers_removed", static_cast<std::uint64_t>(result->leftovers));
    w.field("bytes_received", result->bytes_received);
    w.field("missing", result->missing);
    w.field("skipped", result->skipped);
    w.field("seconds", seconds);
    w.end_object();
    ctx.term.out(w.str());
  }
  if (!result->missing.empty()) {
    ctx.term.error(fmt::format("{} of {} files are not in the mirror {} (--offline)",
                               result->missing.size(), result->files, args.to));
    for (const auto& m : result->missing)
      ctx.term.err(fmt::format("  missing: {}\n", m));
    ctx.term.hint(fmt::format("run gpulock mirror add without --offline to fetch them"));
    return kExitFinding;
  }
  summary(
      ctx,
      fmt::format(
          "mirrored {} files into {}: {} already there, {} downloaded ({} resumed), {} in {:.1f} s",
          result->files, args.to, result->present, result->downloaded, result->resumed,
          mib(result->bytes_received), seconds));
  return kExitSuccess;
}

int run_verify(Context& ctx, const MirrorArgs& args) {
  auto result = app::mirror_verify(args.dir);
  if (!result) return report_error(ctx.term, result.error());
  const bool intact =
      result->corrupt.empty() && result->missing.empty() && result->leftovers.empty();
  if (args.json) {
    JsonWriter w;
    w.begin_object();
    w.field("schema", "gpulock.mirror-verify/1");
    w.field("dir", args.dir);
    w.field("ok", intact);
    w.field("checked", static_cast<std::uint64_t>(result->checked));
    w.field("corrupt", result->corrupt);
    w.field("missing", result->missing);
    w.field("leftovers", result->leftovers);
    w.end_object();
    ctx.term.out(w.str());
  } else {
    for (const auto& c : result->corrupt)
      ctx.term.out(fmt::format("corrupt: {}\n", c));
    for (const auto& m : result->missing)
      ctx.term.out(fmt::format("missing: {}\n", m));
    for (const auto& l : result->leftovers)
      ctx.term.out(fmt::format("leftover: {}\n", l));
  }
  if (!intact) {
    ctx.term.error(
        fmt::format("{}: {} corrupt, {} missing of {} files, {} leftover partial "
                    "writes",
                    args.dir, result->corrupt.size(), result->missing.size(), result->checked,
                    result->leftovers.size()));
    ctx.term.hint(
        "run gpulock mirror add again: it fetches what is corrupt or missing and "
        "removes leftovers");
    return kExitFinding;
  }
  summary(ctx, fmt::format("{}: {} files, all intact", args.dir, result->checked));
  return kExitSuccess;
}

int run_gc(Context& ctx, const MirrorArgs& args) {
  auto result = app::mirror_gc(args.dir, args.keep, [&ctx](const std::string& lock_file) {
    ctx.term.err(fmt::format("waiting for another gpulock using the mirror ({})\n", lock_file));
  });
  if (!result) return report_error(ctx.term, result.error());
  if (args.json) {
    JsonWriter w;
    w.begin_object();
    w.field("schema", "gpulock.mirror-gc/1");
    w.field("dir", args.dir);
    w.field("keep", args.keep);
    w.field("kept", static_cast<std::uint64_t>(result->kept));
    w.field("removed", result->removed);
    w.field("bytes_freed", result->bytes_freed);
    w.end_object();
    ctx.term.out(w.str());
  } else {
    for (const auto& r : result->removed)
      ctx.term.out(fmt::format("removed: {}\n", r));
  }
  summary(ctx, fmt::format("{}: kept {} files, removed {} ({})", args.dir, result->kept,
                           result->removed.size(), mib(result->bytes_freed)));
  return kExitSuccess;
}

int run_rewrite(Context& ctx, const MirrorArgs& args) {
  for (const auto& lock : args.locks) {
    auto changed = app::mirror_rewrite_lock(lock, args.base_url);
    if (!changed) return report_error(ctx.term, changed.error());
    summary(ctx, fmt::format("{}: {} file URLs now point at {}", lock, *changed, args.base_url));
  }
  return kExitSuccess;
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<MirrorArgs>();
  sub.require_subcommand(1);
  CLI::App* add = sub.add_subcommand(
      "add", "Download every file the locks name into a mirror directory (a static index)");
  add->add_option("lock", args->locks, "Locks (pylock.toml, pylock.<target>.toml)")->required();
  add->add_option("--to", args->to, "The mirror directory (created, or extended)")->required();
  add->add_option("--jobs,-j", args->jobs, "Downloads in parallel (default 8)")
      ->check(CLI::Range(1u, 64u));
  add->add_option("--cache-dir", args->cache.cache_dir,
                  "Cache directory; partial downloads are kept in its partial/ (default: "
                  "$GPULOCK_CACHE_DIR, $XDG_CACHE_HOME/gpulock, ~/.cache/gpulock)");
  add->add_flag("--offline", args->cache.offline,
                "Download nothing: check that every file is there (exit 1 naming what is not)");
  add_limit_options(*add, args->cache);
  add->add_flag("--json", args->json, "Print the result as JSON on stdout");

  CLI::App* verify = sub.add_subcommand("verify", "Re-hash every file of a mirror's store");
  verify->add_option("dir", args->dir, "The mirror directory")->required();
  verify->add_flag("--json", args->json, "Print the result as JSON on stdout");

  CLI::App* gc =
      sub.add_subcommand("gc", "Remove from a mirror every file none of the kept locks names");
  gc->add_option("dir", args->dir, "The mirror directory")->required();
  gc->add_option("--keep", args->keep, "Locks whose files stay (repeatable)")->required();
  gc->add_flag("--json", args->json, "Print the result as JSON on stdout");

  CLI::App* rewrite = sub.add_subcommand(
      "rewrite-lock", "Point every file URL of locks at a mirror (in place; hashes unchanged)");
  rewrite->add_option("lock", args->locks, "Locks to rewrite")->required();
  rewrite->add_option("--base-url", args->base_url, "Where the mirror is served (URL or directory)")
      ->required();

  return [args, add, verify, gc, rewrite](Context& ctx) -> int {
    if (add->parsed()) return run_add(ctx, *args);
    if (verify->parsed()) return run_verify(ctx, *args);
    if (gc->parsed()) return run_gc(ctx, *args);
    if (rewrite->parsed()) return run_rewrite(ctx, *args);
    return kExitUsage;
  };
}

const bool registered = register_command(
    {"mirror", "Keep every file some locks name in a mirror directory (a static index)", 48,
     &setup});

}  // namespace
}  // namespace gpulock::cli

// `gpulock cache`: the shared cache of unpacked wheels the native installer links from
// (issue 25, app/wheel_cache.h): `cache dir` prints where it is, `cache prune` empties it of
// what is not in use.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "gpulock/app/wheel_cache.h"

#include "command.h"
#include "exit_codes.h"

namespace gpulock::cli {
namespace {

struct CacheArgs {
  std::string cache_dir;
  unsigned older_than = 30;
  bool all = false;
};

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<CacheArgs>();
  sub.require_subcommand(1);
  sub.add_option("--cache-dir", args->cache_dir,
                 "The cache directory (default: $GPULOCK_CACHE_DIR, $XDG_CACHE_HOME/gpulock, "
                 "~/.cache/gpulock)");
  CLI::App* dir = sub.add_subcommand("dir", "Print the directory of unpacked wheels");
  CLI::App* prune = sub.add_subcommand(
      "prune",
      "Remove interrupted unpackings, partial downloads and unpacked wheels no install used "
      "for a while (environments keep their hard-linked or copied files)");
  prune->add_option("--older-than", args->older_than,
                    "Days since an unpacked wheel was last installed from (default 30)");
  prune->add_flag("--all", args->all, "Remove every unpacked wheel");
  return [args, dir, prune](Context& ctx) -> int {
    const auto root = app::wheel_cache_root(args->cache_dir);
    if (dir->parsed()) {
      ctx.term.out(root.string() + "\n");
      return kExitSuccess;
    }
    if (!prune->parsed()) return kExitUsage;
    auto r = app::prune_wheel_cache(root, args->older_than, args->all);
    if (!r) return report_error(ctx.term, r.error());
    ctx.term.out(fmt::format("removed {} unpacked wheels and {} leftovers ({} bytes) from {}\n",
                             r->entries, r->leftovers, r->bytes, root.string()));
    if (r->in_use > 0) {
      ctx.term.out(fmt::format("kept {} in use by a running gpulock install\n", r->in_use));
    }
    return kExitSuccess;
  };
}

const bool registered = register_command(
    {"cache", "The shared cache of unpacked wheels: where it is, prune it", 47, &setup});

}  // namespace
}  // namespace gpulock::cli

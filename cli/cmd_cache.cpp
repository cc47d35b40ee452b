// `gpulock cache`: the shared cache of unpacked wheels the native installer links from
// (issue 25, install/wheel_cache.h): `cache dir` prints where it is, `cache prune` empties it of
// what is not in use. `--json` on both: one JSON document on stdout
// (docs/schemas/cache-dir.schema.json, cache-prune.schema.json).
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "gpulock/install/wheel_cache.h"

#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"

namespace gpulock::cli {
namespace {

struct CacheArgs {
  std::string cache_dir;
  unsigned older_than = 30;
  bool all = false;
  bool json = false;
};

std::string dir_json(const std::filesystem::path& root) {
  std::error_code ec;
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.cache-dir/1");
  w.field("dir", root.string());
  w.field("exists", std::filesystem::is_directory(root, ec));
  w.end_object();
  return w.str();
}

std::string prune_json(const std::filesystem::path& root, const install::PruneResult& r) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.cache-prune/1");
  w.field("dir", root.string());
  w.field("removed", static_cast<std::uint64_t>(r.entries));
  w.field("leftovers", static_cast<std::uint64_t>(r.leftovers));
  w.field("bytes", r.bytes);
  w.field("in_use", static_cast<std::uint64_t>(r.in_use));
  w.end_object();
  return w.str();
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<CacheArgs>();
  sub.require_subcommand(1);
  sub.add_option("--cache-dir", args->cache_dir,
                 "The cache directory (default: $GPULOCK_CACHE_DIR, $XDG_CACHE_HOME/gpulock, "
                 "~/.cache/gpulock)");
  CLI::App* dir = sub.add_subcommand("dir", "Print the directory of unpacked wheels");
  dir->add_flag("--json", args->json, "Print it as JSON (with whether it exists)");
  CLI::App* prune = sub.add_subcommand(
      "prune",
      "Remove interrupted unpackings, partial downloads and unpacked wheels no install used "
      "for a while (environments keep their hard-linked or copied files)");
  prune->add_option("--older-than", args->older_than,
                    "Days since an unpacked wheel was last installed from (default 30)");
  prune->add_flag("--all", args->all, "Remove every unpacked wheel");
  prune->add_flag("--json", args->json, "Print what was removed as JSON");
  return [args, dir, prune](Context& ctx) -> int {
    const auto root = install::wheel_cache_root(args->cache_dir);
    if (dir->parsed()) {
      ctx.term.out(args->json ? dir_json(root) : root.string() + "\n");
      return kExitSuccess;
    }
    if (!prune->parsed()) return kExitUsage;
    auto r = install::prune_wheel_cache(root, args->older_than, args->all);
    if (!r) return report_error(ctx.term, r.error());
    if (args->json) {
      ctx.term.out(prune_json(root, *r));
      return kExitSuccess;
    }
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

// `gpulock export`: a lock as a hashed pip requirements file (DESIGN.md §Commands). `--json`:
// what was written, read back from the text itself (docs/schemas/export.schema.json).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/export.h"
#include "gpulock/core/tags.h"
#include "gpulock/core/text.h"
#include "gpulock/lock/export.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/atomic_file.h"

#include "cache_flags.h"
#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"

namespace gpulock::cli {
namespace {

struct ExportArgs {
  std::string lock = "pylock.toml";
  std::string format = "requirements-txt";
  std::string output;
  bool urls = false;      // direct URLs for packages their index no longer lists
  bool all_urls = false;  // every package as a direct URL, no index asked
  CacheFlags cache;
  std::string python_version;
  std::string platform;
  bool json = false;
};

// One requirement of the exported text: "name==version ; marker \" or "name @ URL ; marker \",
// then its "    --hash=algo:digest" lines.
struct ExportedLine {
  std::string name;
  std::optional<std::string> version, url, marker;
  std::vector<std::string> hashes;
};

// The requirements text as written, entry by entry (the JSON reports what the file says, not
// what export meant to write), and its --index-url / --extra-index-url lines.
std::vector<ExportedLine> read_back(std::string_view text, std::vector<std::string>& indexes) {
  std::vector<ExportedLine> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    while (!line.empty() && (line.back() == '\\' || line.back() == ' '))
      line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with("--index-url ") || line.starts_with("--extra-index-url ")) {
      indexes.emplace_back(line.substr(line.find(' ') + 1));
      continue;
    }
    if (line.front() == ' ') {
      const auto trimmed = core::trim(line);
      if (trimmed.starts_with("--hash=") && !out.empty())
        out.back().hashes.emplace_back(trimmed.substr(7));
      continue;
    }
    ExportedLine e;
    if (auto semi = line.find(" ; "); semi != std::string_view::npos) {
      e.marker = std::string(line.substr(semi + 3));
      line = line.substr(0, semi);
    }
    if (auto at = line.find(" @ "); at != std::string_view::npos) {
      e.name = line.substr(0, at);
      e.url = std::string(line.substr(at + 3));
    } else if (auto eq = line.find("=="); eq != std::string_view::npos) {
      e.name = line.substr(0, eq);
      e.version = std::string(line.substr(eq + 2));
    } else {
      e.name = line;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string export_json(const ExportArgs& args, const std::string& text,
                        const app::UnlistedResult* unlisted) {
  std::vector<std::string> indexes;
  const auto lines = read_back(text, indexes);
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.export/1");
  w.field("lock", args.lock);
  w.field("format", args.format);
  w.key("output").value_or_null(args.output);
  w.field("indexes", indexes);
  w.key("packages").begin_array();
  for (const auto& e : lines) {
    w.begin_object();
    w.field("name", e.name);
    w.field("version", e.version);
    w.field("url", e.url);
    w.field("marker", e.marker);
    w.field("hashes", e.hashes);
    w.end_object();
  }
  w.end_array();
  // --urls: why each package is a direct URL (empty without --urls).
  w.key("direct_urls").begin_array();
  const std::vector<app::UnlistedPackage> none;
  for (const auto& u : unlisted ? unlisted->packages : none) {
    w.begin_object();
    w.field("name", u.name);
    w.key("version").value_or_null(u.version);
    w.field("reason", std::string(app::unlisted_reason_name(u.reason)));
    w.key("index").value_or_null(u.index);
    w.field("missing_files", u.missing_files);
    w.field("message", u.message);
    w.end_object();
  }
  w.end_array();
  w.field("requirements", text);
  w.end_object();
  return w.str();
}

int run_export(Context& ctx, const ExportArgs& args) {
  if (args.json && args.output == "-") {
    return report_error(ctx.term, core::make_error(core::ErrorCode::Usage,
                                                   "--json and -o - both write to stdout; give "
                                                   "-o a file, or leave it out (the text is in "
                                                   "the JSON's \"requirements\")"));
  }
  auto file = lock::read_lock_file(args.lock);
  if (!file) return report_error(ctx.term, file.error());
  for (const auto& w : file->warnings)
    ctx.term.warning(w.to_string());

  lock::ExportOptions options;
  options.direct_urls = args.all_urls;
  options.source_name = args.lock;
  const std::filesystem::path lock_path(args.lock);
  options.lock_dir = lock_path.has_parent_path() ? lock_path.parent_path() : ".";

  // The target chooses the wheel of a direct URL: the flags, else the lock's own target.
  std::string python = args.python_version;
  std::string platform = args.platform;
  if ((args.urls || args.all_urls) && python.empty() && file->lock.gpulock &&
      file->lock.gpulock->target) {
    python = file->lock.gpulock->target->python;
    platform = file->lock.gpulock->target->platform;
  }
  if (!python.empty() && !platform.empty()) {
    auto target = core::TagTarget::from_platform_tag(python, platform);
    if (!target) {
      const core::Error& e = target.error();
      return report_error(
          ctx.term, args.python_version.empty()
                        ? e.located(args.lock).with_context("while reading [tool.gpulock.target]")
                        : e.with_code(core::ErrorCode::Usage));
    }
    options.target_tags = core::supported_tags(*target);
  }

  std::optional<app::UnlistedResult> unlisted;
  if (args.urls) {
    auto client = cache_client_options(args.cache);
    if (!client) return report_error(ctx.term, client.error());
    auto found = app::find_unlisted_packages(file->lock, options, *client);
    if (!found) return report_error(ctx.term, found.error());
    unlisted = std::move(*found);
    options.direct_url_packages = unlisted->direct_url_packages;
    if (!ctx.term.quiet()) {
      for (const auto& u : unlisted->packages)
        ctx.term.info(fmt::format("{} (direct URL)", u.message), 0);
    }
  }

  auto text = lock::export_requirements(file->lock, options);
  if (!text) {
    core::Error e = text.error();
    if (e.where.empty()) e.where = args.lock;
    return report_error(ctx.term, e);
  }
  if (args.output.empty() || args.output == "-") {
    ctx.term.out(args.json ? export_json(args, *text, unlisted ? &*unlisted : nullptr) : *text);
    return kExitSuccess;
  }
  if (auto s = sys::write_file_atomically(args.output, *text); !s) {
    return report_error(ctx.term, s.error());
  }
  ctx.term.info(fmt::format("wrote {}", args.output));
  if (args.json) ctx.term.out(export_json(args, *text, unlisted ? &*unlisted : nullptr));
  return kExitSuccess;
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<ExportArgs>();
  sub.add_option("--lock", args->lock, "The lock file to export")->capture_default_str();
  sub.add_option("--format", args->format, "Output format")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            if (v == "requirements-txt") return {};
            // The one format there is; a likely typo of it gets a did-you-mean.
            const bool close = core::edit_distance(v, "requirements-txt") <= 5 ||
                               std::string_view("requirements-txt").starts_with(v) ||
                               v.starts_with("req");
            return fmt::format("'{}' is not a format (the format is requirements-txt){}", v,
                               close ? "; did you mean 'requirements-txt'?" : "");
          },
          "requirements-txt", ""))
      ->capture_default_str();
  sub.add_option("-o,--output", args->output,
                 "Write to FILE (atomically) instead of standard output");
  sub.add_flag("--json", args->json,
               "Print what was exported as JSON (each requirement, its hashes, the indexes, "
               "--urls' reasons; the text as \"requirements\"); the file goes to -o");
  auto* urls = sub.add_flag("--urls,--direct-urls", args->urls,
                            "'name @ URL' for packages their index no longer lists (asks it)");
  auto* all = sub.add_flag("--all-urls", args->all_urls,
                           "Write every package as 'name @ URL' (no index asked)");
  urls->excludes(all);
  all->excludes(urls);
  auto* py = sub.add_option("--python-version", args->python_version,
                            "Target Python (X.Y) to choose each package's wheel for direct URLs");
  auto* plat = sub.add_option("--platform", args->platform,
                              "Target platform tag to choose each package's wheel for direct URLs");
  py->needs(plat);
  plat->needs(py);
  sub.add_option("--cache-dir", args->cache.cache_dir,
                 "Cache directory (default $GPULOCK_CACHE_DIR, $XDG_CACHE_HOME/gpulock)")
      ->needs(urls);
  sub.add_flag("--offline", args->cache.offline, "Use only cached index pages; no network")
      ->needs(urls);
  sub.add_flag("--no-cache", args->cache.no_cache, "Neither read nor write the cache")->needs(urls);
  sub.footer(
      "Install the result with: pip install --no-deps --require-hashes -r FILE\n"
      "--urls asks each package's own index (pylock.toml packages.index) whether it still lists\n"
      "the locked file; packages it no longer lists (pruned nightlies), packages whose project\n"
      "is gone and packages without an index become direct URLs, each named on stderr.\n"
      "Without --python-version/--platform, direct URLs use the lock's [tool.gpulock.target].");
  return [args](Context& ctx) { return run_export(ctx, *args); };
}

const bool registered =
    register_command({"export", "Write a lock as a hashed pip requirements file", 30, &setup});

}  // namespace
}  // namespace gpulock::cli

// `gpulock index show NAME --index-url URL [--json]`: the versions and files an index lists for
// a project; `gpulock index metadata URL_OR_PATH... [--json|--raw]`: the METADATA of wheels
// (local paths, file:// or http(s):// URLs; remote wheels are read by range requests).
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/metadata.h"
#include "gpulock/index/client.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"

#include "cache_flags.h"
#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"

namespace gpulock::cli {
namespace {

struct IndexArgs {
  CacheFlags cache;
  // show
  std::string name;
  std::string index_url = "https://pypi.org/simple/";
  bool find_links = false;
  bool forbidden_means_missing = false;
  // metadata
  std::vector<std::string> wheels;
  bool raw = false;
  bool json = false;
};

void add_cache_options(CLI::App& app, CacheFlags& c) {
  app.add_option(
      "--cache-dir", c.cache_dir,
      "Cache directory (default: $GPULOCK_CACHE_DIR, $XDG_CACHE_HOME/gpulock, ~/.cache/gpulock)");
  app.add_flag("--offline", c.offline, "Use only the cache; fail naming what is missing");
  app.add_flag("--refresh", c.refresh, "Revalidate cached pages even when fresh");
  app.add_flag("--no-cache", c.no_cache, "Neither read nor write the cache");
  add_limit_options(app, c);
  app.add_option("--allow-insecure-host", c.insecure_hosts,
                 "Follow an https -> http redirect to HOST (repeatable)");
}

core::Result<index::ClientOptions> client_options(const CacheFlags& c, Terminal& term,
                                                  std::mutex& mu) {
  auto o = cache_client_options(c);
  if (o && term.verbosity() >= 1) {
    // Called from worker threads: serialize the writes.
    o->observer = [&term, &mu](const index::ClientEvent& e) {
      using T = index::ClientEvent::Type;
      std::string line;
      switch (e.type) {
        case T::RequestStarted:
          if (term.verbosity() < 2) return;
          line = fmt::format("GET {} ({})", e.url, index::request_kind_name(e.kind));
          break;
        case T::RequestFinished:
          line = e.status != 0 ? fmt::format("{} {} ({} bytes)", e.status, e.url, e.bytes)
                               : fmt::format("failed {}: {}", e.url, e.message);
          break;
        case T::Retry:
          line = fmt::format("retrying {}: {}", e.url, e.message);
          break;
        case T::CacheHit:
          line = fmt::format("cached {}", e.url);
          break;
        case T::Warning:
          line = fmt::format("warning: {}: {}", e.url, e.message);
          break;
      }
      std::lock_guard<std::mutex> lock(mu);
      term.info(line);
    };
  }
  return o;
}

std::string short_hash(const index::DistFile& f) {
  if (!f.sha256().empty()) return fmt::format("sha256:{}", f.sha256().substr(0, 12));
  if (auto hashes = f.hashes(); !hashes.empty())
    return fmt::format("{}:{}", hashes[0].algorithm, hashes[0].hex.substr(0, 12));
  return "no hash";
}

std::string human_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0);
  if (bytes < 1024ULL * 1024 * 1024) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

// Versions newest first (PEP 440 order), each with its files in page order. One pass with a
// hash map (files of a version share one entry, so the pointer is looked up first): linear in
// the files, for a page of a million.
std::vector<std::pair<const core::Version*, std::vector<const index::DistFile*>>> by_version(
    const index::ProjectPage& page) {
  std::vector<std::pair<const core::Version*, std::vector<const index::DistFile*>>> groups;
  std::unordered_map<const core::Version*, std::size_t> by_entry;
  std::unordered_map<core::Version, std::size_t, core::VersionHash> by_value;
  for (const auto& f : page.files) {
    const core::Version& v = f.version();
    auto [entry, new_entry] = by_entry.try_emplace(&v, 0);
    if (new_entry) {
      auto [slot, new_version] = by_value.try_emplace(v, groups.size());
      if (new_version) groups.push_back({&v, {}});
      entry->second = slot->second;
    }
    groups[entry->second].second.push_back(&f);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return *a.first > *b.first; });
  return groups;
}

void write_hashes(JsonWriter& w, const std::vector<index::Hash>& hashes) {
  w.begin_object();
  for (const auto& h : hashes)
    w.field(h.algorithm, h.hex);
  w.end_object();
}

int show(Context& ctx, const IndexArgs& args) {
  std::mutex mu;
  auto options = client_options(args.cache, ctx.term, mu);
  if (!options) return report_error(ctx.term, options.error());
  index::IndexClient client(std::move(*options));
  index::IndexSource source = args.find_links ? index::IndexSource::find_links(args.index_url)
                                              : index::IndexSource::simple(args.index_url);
  if (args.forbidden_means_missing) source.forbidden_means_missing = true;
  auto result = client.fetch_project(source, args.name);
  if (!result) return report_error(ctx.term, result.error());
  const index::ProjectPage& page = **result;
  auto groups = by_version(page);
  if (args.json) {
    JsonWriter w;
    w.begin_object();
    w.field("name", page.name);
    w.field("url", page.url);
    w.field("found", page.found);
    w.field("api_version", page.api_version);
    w.key("versions").begin_array();
    for (const auto& g : groups)
      w.value(g.first->to_string());
    w.end_array();
    w.field("index_versions", page.versions);
    w.key("files").begin_array();
    for (const auto& g : groups) {
      for (const auto* f : g.second) {
        w.begin_object();
        w.field("filename", f->filename());
        w.field("url", index::redact_url(f->url()));
        w.field("version", f->version().to_string());
        w.field("kind", f->is_wheel() ? "wheel" : "sdist");
        w.key("hashes");
        write_hashes(w, f->hashes());
        w.key("requires_python").value_or_null(f->requires_python());
        w.field("yanked", f->yanked());
        if (f->yanked()) {
          w.field("yanked_reason", f->yanked_reason());
        } else {
          w.key("yanked_reason").null();
        }
        w.field("core_metadata", f->core_metadata());
        w.key("core_metadata_hashes");
        write_hashes(w, f->core_metadata_hashes());
        w.field("size", f->size());
        w.key("upload_time").value_or_null(f->upload_time(), [](const auto& t) {
          return index::format_timestamp(t);
        });
        w.end_object();
      }
    }
    w.end_array();
    w.field("warnings", page.warnings);
    w.end_object();
    ctx.term.out(w.str());
  } else if (page.found) {
    std::string out = fmt::format("{} {}\n", ctx.term.paint(Style::Bold, page.name), page.url);
    out += fmt::format("{} version{}, {} file{}, repository API {}\n", groups.size(),
                       groups.size() == 1 ? "" : "s", page.files.size(),
                       page.files.size() == 1 ? "" : "s", page.api_version);
    for (const auto& g : groups) {
      out += fmt::format("\n{}\n", ctx.term.paint(Style::Cyan, g.first->to_string()));
      for (const auto* f : g.second) {
        std::vector<std::string> notes{short_hash(*f)};
        if (f->core_metadata()) notes.emplace_back("metadata");
        if (!f->requires_python().empty())
          notes.push_back(fmt::format("requires-python {}", f->requires_python()));
        if (f->size()) notes.push_back(human_size(*f->size()));
        if (f->upload_time())
          notes.push_back("uploaded " + index::format_timestamp(*f->upload_time()));
        if (f->yanked()) {
          notes.push_back(
              ctx.term.paint(Style::Yellow, f->yanked_reason().empty()
                                                ? std::string("yanked")
                                                : fmt::format("yanked: {}", f->yanked_reason())));
        }
        out += fmt::format("  {}  {}\n", f->filename(), fmt::join(notes, "  "));
      }
      // Written as it grows: a page of a million files is not held twice, as records and text.
      if (out.size() >= (std::size_t{1} << 20)) {
        ctx.term.out(out);
        out.clear();
      }
    }
    ctx.term.out(out);
  }
  for (const auto& warning : page.warnings)
    ctx.term.warning(warning);
  if (!page.found) {
    ctx.term.error(
        fmt::format("'{}' is not on the index {}", page.name, index::redact_url(source.url)));
    return kExitFinding;
  }
  return kExitSuccess;
}

// A wheel named on the command line as a DistFile (a `#sha256=` fragment is its expected hash).
core::Result<index::DistFile> wheel_file(const std::string& arg) {
  std::string url = arg;
  if (!index::is_http_url(url) && !index::is_file_url(url)) url = index::path_to_file_url(url);
  index::DistFile file;
  file.set_text(index::url_basename(url), index::strip_fragment(url));
  auto parts = index::split_url(url);
  if (parts.has_fragment && parts.fragment.starts_with("sha256=")) {
    file.add_hash("sha256", parts.fragment.substr(7));
  }
  auto wheel = core::WheelFilename::parse(file.filename());
  if (!wheel) return std::unexpected(wheel.error().located(index::redact_url(file.url())));
  file.set_wheel(*wheel);
  return file;
}

void write_metadata_json(JsonWriter& w, const index::DistFile& file, const core::CoreMetadata& m) {
  w.begin_object();
  w.field("wheel", file.filename());
  w.field("metadata_version", m.metadata_version);
  w.field("name", m.name);
  w.field("version", m.version.to_string());
  w.key("requires_python").value_or_null(m.requires_python, [](const auto& r) {
    return r.to_string();
  });
  w.key("requires_dist").begin_array();
  for (const auto& r : m.requires_dist)
    w.value(r.to_string());
  w.end_array();
  w.field("provides_extra", m.provides_extra);
  w.field("warnings", m.warnings);
  w.end_object();
}

std::string metadata_text(const core::CoreMetadata& m) {
  std::string out;
  out += fmt::format("Metadata-Version: {}\n", m.metadata_version);
  out += fmt::format("Name: {}\n", m.name);
  out += fmt::format("Version: {}\n", m.version.to_string());
  if (m.requires_python)
    out += fmt::format("Requires-Python: {}\n", m.requires_python->to_string());
  for (const auto& r : m.requires_dist)
    out += fmt::format("Requires-Dist: {}\n", r.to_string());
  for (const auto& e : m.provides_extra)
    out += fmt::format("Provides-Extra: {}\n", e);
  return out;
}

// One wheel: its METADATA as parsed (or --raw, or --json). Several: fetched in parallel, printed
// in the order given, each under a `==> FILENAME <==` line (a JSON array with --json); the exit
// status is the first failure's.
int metadata(Context& ctx, const IndexArgs& args) {
  std::mutex mu;
  std::vector<index::DistFile> files;
  for (const auto& arg : args.wheels) {
    auto file = wheel_file(arg);
    if (!file) return report_error(ctx.term, file.error());
    files.push_back(std::move(*file));
  }
  auto options = client_options(args.cache, ctx.term, mu);
  if (!options) return report_error(ctx.term, options.error());
  index::IndexClient client(std::move(*options));
  if (files.size() > 1) {
    for (const auto& f : files)
      client.prefetch_metadata(f);
  }
  const bool several = files.size() > 1;
  int status = kExitSuccess;
  JsonWriter w;
  if (args.json && several) w.begin_array();
  for (const auto& file : files) {
    auto text = client.fetch_metadata(file);
    if (!text) {
      int code = report_error(ctx.term, text.error());
      if (status == kExitSuccess) status = code;
      continue;
    }
    if (args.raw) {
      ctx.term.out(several ? fmt::format("==> {} <==\n{}", file.filename(), *text) : *text);
      continue;
    }
    auto parse_result = core::CoreMetadata::parse(*text);
    if (!parse_result) {
      int code = report_error(
          ctx.term, parse_result.error().located(index::redact_url(file.url()) + " (METADATA)"));
      if (status == kExitSuccess) status = code;
      continue;
    }
    const core::CoreMetadata& m = *parse_result;
    if (args.json) {
      write_metadata_json(w, file, m);
    } else {
      ctx.term.out(several ? fmt::format("==> {} <==\n{}", file.filename(), metadata_text(m))
                           : metadata_text(m));
    }
    for (const auto& warning : m.warnings)
      ctx.term.warning(several ? fmt::format("{}: {}", file.filename(), warning) : warning);
  }
  if (args.json && several) w.end_array();
  if (args.json && (several || status == kExitSuccess)) ctx.term.out(w.str());
  return status;
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<IndexArgs>();
  sub.require_subcommand(1);
  CLI::App* show_cmd =
      sub.add_subcommand("show", "List the versions and files an index has for a project");
  show_cmd->add_option("name", args->name, "The project name")->required();
  show_cmd->add_option("--index-url", args->index_url, "Simple API base URL or local path")
      ->capture_default_str();
  show_cmd->add_flag("--find-links", args->find_links,
                     "Treat --index-url as a find-links directory or page (pip's --find-links)");
  show_cmd->add_flag(
      "--forbidden-means-missing", args->forbidden_means_missing,
      "Read 403 as 'not on this index' (set automatically for download.pytorch.org)");
  show_cmd->add_flag("--json", args->json, "Print JSON");
  add_cache_options(*show_cmd, args->cache);

  CLI::App* meta_cmd =
      sub.add_subcommand("metadata", "Print the parsed METADATA of wheels (fetched in parallel)");
  meta_cmd
      ->add_option("wheel", args->wheels,
                   "Wheels: local paths, file:// or http(s):// URLs (several are fetched in "
                   "parallel)")
      ->required();
  meta_cmd->add_flag("--json", args->json, "Print JSON");
  meta_cmd->add_flag("--raw", args->raw, "Print the METADATA file as it is");
  add_cache_options(*meta_cmd, args->cache);

  return [args, show_cmd, meta_cmd](Context& ctx) -> int {
    if (show_cmd->parsed()) return show(ctx, *args);
    if (meta_cmd->parsed()) return metadata(ctx, *args);
    return kExitUsage;
  };
}

const bool registered = register_command(
    {"index", "Inspect a package index: a project's files, a wheel's METADATA", 70, &setup});

}  // namespace
}  // namespace gpulock::cli

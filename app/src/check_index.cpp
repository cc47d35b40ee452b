// The index layer of `gpulock check` (network, opt-in): is every locked file still on its
// index with the same hash and not yanked (PEP 592), and what would a resolve with the same
// recorded inputs and snapshot pick today ("upstream moved")?
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpulock/app/command_line.h"
#include "gpulock/app/mirror.h"
#include "gpulock/app/resolve.h"
#include "gpulock/app/resolve_record.h"
#include "gpulock/catalog/source.h"
#include "gpulock/index/client.h"
#include "gpulock/index/page.h"
#include "gpulock/index/url.h"

#include "check_internal.h"
#include "locked_index.h"
#include "resolve_session.h"

namespace gpulock::app::check_detail {
namespace {

// The command that re-resolves the lock taking `name`'s newest (issue 16 item 8): the lock's
// own resolve command with --upgrade-package, complete, so that it runs as it is.
std::string upgrade_command(const lock::Lock& lk, std::string_view name) {
  if (lk.command.empty()) {
    return fmt::format("the resolve command that wrote the lock, with `--upgrade-package {}`",
                       name);
  }
  FlagEdit edit{"--upgrade-package", std::string(name), FlagEdit::Op::Add};
  return fmt::format("`{}`", command_with(lk.command, std::span<const FlagEdit>(&edit, 1)));
}

std::map<std::string, std::vector<std::string>> versions_by_name(const lock::Lock& lk) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& p : lk.packages)
    out[p.name].push_back(p.version.value_or(""));
  return out;
}

core::Status check_moved(const Context& ctx, LayerResult& layer, std::vector<Drift>& drifts) {
  // The request the lock records (app/resolve_record.h), resolved again today: same inputs
  // (re-read now), options, indexes, target, GPU facts and snapshot; nothing written, no
  // preferences.
  auto rebuilt = from_record(ctx.lock, ctx.lock_dir);
  if (!rebuilt) {
    layer.notes.push_back(fmt::format("upstream moves not checked: {}", rebuilt.error().message));
    return {};
  }
  rebuilt->upgrade = true;
  rebuilt->client = ctx.request.client;
  rebuilt->client.refresh = true;
  // The lock's machine alone: nothing of this one is read.
  detail::ResolveRun run;
  run.machine_as_given = true;
  run.now_micros = ctx.request.now_micros;
  auto result = detail::ResolveSession(*rebuilt, std::move(run), {}, nullptr).run();
  if (!result) {
    // The locked files were reachable above; a resolve that fails now (a file's METADATA gone,
    // a hash that no longer matches) is reported, not fatal. Only Ctrl-C stops the check.
    if (result.error().code == core::ErrorCode::Cancelled) return std::unexpected(result.error());
    layer.notes.push_back(
        fmt::format("upstream moves not checked: {}", result.error().to_string()));
    return {};
  }
  if (!result->solved) {
    Drift d = make_drift(CheckLayer::Index, "upstream-no-solution", "inputs",
                         "upstream moved: a resolve with the same inputs finds no solution today");
    d.severity = DriftSeverity::Warning;
    if (!result->explanation.headline.empty()) d.details.push_back(result->explanation.headline);
    const auto& why = result->explanation;
    for (const auto& l : why.brief.empty() ? why.lines : why.brief) {
      if (!l.empty()) d.details.push_back(l);
    }
    d.hint = "the lock itself keeps installing while its files stay on their indexes";
    drifts.push_back(std::move(d));
    return {};
  }
  auto before = versions_by_name(ctx.lock);
  auto after = versions_by_name(result->lock);
  auto hint_for = [&](const std::string& name) {
    return fmt::format("{} takes it; until then the lock stays as it is",
                       upgrade_command(ctx.lock, name));
  };
  for (const auto& p : ctx.lock.packages) {
    auto it = after.find(p.name);
    if (it == after.end()) {
      Drift d = make_drift(
          CheckLayer::Index, "upstream-moved", p.name,
          fmt::format("upstream moved: a resolve with the same inputs today no longer picks {}",
                      p.name),
          p.line.line);
      d.severity = DriftSeverity::Warning;
      d.expected = p.version;
      d.hint = hint_for(p.name);
      drifts.push_back(std::move(d));
      continue;
    }
    if (std::find(it->second.begin(), it->second.end(), p.version.value_or("")) != it->second.end())
      continue;
    Drift d = make_drift(
        CheckLayer::Index, "upstream-moved", p.name,
        fmt::format(
            "upstream moved: a resolve with the same inputs today picks {} {}; the lock has {}",
            p.name, fmt::join(it->second, ", "), p.version.value_or("")),
        p.line.line);
    d.severity = DriftSeverity::Warning;
    d.expected = p.version;
    d.actual = fmt::format("{}", fmt::join(it->second, ", "));
    d.hint = hint_for(p.name);
    drifts.push_back(std::move(d));
  }
  for (const auto& p : result->lock.packages) {
    if (before.contains(p.name)) continue;
    Drift d =
        make_drift(CheckLayer::Index, "upstream-moved", p.name,
                   fmt::format("upstream moved: a resolve with the same inputs today adds {} {}",
                               p.name, p.version.value_or("")));
    d.severity = DriftSeverity::Warning;
    d.actual = p.version;
    d.hint = hint_for(p.name);
    drifts.push_back(std::move(d));
  }
  return {};
}

// What check_index counts over every package's files.
struct IndexTally {
  std::size_t files_checked = 0;
  std::size_t indexes_asked = 0;
  std::set<std::string> indexes_seen;
  std::vector<std::string> unhashed;  // listed, but the page gives no hash (and no --deep)
};

using ShownPages = std::vector<std::pair<std::string, index::ProjectPagePtr>>;  // (shown url, page)

// A direct URL without an index: only a download (--deep) tells whether it is gone or changed.
core::Status check_direct_file(const Context& ctx, index::IndexClient& client,
                               const lock::Package& p, const lock::FileEntry* f, IndexTally& tally,
                               std::vector<Drift>& drifts) {
  const std::string name = f->filename();
  const std::size_t line = f->line.line ? f->line.line : p.line.line;
  auto locked_sha = f->hashes.find("sha256");
  // A direct URL without an index: only a download tells.
  if (!ctx.request.deep || !f->url) {
    tally.unhashed.push_back(fmt::format("{} (no index recorded)", name));
    return {};
  }
  ++tally.files_checked;
  auto digest = client.fetch_file_digest(*f->url);
  if (!digest) {
    if (digest.error().code != core::ErrorCode::NotFound) return std::unexpected(digest.error());
    Drift d = make_drift(
        CheckLayer::Index, "upstream-pruned", p.name,
        fmt::format("upstream pruned: {} is gone from {}", name, index::redact_url(*f->url)), line);
    d.hint =
        "the file was removed upstream: re-resolve, or install from a cache or mirror that "
        "keeps it";
    if (!ctx.request.mirror.empty() && locked_sha != f->hashes.end())
      d.hint =
          mirror_pruned_note(client, ctx.request.mirror, ctx.lock_path, locked_sha->second, name);
    drifts.push_back(std::move(d));
  } else if (locked_sha != f->hashes.end() && digest->sha256 != locked_sha->second) {
    Drift d =
        make_drift(CheckLayer::Index, "upstream-rehashed", p.name,
                   fmt::format("upstream rehashed: {} now has sha256 {}..., the lock has {}...",
                               name, short_sha(digest->sha256), short_sha(locked_sha->second)),
                   line);
    d.expected = locked_sha->second;
    d.actual = digest->sha256;
    d.hint =
        "the same file name now has other bytes: find out why before re-locking (a rebuilt "
        "wheel, or "
        "tampering)";
    drifts.push_back(std::move(d));
  }
  return {};
}

// A file listed on an index page (or not any more): pruned, rehashed or yanked upstream.
core::Status check_listed_file(const Context& ctx, index::IndexClient& client,
                               const lock::Package& p, const lock::FileEntry* f,
                               const ShownPages& pages, IndexTally& tally,
                               std::vector<Drift>& drifts) {
  const std::string name = f->filename();
  const std::size_t line = f->line.line ? f->line.line : p.line.line;
  auto locked_sha = f->hashes.find("sha256");
  ++tally.files_checked;
  const index::DistFile* listed = nullptr;
  std::string listed_on;
  for (const auto& [shown, page] : pages) {
    if (!page->found) continue;
    for (const auto& df : page->files) {
      if (df.filename() == name) {
        listed = &df;
        listed_on = shown;
        break;
      }
    }
    if (listed) break;
  }
  if (listed == nullptr) {
    std::string where = p.index ? *p.index : std::string("its find-links sources");
    Drift d =
        make_drift(CheckLayer::Index, "upstream-pruned", p.name,
                   fmt::format("upstream pruned: {} is no longer listed on {}", name, where), line);
    d.expected = name;
    d.hint = fmt::format(
        "the index removed it: installs from this lock fail; re-resolve "
        "({}), or install from a cache or mirror that keeps it",
        upgrade_command(ctx.lock, p.name));
    if (!ctx.request.mirror.empty() && locked_sha != f->hashes.end())
      d.hint =
          mirror_pruned_note(client, ctx.request.mirror, ctx.lock_path, locked_sha->second, name);
    drifts.push_back(std::move(d));
    return {};
  }
  std::string page_sha(listed->sha256());
  if (page_sha.empty() && ctx.request.deep) {
    auto digest = client.fetch_file_digest(listed->url());
    if (!digest) return std::unexpected(digest.error());
    page_sha = digest->sha256;
  }
  if (page_sha.empty()) {
    tally.unhashed.push_back(name);
  } else if (locked_sha != f->hashes.end() && page_sha != locked_sha->second) {
    Drift d = make_drift(
        CheckLayer::Index, "upstream-rehashed", p.name,
        fmt::format("upstream rehashed: {} on {} now has sha256 {}..., the lock has {}...", name,
                    listed_on, short_sha(page_sha), short_sha(locked_sha->second)),
        line);
    d.expected = locked_sha->second;
    d.actual = page_sha;
    d.hint =
        "the same file name now has other bytes: find out why before re-locking (a rebuilt "
        "wheel, or "
        "tampering)";
    drifts.push_back(std::move(d));
  }
  if (listed->yanked()) {
    Drift d = make_drift(
        CheckLayer::Index, "upstream-yanked", p.name,
        fmt::format("upstream yanked: {} is yanked on {}{}", name, listed_on,
                    listed->yanked_reason().empty() ? std::string()
                                                    : fmt::format(": {}", listed->yanked_reason())),
        line);
    d.actual = std::string(listed->yanked_reason());
    d.hint = fmt::format(
        "installers still install a pinned yanked file, but its publisher withdrew it: "
        "re-resolve ({})",
        upgrade_command(ctx.lock, p.name));
    if (!ctx.request.mirror.empty() && locked_sha != f->hashes.end())
      d.hint =
          mirror_pruned_note(client, ctx.request.mirror, ctx.lock_path, locked_sha->second, name);
    drifts.push_back(std::move(d));
  }
  return {};
}

// The pages that list `p`'s files: its index's, else every find-links source's.
core::Result<ShownPages> pages_of(const Context& ctx, index::IndexClient& client,
                                  const lock::Package& p,
                                  const std::vector<index::IndexSource>& find_links,
                                  IndexTally& tally) {
  ShownPages pages;
  if (p.index) {
    auto page = client.fetch_project(detail::locked_index_source(ctx.lock, *p.index), p.name);
    if (!page) return std::unexpected(page.error());
    pages.emplace_back(*p.index, *page);
    if (tally.indexes_seen.insert(*p.index).second) ++tally.indexes_asked;
  } else {
    for (const auto& s : find_links) {
      auto page = client.fetch_project(s, p.name);
      if (!page) return std::unexpected(page.error());
      pages.emplace_back(index::redact_url(s.url), *page);
    }
  }
  return pages;
}

}  // namespace

core::Status check_index(const Context& ctx, LayerResult& layer, std::vector<Drift>& drifts) {
  layer.checked = true;
  index::ClientOptions options = ctx.request.client;
  options.refresh = true;  // the index as it is now, not as cached
  index::IndexClient client(options);

  // Where each package's files are listed: its index, else the find-links sources.
  std::vector<index::IndexSource> find_links;
  if (ctx.lock.gpulock) {
    for (const auto& ix : ctx.lock.gpulock->indexes) {
      auto source = catalog::read_recorded_role(ix.role);
      if (source && source->is<catalog::FindLinks>())
        find_links.push_back(index::IndexSource::find_links(ix.url));
    }
  }
  for (const auto& p : ctx.lock.packages) {
    if (p.index) client.prefetch_project(detail::locked_index_source(ctx.lock, *p.index), p.name);
  }

  IndexTally tally;
  for (const auto& p : ctx.lock.packages) {
    auto pages = pages_of(ctx, client, p, find_links, tally);
    if (!pages) return std::unexpected(pages.error());
    for (const auto* f : p.files()) {
      auto checked = pages->empty() ? check_direct_file(ctx, client, p, f, tally, drifts)
                                    : check_listed_file(ctx, client, p, f, *pages, tally, drifts);
      if (!checked) return checked;
    }
  }
  const auto& unhashed = tally.unhashed;
  if (!unhashed.empty()) {
    Drift d = make_drift(
        CheckLayer::Index, "hash-not-checked", "hashes",
        fmt::format("{} listed without a hash on {} index page{}; not downloaded to compare",
                    plural(unhashed.size(), "file is", "files are"),
                    unhashed.size() == 1 ? "its" : "their", unhashed.size() == 1 ? "" : "s"));
    d.severity = DriftSeverity::Info;
    d.details = unhashed;
    d.hint = "--deep downloads and hashes them";
    drifts.push_back(std::move(d));
  }
  layer.summary = fmt::format("{} on {} checked", plural(tally.files_checked, "file", "files"),
                              plural(tally.indexes_asked, "index", "indexes"));

  auto moved = check_moved(ctx, layer, drifts);
  if (!moved) return moved;
  return {};
}

}  // namespace gpulock::app::check_detail

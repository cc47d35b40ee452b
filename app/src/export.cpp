// `gpulock export --urls`: which packages no index pip is given lists any more, asked from each
// package's own index (the approach of check_index.cpp's "upstream pruned").
#include "gpulock/app/export.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/index/page.h"
#include "gpulock/index/url.h"

#include "locked_index.h"

namespace gpulock::app {
namespace {

bool listed(const index::ProjectPage& page, std::string_view filename) {
  return std::any_of(page.files.begin(), page.files.end(),
                     [&](const index::DistFile& f) { return f.filename() == filename; });
}

std::string who(const lock::Package& p) {
  return p.version ? fmt::format("{} {}", p.name, *p.version) : p.name;
}

// Packages that are asked about: not archives (always direct URLs), not source trees (refused
// by the export).
bool asked(const lock::Package& p) {
  return !p.archive && !p.vcs && !p.directory;
}

}  // namespace

std::string_view unlisted_reason_name(UnlistedReason reason) noexcept {
  switch (reason) {
    case UnlistedReason::FileNotListed:
      return "file-not-listed";
    case UnlistedReason::ProjectGone:
      return "project-gone";
    case UnlistedReason::NoIndex:
      return "no-index";
    case UnlistedReason::NoVersion:
      return "no-version";
  }
  return "file-not-listed";
}

core::Result<UnlistedResult> find_unlisted_packages(const lock::Lock& input,
                                                    const lock::ExportOptions& export_options,
                                                    const index::ClientOptions& client_options) {
  lock::Lock lk = input;
  lock::canonicalize(lk);  // the export's order, so the reasons read in the file's order

  UnlistedResult result;
  auto add = [&](const lock::Package& p, UnlistedReason reason, std::string index,
                 std::vector<std::string> missing, std::string message) {
    result.direct_url_packages.insert(core::normalize_name(p.name));
    UnlistedPackage u;
    u.name = p.name;
    u.version = p.version.value_or("");
    u.reason = reason;
    u.index = std::move(index);
    u.missing_files = std::move(missing);
    u.message = std::move(message);
    result.packages.push_back(std::move(u));
  };

  index::ClientOptions options = client_options;
  options.refresh = true;  // listed now, not when the page was cached (offline still wins)
  index::IndexClient client(options);
  for (const auto& p : lk.packages) {
    if (asked(p) && p.version && p.index)
      client.prefetch_project(detail::locked_index_source(lk, *p.index), p.name);
  }

  std::set<std::string> indexes_seen;
  for (const auto& p : lk.packages) {
    if (!asked(p)) continue;
    if (!p.version) {
      add(p, UnlistedReason::NoVersion, {}, {},
          fmt::format("{}: the lock records no version", p.name));
      continue;
    }
    if (!p.index) {
      add(p, UnlistedReason::NoIndex, {}, {},
          fmt::format("{}: the lock records no index for it", who(p)));
      continue;
    }
    auto page = client.fetch_project(detail::locked_index_source(lk, *p.index), p.name);
    if (!page) return std::unexpected(page.error());
    ++result.packages_checked;
    const std::string shown = index::redact_url(*p.index);
    indexes_seen.insert(shown);

    std::vector<std::string> missing;
    for (const auto* f : p.files()) {
      std::string name = f->filename();
      if (!(*page)->found || !listed(**page, name)) missing.push_back(std::move(name));
    }
    if (missing.empty()) continue;
    if ((*page)->found) {
      // pip installs whichever listed file fits: only the file a direct URL would install
      // matters. Without a target to choose it, the package goes direct and the export asks
      // for one.
      auto chosen = lock::direct_url_file(p, export_options);
      if (chosen && *chosen == nullptr) continue;  // no file fits the target: none to point at
      if (chosen && listed(**page, (*chosen)->filename())) continue;
    }
    std::string message = (*page)->found
                              ? fmt::format("{}: no longer listed on {}", who(p), shown)
                              : fmt::format("{}: the project is no longer on {}", who(p), shown);
    add(p, (*page)->found ? UnlistedReason::FileNotListed : UnlistedReason::ProjectGone, shown,
        std::move(missing), std::move(message));
  }
  result.indexes_asked = indexes_seen.size();
  return result;
}

}  // namespace gpulock::app

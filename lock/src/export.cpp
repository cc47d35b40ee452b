#include "gpulock/lock/export.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "gpulock/core/filename.h"
#include "gpulock/core/name.h"
#include "gpulock/sys/paths.h"

namespace gpulock::lock {
namespace {

using core::ErrorCode;

// The algorithms pip accepts in `--hash=` (pip's STRONG_HASHES).
constexpr std::string_view kPipHashes[] = {"sha256", "sha384", "sha512"};

bool pip_hash(std::string_view algo) {
  return std::find(std::begin(kPipHashes), std::end(kPipHashes), algo) != std::end(kPipHashes);
}

// True if the marker uses PEP 751's set variables, which pip cannot evaluate in a requirements
// file. Quoted strings are skipped so `'extras' == ...` is not a false hit.
bool uses_lock_only_variables(std::string_view marker) {
  for (std::size_t i = 0; i < marker.size();) {
    const char c = marker[i];
    if (c == '\'' || c == '"') {
      const auto end = marker.find(c, i + 1);
      i = end == std::string_view::npos ? marker.size() : end + 1;
      continue;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      std::size_t j = i;
      while (j < marker.size() &&
             ((marker[j] >= 'a' && marker[j] <= 'z') || (marker[j] >= 'A' && marker[j] <= 'Z') ||
              (marker[j] >= '0' && marker[j] <= '9') || marker[j] == '_')) {
        ++j;
      }
      const auto word = marker.substr(i, j - i);
      if (word == "extras" || word == "dependency_groups") return true;
      i = j;
      continue;
    }
    ++i;
  }
  return false;
}

// A file:// URL for a local path (RFC 8089), percent-encoding what a URL cannot hold.
std::string file_url(const std::filesystem::path& p) {
  std::string out = "file://";
  constexpr std::string_view kSafe = "/-._~+!$&'()*,;=:@";
  for (char ch : sys::absolute_path(p).lexically_normal().string()) {
    const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9') || kSafe.find(ch) != std::string_view::npos;
    if (plain) {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned>(static_cast<unsigned char>(ch)));
    }
  }
  return out;
}

std::string location(const FileEntry& f, const ExportOptions& options) {
  if (f.url) return *f.url;
  std::filesystem::path p(*f.path);
  if (p.is_relative()) p = options.lock_dir / p;
  return file_url(p);
}

core::Status collect_hashes(const Package& p, const FileEntry& f, std::set<std::string>& hashes) {
  bool any = false;
  for (const auto& [algo, digest] : f.hashes) {
    if (!pip_hash(algo)) continue;
    hashes.insert(fmt::format("{}:{}", algo, digest));
    any = true;
  }
  if (!any) {
    return core::fail(ErrorCode::InvalidLockfile,
                      fmt::format("file '{}' of package '{}' has no sha256, sha384 or sha512 "
                                  "hash, which pip needs in hash-checking mode",
                                  f.filename(), p.name));
  }
  return {};
}

std::string entry(std::string_view requirement, const std::optional<std::string>& marker,
                  const std::set<std::string>& hashes) {
  std::string out(requirement);
  if (marker && !marker->empty()) out += fmt::format(" ; {}", *marker);
  for (const auto& h : hashes)
    out += fmt::format(" \\\n    --hash={}", h);
  out += '\n';
  return out;
}

}  // namespace

core::Result<const FileEntry*> direct_url_file(const Package& p, const ExportOptions& options) {
  if (p.archive) return &*p.archive;
  const std::vector<FileEntry> none;
  const auto& wheels = p.wheels ? *p.wheels : none;
  if (wheels.size() == 1 && !options.target_tags) return &wheels.front();
  if (!wheels.empty() && !options.target_tags) {
    return std::unexpected(
        core::make_error(
            ErrorCode::Usage,
            fmt::format("package '{}' has {} wheels; a direct URL needs the target to choose "
                        "one",
                        p.name, wheels.size()))
            .with_hint("give the target with --python-version and --platform"));
  }
  if (!wheels.empty()) {
    core::TagRanker ranker(*options.target_tags);
    const FileEntry* best = nullptr;
    std::size_t best_rank = 0;
    for (const auto& w : wheels) {
      auto parsed = core::WheelFilename::parse_with_variant(w.filename());
      if (!parsed) continue;
      auto rank = ranker.rank(parsed->tags);
      if (rank && (!best || *rank < best_rank)) {
        best = &w;
        best_rank = *rank;
      }
    }
    if (best) return best;
  }
  if (p.sdist) return &*p.sdist;
  return static_cast<const FileEntry*>(nullptr);
}

core::Result<std::string> export_requirements(const Lock& input, const ExportOptions& options) {
  Lock lock = input;
  canonicalize(lock);
  std::string out;
  if (!options.source_name.empty()) {
    out += fmt::format(
        "# Exported by gpulock from {}. Install with:\n"
        "#   pip install --no-deps --require-hashes -r <this file>\n",
        options.source_name);
  }
  // The indexes pip searches for the `name==version` lines, so that the header's command
  // installs this file as it is (issue 16): the lock's default index first, then the others in
  // order of use. The hashes pin every file, so several indexes are safe under --require-hashes.
  auto is_direct = [&](const Package& p) {
    return p.archive || options.direct_urls ||
           options.direct_url_packages.contains(core::normalize_name(p.name));
  };
  std::vector<std::string> index_urls;
  for (const Package& p : lock.packages) {
    if (is_direct(p) || !p.index || p.vcs || p.directory) continue;
    if (std::find(index_urls.begin(), index_urls.end(), *p.index) == index_urls.end())
      index_urls.push_back(*p.index);
  }
  if (lock.gpulock) {
    for (const auto& ix : lock.gpulock->indexes) {
      auto it = std::find(index_urls.begin(), index_urls.end(), ix.url);
      if (ix.role == "default" && it != index_urls.end())
        std::rotate(index_urls.begin(), it, it + 1);
    }
  }
  for (std::size_t i = 0; i < index_urls.size(); ++i) {
    out += fmt::format("{} {}\n", i == 0 ? "--index-url" : "--extra-index-url", index_urls[i]);
  }
  for (const Package& p : lock.packages) {
    if (p.vcs || p.directory) {
      return core::fail(ErrorCode::InvalidLockfile,
                        fmt::format("package '{}' is a {} source tree, which pip cannot install "
                                    "in hash-checking mode",
                                    p.name, p.vcs ? "vcs" : "directory"));
    }
    if (p.marker && uses_lock_only_variables(*p.marker)) {
      return core::fail(ErrorCode::InvalidLockfile,
                        fmt::format("the marker of package '{}' uses PEP 751's 'extras' or "
                                    "'dependency_groups', which a requirements file cannot "
                                    "express: {}",
                                    p.name, *p.marker));
    }
    const bool direct = is_direct(p);
    if (direct) {
      auto chosen = direct_url_file(p, options);
      if (!chosen) return std::unexpected(chosen.error());
      if (*chosen) {
        std::set<std::string> hashes;
        if (auto s = collect_hashes(p, **chosen, hashes); !s) return std::unexpected(s.error());
        out += entry(fmt::format("{} @ {}", p.name, location(**chosen, options)), p.marker, hashes);
        continue;
      }
      if (!p.marker) {
        return std::unexpected(core::make_error(
            ErrorCode::Usage,
            fmt::format("no wheel of package '{}' fits the target, and it has no sdist", p.name)));
      }
      // A marker-limited package for other platforms: pip skips it by its marker.
    }
    if (!p.version) {
      return core::fail(ErrorCode::InvalidLockfile,
                        fmt::format("package '{}' has no version; export it with direct URLs "
                                    "(--urls)",
                                    p.name));
    }
    std::set<std::string> hashes;
    for (const FileEntry* f : p.files()) {
      if (auto s = collect_hashes(p, *f, hashes); !s) return std::unexpected(s.error());
    }
    if (hashes.empty()) {
      return core::fail(ErrorCode::InvalidLockfile,
                        fmt::format("package '{}' has no files to hash", p.name));
    }
    out += entry(fmt::format("{}=={}", p.name, *p.version), p.marker, hashes);
  }
  return out;
}

}  // namespace gpulock::lock

// Keeping a mirror: `mirror verify` (re-hash the store), `mirror gc` (drop what no kept lock
// names) and `mirror rewrite-lock` (point a lock's file URLs at the mirror).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "gpulock/app/mirror.h"
#include "gpulock/index/hash.h"
#include "gpulock/lock/lockfile.h"

#include "mirror_internal.h"

namespace gpulock::app {
namespace fs = std::filesystem;

namespace {

// A stored file: DIR/files/sha256/<h[0:2]>/<h>/<name> (its `.metadata` is not one).
struct StoredFile {
  std::string sha256;    // the directory's name
  fs::path path;         // the file
  std::string relative;  // files/sha256/...
};

std::string rel_path(const fs::path& p, const fs::path& dir) {
  std::error_code ec;
  auto r = fs::relative(p, dir, ec);
  return ec ? p.generic_string() : r.generic_string();
}

std::vector<StoredFile> stored_files(const fs::path& dir, std::vector<fs::path>* hash_dirs) {
  std::vector<StoredFile> out;
  std::error_code ec;
  const fs::path store = dir / "files" / "sha256";
  for (fs::directory_iterator a(store, ec), end; !ec && a != end; a.increment(ec)) {
    std::error_code ec2;
    for (fs::directory_iterator h(a->path(), ec2); !ec2 && h != end; h.increment(ec2)) {
      if (hash_dirs) hash_dirs->push_back(h->path());
      std::error_code ec3;
      for (fs::directory_iterator f(h->path(), ec3); !ec3 && f != end; f.increment(ec3)) {
        const std::string name = f->path().filename().string();
        if (name.ends_with(".metadata") || mirror_detail::is_leftover(name)) continue;
        out.push_back({h->path().filename().string(), f->path(), rel_path(f->path(), dir)});
      }
    }
  }
  return out;
}

std::uint64_t tree_bytes(const fs::path& p) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) total += it->file_size(ec2);
  }
  return total;
}

}  // namespace

core::Result<bool> mirror_has_file(index::IndexClient& client, std::string_view location,
                                   std::string_view sha256, std::string_view filename) {
  if (location.find("://") == std::string_view::npos) {
    std::error_code ec;
    return fs::is_regular_file(fs::path(location) / mirror_store_path(sha256, filename), ec);
  }
  auto status = client.probe_url(mirror_file_url(location, sha256, filename));
  if (!status) return std::unexpected(status.error());
  return *status == 200 || *status == 206;
}

std::string mirror_pruned_note(index::IndexClient& client, std::string_view location,
                               std::string_view lock_path, std::string_view sha256,
                               std::string_view filename) {
  auto has = mirror_has_file(client, location, sha256, filename);
  if (!has) {
    return fmt::format("the mirror {} could not be asked: {}", location, has.error().message);
  }
  if (*has) {
    return fmt::format(
        "pruned upstream, present in the mirror {0}: gpulock install --lock {1} "
        "--mirror-fallback {0}",
        location, lock_path);
  }
  return fmt::format(
      "not in the mirror {0} either: keep the files of a lock while they exist with "
      "gpulock mirror add {1} --to DIR",
      location, lock_path);
}

core::Result<MirrorVerifyResult> mirror_verify(const std::string& dir) {
  auto manifest = read_mirror_manifest(dir);
  if (!manifest) return std::unexpected(manifest.error());
  MirrorVerifyResult result;
  std::set<std::string> seen;
  for (const auto& f : stored_files(dir, nullptr)) {
    ++result.checked;
    seen.insert(f.relative);
    auto d = index::sha256_file(f.path.string());
    if (!d) return std::unexpected(d.error());
    if (d->sha256 != f.sha256) result.corrupt.push_back(f.relative);
  }
  for (const auto& p : mirror_detail::store_leftovers(dir))
    result.leftovers.push_back(rel_path(p, dir));
  std::sort(result.leftovers.begin(), result.leftovers.end());
  std::set<std::string> named;
  for (const auto& e : manifest->entries) {
    const std::string rel = mirror_store_path(e.sha256, e.filename);
    if (!named.insert(rel).second) continue;
    if (seen.count(rel) == 0) {
      result.missing.push_back(rel);
      continue;
    }
    if (e.metadata_sha256.empty()) continue;
    auto m = index::sha256_file((fs::path(dir) / (rel + ".metadata")).string());
    if (!m || m->sha256 != e.metadata_sha256) result.corrupt.push_back(rel + ".metadata");
  }
  return result;
}

core::Result<MirrorGcResult> mirror_gc(const std::string& dir, const std::vector<std::string>& keep,
                                       const std::function<void(const std::string&)>& on_wait) {
  std::set<std::string> kept;
  std::vector<std::string> skipped;
  std::vector<MirrorEntry> fresh;
  for (const auto& lock : keep) {
    auto entries = mirror_detail::lock_entries(lock, skipped);
    if (!entries) return std::unexpected(entries.error());
    for (auto& e : *entries) {
      kept.insert(e.sha256);
      fresh.push_back(std::move(e));
    }
  }
  mirror_detail::MirrorLock hold;
  if (auto s = hold.acquire(dir, on_wait); !s) return std::unexpected(s.error());
  auto manifest = read_mirror_manifest(dir);
  if (!manifest) return std::unexpected(manifest.error());
  MirrorGcResult result;
  for (const auto& p : mirror_detail::store_leftovers(dir)) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    const std::uint64_t bytes = ec ? 0 : size;
    if (fs::remove(p, ec)) {
      result.bytes_freed += bytes;
      result.removed.push_back(rel_path(p, dir));
    }
  }
  std::vector<fs::path> hash_dirs;
  (void)stored_files(dir, &hash_dirs);
  std::error_code ec;
  for (const auto& h : hash_dirs) {
    if (kept.count(h.filename().string()) != 0) {
      ++result.kept;
      continue;
    }
    result.bytes_freed += tree_bytes(h);
    result.removed.push_back(rel_path(h, dir));
    fs::remove_all(h, ec);
    if (ec) return std::unexpected(core::make_error(core::ErrorCode::Io, ec.message(), h.string()));
    fs::remove(h.parent_path(), ec);  // only when empty
    ec.clear();
  }
  // The manifest describes the kept locks alone, each file with what was known of it.
  std::map<std::string, const MirrorEntry*> known;
  for (const auto& e : manifest->entries)
    known.emplace(e.sha256, &e);
  for (auto& e : fresh) {
    auto it = known.find(e.sha256);
    if (it == known.end()) continue;  // never mirrored: gc adds nothing
    e.metadata_sha256 = it->second->metadata_sha256;
    e.mirrored = it->second->mirrored;
    for (const auto& old : manifest->entries) {
      if (old.sha256 == e.sha256 && old.lock == e.lock) e.mirrored = old.mirrored;
    }
  }
  std::erase_if(fresh, [&](const MirrorEntry& e) { return known.count(e.sha256) == 0; });
  manifest->entries = std::move(fresh);
  if (auto s = write_mirror_manifest(dir, *manifest); !s) return std::unexpected(s.error());
  if (auto s = write_mirror_tree(dir, *manifest); !s) return std::unexpected(s.error());
  return result;
}

core::Result<std::size_t> mirror_rewrite_lock(const std::string& lock_path,
                                              const std::string& base_url) {
  auto file = lock::read_lock_file(lock_path);
  if (!file) return std::unexpected(file.error());
  std::size_t changed = 0;
  auto rewrite = [&](lock::FileEntry& f) {
    auto sha = f.hashes.find("sha256");
    if (sha == f.hashes.end() || !mirror_detail::is_sha256(sha->second)) return;
    const std::string name = f.filename();
    std::string url = mirror_file_url(base_url, sha->second, name);
    if (!f.name) f.name = name;  // the URL's last component stays the same, but say it
    if (f.url != url) {
      f.url = std::move(url);
      ++changed;
    }
  };
  for (auto& p : file->lock.packages) {
    if (p.wheels) {
      for (auto& w : *p.wheels)
        rewrite(w);
    }
    if (p.sdist) rewrite(*p.sdist);
    if (p.archive) rewrite(*p.archive);
  }
  if (changed == 0) return changed;
  if (auto s = lock::write_lock_file(lock_path, file->lock); !s) return std::unexpected(s.error());
  return changed;
}

}  // namespace gpulock::app

#pragma once
// What the mirror's files share (app/src/mirror_*.cpp): name checks, the tree a lock's package
// index maps to, and the files a lock names.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/mirror.h"
#include "gpulock/core/error.h"

namespace gpulock::app::mirror_detail {

[[nodiscard]] std::string manifest_path(const std::string& dir);
[[nodiscard]] bool is_sha256(std::string_view text) noexcept;
/// A single path component: not empty, not `.`/`..`, no `/`, NUL or control characters.
[[nodiscard]] bool safe_component(std::string_view text) noexcept;
/// "simple", or "whl/<c>" / "whl/nightly/<c>" with safe components.
[[nodiscard]] bool safe_tree(std::string_view tree) noexcept;
/// The mirror tree of a package whose lock `index` is `index_url`: the part from the last
/// "/whl/" on (`https://download.pytorch.org/whl/nightly/cu126/` -> "whl/nightly/cu126"),
/// else "simple".
[[nodiscard]] std::string tree_for_index(std::string_view index_url);
/// Writes `text` atomically (directories created) unless the file already has these bytes.
[[nodiscard]] core::Status write_if_changed(const std::filesystem::path& path,
                                            const std::string& text);
/// The current time, RFC 3339 UTC (`2026-12-02T13:45:52Z`).
[[nodiscard]] std::string now_rfc3339();

/// An exclusive hold on a mirror: flock on DIR/.gpulock-mirror.lock, released on destruction.
class MirrorLock {
 public:
  MirrorLock() = default;
  ~MirrorLock();
  MirrorLock(MirrorLock&& other) noexcept;
  MirrorLock& operator=(MirrorLock&&) = delete;
  MirrorLock(const MirrorLock&) = delete;
  MirrorLock& operator=(const MirrorLock&) = delete;
  /// Creates DIR when needed and takes the lock; while another gpulock holds it, calls
  /// `on_wait` once and waits, up to ten minutes (then Io naming the lock file).
  [[nodiscard]] core::Status acquire(const std::string& dir,
                                     const std::function<void(const std::string&)>& on_wait);

 private:
  int fd_ = -1;
};

/// A partial write's name in the store: `<file>.part` (a copy in progress) or
/// `.<file>.tmp-...` (an atomic write in progress).
[[nodiscard]] bool is_leftover(std::string_view name) noexcept;
/// The partial writes left in DIR's store.
[[nodiscard]] std::vector<std::filesystem::path> store_leftovers(const std::string& dir);

/// The files a lock names, as manifest entries (`mirrored` left empty). Files without a URL or
/// a sha256 go to `skipped`. Errors: the lock reader's.
[[nodiscard]] core::Result<std::vector<MirrorEntry>> lock_entries(
    const std::string& lock, std::vector<std::string>& skipped);

}  // namespace gpulock::app::mirror_detail

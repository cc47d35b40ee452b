#pragma once
/// @file
/// PageSource: what the candidate catalog (Catalog) reads from package indexes, and
/// nothing more: project pages, the root listing of a small index (the torch source), a wheel's
/// METADATA and the digest of a direct reference's wheel. IndexClientPages reads them through
/// index::IndexClient (HTTP, cache); tests give a fake that builds pages in memory
/// (tests/catalog/fake_page_source.h), so the catalog and the GPU policy are tested without a
/// server.

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/index/hash.h"
#include "gpulock/index/page.h"
#include "gpulock/index/project_list.h"

namespace gpulock::catalog {

class PageSource {
 public:
  virtual ~PageSource() = default;

  /// A project's page on `source` (`found` false when the source does not have it). Errors end
  /// the resolve (index::IndexClient::fetch_project's).
  [[nodiscard]] virtual core::Result<index::ProjectPagePtr> fetch_project(
      const index::IndexSource& source, std::string_view name) = 0;
  /// Which projects `source` serves, from its root listing; null when it has no readable root
  /// (then each name is asked for).
  [[nodiscard]] virtual core::Result<index::ProjectListPtr> fetch_project_list(
      const index::IndexSource& source) = 0;
  /// The METADATA (PEP 658 / the wheel's dist-info) of one file of a page this source gave.
  /// InvalidMetadata and InvalidInput make the candidate unusable; other errors end the resolve.
  [[nodiscard]] virtual core::Result<std::string> fetch_metadata(const index::DistFile& file) = 0;
  /// The sha256 and size of a wheel at `url` (a direct reference without a `#sha256=`).
  [[nodiscard]] virtual core::Result<index::FileDigest> fetch_file_digest(std::string_view url) = 0;
  /// The text of a PEP 825 variant metadata file a page gave (ProjectPage::variants_files).
  /// Errors make the release's variant wheels unusable (the reason names the file).
  [[nodiscard]] virtual core::Result<std::string> fetch_variants_json(const index::DistFile& file) {
    return core::fail_at(core::ErrorCode::NotFound, "variant metadata is not available here",
                         std::string(file.url()));
  }

  /// The member lists of wheels (issue 44), one result per wheel in order
  /// (index::IndexClient::wheel_members). A source without them answers NotFound for each.
  [[nodiscard]] virtual std::vector<core::Result<index::WheelMembers>> wheel_members(
      std::span<const index::WheelRef> wheels) {
    std::vector<core::Result<index::WheelMembers>> out;
    for (const auto& w : wheels)
      out.push_back(
          core::fail_at(core::ErrorCode::NotFound, "file lists are not available here", w.url));
    return out;
  }
  /// Hints that the matching fetch comes soon (a source may start it in the background).
  virtual void prefetch_project(const index::IndexSource& source, std::string_view name) {
    (void)source;
    (void)name;
  }
  virtual void prefetch_project_list(const index::IndexSource& source) { (void)source; }
  virtual void prefetch_metadata(const index::DistFile& file) { (void)file; }
  virtual void prefetch_wheel_members(const index::WheelRef& wheel) { (void)wheel; }
  /// Whether fetch_metadata(file) would answer at once (a prefetch finished); never blocks.
  [[nodiscard]] virtual bool metadata_done(const index::DistFile& file) {
    (void)file;
    return false;
  }
  /// Whether fetch_project / fetch_project_list would answer at once; never blocks.
  [[nodiscard]] virtual bool project_done(const index::IndexSource& source, std::string_view name) {
    (void)source;
    (void)name;
    return false;
  }
  [[nodiscard]] virtual bool project_list_done(const index::IndexSource& source) {
    (void)source;
    return false;
  }
  /// Work to run on this thread while it waits for a fetch in progress
  /// (index::IndexClient::set_wait_hook); returns the hook it replaces. A source that never
  /// waits ignores it.
  virtual std::function<void()> set_wait_hook(std::function<void()> hook) {
    (void)hook;
    return {};
  }
};

/// The production PageSource: an index::IndexClient's pages, with its background prefetches.
class IndexClientPages final : public PageSource {
 public:
  explicit IndexClientPages(index::IndexClient& client) : client_(client) {}

  core::Result<index::ProjectPagePtr> fetch_project(const index::IndexSource& source,
                                                    std::string_view name) override;
  core::Result<index::ProjectListPtr> fetch_project_list(const index::IndexSource& source) override;
  core::Result<std::string> fetch_metadata(const index::DistFile& file) override;
  core::Result<index::FileDigest> fetch_file_digest(std::string_view url) override;
  core::Result<std::string> fetch_variants_json(const index::DistFile& file) override;
  std::vector<core::Result<index::WheelMembers>> wheel_members(
      std::span<const index::WheelRef> wheels) override;
  void prefetch_project(const index::IndexSource& source, std::string_view name) override;
  void prefetch_project_list(const index::IndexSource& source) override;
  void prefetch_metadata(const index::DistFile& file) override;
  void prefetch_wheel_members(const index::WheelRef& wheel) override;
  bool metadata_done(const index::DistFile& file) override;
  bool project_done(const index::IndexSource& source, std::string_view name) override;
  bool project_list_done(const index::IndexSource& source) override;
  std::function<void()> set_wait_hook(std::function<void()> hook) override;

 private:
  index::IndexClient& client_;
};

}  // namespace gpulock::catalog

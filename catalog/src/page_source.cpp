// IndexClientPages: the catalog's pages read through index::IndexClient.

#include "gpulock/catalog/page_source.h"

namespace gpulock::catalog {

core::Result<index::ProjectPagePtr> IndexClientPages::fetch_project(
    const index::IndexSource& source, std::string_view name) {
  return client_.fetch_project(source, name);
}

core::Result<index::ProjectListPtr> IndexClientPages::fetch_project_list(
    const index::IndexSource& source) {
  return client_.fetch_project_list(source);
}

core::Result<std::string> IndexClientPages::fetch_metadata(const index::DistFile& file) {
  return client_.fetch_metadata(file);
}

core::Result<index::FileDigest> IndexClientPages::fetch_file_digest(std::string_view url) {
  return client_.fetch_file_digest(url);
}

void IndexClientPages::prefetch_project(const index::IndexSource& source, std::string_view name) {
  client_.prefetch_project(source, name);
}

void IndexClientPages::prefetch_project_list(const index::IndexSource& source) {
  client_.prefetch_project_list(source);
}

core::Result<std::string> IndexClientPages::fetch_variants_json(const index::DistFile& file) {
  return client_.fetch_variants_json(file);
}

std::vector<core::Result<index::WheelMembers>> IndexClientPages::wheel_members(
    std::span<const index::WheelRef> wheels) {
  return client_.wheel_members(wheels);
}

bool IndexClientPages::metadata_done(const index::DistFile& file) {
  return client_.metadata_done(file);
}

bool IndexClientPages::project_done(const index::IndexSource& source, std::string_view name) {
  return client_.project_done(source, name);
}

bool IndexClientPages::project_list_done(const index::IndexSource& source) {
  return client_.project_list_done(source);
}

std::function<void()> IndexClientPages::set_wait_hook(std::function<void()> hook) {
  return client_.set_wait_hook(std::move(hook));
}

void IndexClientPages::prefetch_metadata(const index::DistFile& file) {
  client_.prefetch_metadata(file);
}

void IndexClientPages::prefetch_wheel_members(const index::WheelRef& wheel) {
  client_.prefetch_wheel_members(wheel);
}

}  // namespace gpulock::catalog

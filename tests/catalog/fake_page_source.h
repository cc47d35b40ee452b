#pragma once
// A PageSource whose indexes are built in memory (issue 21): project pages, root listings and
// METADATA, so that the catalog (IndexProvider) and the GPU policy are tested without a server.
// It counts what it is asked, so that a test can say that rendering an explanation fetches
// nothing.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/app/target.h"
#include "gpulock/catalog/catalog.h"
#include "gpulock/catalog/hint.h"
#include "gpulock/catalog/index_provider.h"
#include "gpulock/catalog/page_source.h"
#include "gpulock/core/command_line.h"
#include "gpulock/core/filename.h"
#include "gpulock/core/name.h"

namespace app_test {

namespace gl = gpulock;

/// What a wheel's page entry and METADATA say beside its name and version.
struct WheelFacts {
  std::vector<std::string> requires_dist = {};  ///< Requires-Dist lines of its METADATA
  std::string upload_time = {};                 ///< RFC 3339; empty: the page gives none
  bool yanked = false;
  std::string requires_python = {};  ///< the page's data-requires-python
  bool metadata_file = true;         ///< the page offers a .metadata file (PEP 658)
};

class FakePageSource final : public gl::catalog::PageSource {
 public:
  /// Adds a wheel to the page of its project on the Simple API index at `base` (a URL ending
  /// in '/'), with a METADATA naming it and its `facts.requires_dist`.
  void add_wheel(std::string_view base, std::string_view filename, WheelFacts facts = {}) {
    auto wheel = gl::core::WheelFilename::parse(filename);
    REQUIRE(wheel.has_value());
    gl::index::ProjectPage& page = page_of(base, wheel->name);
    std::string url = fmt::format("{}{}/{}", base, wheel->name, filename);
    gl::index::DistFile f;
    f.set_text(filename, url, facts.requires_python, {});
    f.set_wheel(*wheel);
    f.add_hash("sha256", fmt::format("{:064x}", ++serial_));
    f.set_core_metadata(facts.metadata_file);
    if (facts.yanked) f.set_yanked(true, "broken");
    if (!facts.upload_time.empty())
      f.set_upload_time(gl::index::parse_timestamp(facts.upload_time));
    page.files.push_back(std::move(f));
    std::string metadata = fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
                                       wheel->name, wheel->version.to_string());
    for (const auto& r : facts.requires_dist)
      metadata += fmt::format("Requires-Dist: {}\n", r);
    metadata_[url] = metadata;
  }

  /// The root listing of `base`: the names it serves (without one, each name is asked for).
  void set_listing(std::string_view base, std::set<std::string> names) {
    gl::index::ProjectList list;
    for (auto& n : names)
      list.names.insert(n);
    listings_[std::string(base)] = std::make_shared<const gl::index::ProjectList>(std::move(list));
  }

  gl::core::Result<gl::index::ProjectPagePtr> fetch_project(const gl::index::IndexSource& source,
                                                            std::string_view name) override {
    wait();
    ++page_fetches;
    fetched.push_back(fmt::format("{}{}/", source.url, name));
    auto it = pages_.find({source.url, std::string(name)});
    if (it == pages_.end()) {
      auto missing = std::make_shared<gl::index::ProjectPage>();
      missing->name = std::string(name);
      return gl::index::ProjectPagePtr(missing);
    }
    return gl::index::ProjectPagePtr(std::make_shared<gl::index::ProjectPage>(it->second));
  }

  gl::core::Result<gl::index::ProjectListPtr> fetch_project_list(
      const gl::index::IndexSource& source) override {
    auto it = listings_.find(source.url);
    if (it == listings_.end()) return gl::index::ProjectListPtr();
    return it->second;
  }

  gl::core::Result<std::string> fetch_metadata(const gl::index::DistFile& file) override {
    wait();
    ++metadata_fetches;
    auto it = metadata_.find(std::string(file.url()));
    if (it == metadata_.end())
      return gl::core::fail(gl::core::ErrorCode::Io, "no METADATA for " + std::string(file.url()));
    return it->second;
  }

  gl::core::Result<gl::index::FileDigest> fetch_file_digest(std::string_view url) override {
    return gl::core::fail(gl::core::ErrorCode::Io,
                          fmt::format("no download of {} in this fake", url));
  }

  // With `waits` (issue 27), the fake behaves as a client whose prefetches are all in: every
  // page and METADATA is done, and each fetch first runs the wait hook, as a real fetch that
  // waits does.
  void prefetch_metadata(const gl::index::DistFile& file) override {
    prefetched_metadata.emplace_back(file.url());
  }
  void prefetch_wheel_members(const gl::index::WheelRef& wheel) override {
    prefetched_members.push_back(wheel.url);
  }
  void prefetch_project(const gl::index::IndexSource&, std::string_view name) override {
    prefetched_pages.emplace_back(name);
  }
  bool metadata_done(const gl::index::DistFile&) override { return waits; }
  bool project_done(const gl::index::IndexSource&, std::string_view) override { return waits; }
  bool project_list_done(const gl::index::IndexSource&) override { return waits; }
  std::function<void()> set_wait_hook(std::function<void()> hook) override {
    std::swap(hook, hook_);
    return hook;
  }

  /// What a fetch that waits for a prefetch does first: runs the wait hook.
  void simulate_wait() {
    if (hook_) hook_();
  }

  std::size_t page_fetches = 0;
  std::size_t metadata_fetches = 0;
  std::vector<std::string> fetched;  ///< page URLs asked for, in order
  bool waits = false;
  std::vector<std::string> prefetched_metadata;  ///< wheel URLs, in order
  std::vector<std::string> prefetched_pages;     ///< project names, in order (with repeats)
  std::vector<std::string> prefetched_members;   ///< wheel URLs whose member lists were started

 private:
  gl::index::ProjectPage& page_of(std::string_view base, const std::string& name) {
    auto [it, inserted] = pages_.try_emplace({std::string(base), name});
    if (inserted) {
      it->second.found = true;
      it->second.name = name;
      it->second.url = fmt::format("{}{}/", base, name);
    }
    return it->second;
  }

  std::map<std::pair<std::string, std::string>, gl::index::ProjectPage> pages_;
  std::map<std::string, gl::index::ProjectListPtr> listings_;
  std::map<std::string, std::string> metadata_;
  unsigned serial_ = 0;
  std::function<void()> hook_;

  void wait() {
    if (waits && hook_) hook_();
  }
};

/// A Simple API source of the role the lock records as `role` ("default", "extra", "pinned",
/// "torch": catalog::read_recorded_role).
inline gl::catalog::SourceSpec source(std::string_view url, std::string_view role,
                                      std::string_view name = {}) {
  gl::catalog::SourceSpec s;
  s.source = gl::index::IndexSource::simple(url, std::string(name));
  s.type = *gl::catalog::read_recorded_role(role);
  return s;
}

/// A torch variant source `<base><variant>/` (cu124, cpu).
inline gl::catalog::SourceSpec torch_variant(std::string_view base, std::string_view variant) {
  gl::catalog::SourceSpec s =
      source(fmt::format("{}{}/", base, variant), "torch", fmt::format("pytorch-{}", variant));
  gl::catalog::Variant v;
  if (variant != "cpu") {
    v.cuda = gl::gpu::classify_build(*gl::core::Version::parse(fmt::format("0+{}", variant))).cuda;
  }
  s.type.kind = v;
  return s;
}

/// CPython 3.12 on manylinux_2_28_x86_64.
inline gl::app::Target target_312() {
  auto t = gl::app::make_target("3.12", "manylinux_2_28_x86_64");
  REQUIRE(t.has_value());
  return *t;
}

/// One general index `url` ("default") for CPython 3.12 on manylinux_2_28_x86_64, as `gpulock
/// lock -r requirements.txt` would configure it.
inline gl::catalog::ProviderConfig one_index_config(std::string_view url) {
  gl::catalog::ProviderConfig c;
  c.general.push_back(source(url, "default"));
  c.target = target_312();
  return c;
}

/// The hints' commands as `gpulock lock -r requirements.txt` would word them: that command line
/// with the hint's edits (app's writer does the same with the run's recorded command line).
inline gl::catalog::HintWriter hint_writer() {
  return [](const gl::catalog::Hint& h) {
    if (h.edits.empty()) return h.text_before + h.text_after;
    return h.text_before + gl::core::command_with("gpulock lock -r requirements.txt", h.edits) +
           h.text_after;
  };
}

}  // namespace app_test

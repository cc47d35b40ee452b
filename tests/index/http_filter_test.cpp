// ClientOptions::keep_wheel against the fixture servers: the pages a filtering client returns
// (cold, warm from the cache, revalidated with a 304, find-links) hold exactly the accepted
// wheels of the full page and summarize the other files by version; the cache keeps full pages.
#include <algorithm>
#include <filesystem>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/index/client.h"

#include "http_support.h"

using namespace gpulock;
using namespace gpulock::index;
using index_test::servers;
using index_test::test_options;
using index_test::unique_agent;

namespace {

// CPython 3.11 (or any Python 3) on x86_64 Linux.
bool keep_linux_311(std::span<const core::Tag> tags) {
  for (const auto& t : tags) {
    bool python = t.interpreter == "cp311" || t.interpreter == "py3";
    bool platform = t.platform == "any" || (t.platform.find("linux") != std::string::npos &&
                                            t.platform.ends_with("x86_64"));
    if (python && platform) return true;
  }
  return false;
}

struct Expected {
  std::vector<std::string> files;
  std::vector<std::tuple<std::string, bool, bool>> omitted;
};

Expected expected_from(const ProjectPage& full) {
  Expected e;
  for (const auto& f : full.files) {
    if (f.wheel() && keep_linux_311(f.wheel()->tags)) {
      e.files.emplace_back(f.filename());
      continue;
    }
    std::string v = f.version().to_string();
    auto it = std::find_if(e.omitted.begin(), e.omitted.end(),
                           [&](const auto& o) { return std::get<0>(o) == v; });
    if (it == e.omitted.end()) it = e.omitted.insert(e.omitted.end(), {v, false, false});
    (f.wheel() ? std::get<1>(*it) : std::get<2>(*it)) = true;
  }
  return e;
}

void check_filtered(const ProjectPage& page, const Expected& e) {
  std::vector<std::string> files;
  for (const auto& f : page.files)
    files.emplace_back(f.filename());
  CHECK(files == e.files);
  std::vector<std::tuple<std::string, bool, bool>> omitted;
  for (const auto& o : page.omitted)
    omitted.emplace_back(o.version.to_string(), o.wheels, o.sdists);
  CHECK(omitted == e.omitted);
}

ClientOptions filtering(ClientOptions o) {
  o.keep_wheel = keep_linux_311;
  return o;
}

}  // namespace

TEST_CASE(
    "keep_wheel: cold and warm and revalidated pages are filtered while the cache keeps whole "
    "pages",
    "[http][filter]") {
  auto pypi = IndexSource::simple(servers().pypi_url());
  auto cu124 = IndexSource::simple(servers().torch_index_base() + "/cu124/");
  auto file_index = IndexSource::simple(servers().at("FILE_INDEX_URL"));  // parsed local pages
  const std::vector<std::pair<IndexSource, std::string>> projects = {{pypi, "numpy"},
                                                                     {pypi, "markupsafe"},
                                                                     {cu124, "torch"},
                                                                     {cu124, "torchvision"},
                                                                     {file_index, "numpy"}};
  std::string agent = unique_agent("filter");

  // The full pages, from a client without a filter.
  std::vector<Expected> expected;
  {
    IndexClient full(test_options(index_test::scratch_dir("filter-full"), agent));
    for (const auto& [source, name] : projects) {
      auto page = full.fetch_project(source, name);
      REQUIRE(page);
      REQUIRE((*page)->found);
      expected.push_back(expected_from(**page));
      INFO(name);
      CHECK_FALSE(expected.back().files.empty());    // the filter keeps some files...
      CHECK_FALSE(expected.back().omitted.empty());  // ...and leaves some out
      CHECK((*page)->omitted.empty());
    }
  }

  std::string cache = index_test::scratch_dir("filter-cache");
  auto check_all = [&](IndexClient& client) {
    for (std::size_t i = 0; i < projects.size(); ++i) {
      auto page = client.fetch_project(projects[i].first, projects[i].second);
      REQUIRE(page);
      INFO(projects[i].second);
      check_filtered(**page, expected[i]);
    }
  };
  {
    IndexClient cold(filtering(test_options(cache, agent)));  // parsed, stored whole, filtered
    check_all(cold);
    CHECK(cold.stats().pages_parsed == projects.size());
  }
  {
    IndexClient warm(filtering(test_options(cache, agent)));  // decoded through the filter
    check_all(warm);
    CHECK(warm.stats().requests == 0);
    CHECK(warm.stats().pages_parsed == 0);
    CHECK(warm.stats().page_cache_hits == projects.size());
  }
  {
    ClientOptions o = filtering(test_options(cache, agent));
    o.refresh = true;  // 304s: the entries are stored again, and must stay whole
    IndexClient revalidated(o);
    check_all(revalidated);
    CHECK(revalidated.stats().not_modified == projects.size() - 1);  // all but the file:// one
  }
  {
    ClientOptions o = test_options(cache, agent);
    o.offline = true;
    IndexClient whole(o);  // no filter, from the cache only: the full pages
    for (std::size_t i = 0; i < projects.size(); ++i) {
      auto page = whole.fetch_project(projects[i].first, projects[i].second);
      REQUIRE(page);
      CHECK(expected_from(**page).files == expected[i].files);
      CHECK(expected_from(**page).omitted == expected[i].omitted);
      CHECK((*page)->omitted.empty());
    }
  }
}

TEST_CASE("keep_wheel on find-links pages filters per project", "[http][filter]") {
  auto links = IndexSource::find_links(servers().at("FIND_LINKS_URL"));
  std::string agent = unique_agent("filter-links");
  IndexClient full(test_options(index_test::scratch_dir("filter-links-full"), agent));
  IndexClient filtered(filtering(test_options(index_test::scratch_dir("filter-links"), agent)));
  std::size_t projects = 0;
  for (const auto& e : std::filesystem::directory_iterator(servers().index_root() / "find-links")) {
    if (e.path().extension() != ".whl") continue;
    auto name = core::WheelFilename::parse(e.path().filename().string());
    REQUIRE(name);
    auto all = full.fetch_project(links, name->name);
    REQUIRE(all);
    REQUIRE((*all)->found);
    auto some = filtered.fetch_project(links, name->name);
    REQUIRE(some);
    INFO(name->name);
    check_filtered(**some, expected_from(**all));
    ++projects;
  }
  CHECK(projects > 0);
}

// Speculation while the solver waits (issue 27): the provider, run by the client's wait hook,
// starts the METADATA of the likely candidate of every name it has heard of as soon as that
// name's pages are in, and never changes what is resolved. FakePageSource::waits makes every
// fetch run the hook, as a fetch that waits for a prefetch does.

#include <algorithm>
#include <map>
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "gpulock/catalog/after_solve.h"
#include "gpulock/catalog/index_provider.h"
#include "gpulock/resolver/report.h"
#include "gpulock/resolver/resolver.h"

#include "fake_page_source.h"

using namespace gpulock;
using app_test::FakePageSource;
using app_test::WheelFacts;

namespace {

constexpr std::string_view kPypi = "https://pypi.test/simple/";

std::string url_of(std::string_view name, std::string_view version) {
  return fmt::format("{}{}/{}-{}-py3-none-any.whl", kPypi, name, name, version);
}

void add(FakePageSource& pages, std::string_view name, std::string_view version,
         WheelFacts facts = {}) {
  pages.add_wheel(kPypi, fmt::format("{}-{}-py3-none-any.whl", name, version), std::move(facts));
}

catalog::ProviderConfig config() {
  return app_test::one_index_config(kPypi);
}

// a 1.0 -> b<3 (3.0 too new, 2.0 yanked: 1.0) -> c (1.0), and d, which nothing needs.
void graph(FakePageSource& pages) {
  add(pages, "a", "1.0", {.requires_dist = {"b<3"}});
  add(pages, "b", "1.0", {.requires_dist = {"c"}});
  add(pages, "b", "2.0", {.requires_dist = {"c"}, .yanked = true});
  add(pages, "b", "3.0", {.requires_dist = {"d"}});
  add(pages, "c", "1.0");
  add(pages, "d", "1.0");
}

std::map<std::string, std::string> solve(catalog::IndexProvider& provider, std::string_view req) {
  resolver::SolveRequest r;
  auto d = resolver::parse_dependency(req);
  REQUIRE(d.has_value());
  r.requirements.push_back(*d);
  auto out = resolver::solve(provider, r);
  REQUIRE(out.has_value());
  auto* solution = std::get_if<resolver::Solution>(&*out);
  REQUIRE(solution != nullptr);
  std::map<std::string, std::string> got;
  for (const auto& p : solution->packages)
    got[p.name] = p.version.to_string();
  return got;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

TEST_CASE("speculation: a dependency's page in, its likely candidate's METADATA starts",
          "[app][speculation]") {
  FakePageSource pages;
  pages.waits = true;
  graph(pages);
  catalog::Catalog provider_catalog(pages, config());
  catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
  auto a = provider.candidates("a");
  REQUIRE(a.has_value());
  CHECK(pages.prefetched_metadata == std::vector<std::string>{url_of("a", "1.0")});
  // a's METADATA is in: it names b<3, whose page is in too, so at the solver's next wait the
  // METADATA of b 1.0 starts (the newest release b<3 admits that is not yanked), and at the one
  // after, b's dependency c's, before the solver has asked for b or c.
  pages.simulate_wait();
  CHECK(has(pages.prefetched_metadata, url_of("b", "1.0")));
  CHECK_FALSE(has(pages.prefetched_metadata, url_of("b", "2.0")));
  CHECK_FALSE(has(pages.prefetched_metadata, url_of("b", "3.0")));
  CHECK_FALSE(has(pages.prefetched_metadata, url_of("c", "1.0")));
  pages.simulate_wait();
  CHECK(has(pages.prefetched_metadata, url_of("c", "1.0")));
  CHECK_FALSE(has(pages.prefetched_metadata, url_of("d", "1.0")));
  // The solver's own questions get the same answers.
  auto deps = provider.dependencies("a", 0, *core::Version::parse("1.0"), "");
  REQUIRE(deps.has_value());
  CHECK(std::any_of(deps->dependencies.begin(), deps->dependencies.end(),
                    [](const resolver::Dependency& d) { return d.name == "b"; }));
}

TEST_CASE("speculation: a likely wheel's member list starts beside its .metadata file",
          "[app][speculation]") {
  FakePageSource pages;
  pages.waits = true;
  // b's page offers no .metadata file: its METADATA is read from the wheel's tail, which brings
  // the member list along, so no read of its own is started.
  add(pages, "a", "1.0", {.requires_dist = {"b", "c"}});
  add(pages, "b", "1.0", {.metadata_file = false});
  add(pages, "c", "1.0");
  add(pages, "c", "2.0", {.yanked = true});
  catalog::Catalog provider_catalog(pages, config());
  catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
  REQUIRE(provider.candidates("a").has_value());
  CHECK(pages.prefetched_members == std::vector<std::string>{url_of("a", "1.0")});
  pages.simulate_wait();
  CHECK(has(pages.prefetched_metadata, url_of("b", "1.0")));
  CHECK(has(pages.prefetched_metadata, url_of("c", "1.0")));
  CHECK(pages.prefetched_members ==
        std::vector<std::string>{url_of("a", "1.0"), url_of("c", "1.0")});
  // Only the candidate whose METADATA starts: not the yanked c 2.0.
  CHECK_FALSE(has(pages.prefetched_members, url_of("c", "2.0")));
}

TEST_CASE("speculation never changes what is resolved", "[app][speculation]") {
  FakePageSource plain, waiting;
  waiting.waits = true;
  graph(plain);
  graph(waiting);
  catalog::Catalog p1_catalog(plain, config());
  catalog::IndexProvider p1(p1_catalog, app_test::hint_writer());
  catalog::Catalog p2_catalog(waiting, config());
  catalog::IndexProvider p2(p2_catalog, app_test::hint_writer());
  auto expected = std::map<std::string, std::string>{{"a", "1.0"}, {"b", "1.0"}, {"c", "1.0"}};
  CHECK(solve(p1, "a") == expected);
  CHECK(solve(p2, "a") == expected);
  CHECK(catalog::warnings(p1.catalog()) == catalog::warnings(p2.catalog()));
  // Every chosen wheel's METADATA was started ahead; d, which only b 3.0 needs, never was.
  for (const auto& [name, version] : expected)
    CHECK(has(waiting.prefetched_metadata, url_of(name, version)));
  CHECK_FALSE(has(waiting.prefetched_metadata, url_of("d", "1.0")));
}

TEST_CASE("speculation: an existing lock's names are read before the solver reaches them",
          "[app][speculation]") {
  FakePageSource pages;
  pages.waits = true;
  graph(pages);
  add(pages, "c", "2.0");
  auto cfg = config();
  // The old lock pinned c 1.0 (c 2.0 is newer) and d, which nothing needs any more.
  cfg.preferences.emplace("c", *core::Version::parse("1.0"));
  cfg.preferences.emplace("d", *core::Version::parse("1.0"));
  catalog::Catalog provider_catalog(pages, cfg);
  catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
  // Their pages start with the provider, before any question (without the lock: only when a
  // dependency names them, one level of the graph per round trip).
  CHECK(has(pages.prefetched_pages, "c"));
  CHECK(has(pages.prefetched_pages, "d"));
  CHECK_FALSE(has(pages.prefetched_pages, "b"));
  // At the first wait, the pinned releases' METADATA starts: c 1.0, not the newer 2.0.
  pages.simulate_wait();
  CHECK(has(pages.prefetched_metadata, url_of("c", "1.0")));
  CHECK_FALSE(has(pages.prefetched_metadata, url_of("c", "2.0")));
  CHECK(has(pages.prefetched_metadata, url_of("d", "1.0")));
  // What is resolved is what it would be without the prefetches: d is not needed.
  FakePageSource plain;
  graph(plain);
  add(plain, "c", "2.0");
  catalog::Catalog unhurried_catalog(plain, cfg);
  catalog::IndexProvider unhurried(unhurried_catalog, app_test::hint_writer());
  auto expected = std::map<std::string, std::string>{{"a", "1.0"}, {"b", "1.0"}, {"c", "1.0"}};
  CHECK(solve(provider, "a") == expected);
  CHECK(solve(unhurried, "a") == expected);
}

// IndexClient on file:// sources: Simple API trees, find-links folders, local wheels, the cache of
// parsed local pages. No network: the transport is never created.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>

#include <catch2/catch.hpp>

#include "gpulock/index/client.h"
#include "gpulock/index/url.h"

#include "index_test_support.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

ClientOptions options_for(const std::string& cache) {
  ClientOptions o;
  o.cache_dir = cache;
  return o;
}

}  // namespace

TEST_CASE("file:// Simple API tree, HTML and JSON", "[client][local]") {
  std::string cache = index_test::scratch_dir("local-simple");
  auto source = IndexSource::simple(index_test::wheels_dir() + "/simple");
  {
    IndexClient client(options_for(cache));
    auto demo = client.fetch_project(source, "Demo_Pkg");
    REQUIRE(demo);
    const ProjectPage& page = **demo;
    CHECK(page.found);
    CHECK(page.name == "demo-pkg");
    REQUIRE(page.files.size() == 2);
    CHECK(page.files[0].filename() == "demo_pkg-1.2.3-py3-none-any.whl");
    CHECK(page.files[0].url() ==
          path_to_file_url(index_test::wheels_dir() + "/links/demo_pkg-1.2.3-py3-none-any.whl"));
    CHECK(page.files[0].requires_python() == ">=3.8");
    CHECK(page.files[0].sha256().size() == 64);

    auto other = client.fetch_project(source, "other-pkg");
    REQUIRE(other);
    CHECK((*other)->versions == std::vector<std::string>{"0.1"});
    REQUIRE((*other)->files.size() == 1);
    CHECK((*other)->files[0].size().has_value());

    auto missing = client.fetch_project(source, "nope");
    REQUIRE(missing);
    CHECK_FALSE((*missing)->found);

    auto stats = client.stats();
    CHECK(stats.requests == 0);
    CHECK(stats.pages_parsed == 2);

    // Memoized: a second fetch returns the same page object.
    auto again = client.fetch_project(source, "demo-pkg");
    REQUIRE(again);
    CHECK(again->get() == demo->get());
  }
  // A second client (a second run) reads the parsed pages from the cache: nothing is re-parsed.
  IndexClient warm(options_for(cache));
  warm.prefetch_project(source, "demo-pkg");
  auto demo = warm.fetch_project(source, "demo-pkg");
  REQUIRE(demo);
  CHECK((*demo)->files.size() == 2);
  CHECK(warm.stats().pages_parsed == 0);
  CHECK(warm.stats().page_cache_hits == 1);

  // Changing the page invalidates the entry (mtime and size).
  std::string index_html = index_test::wheels_dir() + "/simple/demo-pkg/index.html";
  std::string saved = index_test::read_text(index_html);
  std::string scratch_tree = index_test::scratch_dir("local-simple-tree");
  std::filesystem::copy(index_test::wheels_dir() + "/simple", scratch_tree + "/simple",
                        std::filesystem::copy_options::recursive);
  auto copy_source = IndexSource::simple(scratch_tree + "/simple");
  {
    IndexClient c(options_for(cache));
    REQUIRE(c.fetch_project(copy_source, "demo-pkg"));
    CHECK(c.stats().pages_parsed == 1);
  }
  std::string edited = saved;
  edited.replace(edited.find("</body>"), 7,
                 "<a href=\"demo_pkg-9.0-py3-none-any.whl\">x</a></body>");
  index_test::write_text(scratch_tree + "/simple/demo-pkg/index.html", edited);
  IndexClient c2(options_for(cache));
  auto changed = c2.fetch_project(copy_source, "demo-pkg");
  REQUIRE(changed);
  CHECK((*changed)->files.size() == 3);
  CHECK(c2.stats().pages_parsed == 1);
}

TEST_CASE("find-links folder", "[client][local]") {
  IndexClient client(options_for(index_test::scratch_dir("local-links")));
  auto source = IndexSource::find_links(index_test::wheels_dir() + "/links");
  auto demo = client.fetch_project(source, "demo-pkg");
  REQUIRE(demo);
  CHECK((*demo)->found);
  std::vector<std::string> names;
  for (const auto& f : (*demo)->files)
    names.emplace_back(f.filename());
  CHECK(names == std::vector<std::string>{"demo-pkg-1.1.0.tar.gz",
                                          "demo_pkg-1.2.3-py3-none-any.whl",
                                          "demo_pkg-1.3.0-py3-none-any.whl"});
  CHECK((*demo)->files[1].size().has_value());
  auto other = client.fetch_project(source, "Other.Pkg");
  REQUIRE(other);
  CHECK((*other)->files.size() == 1);
  auto none = client.fetch_project(source, "absent");
  REQUIRE(none);
  CHECK_FALSE((*none)->found);

  auto meta = client.fetch_metadata((*demo)->files[2]);
  REQUIRE(meta);
  CHECK(meta->find("Version: 1.3.0") != std::string::npos);
  auto sdist = client.fetch_metadata((*demo)->files[0]);
  REQUIRE_FALSE(sdist);
  CHECK(sdist.error().message.find("is not a wheel") != std::string::npos);

  auto digest = client.fetch_file_digest((*demo)->files[1].url());
  REQUIRE(digest);
  CHECK(digest->size == *(*demo)->files[1].size());
  CHECK(client.stats().requests == 0);

  auto missing_dir = client.fetch_project(IndexSource::find_links("/nonexistent/links"), "x");
  REQUIRE_FALSE(missing_dir);
  CHECK(missing_dir.error().code == core::ErrorCode::Io);
}

TEST_CASE("prefetches from many threads join one fetch", "[client][local]") {
  IndexClient client(options_for(index_test::scratch_dir("local-threads")));
  auto source = IndexSource::simple(index_test::wheels_dir() + "/simple");
  std::vector<std::thread> threads;
  std::vector<const ProjectPage*> seen(8, nullptr);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      client.prefetch_project(source, "demo-pkg");
      auto page = client.fetch_project(source, "demo-pkg");
      if (page) seen[i] = page->get();
    });
  }
  for (auto& t : threads)
    t.join();
  for (const auto* p : seen)
    CHECK(p == seen[0]);
  CHECK(seen[0] != nullptr);
  CHECK(client.stats().pages_parsed == 1);
}

TEST_CASE("offline with an empty cache names what is missing", "[client][offline]") {
  ClientOptions o = options_for(index_test::scratch_dir("local-offline"));
  o.offline = true;
  IndexClient client(o);
  auto page = client.fetch_project(IndexSource::simple("http://127.0.0.1:9/simple/"), "torch");
  REQUIRE_FALSE(page);
  CHECK(page.error().code == core::ErrorCode::Offline);
  CHECK(page.error().where == "http://127.0.0.1:9/simple/torch/");
  CHECK(page.error().message == "not in the cache, and --offline forbids fetching it");
  CHECK(client.stats().requests == 0);
}

TEST_CASE("default cache directory: GPULOCK_CACHE_DIR, XDG_CACHE_HOME, HOME", "[client]") {
  gpulock::test::ScopedEnv a("GPULOCK_CACHE_DIR"), b("XDG_CACHE_HOME"), c("HOME");
  ::setenv("HOME", "/home/someone", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("GPULOCK_CACHE_DIR", "/explicit", 1);
  CHECK(default_cache_dir() == "/explicit");
  ::setenv("GPULOCK_CACHE_DIR", "", 1);  // empty counts as unset
  CHECK(default_cache_dir() == "/xdg/gpulock");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(default_cache_dir() == "/home/someone/.cache/gpulock");
  ::setenv("GPULOCK_HTTP_TIMEOUT", "7", 1);
  ::setenv("GPULOCK_HTTP_RETRIES", "1", 1);
  auto o = ClientOptions::from_environment().value();
  CHECK(o.cache_dir == "/home/someone/.cache/gpulock");
  CHECK(o.low_speed_time == std::chrono::seconds(7));
  CHECK(o.retries == 1);
  ::unsetenv("GPULOCK_HTTP_TIMEOUT");
  ::unsetenv("GPULOCK_HTTP_RETRIES");
}

TEST_CASE("HTTP defaults of issue 3, and SSL_CERT_FILE / SSL_CERT_DIR picked up", "[client]") {
  ClientOptions d;
  CHECK(d.connect_timeout == std::chrono::seconds(10));
  CHECK(d.retries == 3);
  CHECK(d.max_parallel >= 16);
  CHECK(d.retry_backoff.count() > 0);
  CHECK(d.low_speed_time.count() > 0);
  CHECK(d.low_speed_bytes > 0);

  gpulock::test::ScopedEnv a("SSL_CERT_FILE"), b("SSL_CERT_DIR"), c("GPULOCK_CONCURRENT_DOWNLOADS");
  ::setenv("SSL_CERT_FILE", "/certs/bundle.pem", 1);
  ::setenv("SSL_CERT_DIR", "/certs/hashed", 1);
  ::setenv("GPULOCK_CONCURRENT_DOWNLOADS", "20", 1);
  auto o = ClientOptions::from_environment().value();
  CHECK(o.max_parallel == 20);
  o.cache_dir = index_test::scratch_dir("client-env-certs");
  IndexClient client(o);  // libcurl gets these as CAINFO / CAPATH (it does not read them itself)
  CHECK(client.options().ca_file == "/certs/bundle.pem");
  CHECK(client.options().ca_path == "/certs/hashed");
  ClientOptions given;
  given.cache_dir = o.cache_dir;
  given.ca_file = "/given.pem";
  IndexClient explicit_client(given);  // an explicit bundle wins over the environment
  CHECK(explicit_client.options().ca_file == "/given.pem");
}

TEST_CASE("each thread has its own wait hook", "[client][hook]") {
  // Several targets resolve at once through one client (app::resolve_targets), each provider
  // setting a hook for its own thread: one thread's hook never replaces or runs for another's.
  IndexClient client(options_for(index_test::scratch_dir("hook-threads")));
  int a_calls = 0;
  CHECK_FALSE(client.set_wait_hook([&] { ++a_calls; }));
  std::function<void()> seen_by_b;
  std::function<void()> back_from_b;
  std::thread([&] {
    seen_by_b = client.set_wait_hook([] {});
    back_from_b = client.set_wait_hook({});
  }).join();
  CHECK_FALSE(seen_by_b);  // B had none: A's is A's
  CHECK(back_from_b);      // B got its own back
  auto mine = client.set_wait_hook({});
  REQUIRE(mine);  // A's is still there
  mine();
  CHECK(a_calls == 1);
  CHECK_FALSE(client.set_wait_hook({}));
}

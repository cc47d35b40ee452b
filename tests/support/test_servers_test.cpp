// Tests of tests/support/test_servers.h against the running shared servers (ctest fixture
// `servers`) and a private server it starts itself.
#include "test_servers.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace fs = std::filesystem;
using gpulock::test::AccessLogCursor;
using gpulock::test::PrivateServers;
using gpulock::test::shell_quote;

namespace {

// Fetches a URL with curl (the header is std-only; tests may use tools) and returns the body.
std::string fetch(const std::string& url, const std::string& extra = {}) {
  auto r = gpulock::test::run_shell("curl -sf " + extra + " " + shell_quote(url));
  return r.status == 0 ? r.out : "<curl failed>";
}

}  // namespace

TEST_CASE("shared servers: servers.env gives the URLs of running servers", "[support]") {
  const auto& s = gpulock::test::shared_servers();
  CHECK(s.http_url().rfind("http://127.0.0.1:", 0) == 0);
  CHECK(s.pypi_url() == s.http_url() + "/simple/");
  CHECK(s.torch_index_base() == s.http_url() + "/whl");
  CHECK(fs::is_regular_file(s.ca_file()));
  CHECK(fs::is_regular_file(s.index_root() / "manifest.json"));
  auto body = fetch(s.pypi_url() + "filelock/");
  CHECK(body.find("filelock-3.13.1-py3-none-any.whl") != std::string::npos);
  CHECK_THROWS_WITH(s.at("NO_SUCH_KEY"), Catch::Contains("NO_SUCH_KEY"));
}

TEST_CASE("shared servers: a missing servers.env fails loudly", "[support]") {
  CHECK_THROWS_WITH(gpulock::test::read_servers_env("/nonexistent/servers.env"),
                    Catch::Contains("is missing"));
}

TEST_CASE("access log: one parsed line per request", "[support]") {
  const auto& s = gpulock::test::shared_servers();
  AccessLogCursor cursor(s.access_log());
  // Other tests use the shared server at the same time: count only this test's unique URL
  // (tests that count every request start their own PrivateServers).
  std::string uri = "/simple/mpmath/?t=" + std::to_string(std::random_device{}());
  auto body = fetch(s.http_url() + uri,
                    "-H 'Accept: application/vnd.pypi.simple.v1+json' -H 'If-None-Match: \"x\"'");
  CHECK(body.find("\"name\":\"mpmath\"") != std::string::npos);
  std::vector<gpulock::test::AccessLogEntry> entries;
  for (auto& e : cursor.entries()) {
    if (e.uri == uri) entries.push_back(e);
  }
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].method == "GET");
  CHECK(entries[0].uri == uri);
  CHECK(entries[0].status == 200);
  CHECK(entries[0].accept == "application/vnd.pypi.simple.v1+json");
  CHECK(entries[0].conditional());
  cursor.mark();
  for (auto& e : cursor.entries())
    CHECK(e.uri != uri);
}

TEST_CASE("private servers: own port and log, a copy that can be regenerated", "[support]") {
  PrivateServers p;
  const auto& shared = gpulock::test::shared_servers();
  CHECK(p.env().http_url() != shared.http_url());
  CHECK(p.index_root() != shared.index_root());
  auto before = fetch(p.env().pypi_url() + "fsspec/");
  CHECK(before.find("data-yanked") == std::string::npos);
  p.regenerate(R"({"yank": [{"name": "fsspec", "version": "2025.9.0", "reason": "drift test"}]})");
  auto after = fetch(p.env().pypi_url() + "fsspec/");
  CHECK(after.find("data-yanked=\"drift test\"") != std::string::npos);
  // The shared tree is untouched.
  CHECK(fetch(shared.pypi_url() + "fsspec/").find("data-yanked") == std::string::npos);
  CHECK(gpulock::test::read_access_log(p.access_log()).size() == 2);
}

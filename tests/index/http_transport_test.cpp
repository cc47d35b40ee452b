// The HTTP layer's promises (issue 3, "HTTP with libcurl multi"), against nginx and the fault
// server: many transfers in flight, connection reuse, gzip, retries on 408 and on connection
// errors, and how long "not on this index" answers are cached.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>

#include "gpulock/index/client.h"
#include "gpulock/index/parse.h"

#include "cache.h"
#include "http_support.h"

using namespace gpulock;
using namespace gpulock::index;
using index_test::servers;
using index_test::test_options;
using index_test::unique_agent;

namespace {

// One line of the fault server's log (fault_server.py: time, method, path, status, client port,
// User-Agent).
struct FaultLogLine {
  std::string path;
  int status = 0;
  std::string port;
  std::string agent;
};

std::vector<FaultLogLine> fault_log_of(const std::filesystem::path& log, const std::string& agent) {
  std::vector<FaultLogLine> out;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t'))
      f.push_back(field);
    if (f.size() < 6 || f[5] != agent) continue;
    out.push_back({f[2], std::atoi(f[3].c_str()), f[4], f[5]});
  }
  return out;
}

// The first `n` project names of the PyPI-like tree (sorted, so the choice is stable).
std::vector<std::string> some_projects(std::size_t n) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(servers().index_root() / "simple")) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (names.size() > n) names.resize(n);
  return names;
}

// A loopback port nothing listens on (bound, then closed).
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("at least 16 transfers in flight at once: pages and METADATA", "[http][parallel]") {
  // The fault server's /barrier<N>/ holds every request until N of them wait together and
  // answers 504 after 10 s otherwise; with no retries, every fetch succeeding proves N in flight.
  gpulock::test::PrivateServerOptions po;
  po.fault = true;
  po.copy = false;
  gpulock::test::PrivateServers priv(po);
  std::string agent = unique_agent("inflight");
  ClientOptions o = test_options(index_test::scratch_dir("http-inflight"), agent);
  o.retries = 0;
  o.low_speed_time = std::chrono::milliseconds(15'000);  // the barrier may hold a request a while
  IndexClient client(o);
  REQUIRE(client.options().max_parallel >= 16);

  auto names = some_projects(16);
  REQUIRE(names.size() == 16);
  auto held = IndexSource::simple(priv.env().fault_url() + "/barrier16/simple/");
  for (const auto& n : names)
    client.prefetch_project(held, n);
  for (const auto& n : names) {
    auto page = client.fetch_project(held, n);
    INFO(n);
    INFO((page ? std::string() : page.error().to_string()));
    INFO(index_test::read_text((priv.state_dir() / "fault.log").string()));
    REQUIRE(page);
    CHECK((*page)->found);
  }
  CHECK(client.stats().page_requests == 16);

  // 17 wheels with a .metadata file, each fetched through /barrier17/.
  auto plain = IndexSource::simple(priv.env().fault_url() + "/ok/simple/");
  std::vector<DistFile> wheels;
  for (const auto& n : names) {
    auto page = client.fetch_project(plain, n);
    REQUIRE(page);
    for (const auto& f : (*page)->files) {
      if (f.wheel() && f.core_metadata() && wheels.size() < 17) wheels.push_back(f);
    }
  }
  REQUIRE(wheels.size() == 17);
  for (auto& w : wheels) {
    std::string url(w.url());
    auto at = url.find("/ok/");
    REQUIRE(at != std::string::npos);
    url.replace(at, 4, "/barrier17/");
    w.set_url(url);
  }
  for (const auto& w : wheels)
    client.prefetch_metadata(w);
  for (const auto& w : wheels) {
    auto text = client.fetch_metadata(w);
    INFO(w.url());
    REQUIRE(text);
    CHECK(text->find("Name: ") != std::string::npos);
  }
  CHECK(client.stats().metadata_requests == 17);
  auto log = fault_log_of(priv.state_dir() / "fault.log", agent);
  std::size_t held_ok = 0;
  for (const auto& l : log) {
    if (l.path.starts_with("/barrier") && l.status == 200) ++held_ok;
  }
  CHECK(held_ok == 33);
}

TEST_CASE("sequential requests reuse one connection", "[http][parallel]") {
  gpulock::test::PrivateServerOptions po;
  po.fault = true;
  po.copy = false;
  gpulock::test::PrivateServers priv(po);
  std::string agent = unique_agent("reuse");
  IndexClient client(test_options(index_test::scratch_dir("http-reuse"), agent));
  auto source = IndexSource::simple(priv.env().fault_url() + "/ok/simple/");
  for (const char* name : {"numpy", "filelock", "jinja2", "sympy", "mpmath"}) {
    auto page = client.fetch_project(source, name);
    REQUIRE(page);
    auto meta = client.fetch_metadata((*page)->files.back());
    REQUIRE(meta);
  }
  auto log = fault_log_of(priv.state_dir() / "fault.log", agent);
  REQUIRE(log.size() == client.stats().requests);
  REQUIRE(log.size() >= 10);
  std::set<std::string> ports;
  for (const auto& l : log)
    ports.insert(l.port);
  CHECK(ports.size() == 1);  // one TCP connection (the client's port) for every request
}

TEST_CASE("pages come gzip-compressed and are decoded, gzip and br are offered", "[http]") {
  std::string agent = unique_agent("gzip");
  IndexClient client(test_options(index_test::scratch_dir("http-gzip"), agent));
  auto page = client.fetch_project(IndexSource::simple(servers().pypi_url()), "numpy");
  REQUIRE(page);
  REQUIRE_FALSE((*page)->files.empty());
  auto log = index_test::settled_requests_by(agent, 1);
  REQUIRE(log.size() == 1);
  CHECK(log[0].accept_encoding.find("gzip") != std::string::npos);
  CHECK(log[0].accept_encoding.find("br") != std::string::npos);
  auto on_disk = std::filesystem::file_size(servers().index_root() / "simple/numpy/index.json");
  CHECK(static_cast<std::uint64_t>(log[0].bytes) < on_disk / 2);  // sent compressed
  CHECK(client.stats().bytes_received == on_disk);                // counted decoded
  auto same = parse_json_page(
      index_test::read_text((servers().index_root() / "simple/numpy/index.json").string()),
      servers().pypi_url() + "numpy/");
  REQUIRE(same);
  CHECK(same->files.size() == (*page)->files.size());
}

TEST_CASE("408 and connection errors are retried", "[http][faults]") {
  gpulock::test::PrivateServerOptions po;
  po.fault = true;
  po.copy = false;
  gpulock::test::PrivateServers priv(po);
  ClientOptions o = test_options(index_test::scratch_dir("http-408"), unique_agent("408"));
  IndexClient client(o);
  auto once = client.fetch_project(
      IndexSource::simple(priv.env().fault_url() + "/408-then-200/simple/"), "numpy");
  REQUIRE(once);
  CHECK((*once)->found);
  CHECK(client.stats().retries == 1);
  auto always = client.fetch_project(
      IndexSource::simple(priv.env().fault_url() + "/408x9-then-200/simple/"), "numpy");
  REQUIRE_FALSE(always);
  CHECK(always.error().code == core::ErrorCode::Http);
  CHECK(always.error().message == "HTTP 408 Request Timeout (after 4 attempts)");
  CHECK(always.error().where == priv.env().fault_url() + "/408x9-then-200/simple/numpy/");
  CHECK(client.stats().retries == 4);

  // Nothing listens: connection refused, retried 3 times, then a Network error naming the URL.
  std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/simple/";
  IndexClient refused_client(
      test_options(index_test::scratch_dir("http-refused"), unique_agent("refused")));
  auto refused = refused_client.fetch_project(IndexSource::simple(url), "numpy");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == core::ErrorCode::Network);
  CHECK(refused.error().message.starts_with("cannot reach the server: "));
  CHECK(refused.error().message.ends_with("(after 4 attempts)"));
  CHECK(refused.error().where == url + "numpy/");
  CHECK(refused_client.stats().retries == 3);
  CHECK(refused_client.stats().page_requests == 4);
}

TEST_CASE("'not on this index' is cached for the response's max-age, else 10 minutes",
          "[http][cache]") {
  std::string cache = index_test::scratch_dir("http-notfound-ttl");
  std::string agent = unique_agent("notfound");
  std::string plain = servers().fault_url() + "/status/404/simple/";   // no Cache-Control
  std::string with_age = servers().fault_url() + "/max-age1/simple/";  // Cache-Control: max-age=1
  {
    IndexClient client(test_options(cache, agent));
    auto a = client.fetch_project(IndexSource::simple(plain), "no-such-project");
    auto b = client.fetch_project(IndexSource::simple(with_age), "no-such-project");
    REQUIRE(a);
    REQUIRE(b);
    CHECK_FALSE((*a)->found);
    CHECK_FALSE((*b)->found);
    CHECK(client.stats().page_requests == 2);
  }
  detail::DiskCache disk(cache, true);
  auto plain_entry = disk.load_page(plain + "no-such-project/");
  auto aged_entry = disk.load_page(with_age + "no-such-project/");
  REQUIRE(plain_entry);
  REQUIRE(aged_entry);
  CHECK(plain_entry->status == 404);
  CHECK(plain_entry->max_age == 600);
  CHECK(aged_entry->status == 404);
  CHECK(aged_entry->max_age == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  {
    // The default-lifetime answer is still fresh; the max-age=1 one has expired.
    IndexClient client(test_options(cache, agent));
    auto a = client.fetch_project(IndexSource::simple(plain), "no-such-project");
    REQUIRE(a);
    CHECK_FALSE((*a)->found);
    CHECK(client.stats().requests == 0);
    auto b = client.fetch_project(IndexSource::simple(with_age), "no-such-project");
    REQUIRE(b);
    CHECK_FALSE((*b)->found);
    CHECK(client.stats().page_requests == 1);
  }
}

TEST_CASE("the wait hook runs on the waiting thread while a fetch is in flight",
          "[http][parallel]") {
  // /barrier2/ answers only once two requests wait together: the page asked for here arrives
  // only because the hook, run while fetch_project waits, starts the second request (issue 27:
  // the next prefetches start while the caller would otherwise sleep).
  bool prefetched = false;
  std::string scratch;
  SECTION("a prefetch in flight") {
    prefetched = true;
    scratch = "http-wait-hook";
  }
  SECTION("the caller's own fetch, never prefetched") {
    // It runs on a pool thread (ahead of the queued prefetches), so that the hook still runs.
    // Before, the caller ran it itself, the hook never ran, and /barrier2/ held the request
    // until its deadline.
    scratch = "http-wait-hook-own";
  }
  gpulock::test::PrivateServerOptions po;
  po.fault = true;
  po.copy = false;
  gpulock::test::PrivateServers priv(po);
  ClientOptions o = test_options(index_test::scratch_dir(scratch), unique_agent(scratch));
  o.retries = 0;
  o.low_speed_time = std::chrono::milliseconds(prefetched ? 15'000 : 5'000);
  IndexClient client(o);
  auto names = some_projects(2);
  REQUIRE(names.size() == 2);
  auto held = IndexSource::simple(priv.env().fault_url() + "/barrier2/simple/");
  const std::thread::id me = std::this_thread::get_id();
  int calls = 0;
  bool elsewhere = false;
  auto previous = client.set_wait_hook([&] {
    ++calls;
    if (std::this_thread::get_id() != me) elsewhere = true;
    client.prefetch_project(held, names[1]);
  });
  CHECK_FALSE(previous);
  CHECK_FALSE(client.project_done(held, names[0]));
  if (prefetched) client.prefetch_project(held, names[0]);
  auto page = client.fetch_project(held, names[0]);
  INFO((page ? std::string() : page.error().to_string()));
  REQUIRE(page);
  CHECK((*page)->found);
  CHECK(client.project_done(held, names[0]));
  CHECK(calls >= 1);
  CHECK_FALSE(elsewhere);
  auto second = client.fetch_project(held, names[1]);
  REQUIRE(second);
  CHECK((*second)->found);
  CHECK(client.stats().page_requests == 2);
  // Removed: the previous (empty) hook is back.
  CHECK(client.set_wait_hook(std::move(previous)));
}

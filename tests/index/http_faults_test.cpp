// Every failure the index client must report, against the fault server and nginx's broken/ tree:
// auth, 5xx after retries (and recovery), hangs, truncated bodies, invalid pages, redirect loops,
// hash mismatches, broken wheels. Each error names the (redacted) URL.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/client.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"

#include "cache.h"
#include "http_support.h"

using namespace gpulock;
using namespace gpulock::index;
using index_test::servers;
using index_test::test_options;
using index_test::unique_agent;

namespace {

std::string fault(const std::string& mode) {
  return servers().fault_url() + "/" + mode + "/";
}

IndexClient make_client(const std::string& name, unsigned retries = 3) {
  ClientOptions o = test_options(index_test::scratch_dir(name), unique_agent(name));
  o.retries = retries;
  return IndexClient(o);
}

}  // namespace

TEST_CASE("401 and 403 are authentication errors, credentials are used and never shown",
          "[http][faults]") {
  auto client = make_client("fault-auth");
  auto e401 = client.fetch_project(IndexSource::simple(fault("status/401/simple")), "numpy");
  REQUIRE_FALSE(e401);
  CHECK(e401.error().code == core::ErrorCode::Auth);
  CHECK(e401.error().message == "HTTP 401 Unauthorized: the index refused the request");
  CHECK(e401.error().where == fault("status/401/simple") + "numpy/");
  REQUIRE(e401.error().hints.size() == 1);

  auto e403 = client.fetch_project(IndexSource::simple(fault("status/403/simple")), "numpy");
  REQUIRE_FALSE(e403);
  CHECK(e403.error().code == core::ErrorCode::Auth);
  CHECK(e403.error().message == "HTTP 403 Forbidden: the index refused the request");

  auto whl = IndexSource::simple(fault("status/403/whl/cu124"));
  whl.forbidden_means_missing = true;
  auto missing = client.fetch_project(whl, "torch");
  REQUIRE(missing);
  CHECK_FALSE((*missing)->found);

  // Basic credentials in the index URL: the page and its files (relative links) authenticate.
  std::string base = fault("auth/simple");
  std::string with_credentials =
      "http://fixture:s3cret@" + base.substr(std::string("http://").size());
  auto page = client.fetch_project(IndexSource::simple(with_credentials), "numpy");
  REQUIRE(page);
  CHECK((*page)->url == "http://fixture:****@" + base.substr(7) + "numpy/");
  for (const auto& f : (*page)->files)
    CHECK(f.url().find("s3cret") == std::string::npos);
  auto meta = client.fetch_metadata((*page)->files.front());
  REQUIRE(meta);
  CHECK(meta->find("Name: numpy") != std::string::npos);

  std::string wrong = "http://fixture:wrong@" + base.substr(std::string("http://").size());
  auto refused = client.fetch_project(IndexSource::simple(wrong), "filelock");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == core::ErrorCode::Auth);
  CHECK(refused.error().where == "http://fixture:****@" + base.substr(7) + "filelock/");
  CHECK(refused.error().to_string().find("wrong") == std::string::npos);
}

TEST_CASE("5xx after retries, and recovery from 500-then-200 and 429", "[http][faults]") {
  auto client = make_client("fault-5xx");
  auto e503 = client.fetch_project(IndexSource::simple(fault("status/503/simple")), "numpy");
  REQUIRE_FALSE(e503);
  CHECK(e503.error().code == core::ErrorCode::Http);
  CHECK(e503.error().message == "HTTP 503 Service Unavailable (after 4 attempts)");
  CHECK(e503.error().where == fault("status/503/simple") + "numpy/");
  CHECK(client.stats().retries == 3);
  CHECK(client.stats().page_requests == 4);

  auto e404 = client.fetch_project(IndexSource::simple(fault("status/404/simple")), "numpy");
  REQUIRE(e404);
  CHECK_FALSE((*e404)->found);
  CHECK(client.stats().page_requests == 5);  // 4xx is not retried

  // The fault server counts per URL: a private one keeps the counters to this test.
  gpulock::test::PrivateServerOptions po;
  po.fault = true;
  po.copy = false;
  gpulock::test::PrivateServers priv(po);
  auto recovering = make_client("fault-recover");
  auto ok = recovering.fetch_project(
      IndexSource::simple(priv.env().fault_url() + "/500-then-200/simple/"), "numpy");
  REQUIRE(ok);
  CHECK((*ok)->found);
  CHECK_FALSE((*ok)->files.empty());
  CHECK(recovering.stats().retries == 1);
  auto limited = recovering.fetch_project(
      IndexSource::simple(priv.env().fault_url() + "/429x2-then-200/simple/"), "filelock");
  REQUIRE(limited);
  CHECK(recovering.stats().retries == 3);
}

TEST_CASE("hangs and stalls time out, truncated bodies are errors", "[http][faults]") {
  auto client = make_client("fault-hang", 1);
  auto hang = client.fetch_project(IndexSource::simple(fault("hang/simple")), "numpy");
  REQUIRE_FALSE(hang);
  CHECK(hang.error().code == core::ErrorCode::Timeout);
  CHECK(hang.error().message.starts_with("timed out: "));
  CHECK(hang.error().message.ends_with("(after 2 attempts)"));
  CHECK(hang.error().where == fault("hang/simple") + "numpy/");

  auto stall = client.fetch_project(IndexSource::simple(fault("stall/simple")), "numpy");
  REQUIRE_FALSE(stall);
  CHECK(stall.error().code == core::ErrorCode::Timeout);

  auto truncated = client.fetch_project(IndexSource::simple(fault("truncated/simple")), "numpy");
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().code == core::ErrorCode::Network);
  CHECK(truncated.error().message.starts_with("truncated response body: "));
  CHECK(truncated.error().where == fault("truncated/simple") + "numpy/");
}

TEST_CASE("invalid pages and redirect loops", "[http][faults]") {
  auto client = make_client("fault-pages");
  auto json = client.fetch_project(IndexSource::simple(fault("invalid-json/simple")), "torch");
  REQUIRE_FALSE(json);
  CHECK(json.error().code == core::ErrorCode::IndexFormat);
  CHECK(json.error().message.starts_with("invalid PEP 691 page: "));
  CHECK(json.error().where == fault("invalid-json/simple") + "torch/");
  CHECK(json.error().line == 1);

  auto api = client.fetch_project(IndexSource::simple(fault("bad-api-version/simple")), "numpy");
  REQUIRE_FALSE(api);
  CHECK(api.error().code == core::ErrorCode::IndexFormat);
  CHECK(api.error().message ==
        "invalid PEP 691 page: meta.api-version: unsupported repository API version 2.0 (gpulock "
        "reads 1.x, PEP 629)");

  auto loop = client.fetch_project(IndexSource::simple(fault("redirect-loop/simple")), "numpy");
  REQUIRE_FALSE(loop);
  CHECK(loop.error().code == core::ErrorCode::Network);
  CHECK(loop.error().message == "too many redirects (more than 10; a redirect loop?)");
  CHECK(loop.error().where == fault("redirect-loop/simple") + "numpy/");

  // A plain redirect is followed, and links resolve against where it led.
  auto moved = client.fetch_project(IndexSource::simple(fault("redirect/simple")), "numpy");
  REQUIRE(moved);
  REQUIRE_FALSE((*moved)->files.empty());
  CHECK((*moved)->files.front().url().starts_with(servers().fault_url() + "/ok/packages/numpy/"));

  // Invalid HTML (a file:// tree, the fault server has no HTML mode).
  std::string tree = index_test::scratch_dir("fault-html");
  index_test::write_text(
      tree + "/simple/broken/index.html",
      "<!DOCTYPE html>\n<html><body>\n<a href=\"broken-1.0.tar.gz>broken-1.0.tar.gz</a>\n");
  auto html = client.fetch_project(IndexSource::simple(tree + "/simple"), "broken");
  REQUIRE_FALSE(html);
  CHECK(html.error().code == core::ErrorCode::IndexFormat);
  CHECK(html.error().line == 3);
  CHECK(html.error().message ==
        "invalid HTML project page: unterminated attribute value for 'href'");
}

TEST_CASE("hash mismatches name the URL and both hashes", "[http][faults]") {
  std::string cache = index_test::scratch_dir("fault-hash");
  ClientOptions o = test_options(cache, unique_agent("fault-hash"));
  {
    IndexClient client(o);
    auto page =
        client.fetch_project(IndexSource::simple(fault("wrong-metadata-hash/simple")), "numpy");
    REQUIRE(page);
    const DistFile& f = (*page)->files.front();
    REQUIRE(f.core_metadata());
    auto meta = client.fetch_metadata(f);
    REQUIRE_FALSE(meta);
    CHECK(meta.error().code == core::ErrorCode::HashMismatch);
    CHECK(meta.error().where == std::string(f.url()) + ".metadata");
    std::string prefix =
        fmt::format("hash mismatch: expected sha256:{}, got sha256:", f.core_metadata_sha256());
    CHECK(meta.error().message.starts_with(prefix));
    CHECK(meta.error().message.size() == prefix.size() + 64);
  }
  // A wheel downloaded whole is hashed as it arrives: this host marked as not doing ranges.
  detail::DiskCache(cache, true).store_range_support("127.0.0.1", false);
  IndexClient client(o);
  auto page = client.fetch_project(IndexSource::simple(fault("wrong-hash/simple")), "networkx");
  REQUIRE(page);
  const DistFile* plain = nullptr;
  for (const auto& f : (*page)->files) {
    if (f.wheel() && !f.core_metadata()) plain = &f;
  }
  REQUIRE(plain);
  auto meta = client.fetch_metadata(*plain);
  REQUIRE_FALSE(meta);
  CHECK(meta.error().code == core::ErrorCode::HashMismatch);
  CHECK(meta.error().where == plain->url());
  CHECK(meta.error().message.starts_with(
      fmt::format("hash mismatch: expected sha256:{}, got sha256:", plain->sha256())));
  CHECK(client.stats().download_requests == 1);
  CHECK(client.stats().range_requests == 0);
}

TEST_CASE("servers without range support: small wheels come whole, big ones are streamed",
          "[http][range]") {
  auto client = make_client("fault-norange");
  auto page = client.fetch_project(IndexSource::simple(fault("no-range/simple")), "networkx");
  REQUIRE(page);
  std::vector<const DistFile*> plain;
  for (const auto& f : (*page)->files) {
    if (f.wheel() && !f.core_metadata()) plain.push_back(&f);
  }
  REQUIRE(plain.size() >= 2);
  auto first = client.fetch_metadata(*plain[0]);
  REQUIRE(first);
  CHECK(client.stats().range_requests == 1);  // answered 200 with the whole (small) wheel
  CHECK(client.stats().downloaded_metadata == 1);
  auto second = client.fetch_metadata(*plain[1]);
  REQUIRE(second);
  CHECK(client.stats().range_requests == 1);  // remembered: no more range attempts on this host
  CHECK(client.stats().download_requests == 1);

  // A wheel bigger than what a range-less answer may bring: aborted, then streamed to disk.
  gpulock::test::PrivateServerOptions po;
  po.root = index_test::wheels_dir();
  po.copy = false;
  po.fault = true;
  gpulock::test::PrivateServers priv(po);
  for (const char* base : {"/no-range/wheels/", "/wheels/"}) {
    std::string url =
        (std::string(base) == "/wheels/" ? priv.env().http_url() : priv.env().fault_url()) + base +
        "big_pkg-2.0-py3-none-any.whl";
    DYNAMIC_SECTION(base) {
      auto big = make_client("fault-big");
      DistFile f;
      f.set_text("big_pkg-2.0-py3-none-any.whl", url);
      f.set_wheel(core::WheelFilename::parse(f.filename()).value());
      auto meta = big.fetch_metadata(f);
      REQUIRE(meta);
      CHECK(meta->find("Provides-Extra: fast") != std::string::npos);
      auto size = std::filesystem::file_size(index_test::wheels_dir() +
                                             "/wheels/big_pkg-2.0-py3-none-any.whl");
      if (std::string(base) == "/wheels/") {
        CHECK(big.stats().range_metadata == 1);
        CHECK(big.stats().range_requests >= 2);  // the central directory is bigger than the tail
        CHECK(big.stats().bytes_received < size / 2);
      } else {
        CHECK(big.stats().downloaded_metadata == 1);
        CHECK(big.stats().download_requests == 1);
      }
    }
  }
}

TEST_CASE("broken wheels on the index", "[http][faults]") {
  auto client = make_client("fault-broken");
  auto broken = IndexSource::simple(servers().http_url() + "/broken/simple/");
  struct Case {
    const char* name;
    core::ErrorCode code;
    const char* message_start;
  };
  for (const Case& c :
       {Case{"nometadata", core::ErrorCode::InvalidInput,
             "the wheel has no *.dist-info/METADATA file"},
        Case{"bigmetadata", core::ErrorCode::InvalidInput,
             "bigmetadata-1.0.dist-info/METADATA is "},
        Case{"zipbomb", core::ErrorCode::InvalidInput,
             "refusing zipbomb-1.0.dist-info/METADATA: it declares 3000000000 bytes"},
        Case{"mismatch", core::ErrorCode::InvalidMetadata,
             "METADATA says 'someone-else' '9.9' but the wheel's filename says 'mismatch' '1.0'"},
        Case{
            "badmetahash", core::ErrorCode::HashMismatch,
            "hash mismatch: expected "
            "sha256:0000000000000000000000000000000000000000000000000000000000000000, got sha256:"},
        Case{"notazip", core::ErrorCode::InvalidInput,
             "cannot read the wheel: Not a zip archive"}}) {
    DYNAMIC_SECTION(c.name) {
      auto page = client.fetch_project(broken, c.name);
      REQUIRE(page);
      REQUIRE((*page)->files.size() == 1);
      const DistFile& f = (*page)->files.front();
      auto meta = client.fetch_metadata(f);
      REQUIRE_FALSE(meta);
      CHECK(meta.error().code == c.code);
      CHECK(meta.error().message.starts_with(c.message_start));
      CHECK(meta.error().where.starts_with(f.url()));
    }
  }
}

TEST_CASE("a .metadata file over 10 MB is refused", "[http][faults]") {
  gpulock::test::PrivateServerOptions po;
  po.root = index_test::wheels_dir();
  po.copy = false;
  gpulock::test::PrivateServers priv(po);
  auto client = make_client("fault-hugemeta");
  auto page = client.fetch_project(IndexSource::simple(priv.env().pypi_url()), "hugemeta");
  REQUIRE(page);
  REQUIRE((*page)->files.size() == 1);
  const DistFile& f = (*page)->files.front();
  CHECK(f.core_metadata());
  auto meta = client.fetch_metadata(f);
  REQUIRE_FALSE(meta);
  CHECK(meta.error().code == core::ErrorCode::IndexFormat);
  CHECK(meta.error().message == "the .metadata file is over the 10 MB limit for METADATA");
  CHECK(meta.error().where == std::string(f.url()) + ".metadata");
  CHECK(client.stats().bytes_received <= kMaxMetadataBytes + 1024 * 1024);
}

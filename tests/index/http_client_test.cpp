// IndexClient against nginx serving the fixture index (ctest fixture `servers`): both content
// types, TLS + HTTP/2, find-links, METADATA by .metadata / range reads / download, the cache.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "gpulock/index/client.h"
#include "gpulock/index/hash.h"
#include "gpulock/index/parse.h"
#include "gpulock/index/url.h"
#include "gpulock/index/wheel.h"

#include "http_support.h"

using namespace gpulock;
using namespace gpulock::index;
using index_test::requests_by;
using index_test::servers;
using index_test::test_options;
using index_test::unique_agent;

namespace {

const DistFile* find_file(const ProjectPage& page, const std::string& filename) {
  for (const auto& f : page.files) {
    if (f.filename() == filename) return &f;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("PEP 691 JSON from nginx, and the same files as its HTML page", "[http]") {
  std::string agent = unique_agent("json");
  IndexClient client(test_options(index_test::scratch_dir("http-json"), agent));
  auto pypi = IndexSource::simple(servers().pypi_url());
  auto page = client.fetch_project(pypi, "NumPy");
  REQUIRE(page);
  CHECK((*page)->found);
  CHECK((*page)->name == "numpy");
  CHECK((*page)->api_version == "1.1");  // JSON pages say so; the HTML pages have no meta
  CHECK_FALSE((*page)->versions.empty());
  REQUIRE_FALSE((*page)->files.empty());
  for (const auto& f : (*page)->files) {
    CHECK(f.url().starts_with(servers().http_url() + "/packages/numpy/"));
    CHECK(f.sha256().size() == 64);
    CHECK(f.size().has_value());
  }
  auto log = index_test::settled_requests_by(agent, 1);
  REQUIRE(log.size() == 1);
  CHECK(log[0].uri == "/simple/numpy/");
  CHECK(log[0].accept == std::string(kSimpleAccept));
  CHECK(log[0].accept_encoding.find("gzip") != std::string::npos);

  // The HTML rendering of the same page (read from disk) lists the same files.
  std::string html =
      index_test::read_text((servers().index_root() / "simple/numpy/index.html").string());
  auto from_html = parse_html_page(html, servers().pypi_url() + "numpy/", {"numpy", false});
  REQUIRE(from_html);
  REQUIRE(from_html->files.size() == (*page)->files.size());
  for (std::size_t i = 0; i < from_html->files.size(); ++i) {
    const DistFile& a = (*page)->files[i];
    const DistFile& b = from_html->files[i];
    CHECK(a.filename() == b.filename());
    CHECK(a.url() == b.url());
    CHECK(a.sha256() == b.sha256());
    CHECK(a.requires_python() == b.requires_python());
    CHECK(a.yanked() == b.yanked());
    CHECK(a.yanked_reason() == b.yanked_reason());
    CHECK(a.core_metadata() == b.core_metadata());
    CHECK(a.core_metadata_sha256() == b.core_metadata_sha256());
  }
}

TEST_CASE("PEP 503 HTML from the PyTorch-like tree", "[http]") {
  std::string agent = unique_agent("html");
  IndexClient client(test_options(index_test::scratch_dir("http-html"), agent));
  auto cu124 = IndexSource::simple(servers().torch_index_base() + "/cu124/");
  cu124.forbidden_means_missing = true;
  auto torch = client.fetch_project(cu124, "torch");
  REQUIRE(torch);
  CHECK((*torch)->found);
  REQUIRE_FALSE((*torch)->files.empty());
  std::set<std::string> versions;
  for (const auto& f : (*torch)->files) {
    versions.insert(f.version().to_string());
    CHECK(f.version().local_string() == "cu124");
    CHECK(f.url().find("%2Bcu124") != std::string::npos);  // root-relative, %2B kept
    CHECK(f.filename().find("+cu124") != std::string::npos);
    CHECK(f.url().starts_with(servers().http_url() + "/whl/cu124/"));
    CHECK(f.sha256().size() == 64);
  }
  CHECK(versions.count("2.6.0+cu124") == 1);
  // 403 for a missing project is "not on this index" for a PyTorch-like source...
  auto missing = client.fetch_project(cu124, "no-such-project");
  REQUIRE(missing);
  CHECK_FALSE((*missing)->found);
  // ...and an authentication error for any other source.
  auto plain = IndexSource::simple(servers().torch_index_base() + "/cu124/");
  CHECK_FALSE(plain.forbidden_means_missing);
  auto refused = client.fetch_project(plain, "no-such-project");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == core::ErrorCode::Auth);
  CHECK(refused.error().message == "HTTP 403 Forbidden: the index refused the request");
  CHECK(refused.error().where == servers().torch_index_base() + "/cu124/no-such-project/");
  // 404 from the PyPI-like tree.
  auto not_found =
      client.fetch_project(IndexSource::simple(servers().pypi_url()), "no-such-project");
  REQUIRE(not_found);
  CHECK_FALSE((*not_found)->found);

  // Nightly pages carry no hashes.
  auto nightly = IndexSource::simple(servers().torch_index_base() + "/nightly/cu126/");
  auto nightly_torch = client.fetch_project(nightly, "torch");
  REQUIRE(nightly_torch);
  REQUIRE_FALSE((*nightly_torch)->files.empty());
  for (const auto& f : (*nightly_torch)->files) {
    CHECK(f.hashes().empty());
    CHECK(f.version().is_devrelease());
  }
}

TEST_CASE("TLS with the test CA through SSL_CERT_FILE, HTTP/2, refused without it", "[http][tls]") {
  std::string agent = unique_agent("tls");
  std::string https_pypi = servers().at("HTTPS_PYPI_URL");
  {
    ClientOptions o = test_options(index_test::scratch_dir("http-tls-no"), agent);
    o.ca_file = "/nonexistent-so-the-system-store-is-not-used.pem";
    o.ca_path = "/nonexistent";
    IndexClient client(o);
    auto page = client.fetch_project(IndexSource::simple(https_pypi), "numpy");
    REQUIRE_FALSE(page);
    CHECK(page.error().code == core::ErrorCode::Network);
    CHECK(page.error().message.starts_with("TLS error: "));
    CHECK(page.error().where == https_pypi + "numpy/");
    REQUIRE_FALSE(page.error().hints.empty());
    CHECK(page.error().hints[0].find("SSL_CERT_FILE") != std::string::npos);
  }
  {
    // The system trust store does not know the test CA either.
    ClientOptions o = test_options(index_test::scratch_dir("http-tls-system"), agent);
    const char* saved = std::getenv("SSL_CERT_FILE");
    std::string saved_value = saved ? saved : "";
    ::unsetenv("SSL_CERT_FILE");
    IndexClient client(o);
    auto page = client.fetch_project(IndexSource::simple(https_pypi), "numpy");
    if (saved) ::setenv("SSL_CERT_FILE", saved_value.c_str(), 1);
    REQUIRE_FALSE(page);
    CHECK(page.error().message.starts_with("TLS error: "));
  }
  {
    const char* saved = std::getenv("SSL_CERT_FILE");
    std::string saved_value = saved ? saved : "";
    ::setenv("SSL_CERT_FILE", servers().ca_file().c_str(), 1);
    IndexClient client(test_options(index_test::scratch_dir("http-tls-yes"), agent));
    if (saved) {
      ::setenv("SSL_CERT_FILE", saved_value.c_str(), 1);
    } else {
      ::unsetenv("SSL_CERT_FILE");
    }
    auto source = IndexSource::simple(https_pypi);
    for (const char* name : {"numpy", "filelock", "jinja2", "markupsafe"})
      client.prefetch_project(source, name);
    auto page = client.fetch_project(source, "numpy");
    REQUIRE(page);
    CHECK((*page)->files.front().url().starts_with(servers().https_url() + "/packages/"));
    for (const char* name : {"filelock", "jinja2", "markupsafe"})
      CHECK(client.fetch_project(source, name));
    auto meta = client.fetch_metadata((*page)->files.front());
    REQUIRE(meta);
    CHECK(meta->find("Name: numpy") != std::string::npos);
  }
  auto log = index_test::settled_requests_by(agent, 5);
  REQUIRE(log.size() >= 5);
  for (const auto& e : log) {
    CHECK(e.scheme == "https");
    CHECK(e.protocol == "HTTP/2.0");
  }
  // HTTP/2 multiplexing: the four prefetched pages and the METADATA went as streams of one
  // connection (libcurl waits for it to learn that it multiplexes: CURLOPT_PIPEWAIT).
  std::set<std::string> connections;
  int most_requests = 0;
  for (const auto& e : log) {
    connections.insert(e.connection);
    most_requests = std::max(most_requests, e.connection_requests);
  }
  CHECK(connections.size() == 1);
  CHECK(most_requests >= 5);
}

TEST_CASE("find-links page over HTTP and a file:// Simple API tree", "[http]") {
  std::string agent = unique_agent("links");
  IndexClient client(test_options(index_test::scratch_dir("http-links"), agent));
  auto links = IndexSource::find_links(servers().at("FIND_LINKS_URL"));
  std::set<std::string> projects;
  auto listing = std::filesystem::directory_iterator(servers().index_root() / "find-links");
  std::size_t wheels_on_disk = 0;
  for (const auto& e : listing) {
    if (e.path().extension() == ".whl") ++wheels_on_disk;
  }
  REQUIRE(wheels_on_disk > 0);
  // Every file on disk shows up under its project; one page request for all projects.
  std::size_t seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(servers().index_root() / "find-links")) {
    if (e.path().extension() != ".whl") continue;
    auto name = core::WheelFilename::parse(e.path().filename().string());
    REQUIRE(name);
    auto page = client.fetch_project(links, name->name);
    REQUIRE(page);
    CHECK((*page)->found);
    CHECK(find_file(**page, e.path().filename().string()) != nullptr);
    ++seen;
  }
  CHECK(seen == wheels_on_disk);
  CHECK(index_test::settled_requests_by(agent, 1).size() == 1);

  auto file_index = IndexSource::simple(servers().at("FILE_INDEX_URL"));
  auto over_http = client.fetch_project(IndexSource::simple(servers().pypi_url()), "filelock");
  auto over_file = client.fetch_project(file_index, "filelock");
  REQUIRE(over_http);
  REQUIRE(over_file);
  REQUIRE((*over_file)->files.size() == (*over_http)->files.size());
  for (std::size_t i = 0; i < (*over_file)->files.size(); ++i) {
    CHECK((*over_file)->files[i].filename() == (*over_http)->files[i].filename());
    CHECK((*over_file)->files[i].sha256() == (*over_http)->files[i].sha256());
    CHECK((*over_file)->files[i].url().starts_with("file:///"));
  }
  auto meta = client.fetch_metadata((*over_file)->files.back());
  REQUIRE(meta);
  CHECK(meta->find("Name: filelock") != std::string::npos);
}

TEST_CASE("METADATA: .metadata file, range reads without it, and the cache", "[http][metadata]") {
  std::string agent = unique_agent("metadata");
  std::string cache = index_test::scratch_dir("http-metadata");
  auto pypi = IndexSource::simple(servers().pypi_url());
  std::string with_meta_name, without_meta_name, with_text, without_text;
  {
    IndexClient client(test_options(cache, agent));
    auto numpy = client.fetch_project(pypi, "numpy");
    REQUIRE(numpy);
    const DistFile& with_meta = (*numpy)->files.front();
    REQUIRE(with_meta.core_metadata());
    with_meta_name = std::string(with_meta.filename());
    auto text = client.fetch_metadata(with_meta);
    REQUIRE(text);
    with_text = *text;
    CHECK(text->find("Name: numpy") != std::string::npos);
    CHECK(client.stats().metadata_requests == 1);
    CHECK(client.stats().range_requests == 0);

    auto networkx = client.fetch_project(pypi, "networkx");
    REQUIRE(networkx);
    const DistFile* without_meta = nullptr;
    for (const auto& f : (*networkx)->files) {
      if (f.wheel() && !f.core_metadata()) without_meta = &f;
    }
    REQUIRE(without_meta);
    without_meta_name = std::string(without_meta->filename());
    auto ranged = client.fetch_metadata(*without_meta);
    REQUIRE(ranged);
    without_text = *ranged;
    CHECK(ranged->find("Name: networkx") != std::string::npos);
    CHECK(client.stats().range_metadata == 1);
    CHECK(client.stats().downloaded_metadata == 0);
    CHECK(client.stats().range_requests >= 1);
    // The range requests asked for no content coding and named byte ranges.
    auto log = index_test::settled_requests_by(agent, 3 + client.stats().range_requests);
    std::size_t ranges = 0;
    for (const auto& e : log) {
      if (e.range == "-") continue;
      ++ranges;
      CHECK(e.status == 206);
      CHECK(e.accept_encoding == "identity");
      CHECK(e.uri.find("/packages/networkx/") == 0);
    }
    CHECK(ranges == client.stats().range_requests);
    // The same METADATA as in the wheel.
    std::string path =
        (servers().index_root() / without_meta->url().substr(servers().http_url().size() + 1))
            .string();
    auto wheel_name = without_meta->wheel();
    auto local = read_wheel_metadata(percent_decode(path), &*wheel_name);
    REQUIRE(local);
    CHECK(*local == *ranged);
  }
  // Warm: from the cache, no request.
  std::size_t before = index_test::settled_requests_by(agent, 0).size();
  IndexClient warm(test_options(cache, agent));
  auto numpy = warm.fetch_project(pypi, "numpy");
  auto networkx = warm.fetch_project(pypi, "networkx");
  REQUIRE(numpy);
  REQUIRE(networkx);
  auto a = warm.fetch_metadata(*find_file(**numpy, with_meta_name));
  auto b = warm.fetch_metadata(*find_file(**networkx, without_meta_name));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a == with_text);
  CHECK(*b == without_text);
  CHECK(warm.stats().requests == 0);
  CHECK(warm.stats().metadata_cache_hits == 2);
  CHECK(warm.stats().page_cache_hits == 2);
  CHECK(index_test::settled_requests_by(agent, before).size() == before);
}

TEST_CASE("METADATA for many wheels in parallel, prefetched", "[http][metadata]") {
  std::string agent = unique_agent("parallel");
  IndexClient client(test_options(index_test::scratch_dir("http-parallel"), agent));
  auto cu124 = IndexSource::simple(servers().torch_index_base() + "/cu124/");
  std::vector<DistFile> wheels;
  for (const char* name :
       {"torch", "torchvision", "torchaudio", "numpy", "networkx", "sympy", "filelock"}) {
    client.prefetch_project(cu124, name);
  }
  for (const char* name :
       {"torch", "torchvision", "torchaudio", "numpy", "networkx", "sympy", "filelock"}) {
    auto page = client.fetch_project(cu124, name);
    REQUIRE(page);
    for (const auto& f : (*page)->files) {
      if (f.wheel()) wheels.push_back(f);
    }
  }
  REQUIRE(wheels.size() >= 30);
  for (const auto& w : wheels)
    client.prefetch_metadata(w);
  for (const auto& w : wheels) {
    auto text = client.fetch_metadata(w);
    REQUIRE(text);
    CHECK(text->find("Name: ") != std::string::npos);
  }
  auto s = client.stats();
  CHECK(s.metadata_requests + s.range_metadata + s.downloaded_metadata >= wheels.size());
}

TEST_CASE("page cache: fresh entries make no request, stale ones are revalidated (304)",
          "[http][cache]") {
  auto pypi = IndexSource::simple(servers().pypi_url());
  auto cu124 = IndexSource::simple(servers().torch_index_base() + "/cu124/");
  std::string cache = index_test::scratch_dir("http-revalidate");
  std::string agent = unique_agent("fresh");
  {
    IndexClient client(test_options(cache, agent));
    REQUIRE(client.fetch_project(pypi, "numpy"));
    REQUIRE(client.fetch_project(cu124, "torch"));
    REQUIRE(client.fetch_project(pypi, "no-such-project"));  // "not on this index" is cached too
  }
  CHECK(index_test::settled_requests_by(agent, 3).size() == 3);
  {
    IndexClient client(test_options(cache, agent));  // within max-age (600 s)
    REQUIRE(client.fetch_project(pypi, "numpy"));
    REQUIRE(client.fetch_project(cu124, "torch"));
    auto missing = client.fetch_project(pypi, "no-such-project");
    REQUIRE(missing);
    CHECK_FALSE((*missing)->found);
    CHECK(client.stats().requests == 0);
    CHECK(client.stats().pages_parsed == 0);
  }
  CHECK(index_test::settled_requests_by(agent, 3).size() == 3);
  {
    ClientOptions o = test_options(cache, agent);
    o.refresh = true;  // --refresh: conditional requests, answered 304
    IndexClient client(o);
    REQUIRE(client.fetch_project(pypi, "numpy"));
    REQUIRE(client.fetch_project(cu124, "torch"));
    CHECK(client.stats().not_modified == 2);
    CHECK(client.stats().pages_parsed == 0);
  }
  auto log = index_test::settled_requests_by(agent, 5);
  REQUIRE(log.size() == 5);
  for (std::size_t i = 3; i < 5; ++i) {
    CHECK(log[i].conditional());
    CHECK(log[i].status == 304);
  }

  // After max-age: a private nginx with max-age=1.
  gpulock::test::PrivateServerOptions po;
  po.page_max_age = 1;
  po.copy = false;
  gpulock::test::PrivateServers priv(po);
  auto private_pypi = IndexSource::simple(priv.env().pypi_url());
  std::string cache2 = index_test::scratch_dir("http-expire");
  std::string agent2 = unique_agent("expire");
  {
    IndexClient client(test_options(cache2, agent2));
    REQUIRE(client.fetch_project(private_pypi, "numpy"));
    REQUIRE(client.fetch_project(private_pypi, "filelock"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  {
    IndexClient client(test_options(cache2, agent2));
    REQUIRE(client.fetch_project(private_pypi, "numpy"));
    REQUIRE(client.fetch_project(private_pypi, "filelock"));
    CHECK(client.stats().not_modified == 2);
    CHECK(client.stats().pages_parsed == 0);
  }
  auto plog = index_test::settled_requests_by(agent2, 4, priv.access_log());
  REQUIRE(plog.size() == 4);
  CHECK_FALSE(plog[0].conditional());
  CHECK_FALSE(plog[1].conditional());
  CHECK(plog[2].conditional());
  CHECK(plog[2].status == 304);
  CHECK(plog[3].conditional());
  CHECK(plog[3].status == 304);
}

TEST_CASE("offline reads the cache only and names what is missing", "[http][offline]") {
  auto pypi = IndexSource::simple(servers().pypi_url());
  std::string cache = index_test::scratch_dir("http-offline");
  std::string agent = unique_agent("offline");
  DistFile wheel;
  {
    IndexClient client(test_options(cache, agent));
    auto page = client.fetch_project(pypi, "filelock");
    REQUIRE(page);
    wheel = (*page)->files.back();
    REQUIRE(client.fetch_metadata(wheel));
  }
  std::size_t before = index_test::settled_requests_by(agent, 2).size();
  ClientOptions o = test_options(cache, agent);
  o.offline = true;
  IndexClient client(o);
  CHECK(client.fetch_project(pypi, "filelock"));
  CHECK(client.fetch_metadata(wheel));
  auto missing = client.fetch_project(pypi, "jinja2");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == core::ErrorCode::Offline);
  CHECK(missing.error().where == servers().pypi_url() + "jinja2/");
  DistFile other = wheel;
  other.set_url(std::string(other.url()) + ".other");
  other.clear_hashes();
  other.add_hash("sha256", std::string(64, '0'));
  auto meta = client.fetch_metadata(other);
  REQUIRE_FALSE(meta);
  CHECK(meta.error().code == core::ErrorCode::Offline);
  CHECK(meta.error().message.find("is not in the cache") != std::string::npos);
  CHECK(client.stats().requests == 0);
  CHECK(index_test::settled_requests_by(agent, before).size() == before);
}

TEST_CASE("file digests stream the file and are cached", "[http][digest]") {
  std::string agent = unique_agent("digest");
  std::string cache = index_test::scratch_dir("http-digest");
  auto nightly = IndexSource::simple(servers().torch_index_base() + "/nightly/cu126/");
  std::string url;
  std::string expected;
  std::uint64_t size = 0;
  {
    IndexClient client(test_options(cache, agent));
    auto page = client.fetch_project(nightly, "torch");
    REQUIRE(page);
    const DistFile& f = (*page)->files.front();
    url = f.url();
    std::string rel = percent_decode(url.substr(servers().http_url().size() + 1));
    auto local = sha256_file((servers().index_root() / rel).string());
    REQUIRE(local);
    expected = local->sha256;
    size = local->size;
    auto digest = client.fetch_file_digest(url);
    REQUIRE(digest);
    CHECK(digest->sha256 == expected);
    CHECK(digest->size == size);
    CHECK(client.stats().digest_requests == 1);
  }
  {
    // A second run revalidates (loopback is not an immutable host): 304, same digest.
    IndexClient client(test_options(cache, agent));
    auto digest = client.fetch_file_digest(url);
    REQUIRE(digest);
    CHECK(digest->sha256 == expected);
    CHECK(client.stats().not_modified == 1);
  }
  {
    ClientOptions o = test_options(cache, agent);
    o.immutable_hosts = {"127.0.0.1"};
    IndexClient client(o);
    auto digest = client.fetch_file_digest(url);
    REQUIRE(digest);
    CHECK(digest->sha256 == expected);
    CHECK(client.stats().requests == 0);
  }
}

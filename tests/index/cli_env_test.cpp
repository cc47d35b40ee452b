// `gpulock index ...` and the environment (issue 3, "HTTP with libcurl multi" and the cache):
// SSL_CERT_FILE / SSL_CERT_DIR (TLS verification always on), ~/.netrc and $NETRC, proxies from
// http_proxy, and --refresh, through the real binary against the loopback servers.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/index/hash.h"

#include "cli_runner.h"
#include "http_support.h"

using index_test::servers;

namespace {

using Run = gpulock::test::RunResult;
using gpulock::test::shell_quote;

// gpulock with `args` (shell words, already quoted) after `env` (an `env` argument list: -u NAME,
// NAME=value). Proxy and certificate variables of the test's own environment are cleared first.
Run run_gpulock(const std::string& args, const std::string& env = {}) {
  return gpulock::test::run_shell(
      "env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u all_proxy -u ALL_PROXY "
      "-u no_proxy -u NO_PROXY -u SSL_CERT_FILE -u SSL_CERT_DIR -u NETRC NO_COLOR=1 " +
      env + " " + shell_quote(GPULOCK_EXE) + " " + args);
}

std::string home_without_netrc() {
  return index_test::scratch_dir("cli-env-home-empty");
}

}  // namespace

TEST_CASE("gpulock index over TLS: SSL_CERT_FILE or SSL_CERT_DIR, refused without", "[cli][tls]") {
  std::string url = servers().at("HTTPS_PYPI_URL");
  std::string cmd = "index show numpy --no-cache --json --index-url " + url;
  std::string home = "HOME=" + shell_quote(home_without_netrc());

  Run with_file = run_gpulock(cmd, home + " SSL_CERT_FILE=" + shell_quote(servers().ca_file()));
  INFO(gpulock::test::describe(with_file));
  REQUIRE(with_file.status == 0);
  CHECK(with_file.out.find("\"url\": \"" + servers().https_url() + "/packages/numpy/") !=
        std::string::npos);

  // A hashed certificate directory (what c_rehash writes): <subject hash>.0.
  std::string dir = index_test::scratch_dir("cli-env-certdir");
  Run hash =
      gpulock::test::run_shell("openssl x509 -hash -noout -in " + shell_quote(servers().ca_file()));
  REQUIRE(hash.status == 0);
  std::string subject_hash = hash.out.substr(0, hash.out.find('\n'));
  REQUIRE(subject_hash.size() == 8);
  std::filesystem::copy_file(servers().ca_file(), dir + "/" + subject_hash + ".0");
  Run with_dir = run_gpulock(cmd, home + " SSL_CERT_DIR=" + shell_quote(dir));
  INFO(gpulock::test::describe(with_dir));
  CHECK(with_dir.status == 0);
  CHECK(with_dir.out == with_file.out);

  // Neither: the system store does not know the test CA, and verification cannot be turned off.
  Run without = run_gpulock(cmd, home);
  CHECK(without.status == 4);
  CHECK(without.out.empty());
  CHECK(without.err.starts_with("error: " + url + "numpy/: TLS error: "));
  CHECK(without.err.find("\nhint: to trust a private certificate authority, set SSL_CERT_FILE") !=
        std::string::npos);
  // An empty certificate directory does not help either.
  Run empty_dir = run_gpulock(
      cmd, home + " SSL_CERT_DIR=" + shell_quote(index_test::scratch_dir("cli-env-certdir-empty")));
  CHECK(empty_dir.status == 4);
  CHECK(empty_dir.err.find("TLS error: ") != std::string::npos);
}

TEST_CASE("gpulock index takes credentials from ~/.netrc and $NETRC, never prints them",
          "[cli][auth]") {
  std::string hostpart = servers().fault_url().substr(std::string("http://").size());
  std::string host = hostpart.substr(0, hostpart.find(':'));
  std::string index = servers().fault_url() + "/auth/simple/";
  std::string netrc_text = "machine " + host + "\n  login fixture\n  password s3cret\n";

  std::string home = index_test::scratch_dir("cli-env-home-netrc");
  index_test::write_text(home + "/.netrc", netrc_text);
  std::filesystem::permissions(
      home + "/.netrc", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  Run from_home = run_gpulock("-vv index show numpy --no-cache --json --index-url " + index,
                              "HOME=" + shell_quote(home));
  INFO(gpulock::test::describe(from_home));
  REQUIRE(from_home.status == 0);
  CHECK(from_home.out.find("\"found\": true") != std::string::npos);
  CHECK(from_home.out.find("s3cret") == std::string::npos);
  CHECK(from_home.err.find("s3cret") == std::string::npos);

  // The files of the page (same host) authenticate the same way.
  std::string wheel;
  for (const auto& e :
       std::filesystem::directory_iterator(servers().index_root() / "packages/filelock")) {
    if (e.path().extension() == ".whl") wheel = e.path().filename().string();
  }
  REQUIRE_FALSE(wheel.empty());
  Run meta = run_gpulock(
      "index metadata --no-cache " + servers().fault_url() + "/auth/packages/filelock/" + wheel,
      "HOME=" + shell_quote(home));
  INFO(gpulock::test::describe(meta));
  CHECK(meta.status == 0);
  CHECK(meta.out.find("Name: filelock\n") != std::string::npos);

  std::string netrc_file = index_test::scratch_dir("cli-env-netrc") + "/credentials";
  index_test::write_text(netrc_file, netrc_text);
  Run from_env = run_gpulock(
      "index show numpy --no-cache --index-url " + index,
      "HOME=" + shell_quote(home_without_netrc()) + " NETRC=" + shell_quote(netrc_file));
  CHECK(from_env.status == 0);

  Run none = run_gpulock("index show numpy --no-cache --index-url " + index,
                         "HOME=" + shell_quote(home_without_netrc()));
  CHECK(none.status == 4);
  CHECK(none.err.starts_with("error: " + index +
                             "numpy/: HTTP 401 Unauthorized: the index refused the request\n"));
  CHECK(none.err.find("~/.netrc") != std::string::npos);
}

TEST_CASE("gpulock index goes through the proxy of http_proxy", "[cli][proxy]") {
  // The fault server answers requests in absolute form (as a proxy receives them); the host
  // below does not resolve, so only a request sent through the proxy can succeed.
  std::string home = "HOME=" + shell_quote(home_without_netrc());
  std::string proxy = "http_proxy=" + servers().fault_url();
  std::string index = "http://proxied.invalid/ok/simple/";
  std::string cache = index_test::scratch_dir("cli-env-proxy");
  Run page = run_gpulock(
      "index show numpy --json --index-url " + index + " --cache-dir " + shell_quote(cache),
      home + " " + proxy);
  INFO(gpulock::test::describe(page));
  REQUIRE(page.status == 0);
  CHECK(page.out.find("\"url\": \"http://proxied.invalid/ok/packages/numpy/") != std::string::npos);
  std::string log = index_test::read_text(servers().at("FAULT_LOG"));
  CHECK(log.find("\tGET\thttp://proxied.invalid/ok/simple/numpy/\t200\t") != std::string::npos);

  // A wheel's METADATA by range requests, through the proxy too.
  std::string wheel;
  for (const auto& e :
       std::filesystem::directory_iterator(servers().index_root() / "packages/networkx")) {
    if (e.path().extension() == ".whl") wheel = e.path().filename().string();
  }
  REQUIRE_FALSE(wheel.empty());
  std::string wheel_url = "http://proxied.invalid/ok/packages/networkx/" + wheel;
  Run meta = run_gpulock("-v index metadata --no-cache " + wheel_url, home + " " + proxy);
  INFO(gpulock::test::describe(meta));
  CHECK(meta.status == 0);
  CHECK(meta.out.find("Name: networkx\n") != std::string::npos);
  CHECK(meta.err.find("206 " + wheel_url) != std::string::npos);

  // Without the proxy the name does not resolve.
  Run direct = run_gpulock("index show numpy --no-cache --index-url " + index,
                           home + " GPULOCK_HTTP_RETRIES=0");
  CHECK(direct.status == 4);
  CHECK(direct.err.starts_with("error: " + index + "numpy/: cannot reach the server: "));
  // no_proxy exempts a host.
  Run exempt = run_gpulock("index show numpy --no-cache --index-url " + index,
                           home + " GPULOCK_HTTP_RETRIES=0 " + proxy + " no_proxy=proxied.invalid");
  CHECK(exempt.status == 4);
}

TEST_CASE("gpulock index show: a fresh page makes no request, --refresh revalidates it",
          "[cli][cache]") {
  std::string cache = index_test::scratch_dir("cli-env-refresh");
  std::string env =
      "HOME=" + shell_quote(home_without_netrc()) + " GPULOCK_CACHE_DIR=" + shell_quote(cache);
  std::string page_url = servers().pypi_url() + "numpy/";
  std::string cmd = "-v index show numpy --index-url " + servers().pypi_url();
  Run cold = run_gpulock(cmd, env);
  REQUIRE(cold.status == 0);
  CHECK(cold.err.find("200 " + page_url + " (") != std::string::npos);

  Run warm = run_gpulock(cmd, env);
  REQUIRE(warm.status == 0);
  CHECK(warm.out == cold.out);
  CHECK(warm.err.find("cached " + page_url) != std::string::npos);
  CHECK(warm.err.find(page_url + " (") == std::string::npos);  // no request

  Run refreshed = run_gpulock(cmd + " --refresh", env);
  REQUIRE(refreshed.status == 0);
  CHECK(refreshed.out == cold.out);
  CHECK(refreshed.err.find("304 " + page_url + " (") != std::string::npos);
  CHECK(refreshed.err.find("200 " + page_url) == std::string::npos);
}

namespace {

// The "filename" values of `gpulock index show --json` output, in order.
std::vector<std::string> json_filenames(const std::string& json) {
  std::vector<std::string> out;
  const std::string key = "\"filename\": \"";
  for (auto at = json.find(key); at != std::string::npos; at = json.find(key, at)) {
    at += key.size();
    out.push_back(json.substr(at, json.find('"', at) - at));
  }
  return out;
}

}  // namespace

TEST_CASE("gpulock index show: file:// trees, local paths and find-links folders", "[cli][local]") {
  std::string env = "HOME=" + shell_quote(home_without_netrc());
  std::string root = servers().index_root().string();
  Run http = run_gpulock(
      "index show markupsafe --no-cache --json --index-url " + servers().pypi_url(), env);
  REQUIRE(http.status == 0);
  auto expected = json_filenames(http.out);
  REQUIRE(expected.size() >= 2);

  // A Simple API tree on disk, as a path and as a file:// URL: the same files, file:// links.
  for (const std::string& where : {root + "/simple", servers().at("FILE_INDEX_URL")}) {
    Run local = run_gpulock(
        "index show markupsafe --no-cache --json --index-url " + shell_quote(where), env);
    INFO(where << "\n" << gpulock::test::describe(local));
    REQUIRE(local.status == 0);
    CHECK(json_filenames(local.out) == expected);
    CHECK(local.out.find("\"url\": \"file://" + root + "/packages/markupsafe/") !=
          std::string::npos);
  }

  // A flat folder of distributions (pip's --find-links), on disk and as served by nginx.
  std::vector<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(root + "/find-links")) {
    std::string f = e.path().filename().string();
    if (f.starts_with("MarkupSafe-")) on_disk.push_back(f);
  }
  REQUIRE(on_disk.size() >= 2);
  std::sort(on_disk.begin(), on_disk.end());
  for (const std::string& where : {root + "/find-links", servers().at("FIND_LINKS_URL")}) {
    Run links = run_gpulock(
        "index show MarkupSafe --find-links --no-cache --json --index-url " + shell_quote(where),
        env);
    INFO(where << "\n" << gpulock::test::describe(links));
    REQUIRE(links.status == 0);
    auto got = json_filenames(links.out);
    std::sort(got.begin(), got.end());
    CHECK(got == on_disk);
  }
  Run absent = run_gpulock(
      "index show torch --find-links --no-cache --index-url " + shell_quote(root + "/find-links"),
      env);
  CHECK(absent.status == 1);
  CHECK(absent.err.starts_with("error: 'torch' is not on the index "));

  // METADATA of a wheel given as a file:// URL.
  std::string wheel = on_disk.front().ends_with(".whl") ? on_disk.front() : on_disk.back();
  Run meta = run_gpulock("index metadata file://" + root + "/find-links/" + wheel, env);
  INFO(gpulock::test::describe(meta));
  CHECK(meta.status == 0);
  CHECK(meta.out.find("Name: MarkupSafe\n") != std::string::npos);
}

TEST_CASE("gpulock index metadata with several wheels: fetched together, printed in order",
          "[cli][metadata]") {
  std::string env = "HOME=" + shell_quote(home_without_netrc()) +
                    " GPULOCK_CACHE_DIR=" + shell_quote(index_test::scratch_dir("cli-env-many"));
  // Three wheels of the PyPI-like tree: with .metadata (numpy, filelock), without (networkx).
  std::vector<std::string> urls;
  for (const char* project : {"numpy", "networkx", "filelock"}) {
    std::string wheel;
    for (const auto& e :
         std::filesystem::directory_iterator(servers().index_root() / "packages" / project)) {
      if (e.path().extension() == ".whl") wheel = e.path().filename().string();
    }
    REQUIRE_FALSE(wheel.empty());
    urls.push_back(servers().http_url() + "/packages/" + project + "/" + wheel);
  }
  std::string expected;
  for (const auto& u : urls) {
    Run one = run_gpulock("index metadata " + u, env);
    REQUIRE(one.status == 0);
    expected += "==> " + u.substr(u.rfind('/') + 1) + " <==\n" + one.out;
  }
  Run all = run_gpulock("index metadata " + urls[0] + " " + urls[1] + " " + urls[2], env);
  INFO(gpulock::test::describe(all));
  REQUIRE(all.status == 0);
  CHECK(all.out == expected);

  Run json = run_gpulock("index metadata --json " + urls[0] + " " + urls[2], env);
  REQUIRE(json.status == 0);
  CHECK(json.out.starts_with("[\n  {\n    \"wheel\": "));
  CHECK(json.out.find("\"name\": \"numpy\"") < json.out.find("\"name\": \"filelock\""));

  // With their hashes (#sha256=, as a lock gives them) the METADATA is cached by hash: a second
  // run makes no request and says where each came from.
  std::string hashed;
  for (const char* project : {"numpy", "networkx", "filelock"}) {
    for (const auto& u : urls) {
      if (u.find(std::string("/packages/") + project + "/") == std::string::npos) continue;
      auto digest = gpulock::index::sha256_file(
          (servers().index_root() / u.substr(servers().http_url().size() + 1)).string());
      REQUIRE(digest);
      hashed += " '" + u + "#sha256=" + digest->sha256 + "'";
    }
  }
  Run first = run_gpulock("-v index metadata" + hashed, env);
  REQUIRE(first.status == 0);
  CHECK(first.out == expected);
  Run again = run_gpulock("-v index metadata" + hashed, env);
  REQUIRE(again.status == 0);
  CHECK(again.out == expected);
  CHECK(again.err == "cached " + urls[0] + "\ncached " + urls[1] + "\ncached " + urls[2] + "\n");

  // A failure among them: the others still print, the exit status is the failure's.
  std::string broken = servers().http_url() + "/broken/files/nometadata-1.0-py3-none-any.whl";
  Run mixed = run_gpulock("index metadata " + urls[0] + " " + broken + " " + urls[2], env);
  CHECK(mixed.status == 3);
  CHECK(mixed.err == "error: " + broken + ": the wheel has no *.dist-info/METADATA file\n");
  CHECK(mixed.out.find("Name: numpy\n") != std::string::npos);
  CHECK(mixed.out.find("Name: filelock\n") != std::string::npos);
}

TEST_CASE("gpulock index metadata --offline: from the cache, or says what is missing",
          "[cli][offline]") {
  std::string env = "HOME=" + shell_quote(home_without_netrc()) + " GPULOCK_CACHE_DIR=" +
                    shell_quote(index_test::scratch_dir("cli-env-meta-offline"));
  std::string wheel;
  for (const auto& e :
       std::filesystem::directory_iterator(servers().index_root() / "packages/networkx")) {
    if (e.path().extension() == ".whl") wheel = e.path().filename().string();
  }
  REQUIRE_FALSE(wheel.empty());
  std::string url = servers().http_url() + "/packages/networkx/" + wheel;
  Run missing = run_gpulock("index metadata --offline " + url, env);
  CHECK(missing.status == 4);
  CHECK(missing.out.empty());
  CHECK(missing.err == "error: " + url + ": the METADATA of " + wheel +
                           " is not in the cache, and --offline forbids fetching it\n"
                           "hint: run once without --offline to fill the cache\n");
  Run online = run_gpulock("index metadata " + url, env);
  REQUIRE(online.status == 0);
  Run offline = run_gpulock("-v index metadata --offline " + url, env);
  CHECK(offline.status == 0);
  CHECK(offline.out == online.out);
  CHECK(offline.err == "cached " + url + "\n");
}

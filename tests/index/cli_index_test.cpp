// `gpulock index show` and `gpulock index metadata` through the real binary, against the
// loopback servers: golden text, exit codes, 4 processes sharing one cache, credentials.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "golden.h"
#include "http_support.h"

using index_test::servers;

namespace {

using gpulock::test::replace_all;
using Run = gpulock::test::RunResult;

// Runs gpulock with `args` (shell words, already quoted) and `env` assignments.
Run run_gpulock(const std::string& args, const std::string& env = {}) {
  return gpulock::test::run_shell("env NO_COLOR=1 " + env + " " +
                                  gpulock::test::shell_quote(GPULOCK_EXE) + " " + args);
}

// Compares with tests/index/golden/<name>; GPULOCK_UPDATE_GOLDEN=1 rewrites the file instead.
void check_golden(const std::string& name, const std::string& actual) {
  GPULOCK_CHECK_GOLDEN(std::filesystem::path(INDEX_GOLDEN_DIR) / name, actual);
}

std::string cache_env(const std::string& dir) {
  return "GPULOCK_CACHE_DIR=" + gpulock::test::shell_quote(dir);
}

}  // namespace

TEST_CASE("gpulock index show torch --index-url .../whl/cu124/ (golden)", "[cli]") {
  std::string cache = index_test::scratch_dir("cli-golden");
  std::string url = servers().torch_index_base() + "/cu124/";
  Run r = run_gpulock("index show torch --index-url " + url, cache_env(cache));
  CHECK(r.err.empty());
  REQUIRE(r.status == 0);
  check_golden("index_show_torch_cu124.txt",
               replace_all(r.out, servers().http_url(), "http://127.0.0.1:PORT"));

  Run j = run_gpulock("index show filelock --json --index-url " + servers().pypi_url(),
                      cache_env(cache));
  REQUIRE(j.status == 0);
  check_golden("index_show_filelock.json",
               replace_all(j.out, servers().http_url(), "http://127.0.0.1:PORT"));

  // The same answer from the warm cache, and offline.
  Run warm = run_gpulock("index show torch --offline --index-url " + url, cache_env(cache));
  REQUIRE(warm.status == 0);
  CHECK(warm.out == r.out);
}

TEST_CASE("gpulock index show: not on the index, errors, exit codes", "[cli]") {
  std::string cache = index_test::scratch_dir("cli-errors");
  Run missing = run_gpulock("index show no-such-project --index-url " + servers().pypi_url(),
                            cache_env(cache));
  CHECK(missing.status == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err ==
        "error: 'no-such-project' is not on the index " + servers().pypi_url() + "\n");

  std::string whl = servers().torch_index_base() + "/cu124/";
  Run forbidden = run_gpulock("index show no-such-project --index-url " + whl, cache_env(cache));
  CHECK(forbidden.status == 4);
  CHECK(forbidden.err.starts_with(
      "error: " + whl +
      "no-such-project/: HTTP 403 Forbidden: the index refused the request\nhint: "));
  Run pytorch_like = run_gpulock(
      "index show no-such-project --forbidden-means-missing --index-url " + whl, cache_env(cache));
  CHECK(pytorch_like.status == 1);

  Run offline = run_gpulock("index show jinja2 --offline --index-url " + servers().pypi_url(),
                            cache_env(cache));
  CHECK(offline.status == 4);
  CHECK(offline.err == "error: " + servers().pypi_url() +
                           "jinja2/: not in the cache, and --offline forbids fetching it\n"
                           "hint: run once without --offline to fill the cache\n");

  Run loop = run_gpulock(
      "index show numpy --index-url " + servers().fault_url() + "/redirect-loop/simple/",
      cache_env(cache));
  CHECK(loop.status == 4);
  CHECK(loop.err ==
        "error: " + servers().fault_url() +
            "/redirect-loop/simple/numpy/: too many redirects (more than 10; a redirect loop?)\n");

  Run bad_json =
      run_gpulock("index show torch --index-url " + servers().fault_url() + "/invalid-json/simple/",
                  cache_env(cache));
  CHECK(bad_json.status == 4);
  CHECK(bad_json.err.starts_with("error: " + servers().fault_url() +
                                 "/invalid-json/simple/torch/:1: invalid PEP 691 page: "));

  Run usage = run_gpulock("index show", cache_env(cache));
  CHECK(usage.status == 2);
}

TEST_CASE("credentials in index URLs are used and never printed", "[cli]") {
  std::string cache = index_test::scratch_dir("cli-secret");
  std::string hostpart = servers().fault_url().substr(std::string("http://").size());
  std::string good = "http://fixture:s3cret@" + hostpart + "/auth/simple/";
  Run ok = run_gpulock("-vv index show numpy --json --index-url " + good, cache_env(cache));
  REQUIRE(ok.status == 0);
  CHECK(ok.out.find("s3cret") == std::string::npos);
  CHECK(ok.err.find("s3cret") == std::string::npos);
  CHECK(ok.out.find("\"url\": \"http://fixture:****@" + hostpart + "/auth/simple/numpy/\"") !=
        std::string::npos);
  Run bad = run_gpulock(
      "-vv index show filelock --index-url http://fixture:wrong@" + hostpart + "/auth/simple/",
      cache_env(cache));
  CHECK(bad.status == 4);
  CHECK(bad.err.find("wrong") == std::string::npos);
  CHECK(bad.err.find("error: http://fixture:****@" + hostpart +
                     "/auth/simple/filelock/: HTTP 401") != std::string::npos);
  // Nothing in the cache holds the secret either.
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache)) {
    if (!e.is_regular_file()) continue;
    CHECK(index_test::read_text(e.path().string()).find("s3cret") == std::string::npos);
  }
}

TEST_CASE("gpulock index metadata: local wheel, remote wheel by range reads", "[cli]") {
  std::string cache = index_test::scratch_dir("cli-metadata");
  std::string local = index_test::wheels_dir() + "/wheels/demo_pkg-1.2.3-py3-none-any.whl";
  Run l = run_gpulock("index metadata " + gpulock::test::shell_quote(local), cache_env(cache));
  REQUIRE(l.status == 0);
  CHECK(
      l.out ==
      "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.2.3\nRequires-Python: >=3.8\n"
      "Requires-Dist: numpy>=1.20\nRequires-Dist: typing-extensions; python_version < \"3.11\"\n");
  Run j =
      run_gpulock("index metadata --json " + gpulock::test::shell_quote(local), cache_env(cache));
  REQUIRE(j.status == 0);
  CHECK(j.out.find("\"requires_dist\": [\n    \"numpy>=1.20\",") != std::string::npos);

  std::string remote = servers().http_url() + "/broken/files/nometadata-1.0-py3-none-any.whl";
  Run none = run_gpulock("index metadata " + remote, cache_env(cache));
  CHECK(none.status == 3);
  CHECK(none.err == "error: " + remote + ": the wheel has no *.dist-info/METADATA file\n");
  Run bomb = run_gpulock(
      "index metadata " + servers().http_url() + "/broken/files/zipbomb-1.0-py3-none-any.whl",
      cache_env(cache));
  CHECK(bomb.status == 3);
  CHECK(bomb.err.find("(a zip bomb?)") != std::string::npos);

  // A real wheel of the fixture index, read by range requests, same text as the local file.
  std::string rel = "find-links";
  std::string wheel;
  for (const auto& e : std::filesystem::directory_iterator(servers().index_root() / rel)) {
    if (e.path().extension() == ".whl") wheel = e.path().filename().string();
  }
  REQUIRE_FALSE(wheel.empty());
  Run remote_raw = run_gpulock(
      "-v index metadata --raw " + servers().http_url() + "/find-links/" + wheel, cache_env(cache));
  Run local_raw =
      run_gpulock("index metadata --raw " +
                      gpulock::test::shell_quote((servers().index_root() / rel / wheel).string()),
                  cache_env(cache));
  REQUIRE(remote_raw.status == 0);
  REQUIRE(local_raw.status == 0);
  CHECK(remote_raw.out == local_raw.out);
  CHECK(remote_raw.err.find("206 ") != std::string::npos);
}

TEST_CASE("4 gpulock processes share one cache at once", "[cli][cache]") {
  std::string cache = index_test::scratch_dir("cli-shared-cache");
  std::vector<std::string> projects = {
      "numpy",  "filelock", "jinja2", "markupsafe",        "sympy",
      "mpmath", "networkx", "fsspec", "typing-extensions", "setuptools"};
  std::string reference_dir = index_test::scratch_dir("cli-shared-reference");
  // Reference answers, without a cache.
  for (const auto& p : projects) {
    Run r = run_gpulock("index show " + p + " --no-cache --index-url " + servers().pypi_url(),
                        cache_env(reference_dir));
    REQUIRE(r.status == 0);
    index_test::write_text(reference_dir + "/" + p + ".txt", r.out);
  }
  // Four processes at once, each walking every project (twice: cold, then warm), same cache.
  std::string script = "set -e\n";
  for (int i = 0; i < 4; ++i) {
    script += "( for round in 1 2; do for p in";
    for (const auto& p : projects)
      script += " " + p;
    script += "; do NO_COLOR=1 " + cache_env(cache) + " " +
              gpulock::test::shell_quote(GPULOCK_EXE) + " index show $p --index-url " +
              servers().pypi_url() + " > " +
              gpulock::test::shell_quote(cache + "/../out-" + std::to_string(i)) +
              "-$p-$round.txt || echo $p >> " + gpulock::test::shell_quote(cache + "/../failed") +
              "; done; done ) &\n";
  }
  script += "wait\n";
  std::string script_path = reference_dir + "/run.sh";
  index_test::write_text(script_path, script);
  REQUIRE(std::system(("sh " + gpulock::test::shell_quote(script_path)).c_str()) == 0);
  CHECK_FALSE(std::filesystem::exists(cache + "/../failed"));
  for (int i = 0; i < 4; ++i) {
    for (const auto& p : projects) {
      for (int round = 1; round <= 2; ++round) {
        std::string got = index_test::read_text(cache + "/../out-" + std::to_string(i) + "-" + p +
                                                "-" + std::to_string(round) + ".txt");
        CHECK(got == index_test::read_text(reference_dir + "/" + p + ".txt"));
      }
    }
  }
  // The cache they left is complete and readable: offline, every project.
  for (const auto& p : projects) {
    Run r = run_gpulock("index show " + p + " --offline --index-url " + servers().pypi_url(),
                        cache_env(cache));
    CHECK(r.status == 0);
    CHECK(r.out == index_test::read_text(reference_dir + "/" + p + ".txt"));
  }
}

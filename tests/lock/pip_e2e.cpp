// End to end with real pip: a lock of files on the fixture index (served by nginx, ctest fixture
// `servers`) is read and re-written by gpulock, exported with `gpulock export`, and the
// requirements file is accepted by `pip install --dry-run --no-deps --require-hashes`; a
// tampered hash makes pip refuse it.
#include <algorithm>
#include <cctype>

#include "gpulock/lock/lockfile.h"

#include "lock_test_support.h"
#include "test_servers.h"

using namespace gpulock::lock;
using lock_test::read_file;
using lock_test::RunResult;
using lock_test::shell_quote;
using lock_test::TempDir;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The fixture lock, read by gpulock and re-written canonically into `dir`.
std::filesystem::path make_lock(const TempDir& dir) {
  const auto& servers = gpulock::test::shared_servers();
  const auto foreign = dir / "fixture-lock.toml";
  auto gen = lock_test::run_shell(
      "python3 " + shell_quote(std::string(GPULOCK_SOURCE_DIR) + "/tests/lock/fixture_lock.py") +
      " " + shell_quote(servers.at("MANIFEST")) + " " + shell_quote(servers.http_url()) + " " +
      shell_quote(foreign.string()));
  INFO(gen.err);
  REQUIRE(gen.status == 0);
  auto file = read_lock_file(foreign);
  REQUIRE(file.has_value());
  REQUIRE(file->lock.packages.size() == 7);
  const auto path = dir / "pylock.toml";
  REQUIRE(write_lock_file(path, file->lock, {"fixture_lock.py | gpulock"}).has_value());
  lock_test::check_with_tomllib(path);
  return path;
}

RunResult export_lock(const std::filesystem::path& lock, const std::string& extra,
                      const std::filesystem::path& out) {
  return lock_test::run_shell(shell_quote(GPULOCK_EXE) + " export --lock " +
                              shell_quote(lock.string()) + " -o " + shell_quote(out.string()) +
                              " " + extra);
}

// pip in isolated mode (no user config, no PIP_* variables), without its cache, ignoring what
// is installed, so it downloads every file and checks its hash.
// `own_indexes`: no --index-url on the command line, as in the export's header: the file's own
// --index-url lines must find every file.
RunResult pip_dry_run(const std::filesystem::path& requirements, bool own_indexes = false) {
  return lock_test::run_shell(
      "python3 -m pip --isolated install --dry-run --ignore-installed --no-deps "
      "--require-hashes --no-cache-dir --disable-pip-version-check " +
      (own_indexes ? std::string()
                   : "--index-url " + shell_quote(gpulock::test::shared_servers().pypi_url())) +
      " -r " + shell_quote(requirements.string()));
}

const char* const kInstalled[] = {"filelock-3.16.1", "jinja2-3.1.4", "markupsafe-3.0.2",
                                  "mpmath-1.3.0",    "sympy-1.13.1", "typing-extensions-4.12.2"};

void check_would_install(const RunResult& pip) {
  INFO(pip.out << pip.err);
  REQUIRE(pip.status == 0);
  const std::string out = lower(pip.out);
  const auto at = out.find("would install ");
  REQUIRE(at != std::string::npos);
  const std::string line = out.substr(at, out.find('\n', at) - at);
  for (const char* dist : kInstalled)
    CHECK(line.find(dist) != std::string::npos);
  CHECK(line.find("colorama") == std::string::npos);  // its marker is for Windows
  CHECK(out.find("ignoring colorama: markers 'sys_platform == \"win32\"'") != std::string::npos);
}

}  // namespace

TEST_CASE("pip accepts the exported hashed requirements", "[lock][e2e][pip]") {
  TempDir dir;
  const auto lock = make_lock(dir);
  const auto req = dir / "requirements.txt";
  auto exp = export_lock(lock, "", req);
  INFO(exp.err);
  REQUIRE(exp.status == 0);
  const std::string text = read_file(req);
  CHECK(text.find("markupsafe==3.0.2 \\\n    --hash=sha256:") != std::string::npos);
  CHECK(text.find("colorama==0.4.6 ; sys_platform == \"win32\"") != std::string::npos);
  // The file names its index, so the header's command works as written (issue 16).
  CHECK(text.find("\n--index-url " + gpulock::test::shared_servers().pypi_url() + "\n") !=
        std::string::npos);
  check_would_install(pip_dry_run(req, true));
}

TEST_CASE("pip accepts the direct-URL export (the target's wheel)", "[lock][e2e][pip]") {
  TempDir dir;
  const auto lock = make_lock(dir);
  const auto req = dir / "requirements.txt";
  auto exp = export_lock(lock, "--all-urls", req);
  INFO(exp.err);
  REQUIRE(exp.status == 0);
  const std::string text = read_file(req);
  INFO(text);
  CHECK(text.find("markupsafe @ " + gpulock::test::shared_servers().http_url() +
                  "/packages/markupsafe/"
                  "MarkupSafe-3.0.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl "
                  "\\\n") != std::string::npos);
  check_would_install(pip_dry_run(req));
}

TEST_CASE("a tampered hash makes pip refuse the export", "[lock][e2e][pip]") {
  TempDir dir;
  const auto path = make_lock(dir);
  auto file = read_lock_file(path);
  REQUIRE(file.has_value());
  // Change the hash of every markupsafe file: whichever pip picks no longer matches.
  for (auto& p : file->lock.packages) {
    if (p.name != "markupsafe") continue;
    for (auto& w : *p.wheels)
      w.hashes["sha256"] = std::string(64, '0');
    if (p.sdist) p.sdist->hashes["sha256"] = std::string(64, '0');
  }
  REQUIRE(write_lock_file(path, file->lock).has_value());
  for (const char* form : {"", "--all-urls"}) {
    INFO("export " << form);
    const auto req = dir / "requirements.txt";
    auto exp = export_lock(path, form, req);
    REQUIRE(exp.status == 0);
    auto pip = pip_dry_run(req);
    INFO(pip.out << pip.err);
    CHECK(pip.status != 0);
    CHECK(pip.err.find("THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE") !=
          std::string::npos);
    CHECK(pip.err.find("Expected sha256 " + std::string(64, '0')) != std::string::npos);
    CHECK(lower(pip.err).find("markupsafe") != std::string::npos);
  }
}

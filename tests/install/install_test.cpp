// `gpulock install` with the native installer (issue 25), end to end: sync from empty, from a
// superset, from another CUDA variant, from a tampered file; a hash mismatch leaves the
// environment as it was (exit 4); --venv creates a venv without pip; entry points run; the
// result is what pip 26 makes of the same wheels (files, RECORD), `pip check` is clean and
// `pip uninstall` works (the test tagged [pip26], run with the reference directory as ctest's
// install_pip26); the probe runs after.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "test_files.h"

namespace fs = std::filesystem;

namespace {

const fs::path kExe = GPULOCK_EXE;
const fs::path kMakeWheels = INSTALL_MAKE_WHEELS;
const fs::path kWork = INSTALL_WORK_DIR;
// pip 26.3's source (REFERENCE/pip/src/pip), or empty without the reference directory: then
// `python3 -m pip`, only to set venvs up.
const fs::path kPip = INSTALL_PIP;
// libgpulock-net.so, which gpulock loads for wheel archives and digests.
const fs::path kNetPlugin = INSTALL_NET_PLUGIN;

using gpulock::test::describe;
using gpulock::test::Env;
using gpulock::test::read_file;
using gpulock::test::TempDir;
using Run = gpulock::test::RunResult;

// The first executable `name` on the test's own PATH.
fs::path on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  FAIL("no " << name << " on PATH");
  return {};
}

// The real interpreter behind `python3` (pyenv shims resolve through PATH).
fs::path real_python() {
  static const fs::path python = [] {
    Run r = gpulock::test::run_process(
        {on_path("python3").string(), "-c", "import sys; print(sys.executable)"},
        {{"PATH", std::getenv("PATH")}, {"HOME", std::getenv("HOME") ? std::getenv("HOME") : "/"}});
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n')
      out.pop_back();
    return fs::path(out);
  }();
  return python;
}

struct Case {
  TempDir tmp;
  fs::path dir = tmp.path();
  Env env;

  // The case's directory is made under `parent`: the build tree, unless part of the test runs
  // as another user, who may not reach a build tree inside a private folder (a clone under a
  // mode 0700 home directory); such a test passes the system's temporary directory.
  explicit Case(const fs::path& parent = kWork) : tmp((fs::create_directories(parent), parent)) {
    fs::create_directories(dir / "home");
    fs::create_directories(dir / "root");
    fs::create_directories(dir / "bin");
    fs::create_symlink(real_python(), dir / "bin" / "python3");
    env = {{"PATH", (dir / "bin").string() + ":/usr/bin:/bin"},
           {"HOME", (dir / "home").string()},
           {"TMPDIR", dir.string()},
           {"NO_COLOR", "1"},
           {"GPULOCK_CACHE_DIR", (dir / "cache").string()},
           {"GPULOCK_TEST_ROOT", (dir / "root").string()},
           {"CUDA_VISIBLE_DEVICES", ""},
           {"PIP_CONFIG_FILE", "/dev/null"},
           {"PIP_DISABLE_PIP_VERSION_CHECK", "1"},
           {"PIP_NO_CACHE_DIR", "1"},
           {"PYTHONDONTWRITEBYTECODE", "1"}};
    Run r = run({real_python().string(), kMakeWheels.string(), dir.string()});
    INFO(describe(r));
    REQUIRE(r.status == 0);
  }

  Run run(const std::vector<std::string>& argv) const {
    return gpulock::test::run_process(argv, env, {.cwd = dir, .timeout_s = 120});
  }
  Run gpulock(std::vector<std::string> args) const {
    args.insert(args.begin(), kExe.string());
    return run(args);
  }
  // gpulock install --lock NAME.toml --python VENV/bin/python --no-probe ARGS...
  Run sync(const std::string& lock, const std::string& venv,
           const std::vector<std::string>& more = {}) const {
    std::vector<std::string> args = {
        "install",   "--lock", (dir / (lock + ".toml")).string(), "--python", python(venv).string(),
        "--no-probe"};
    args.insert(args.end(), more.begin(), more.end());
    return gpulock(args);
  }
  Run pip(const std::string& venv, std::vector<std::string> args) const {
    std::vector<std::string> pip = {real_python().string(), kPip.string()};
    if (kPip.empty()) pip = {real_python().string(), "-m", "pip"};
    pip.insert(pip.end(), {"--python", python(venv).string()});
    args.insert(args.begin(), pip.begin(), pip.end());
    return run(args);
  }
  void make_venv(const std::string& name) const {
    Run r = run({real_python().string(), "-m", "venv", "--without-pip", (dir / name).string()});
    INFO(describe(r));
    REQUIRE(r.status == 0);
  }
  fs::path python(const std::string& venv) const { return dir / venv / "bin" / "python"; }
  fs::path site(const std::string& venv) const {
    Run r = run(
        {python(venv).string(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n')
      out.pop_back();
    return out;
  }
  // name==version of every distribution importlib.metadata finds in the venv.
  std::string installed(const std::string& venv) const {
    Run r = run(
        {python(venv).string(), "-c",
         "import importlib.metadata as m\n"
         "print(' '.join(sorted(d.metadata['Name'].lower().replace('_', '-') + '==' + d.version "
         "for d in m.distributions())))"});
    INFO(describe(r));
    REQUIRE(r.status == 0);
    return r.out;
  }
  // Every file and link under the venv (relative), except bin/python*, with its mode less the
  // write bits (files hard-linked from gpulock's cache are read-only, issue 40), and except
  // gpulock's own records (`.gpulock-*`: the environment's lock, each dist-info's file record).
  std::set<std::string> files(const std::string& venv) const {
    std::set<std::string> out;
    const fs::path root = dir / venv;
    for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
      if (it->is_directory() && !it->is_symlink()) continue;
      if (it->path().filename().string().starts_with(".gpulock-")) continue;
      std::string rel = it->path().lexically_relative(root).generic_string();
      auto perms = fs::symlink_status(it->path()).permissions();
      out.insert(rel + " " + std::to_string(static_cast<unsigned>(perms) & 0555));
    }
    return out;
  }
};

std::string record_paths(const fs::path& record) {
  std::string out;
  std::istringstream in(read_file(record));
  for (std::string line; std::getline(in, line);) {
    const std::string path = line.substr(0, line.find(','));
    // gpulock's own file record (listed so that pip uninstall removes it): not pip's.
    if (path.ends_with("/.gpulock-files")) continue;
    out += path + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("install: sync from empty matches pip 26's install of the same wheels",
          "[install][e2e][pip26]") {
  REQUIRE(!kPip.empty());  // registered (install_pip26) only with the reference directory
  Case c;
  c.make_venv("native");
  c.make_venv("pip");
  Run r = c.sync("base", "native");
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(r.out.find("  install    demo-pkg 1.0 (") != std::string::npos);
  CHECK(r.out.find("  install    gpuvar 1.0+cu126 (") != std::string::npos);
  CHECK(r.out.find("2 installed, 0 replaced, 0 removed, 0 unchanged") != std::string::npos);
  Run p = c.pip("pip", {"install", "--no-deps", "--no-compile", "--no-index", "-q",
                        (c.dir / "wheels/demo_pkg-1.0-py3-none-any.whl").string(),
                        (c.dir / "wheels/gpuvar-1.0+cu126-py3-none-any.whl").string()});
  INFO(describe(p));
  REQUIRE(p.status == 0);
  // The same files with the same modes (RECORD, launchers, .data, INSTALLER, REQUESTED,
  // direct_url.json; the wheel's executable bits).
  CHECK(c.files("native") == c.files("pip"));
  // RECORD lists the same paths; the wheel's own files with the same hashes.
  const std::string rel = "lib/python3.11/site-packages";
  for (const auto* info : {"demo_pkg-1.0.dist-info", "gpuvar-1.0+cu126.dist-info"}) {
    fs::path a = c.site("native") / info / "RECORD";
    fs::path b = c.site("pip") / info / "RECORD";
    CHECK(record_paths(a) == record_paths(b));
    CHECK(read_file(a).ends_with("\r\n"));
  }
  std::string ra = read_file(c.site("native") / "demo_pkg-1.0.dist-info/RECORD");
  std::string rb = read_file(c.site("pip") / "demo_pkg-1.0.dist-info/RECORD");
  auto row = [](const std::string& text, const std::string& path) {
    auto at = text.find("\n" + path + ",");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at + 1) - at);
  };
  CHECK(!row(ra, "demo_pkg/__init__.py").empty());
  CHECK(row(ra, "demo_pkg/__init__.py") == row(rb, "demo_pkg/__init__.py"));
  CHECK(row(ra, "../../../share/demo/readme.txt") == row(rb, "../../../share/demo/readme.txt"));
  // Launchers: pip's text with this venv's interpreter.
  std::string launcher = read_file(c.dir / "native/bin/demo");
  std::string pips = read_file(c.dir / "pip/bin/demo");
  CHECK(launcher ==
        gpulock::test::replace_all(pips, (c.dir / "pip").string(), (c.dir / "native").string()));
  CHECK(read_file(c.dir / "native/bin/demo-script") ==
        "#!" + c.python("native").string() + "\nprint('script')\n");
  CHECK(read_file(c.site("native") / "demo_pkg-1.0.dist-info/INSTALLER") == "gpulock\n");
  // Entry points run; importlib.metadata finds everything; platlib for Root-Is-Purelib false.
  Run demo = c.run({(c.dir / "native/bin/demo").string()});
  CHECK(demo.status == 0);
  CHECK(demo.out == "demo main\n");
  CHECK(c.run({(c.dir / "native/bin/demo-script").string()}).out == "script\n");
  CHECK(c.installed("native") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");
  CHECK(fs::exists(c.dir / "native/include/site/python3.11/demo-pkg/demo.h"));
  // pip sees a normal install: list, check, uninstall.
  Run list = c.pip("native", {"list", "--format=freeze"});
  CHECK(list.out.find("demo_pkg==1.0") != std::string::npos);
  Run check = c.pip("native", {"check"});
  INFO(describe(check));
  CHECK(check.status == 0);
  Run uninstall = c.pip("native", {"uninstall", "-y", "demo_pkg"});
  INFO(describe(uninstall));
  CHECK(uninstall.status == 0);
  CHECK(!fs::exists(c.dir / "native/bin/demo"));
  CHECK(!fs::exists(c.site("native") / "demo_pkg"));
  CHECK(c.installed("native") == "gpuvar==1.0+cu126\n");
}

TEST_CASE("install: a second sync touches nothing, a second venv comes from the cache",
          "[install][e2e]") {
  Case c;
  c.make_venv("a");
  c.make_venv("b");
  REQUIRE(c.sync("base", "a").status == 0);
  Run again = c.sync("base", "a");
  INFO(describe(again));
  CHECK(again.status == 0);
  CHECK(again.out.find("0 installed, 0 replaced, 0 removed, 2 unchanged") != std::string::npos);
  Run b = c.sync("base", "b");
  INFO(describe(b));
  CHECK(b.out.find("(2 from the cache") != std::string::npos);
  // Hard links from the cache: the same inode.
  const fs::path f = "demo_pkg/__init__.py";
  CHECK(fs::hard_link_count(c.site("b") / f) >= 3);
  Run copy = c.sync("base", "b", {"--link-mode", "copy", "--exact"});
  CHECK(copy.status == 0);
  // cache prune --all empties it; the environments keep working.
  Run prune = c.gpulock({"cache", "prune", "--all"});
  INFO(describe(prune));
  CHECK(prune.status == 0);
  CHECK(prune.out.starts_with("removed 2 unpacked wheels"));
  CHECK(c.installed("a") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");
  Run bad = c.sync("base", "a", {"--link-mode", "sideways"});
  CHECK(bad.status == 2);
}

TEST_CASE("install: sync from a superset removes extras, keeps tool packages unless --exact",
          "[install][e2e]") {
  Case c;
  c.make_venv("v");
  REQUIRE(c.sync("base", "v").status == 0);
  Run p = c.pip("v", {"install", "--no-deps", "--no-index", "-q",
                      (c.dir / "wheels/extra_pkg-2.0-py3-none-any.whl").string(),
                      (c.dir / "wheels/wheel-0.0.1-py3-none-any.whl").string()});
  REQUIRE(p.status == 0);
  Run keep = c.sync("base", "v", {"--no-remove"});
  CHECK(keep.out.find("  keep       extra-pkg 2.0: --no-remove") != std::string::npos);
  CHECK(c.installed("v") == "demo-pkg==1.0 extra-pkg==2.0 gpuvar==1.0+cu126 wheel==0.0.1\n");
  Run dry = c.sync("base", "v", {"--dry-run", "--json"});
  INFO(describe(dry));
  CHECK(dry.status == 0);
  CHECK(dry.out.find("\"action\": \"remove\",\n      \"name\": \"extra-pkg\"") !=
        std::string::npos);
  CHECK(dry.out.find("\"unchanged\": 2") != std::string::npos);
  CHECK(dry.out.find("\"schema\": \"gpulock.install-plan/1\"") != std::string::npos);
  CHECK(c.installed("v") == "demo-pkg==1.0 extra-pkg==2.0 gpuvar==1.0+cu126 wheel==0.0.1\n");
  Run sync = c.sync("base", "v");
  INFO(describe(sync));
  CHECK(sync.out.find("  remove     extra-pkg 2.0 (") != std::string::npos);
  CHECK(sync.out.find("  keep       wheel 0.0.1: a tool package (--exact removes it)") !=
        std::string::npos);
  CHECK(c.installed("v") == "demo-pkg==1.0 gpuvar==1.0+cu126 wheel==0.0.1\n");
  CHECK(!fs::exists(c.site("v") / "extra_pkg.py"));
  Run exact = c.sync("base", "v", {"--exact"});
  CHECK(exact.status == 0);
  CHECK(c.installed("v") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");
  CHECK(!fs::exists(c.site("v") / "wheel"));
}

TEST_CASE("install: another CUDA variant is swapped in place", "[install][e2e]") {
  Case c;
  c.make_venv("v");
  REQUIRE(c.sync("base", "v").status == 0);
  CHECK(fs::exists(c.site("v") / "gpuvar/lib_cu126.so"));
  Run r = c.sync("cu130", "v");
  INFO(describe(r));
  CHECK(r.status == 0);
  CHECK(r.out.find("  replace    gpuvar 1.0+cu130 (") != std::string::npos);
  CHECK(r.out.find("): 1.0+cu126 -> 1.0+cu130\n") != std::string::npos);
  CHECK(r.out.find("  unchanged  demo-pkg 1.0\n") != std::string::npos);
  CHECK(c.installed("v") == "demo-pkg==1.0 gpuvar==1.0+cu130\n");
  CHECK(!fs::exists(c.site("v") / "gpuvar/lib_cu126.so"));
  CHECK(!fs::exists(c.site("v") / "gpuvar-1.0+cu126.dist-info"));
  Run variant = c.run({c.python("v").string(), "-c", "import gpuvar; print(gpuvar.VARIANT)"});
  CHECK(variant.out == "cu130\n");
}

TEST_CASE("install: a file whose hash differs from RECORD is replaced", "[install][e2e]") {
  Case c;
  c.make_venv("v");
  REQUIRE(c.sync("base", "v").status == 0);
  // Written in place: through the hard link, the cache's copy changes too.
  {
    std::ofstream out(c.site("v") / "demo_pkg/data.txt", std::ios::app);
    out << "tampered\n";
  }
  Run r = c.sync("base", "v");
  INFO(describe(r));
  CHECK(r.status == 0);
  CHECK(r.out.find("  replace    demo-pkg 1.0 (") != std::string::npos);
  CHECK(r.out.find("a file changed since it was installed (demo_pkg/data.txt: modified") !=
        std::string::npos);
  CHECK(read_file(c.site("v") / "demo_pkg/data.txt") == "hello\n");
  Run again = c.sync("base", "v");
  CHECK(again.out.find("2 unchanged") != std::string::npos);
}

TEST_CASE("install: a wheel whose sha256 is not the lock's leaves the environment as it was",
          "[install][e2e]") {
  Case c;
  c.make_venv("v");
  REQUIRE(c.sync("base", "v").status == 0);
  const auto before = c.files("v");
  Run r = c.sync("bad", "v");
  INFO(describe(r));
  CHECK(r.status == 4);
  CHECK(r.err.starts_with("error: file://"));
  CHECK(r.err.find(": hash mismatch: the lock says sha256 ") != std::string::npos);
  CHECK(r.err.find("gpuvar-1.0+cu130-py3-none-any.whl") != std::string::npos);
  CHECK(r.err.find("hint: the environment was not changed") != std::string::npos);
  CHECK(c.files("v") == before);
  CHECK(c.installed("v") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");
  // A wheel with an entry that would leave the target directory: refused, nothing written.
  Run evil = c.sync("evil", "v");
  INFO(describe(evil));
  CHECK(evil.status == 3);
  CHECK(evil.err.find("its entry '../../evil.txt' would be written outside") != std::string::npos);
  CHECK(c.files("v") == before);
  CHECK(!fs::exists(c.dir / "cache/evil.txt"));
  CHECK(!fs::exists(c.dir / "evil.txt"));
  const fs::path partial = c.dir / "cache/wheels-v1/partial";
  CHECK((!fs::exists(partial) || fs::is_empty(partial)));
}

TEST_CASE("install: --venv creates a standard venv without pip, ./.venv by default",
          "[install][e2e]") {
  Case c;
  Run dry = c.gpulock({"install", "--lock", (c.dir / "base.toml").string(), "--venv",
                       (c.dir / "made").string(), "--dry-run"});
  INFO(describe(dry));
  CHECK(dry.status == 0);
  CHECK(dry.out.find(", a new venv made with ") != std::string::npos);
  CHECK(dry.out.find("2 to install") != std::string::npos);
  CHECK(!fs::exists(c.dir / "made"));
  Run r = c.gpulock({"install", "--lock", (c.dir / "base.toml").string(), "--venv",
                     (c.dir / "made").string(), "--no-probe"});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(r.err.find("created a virtual environment at " + (c.dir / "made").string()) !=
        std::string::npos);
  CHECK(fs::exists(c.dir / "made/pyvenv.cfg"));
  CHECK(fs::exists(c.dir / "made/bin/activate"));
  CHECK(!fs::exists(c.dir / "made/bin/pip"));
  CHECK(c.installed("made") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");
  CHECK(c.run({(c.dir / "made/bin/demo").string()}).out == "demo main\n");
  // No --python, no $VIRTUAL_ENV: ./.venv, created.
  fs::copy_file(c.dir / "base.toml", c.dir / "pylock.toml");
  Run dot = c.gpulock({"install", "--no-probe"});
  INFO(describe(dot));
  CHECK(dot.status == 0);
  CHECK(c.installed(".venv") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");
  // An interpreter that is not a venv is refused without --system; --system removes nothing.
  Run system = c.gpulock({"install", "--python", real_python().string(), "--dry-run"});
  CHECK(system.status == 2);
  CHECK(system.err.find("is not a virtual environment") != std::string::npos);
  Run allowed = c.gpulock({"install", "--python", real_python().string(), "--dry-run", "--system"});
  INFO(describe(allowed));
  CHECK(allowed.status == 0);
  CHECK(allowed.out.find("  remove ") == std::string::npos);
}

TEST_CASE("install: the probe runs after the sync", "[install][e2e]") {
  Case c;
  c.make_venv("v");
  Run r = c.gpulock(
      {"install", "--lock", (c.dir / "base.toml").string(), "--python", c.python("v").string()});
  INFO(describe(r));
  CHECK(r.status == 0);
  CHECK(r.out.find("2 installed") != std::string::npos);
  CHECK(r.out.find("Verdict") != std::string::npos);
  Run json = c.gpulock({"install", "--lock", (c.dir / "base.toml").string(), "--python",
                        c.python("v").string(), "--json"});
  CHECK(json.status == 0);
  CHECK(json.out.starts_with("{"));
  CHECK(json.err.find("2 unchanged") != std::string::npos);
  // A lock for another Python is refused before anything changes.
  gpulock::test::write_file(c.dir / "py310.toml",
                            read_file(c.dir / "cu130.toml") +
                                "\n[tool.gpulock]\nschema = 1\n\n[tool.gpulock.target]\n"
                                "python = \"3.10\"\nplatform = \"manylinux_2_28_x86_64\"\n");
  Run other = c.sync("py310", "v");
  INFO(describe(other));
  CHECK(other.status == 2);
  CHECK(other.err.find("the lock is for Python 3.10; this environment's Python is 3.11") !=
        std::string::npos);
  CHECK(c.installed("v") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");
}

namespace {

// X.Y.Z of an interpreter.
std::string version_of(const Case& c, const fs::path& python) {
  Run r = c.run({python.string(), "-c", "import platform; print(platform.python_version())"});
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

// A PATH directory of interpreters (issue 25): `python3` is a fake that says it is Python 3.9.99
// (a script run by the real interpreter that changes what the query reads), then a `python3.N`
// link to each real interpreter found here: the test's own, and pyenv's 3.10 to 3.13 where they
// exist. Returns the X.Y of each real one, newest first (the order gpulock asks them in).
std::vector<std::string> make_python_bin(const Case& c, const fs::path& bin) {
  fs::create_directories(bin);
  gpulock::test::write_file(bin / "python3",
                            "#!" + real_python().string() +
                                "\n"
                                "import platform, sys\n"
                                "args = [a for a in sys.argv[1:] if a not in ('-I', '-s', '-E')]\n"
                                "if args[:1] != ['-c']:\n"
                                "    sys.exit('the fake 3.9 only answers -c')\n"
                                "platform.python_version = lambda: '3.9.99'\n"
                                "sys.version_info = (3, 9, 99, 'final', 0)\n"
                                "exec(args[1], {'__name__': '__main__'})\n");
  fs::permissions(bin / "python3", fs::perms::owner_all | fs::perms::group_read |
                                       fs::perms::group_exec | fs::perms::others_read |
                                       fs::perms::others_exec);
  std::vector<fs::path> reals = {real_python()};
  for (int minor = 10; minor <= 13; ++minor) {
    std::error_code ec;
    for (fs::directory_iterator it("/root/.pyenv/versions", ec), end; !ec && it != end;
         it.increment(ec)) {
      fs::path p = it->path() / "bin" / ("python3." + std::to_string(minor));
      if (::access(p.c_str(), X_OK) == 0) reals.push_back(p);
    }
  }
  std::vector<std::string> xys;
  for (const auto& p : reals) {
    const std::string v = version_of(c, p);
    const std::string xy = v.substr(0, v.rfind('.'));
    if (v.empty() || std::find(xys.begin(), xys.end(), xy) != xys.end()) continue;
    fs::create_symlink(p, bin / ("python" + xy));
    xys.push_back(xy);
  }
  std::sort(xys.begin(), xys.end(), [](const std::string& a, const std::string& b) {
    return std::stoi(a.substr(2)) > std::stoi(b.substr(2));
  });
  return xys;
}

}  // namespace

TEST_CASE("install: a new venv is made with the first interpreter on PATH the chosen lock accepts",
          "[install][e2e]") {
  Case c;
  const fs::path bin = c.dir / "pybin";
  const auto xys = make_python_bin(c, bin);
  REQUIRE(!xys.empty());
  const std::string want = version_of(c, real_python());
  const std::string xy = want.substr(0, want.rfind('.'));
  // Two locks: one for Python 3.8 (no interpreter here runs it), one for the test's Python.
  const std::string target = "\n[tool.gpulock]\nschema = 1\n\n[tool.gpulock.target]\npython = \"";
  const std::string platform = "\"\nplatform = \"manylinux_2_17_x86_64\"\n";
  gpulock::test::write_file(c.dir / "pylock.old.toml",
                            read_file(c.dir / "base.toml") + target + "3.8" + platform);
  gpulock::test::write_file(c.dir / "pylock.here.toml",
                            read_file(c.dir / "base.toml") + target + xy + platform);
  c.env["PATH"] = bin.string();  // only the interpreters above

  Run print = c.gpulock({"install", "--print-target"});
  INFO(describe(print));
  CHECK(print.status == 0);
  CHECK(
      print.out.find("pylock.old.toml (target pylock.old.toml): no interpreter on PATH runs it: " +
                     (bin / "python3").string() +
                     " (Python 3.9.99): this lock is for Python 3.8, this environment's is "
                     "3.9") != std::string::npos);
  CHECK(print.out.find("pylock.here.toml (target pylock.here.toml): fits: CPU builds run on any "
                       "machine, with " +
                       (bin / ("python" + xy)).string() + " (Python " + want + ")") !=
        std::string::npos);
  CHECK(print.out.find("install would use ./pylock.here.toml") != std::string::npos);
  CHECK(!fs::exists(c.dir / ".venv"));

  Run r = c.gpulock({"install", "--no-probe"});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(r.err.find("./pylock.here.toml fits this machine") != std::string::npos);
  CHECK(r.err.find("created a virtual environment at .venv (Python " + want + ", " +
                   (bin / ("python" + xy)).string() +
                   "): the first interpreter on PATH the lock accepts") != std::string::npos);
  // Why the ones asked before it were not taken: the fake python3, and newer real ones.
  CHECK(r.err.find("not chosen: " + (bin / "python3").string() +
                   " (Python 3.9.99): this lock is for Python " + xy +
                   ", this environment's is 3.9") != std::string::npos);
  for (const auto& other : xys) {
    if (std::stoi(other.substr(2)) <= std::stoi(xy.substr(2))) continue;
    CHECK(r.err.find("not chosen: " + (bin / ("python" + other)).string() + " (Python " + other) !=
          std::string::npos);
  }
  CHECK(version_of(c, c.python(".venv")) == want);
  CHECK(c.installed(".venv") == "demo-pkg==1.0 gpuvar==1.0+cu126\n");

  // The lock's requires-python decides too: only interpreters it admits are taken.
  gpulock::test::write_file(
      c.dir / "req.toml",
      gpulock::test::replace_all(read_file(c.dir / "base.toml"), "requires-python = \">=3.8\"",
                                 "requires-python = \"==" + xy + ".*\""));
  Run req = c.gpulock({"install", "--lock", (c.dir / "req.toml").string(), "--venv",
                       (c.dir / "req").string(), "--dry-run"});
  INFO(describe(req));
  CHECK(req.status == 0);
  CHECK(req.out.find("a new venv made with " + (bin / ("python" + xy)).string()) !=
        std::string::npos);
  CHECK(req.err.find("not chosen: " + (bin / "python3").string() +
                     " (Python 3.9.99): this lock's requires-python is ==" + xy +
                     ".*, this environment's Python is 3.9.99") != std::string::npos);
  // No interpreter fits: each one is named with why.
  Run none = c.gpulock({"install", "--lock", (c.dir / "pylock.old.toml").string(), "--venv",
                        (c.dir / "none").string(), "--no-probe"});
  INFO(describe(none));
  CHECK(none.status != 0);
  CHECK(none.err.find("no interpreter on PATH fits the lock:") != std::string::npos);
  CHECK(none.err.find((bin / ("python" + xy)).string() + " (Python " + want +
                      "): this lock is for Python 3.8") != std::string::npos);
  CHECK(!fs::exists(c.dir / "none"));
}

namespace {

// Every regular file under the venv (relative) with its content: the environment as it is
// (but the environment's lock file, which names the last sync's PID).
std::map<std::string, std::string> contents(const Case& c, const std::string& venv) {
  std::map<std::string, std::string> out;
  const fs::path root = c.dir / venv;
  for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
    if (it->path().filename() == ".gpulock-lock") continue;
    if (it->is_regular_file() && !it->is_symlink())
      out[it->path().lexically_relative(root).generic_string()] = read_file(it->path());
  }
  return out;
}

}  // namespace

TEST_CASE("install: a wheel that fails half way leaves the environment as it was",
          "[install][e2e]") {
  Case c;
  c.make_venv("v");
  REQUIRE(c.sync("base", "v").status == 0);
  Run p = c.pip("v", {"install", "--no-deps", "--no-index", "-q",
                      (c.dir / "wheels/extra_pkg-2.0-py3-none-any.whl").string()});
  REQUIRE(p.status == 0);
  const auto files = c.files("v");
  const auto before = contents(c, "v");
  // gpuvar is replaced (cu126 -> cu130) and extra-pkg removed before broken-pkg, whose entry
  // point fails after its files are linked in.
  Run r = c.sync("broken", "v");
  INFO(describe(r));
  CHECK(r.status == 3);
  CHECK(r.err.find("invalid script entry point: broken = no_callable") != std::string::npos);
  CHECK(r.err.find("while installing broken_pkg-1.0-py3-none-any.whl") != std::string::npos);
  CHECK(r.err.find("hint: the environment was not changed") != std::string::npos);
  CHECK(c.files("v") == files);
  CHECK(contents(c, "v") == before);
  CHECK(c.installed("v") == "demo-pkg==1.0 extra-pkg==2.0 gpuvar==1.0+cu126\n");
  Run variant = c.run({c.python("v").string(), "-c", "import gpuvar; print(gpuvar.VARIANT)"});
  CHECK(variant.out == "cu126\n");
  for (const auto& entry : fs::directory_iterator(c.dir / "v"))
    CHECK(!entry.path().filename().string().starts_with(".gpulock-stash-"));
  // The same sync without the broken wheel goes through, and leaves no stash either.
  Run ok = c.sync("cu130", "v");
  INFO(describe(ok));
  CHECK(ok.status == 0);
  CHECK(c.installed("v") == "demo-pkg==1.0 gpuvar==1.0+cu130\n");
  for (const auto& entry : fs::directory_iterator(c.dir / "v"))
    CHECK(!entry.path().filename().string().starts_with(".gpulock-stash-"));
}

TEST_CASE("install: a write error half way leaves the environment as it was", "[install][e2e]") {
  // The venv's interpreter must be one nobody may run: /usr/bin/python3, not one under /root.
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0 ||
      ::access("/usr/bin/python3", X_OK) != 0) {
    WARN("needs root, setpriv and /usr/bin/python3 to sync as an unprivileged user; not run");
    return;
  }
  // User nobody can reach neither a build tree inside a private folder nor root's pyenv: the case
  // lives in a world-readable directory under /tmp, with its own copy of gpulock and of its
  // network plugin next to it (where gpulock looks first).
  Case c{fs::temp_directory_path()};
  const fs::path exe = c.dir / "gpulock-bin" / "gpulock";
  fs::create_directories(exe.parent_path());
  fs::copy_file(kExe, exe);
  fs::copy_file(kNetPlugin, exe.parent_path() / kNetPlugin.filename());
  for (const auto& p : {exe.parent_path(), exe, exe.parent_path() / kNetPlugin.filename()})
    fs::permissions(p, fs::perms(0755));
  Run venv = c.run({"/usr/bin/python3", "-m", "venv", "--without-pip", (c.dir / "v").string()});
  INFO(describe(venv));
  REQUIRE(venv.status == 0);
  REQUIRE(c.sync("base", "v").status == 0);
  Run p = c.pip("v", {"install", "--no-deps", "--no-index", "-q",
                      (c.dir / "wheels/extra_pkg-2.0-py3-none-any.whl").string()});
  REQUIRE(p.status == 0);
  // The sync runs as nobody, who owns everything here but the directory of the package
  // installed last (late.toml: gpuvar is replaced and extra-pkg removed before it).
  const fs::path locked_out = c.site("v") / "wheel";
  fs::create_directory(locked_out);
  REQUIRE(c.run({"/bin/chown", "-R", "65534:65534", c.dir.string()}).status == 0);
  REQUIRE(c.run({"/bin/chown", "0:0", locked_out.string()}).status == 0);
  fs::permissions(locked_out, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  const auto files = c.files("v");
  const auto before = contents(c, "v");
  Run r = c.run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 exe.string(), "install", "--lock", (c.dir / "late.toml").string(), "--python",
                 c.python("v").string(), "--no-probe"});
  INFO(describe(r));
  CHECK(r.status == 74);
  CHECK(r.err.find("Permission denied") != std::string::npos);
  CHECK(r.err.find("while installing wheel-0.0.1-py3-none-any.whl") != std::string::npos);
  CHECK(r.err.find("hint: the environment was not changed") != std::string::npos);
  CHECK(c.files("v") == files);
  CHECK(contents(c, "v") == before);
  CHECK(c.installed("v") == "demo-pkg==1.0 extra-pkg==2.0 gpuvar==1.0+cu126\n");
}

namespace {

// `gpulock install` of cu130.toml into venv "v", killed (SIGKILL) by the test hook at `when`
// ("file 2": before the journal notes the second file written; "aside 2": the second file set
// aside).
Run killed_sync(Case& c, const std::string& when) {
  Env env = c.env;
  env["GPULOCK_TEST_INSTALL_KILL"] = when;
  return gpulock::test::run_process(
      {kExe.string(), "install", "--lock", (c.dir / "cu130.toml").string(), "--python",
       c.python("v").string(), "--no-probe"},
      env, {.cwd = c.dir, .timeout_s = 120});
}

}  // namespace

TEST_CASE("install: a sync killed half way is rolled back by the next install", "[install][e2e]") {
  Case c;
  c.make_venv("v");
  REQUIRE(c.sync("base", "v").status == 0);
  const auto files = c.files("v");
  const auto before = contents(c, "v");
  // gpuvar 1.0+cu126 -> 1.0+cu130, killed (SIGKILL, by the test hook) just before the journal
  // notes the second file the sync writes: the old gpuvar is in the stash, the new one's
  // directories are made and its first file is in.
  Run k = killed_sync(c, "file 2");
  INFO(describe(k));
  REQUIRE(k.status == 128 + 9);
  std::vector<fs::path> stashes;
  for (const auto& entry : fs::directory_iterator(c.dir / "v")) {
    if (entry.path().filename().string().starts_with(".gpulock-stash-"))
      stashes.push_back(entry.path());
  }
  REQUIRE(stashes.size() == 1);
  CHECK(fs::exists(stashes[0] / "journal"));
  CHECK(c.files("v") != files);
  CHECK(!fs::exists(c.site("v") / "gpuvar/lib_cu126.so"));

  // check --env sees it.
  Run chk = c.gpulock({"check", "--env", "--lock", (c.dir / "base.toml").string(), "--python",
                       c.python("v").string()});
  INFO(describe(chk));
  CHECK(chk.out.find("an interrupted gpulock install left " + stashes[0].string() +
                     ": the environment may be half swapped") != std::string::npos);

  // The next install finishes the rollback before anything else, in one line; the environment
  // is then exactly as it was, so syncing the old lock changes nothing.
  Run r = c.sync("base", "v");
  INFO(describe(r));
  CHECK(r.status == 0);
  CHECK(r.err ==
        "warning: an interrupted gpulock install was rolled back first: 9 files put "
        "back, 1 file removed in " +
            (c.dir / "v").string() + "\n");
  CHECK(r.out.find("2 unchanged") != std::string::npos);
  CHECK(c.files("v") == files);
  CHECK(contents(c, "v") == before);
  CHECK(!fs::exists(stashes[0]));
  Run variant = c.run({c.python("v").string(), "-c", "import gpuvar; print(gpuvar.VARIANT)"});
  CHECK(variant.out == "cu126\n");
}

TEST_CASE("install: a sync killed while it sets files aside is rolled back too", "[install][e2e]") {
  Case c;
  c.make_venv("v");
  REQUIRE(c.sync("base", "v").status == 0);
  const auto files = c.files("v");
  const auto before = contents(c, "v");
  Run k = killed_sync(c, "aside 2");
  INFO(describe(k));
  REQUIRE(k.status == 128 + 9);
  CHECK(c.files("v") != files);
  Run r = c.sync("base", "v");
  INFO(describe(r));
  CHECK(r.status == 0);
  CHECK(r.err ==
        "warning: an interrupted gpulock install was rolled back first: 1 file put "
        "back, 0 files removed in " +
            (c.dir / "v").string() + "\n");
  CHECK(c.files("v") == files);
  CHECK(contents(c, "v") == before);
}

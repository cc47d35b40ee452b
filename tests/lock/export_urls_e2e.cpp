// `gpulock export --urls` end to end (issue 5): a lock resolved by `gpulock resolve` against a
// private copy of the fixture index (its own nginx), then the index regenerated without one
// locked file (fixtures/README.md "Overlays"). `--urls` asks each package's index and writes a
// direct URL only for what it no longer lists; `--all-urls` writes every package as one. Real
// pip accepts the mixed file.
#include <algorithm>
#include <map>
#include <sstream>

#include "gpulock/lock/lockfile.h"

#include "lock_test_support.h"
#include "test_servers.h"

using lock_test::read_file;
using lock_test::RunResult;
using lock_test::shell_quote;
using lock_test::TempDir;
using lock_test::write_file;

namespace fs = std::filesystem;

namespace {

// gpulock run in `dir` with a clean environment and the cache `cache` (default: dir/cache).
RunResult gpulock_in(const fs::path& dir, const std::string& args, const fs::path& cache = {}) {
  const fs::path c = cache.empty() ? dir / "cache" : cache;
  return lock_test::run_shell("cd " + shell_quote(dir.string()) +
                              " && env -u VIRTUAL_ENV -u GPULOCK_DRIVER NO_COLOR=1 "
                              "GPULOCK_HTTP_RETRIES=0 GPULOCK_DRIVER=none GPULOCK_CACHE_DIR=" +
                              shell_quote(c.string()) + " " + shell_quote(GPULOCK_EXE) + " " +
                              args);
}

// The requirement lines of an export ("name==version ..." / "name @ URL ..."), by package name.
std::map<std::string, std::string> entries(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // Comments, hash continuation lines and the index options (--index-url ...).
    if (line.empty() || line[0] == '#' || line[0] == ' ' || line[0] == '-') continue;
    const auto end = line.find_first_of(" =");
    out[line.substr(0, end)] = line;
  }
  return out;
}

// The one wheel of `name` in the lock (the lock is for one target).
const gpulock::lock::FileEntry& only_wheel(const gpulock::lock::Lock& lk, const std::string& name) {
  for (const auto& p : lk.packages) {
    if (p.name != name) continue;
    REQUIRE(p.wheels);
    REQUIRE(p.wheels->size() == 1);
    return p.wheels->front();
  }
  FAIL("the lock has no package " << name);
  throw std::logic_error("unreachable");
}

std::string version_of(const gpulock::lock::Lock& lk, const std::string& name) {
  for (const auto& p : lk.packages) {
    if (p.name == name) return p.version.value_or("");
  }
  FAIL("the lock has no package " << name);
  return {};
}

// A private index and a lock of torch (nightly, cpu), jinja2 and fsspec resolved against it.
struct ResolvedLock {
  TempDir dir;
  gpulock::test::PrivateServers servers;
  std::string url;  // http://127.0.0.1:PORT
  gpulock::lock::Lock lock;

  ResolvedLock() : url(servers.env().http_url()) {
    auto r = gpulock_in(
        dir.path(),
        // torch's ordinary dependencies from the PyPI-like index, where the tests
        // change them (the nightly torch index serves older copies, and under
        // first-index for every name only those would count).
        "resolve torch jinja2==3.1.4 fsspec==2025.3.0 --nightly latest "
        "--torch-backend cpu --index-for filelock=pypi --index-for fsspec=pypi --index-for "
        "jinja2=pypi "
        "--index-for markupsafe=pypi --index-for mpmath=pypi --index-for networkx=pypi --index-for "
        "setuptools=pypi --index-for sympy=pypi --index-for typing-extensions=pypi --index pypi=" +
            url + "/simple/ --index-url " + url + "/simple/ --torch-index-base " + url +
            "/whl --python-version 3.11 --platform manylinux_2_28_x86_64 "
            "-o pylock.toml");
    INFO(gpulock::test::describe(r));
    REQUIRE(r.status == 0);
    lock = lock_test::read_lock(dir / "pylock.toml");
    lock_test::check_with_tomllib(dir / "pylock.toml");
  }
  RunResult gpulock(const std::string& args, const fs::path& cache = {}) const {
    return gpulock_in(dir.path(), args, cache);
  }
  // Where the served copy keeps the file behind `file_url`.
  fs::path served_path(const std::string& file_url) const {
    REQUIRE(file_url.starts_with(url + "/"));
    std::string rel;  // percent-decoded (torch's `%2B`)
    for (std::size_t i = url.size() + 1; i < file_url.size(); ++i) {
      if (file_url[i] == '%' && i + 2 < file_url.size()) {
        rel += static_cast<char>(std::stoi(file_url.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        rel += file_url[i];
      }
    }
    return servers.index_root() / rel;
  }
};

// pip in isolated mode, without its cache, ignoring what is installed: it downloads every file
// and checks its hash. The indexes are those of the lock (PyPI-like and the nightly cpu index).
RunResult pip_dry_run(const fs::path& requirements, const std::string& url) {
  return lock_test::run_shell(
      "python3 -m pip --isolated install --dry-run --ignore-installed --no-deps "
      "--require-hashes --no-cache-dir --disable-pip-version-check --index-url " +
      shell_quote(url + "/simple/") + " --extra-index-url " +
      shell_quote(url + "/whl/nightly/cpu/") + " -r " + shell_quote(requirements.string()));
}

}  // namespace

TEST_CASE("export --urls writes direct URLs only for files the index no longer lists",
          "[lock][e2e][export]") {
  ResolvedLock l;
  const auto& fsspec = only_wheel(l.lock, "fsspec");
  const std::string fsspec_version = version_of(l.lock, "fsspec");
  REQUIRE(fsspec_version == "2025.3.0");
  REQUIRE(version_of(l.lock, "torch").starts_with("2.15.0.dev"));

  // Everything listed: --urls writes what a plain export writes, and says nothing.
  auto plain = l.gpulock("export");
  REQUIRE(plain.status == 0);
  auto clean = l.gpulock("export --urls");
  INFO(gpulock::test::describe(clean));
  CHECK(clean.status == 0);
  CHECK(clean.err.empty());
  CHECK(clean.out == plain.out);
  CHECK(clean.out.find(" @ ") == std::string::npos);

  // --all-urls: every package as the locked file's URL, no index asked.
  auto all = l.gpulock("export --all-urls");
  INFO(gpulock::test::describe(all));
  REQUIRE(all.status == 0);
  const auto all_entries = entries(all.out);
  CHECK(all_entries.size() == l.lock.packages.size());
  for (const auto& p : l.lock.packages) {
    INFO(p.name);
    REQUIRE(p.wheels);
    const std::string& line = all_entries.at(p.name);
    CHECK(std::any_of(p.wheels->begin(), p.wheels->end(), [&](const auto& w) {
      return line.starts_with(p.name + " @ " + *w.url + " ");
    }));
  }

  // The indexes drop fsspec 2025.3.0 (PyPI-like; other fsspec releases stay) and the locked
  // torch nightly (pruned from the nightly cpu index). The files themselves are put back at their
  // URLs: no longer listed, still downloadable (as from a mirror that keeps them).
  const auto& torch = only_wheel(l.lock, "torch");
  const std::string torch_version = version_of(l.lock, "torch");
  std::string torch_index;
  for (const auto& p : l.lock.packages) {
    if (p.name == "torch") torch_index = p.index.value_or("");
  }
  CHECK(torch_index == l.url + "/whl/nightly/cpu/");
  std::map<fs::path, std::string> kept;
  for (const auto* f : {&fsspec, &torch})
    kept[l.served_path(*f->url)] = read_file(l.served_path(*f->url));
  l.servers.regenerate(R"({"remove": [{"name": "fsspec", "version": ")" + fsspec_version +
                       R"(", "index": "pypi"}, {"name": "torch", "version": ")" + torch_version +
                       R"("}]})");
  for (const auto& [path, bytes] : kept) {
    REQUIRE_FALSE(fs::exists(path));
    fs::create_directories(path.parent_path());
    write_file(path, bytes);
  }

  auto mixed = l.gpulock("export --urls -o mixed.txt");
  INFO(gpulock::test::describe(mixed));
  REQUIRE(mixed.status == 0);
  CHECK(mixed.err == "fsspec " + fsspec_version + ": no longer listed on " + l.url +
                         "/simple/ (direct URL)\ntorch " + torch_version +
                         ": no longer listed on " + torch_index + " (direct URL)\n");
  const std::string text = read_file(l.dir / "mixed.txt");
  INFO(text);
  CHECK(text.find("fsspec @ " + *fsspec.url + " \\\n    --hash=sha256:" +
                  fsspec.hashes.at("sha256") + "\n") != std::string::npos);
  CHECK(text.find("torch @ " + *torch.url + " \\\n    --hash=sha256:" + torch.hashes.at("sha256") +
                  "\n") != std::string::npos);
  const auto mixed_entries = entries(text);
  CHECK(mixed_entries.size() == l.lock.packages.size());
  for (const auto& p : l.lock.packages) {
    if (p.name == "fsspec" || p.name == "torch") continue;
    INFO(p.name);
    CHECK(mixed_entries.at(p.name).starts_with(p.name + "==" + *p.version));
  }

  // -q: the same file, nothing on stderr.
  auto quiet = l.gpulock("-q export --urls");
  CHECK(quiet.status == 0);
  CHECK(quiet.err.empty());
  CHECK(quiet.out == text);

  // --offline: the cache --urls just filled answers alone; an empty cache is an offline error.
  auto offline = l.gpulock("export --urls --offline");
  INFO(gpulock::test::describe(offline));
  CHECK(offline.status == 0);
  CHECK(offline.out == text);
  auto empty = l.gpulock("export --urls --offline", l.dir / "empty-cache");
  INFO(gpulock::test::describe(empty));
  CHECK(empty.status == 4);
  CHECK(empty.err.starts_with("error: "));
  CHECK(empty.err.find("--offline forbids fetching it") != std::string::npos);
  CHECK(empty.out.empty());

  // Real pip accepts the mixed file: fsspec and torch by their URLs, the others from the index.
  auto pip = pip_dry_run(l.dir / "mixed.txt", l.url);
  INFO(pip.out << pip.err);
  CHECK(pip.status == 0);
  std::string said = pip.out;
  std::transform(said.begin(), said.end(), said.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  CHECK(said.find("would install") != std::string::npos);
  CHECK(said.find("fsspec-" + fsspec_version) != std::string::npos);
  CHECK(said.find("jinja2-3.1.4") != std::string::npos);
  CHECK(said.find("torch-2.15.0.dev") != std::string::npos);

  // The plain export of the pruned lock is what pip can no longer install.
  write_file(l.dir / "plain.txt", plain.out);
  auto pip_plain = pip_dry_run(l.dir / "plain.txt", l.url);
  INFO(pip_plain.out << pip_plain.err);
  CHECK(pip_plain.status != 0);
}

TEST_CASE("export --urls: no index, a project gone, an unreachable index", "[lock][e2e][export]") {
  ResolvedLock l;
  TempDir empty_index;  // a file:// index without any project
  fs::create_directories(empty_index / "simple");
  const std::string gone_url = "file://" + (empty_index / "simple").string() + "/";

  auto lk = l.lock;
  for (auto& p : lk.packages) {
    if (p.name == "markupsafe") p.index.reset();
    if (p.name == "jinja2") p.index = gone_url;
  }
  REQUIRE(gpulock::lock::write_lock_file(l.dir / "edited.toml", lk).has_value());

  auto r = l.gpulock("export --lock edited.toml --urls");
  INFO(gpulock::test::describe(r));
  REQUIRE(r.status == 0);
  const auto e = entries(r.out);
  CHECK(e.size() == lk.packages.size());
  const std::string jinja2_url = *only_wheel(lk, "jinja2").url;
  const std::string markupsafe_url = *only_wheel(lk, "markupsafe").url;
  CHECK(e.at("jinja2").starts_with("jinja2 @ " + jinja2_url));
  CHECK(e.at("markupsafe").starts_with("markupsafe @ " + markupsafe_url));
  for (const auto& p : lk.packages) {
    if (p.name == "jinja2" || p.name == "markupsafe") continue;
    INFO(p.name);
    CHECK(e.at(p.name).starts_with(p.name + "==" + *p.version));
  }
  // One line per package, in the file's order (jinja2 before markupsafe).
  CHECK(r.err == "jinja2 3.1.4: the project is no longer on " + gone_url +
                     " (direct URL)\nmarkupsafe " + version_of(lk, "markupsafe") +
                     ": the lock records no index for it (direct URL)\n");

  // Only the file a direct URL would install matters: a second markupsafe wheel (for macOS) that
  // the index does not list keeps markupsafe in index form for the lock's target (pip installs
  // the listed Linux wheel), and makes it a direct URL for a macOS target.
  auto two = l.lock;
  const std::string mac_wheel = "markupsafe-3.0.2-cp311-cp311-macosx_99_0_arm64.whl";
  const std::string mac_url = l.url + "/packages/markupsafe/" + mac_wheel;
  for (auto& p : two.packages) {
    if (p.name != "markupsafe") continue;
    gpulock::lock::FileEntry w;
    w.url = mac_url;
    w.hashes.emplace("sha256", std::string(64, 'a'));
    p.wheels->push_back(w);
  }
  REQUIRE(gpulock::lock::write_lock_file(l.dir / "two-wheels.toml", two).has_value());
  auto linux = l.gpulock("export --lock two-wheels.toml --urls");
  INFO(gpulock::test::describe(linux));
  CHECK(linux.status == 0);
  CHECK(linux.err.empty());
  CHECK(linux.out.find(" @ ") == std::string::npos);
  CHECK(linux.out.find("--hash=sha256:" + std::string(64, 'a')) != std::string::npos);
  auto mac = l.gpulock(
      "export --lock two-wheels.toml --urls --python-version 3.11 --platform macosx_99_0_arm64");
  INFO(gpulock::test::describe(mac));
  CHECK(mac.status == 0);
  CHECK(mac.err == "markupsafe 3.0.2: no longer listed on " + l.url + "/simple/ (direct URL)\n");
  CHECK(entries(mac.out).at("markupsafe") == "markupsafe @ " + mac_url + " \\");

  // --urls and --all-urls together: a usage error.
  auto both = l.gpulock("export --lock edited.toml --urls --all-urls");
  CHECK(both.status == 2);

  // An index nobody answers on: a network error (exit 4) naming it, nothing written.
  for (auto& p : lk.packages) {
    if (p.name == "fsspec") p.index = "http://127.0.0.1:1/simple/";
  }
  REQUIRE(gpulock::lock::write_lock_file(l.dir / "unreachable.toml", lk).has_value());
  auto down = l.gpulock("export --lock unreachable.toml --urls -o out.txt");
  INFO(gpulock::test::describe(down));
  CHECK(down.status == 4);
  CHECK(down.err.starts_with("error: "));
  CHECK(down.err.find("127.0.0.1:1") != std::string::npos);
  CHECK_FALSE(fs::exists(l.dir / "out.txt"));
  // --all-urls asks no index: the same lock exports.
  CHECK(l.gpulock("export --lock unreachable.toml --all-urls").status == 0);
}

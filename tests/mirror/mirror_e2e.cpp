// `gpulock mirror` end to end (issue 24, "Durable locks"): a nightly lock and a stable cu126
// lock resolved against a private copy of the fixture index (its own nginx), mirrored into one
// directory, that directory served by a second nginx; then the upstream prunes a locked
// nvidia-cudnn wheel, and install --mirror-fallback, resolving against the mirror, resume,
// --offline, verify, gc and rewrite-lock are checked against what the locks say.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "gpulock/lock/lockfile.h"

#include "cli_runner.h"
#include "test_files.h"
#include "test_servers.h"

namespace fs = std::filesystem;
using gpulock::test::describe;
using gpulock::test::read_file;
using gpulock::test::RunResult;
using gpulock::test::shell_quote;
using gpulock::test::TempDir;
using gpulock::test::write_file;

namespace {

const char* const kTarget =
    " --python-version 3.11 --platform manylinux_2_28_x86_64 --driver 570.124.06";

gpulock::lock::Lock read_lock(const fs::path& path) {
  auto file = gpulock::lock::read_lock_file(path);
  INFO(path.string() << (file ? "" : ": " + file.error().to_string()));
  REQUIRE(file.has_value());
  return file->lock;
}

std::map<std::string, std::string> versions(const gpulock::lock::Lock& lk) {
  std::map<std::string, std::string> out;
  for (const auto& p : lk.packages)
    out[p.name] = p.version.value_or("");
  return out;
}

// sha256 -> file name, every file of the lock.
std::map<std::string, std::string> files_of(const gpulock::lock::Lock& lk) {
  std::map<std::string, std::string> out;
  for (const auto& p : lk.packages) {
    for (const auto* f : p.files())
      out[f->hashes.at("sha256")] = f->filename();
  }
  return out;
}

// sha256 -> path of every file in the mirror's store.
std::map<std::string, fs::path> store_of(const fs::path& mirror) {
  std::map<std::string, fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(mirror / "files")) {
    if (!e.is_regular_file() || e.path().extension() == ".metadata") continue;
    const std::string h = e.path().parent_path().filename().string();
    CHECK(out.count(h) == 0);  // stored once
    out[h] = e.path();
  }
  return out;
}

struct Fixture {
  TempDir dir;
  gpulock::test::PrivateServers upstream;
  std::string url;  // http://127.0.0.1:PORT
  fs::path mirror;

  explicit Fixture(gpulock::test::PrivateServerOptions o = {})
      : upstream(o), url(upstream.env().http_url()), mirror(dir / "mirror") {}

  // gpulock in `dir`, with a clean environment; `wrapper` runs it (a pseudo-terminal).
  RunResult gpulock(const std::string& args, const std::string& cache = "cache",
                    const std::string& wrapper = "") const {
    return gpulock::test::run_shell(
        "cd " + shell_quote(dir.path().string()) +
        " && env -u VIRTUAL_ENV -u GPULOCK_DRIVER NO_COLOR=1 GPULOCK_HTTP_RETRIES=0 "
        "GPULOCK_CACHE_DIR=" +
        shell_quote((dir / cache).string()) + " " + wrapper + shell_quote(GPULOCK_EXE) + " " +
        args);
  }
  // The resolve command of both locks, against `index` (an index root with /simple and /whl).
  std::string resolve(const std::string& index, bool nightly, const std::string& out) const {
    return "resolve torch --torch-backend cu126" +
           std::string(nightly ? " --nightly 2026-08-17" : "") + kTarget + " --index-url " + index +
           "/simple/ --torch-index-base " + index + "/whl --index pypi=" + index +
           "/simple/ --index-for setuptools=pypi -o " + out;
  }
};

struct Locks {
  gpulock::lock::Lock stable, nightly;
};

// mirror add: every file once, each under files/sha256/<h[0:2]>/<h>/<name>; a re-run fetches
// nothing.
void add_twice(Fixture& f, const std::map<std::string, std::string>& wanted) {
  // mirror add: every file once, each under files/sha256/<h[0:2]>/<h>/<name>.
  gpulock::test::AccessLogCursor log(f.upstream.access_log());
  auto add = f.gpulock("mirror add pylock.cu126.toml pylock.nightly.toml --to mirror");
  INFO(describe(add));
  REQUIRE(add.status == 0);
  auto store = store_of(f.mirror);
  CHECK(store.size() == wanted.size());
  for (const auto& [h, name] : wanted) {
    INFO(name);
    CHECK(fs::is_regular_file(f.mirror / "files/sha256" / h.substr(0, 2) / h / name));
    if (name.ends_with(".whl"))
      CHECK(fs::is_regular_file(f.mirror / "files/sha256" / h.substr(0, 2) / h /
                                (name + ".metadata")));
  }
  CHECK(fs::is_regular_file(f.mirror / "manifest.toml"));
  CHECK(fs::is_regular_file(f.mirror / "simple/torch/index.json"));
  CHECK(fs::is_regular_file(f.mirror / "whl/cu126/torch/index.html"));
  CHECK(fs::is_regular_file(f.mirror / "whl/nightly/cu126/torch/index.html"));
  const std::string page = read_file(f.mirror / "simple/torch/index.html");
  CHECK(page.find("http") == std::string::npos);  // relative links only
  CHECK(page.find("href=\"../../files/sha256/") != std::string::npos);
  std::size_t file_gets = 0;
  for (const auto& e : log.entries())
    file_gets += e.uri.ends_with(".whl") ? 1u : 0u;
  CHECK(file_gets == wanted.size());

  // A re-run fetches nothing.
  log.mark();
  auto again = f.gpulock("mirror add pylock.cu126.toml pylock.nightly.toml --to mirror");
  INFO(describe(again));
  REQUIRE(again.status == 0);
  CHECK(again.err.find("0 downloaded") != std::string::npos);
  for (const auto& e : log.entries())
    CHECK_FALSE(e.uri.ends_with(".whl"));
}

// Served as is by nginx; resolving against it reproduces both locks (URLs apart).
void reproduce(const Fixture& f, const Locks& l, const std::string& murl) {
  const auto& stable = l.stable;
  const auto& nightly = l.nightly;
  for (bool n : {false, true}) {
    const std::string out = n ? "again.nightly.toml" : "again.cu126.toml";
    auto r = f.gpulock(f.resolve(murl, n, out), "cache-mirror");
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const auto re = read_lock(f.dir / out);
    CHECK(versions(re) == versions(n ? nightly : stable));
    CHECK(files_of(re) == files_of(n ? nightly : stable));
    for (const auto& p : re.packages) {
      for (const auto* file : p.files())
        CHECK(file->url->starts_with(murl + "/"));
    }
  }
  // The directory itself is an index too (file:// URLs).
  auto local =
      f.gpulock(f.resolve((f.dir / "mirror").string(), true, "local.nightly.toml"), "cache-local");
  INFO(describe(local));
  REQUIRE(local.status == 0);
  CHECK(versions(read_lock(f.dir / "local.nightly.toml")) == versions(nightly));
  CHECK(files_of(read_lock(f.dir / "local.nightly.toml")) == files_of(nightly));
}

// The prune, check --index (--mirror), install --mirror-fallback.
void prune_and_install(Fixture& f, const gpulock::lock::Lock& stable, const std::string& murl) {
  // The prune: the upstream drops the locked nvidia-cudnn wheel.
  std::string cudnn_file;
  for (const auto& p : stable.packages) {
    if (p.name == "nvidia-cudnn-cu12") cudnn_file = p.wheels->front().filename();
  }
  f.upstream.regenerate(R"({"remove": [{"name": "nvidia-cudnn-cu12", "version": ")" +
                        versions(stable).at("nvidia-cudnn-cu12") + R"("}]})");

  // check --index names the pruned file.
  auto check = f.gpulock("check --lock pylock.cu126.toml --index");
  INFO(describe(check));
  CHECK(check.status == 1);
  CHECK((check.out + check.err).find("nvidia-cudnn-cu12") != std::string::npos);
  auto with_mirror = f.gpulock("check --lock pylock.cu126.toml --index --mirror " + murl);
  INFO(describe(with_mirror));
  CHECK(with_mirror.status == 1);
  CHECK((with_mirror.out + with_mirror.err).find("present in the mirror " + murl) !=
        std::string::npos);
  auto empty_mirror = f.gpulock("check --lock pylock.cu126.toml --index --mirror nowhere");
  CHECK((empty_mirror.out + empty_mirror.err).find("gpulock mirror add pylock.cu126.toml") !=
        std::string::npos);

  // install --mirror-fallback: the exact locked set, hash-checked by pip.
  auto venv = gpulock::test::run_shell("python3 -m venv " + shell_quote((f.dir / "venv").string()));
  REQUIRE(venv.status == 0);
  auto without = f.gpulock("install --lock pylock.cu126.toml --python venv/bin/python --no-probe");
  CHECK(without.status != 0);  // the pruned file is gone upstream
  auto inst = f.gpulock(
      "-v install --lock pylock.cu126.toml --python venv/bin/python --no-probe "
      "--mirror-fallback " +
      murl);
  INFO(describe(inst));
  REQUIRE(inst.status == 0);
  CHECK(inst.err.find(cudnn_file + ": from the mirror") != std::string::npos);
  auto freeze =
      gpulock::test::run_shell(shell_quote((f.dir / "venv/bin/python").string()) +
                               " -m pip list --local --format=freeze --disable-pip-version-check");
  REQUIRE(freeze.status == 0);
  for (const auto& [name, version] : versions(stable)) {
    INFO(freeze.out);
    CHECK(freeze.out.find("==" + version + "\n") != std::string::npos);
  }

  // install --mirror DIR: every file from the mirror directory (file:// URLs), by hash.
  auto venv2 =
      gpulock::test::run_shell("python3 -m venv " + shell_quote((f.dir / "venv2").string()));
  REQUIRE(venv2.status == 0);
  auto all = f.gpulock(
      "-v install --lock pylock.cu126.toml --python venv2/bin/python --no-probe "
      "--mirror mirror");
  INFO(describe(all));
  REQUIRE(all.status == 0);
  for (const auto& p : stable.packages) {
    CHECK(all.err.find(p.wheels->front().filename() + ": from the mirror mirror") !=
          std::string::npos);
  }
}

// Resume: an interrupted run left half of a file in <cache>/partial/; only the rest is fetched.
// --offline names what is missing.
void resume_and_offline(Fixture& f) {
  gpulock::test::AccessLogCursor log(f.upstream.access_log());
  const auto store = store_of(f.mirror);
  const auto [torch_hash, torch_path] = *std::find_if(
      store.begin(), store.end(),
      [](const auto& kv) { return kv.second.filename().string().starts_with("torch-2.15.0.dev"); });
  const std::string torch_bytes = read_file(torch_path);
  fs::remove(torch_path);
  fs::create_directories(f.dir / "cache/partial");
  write_file(f.dir / "cache/partial" / torch_hash, torch_bytes.substr(0, torch_bytes.size() / 2));
  auto offline =
      f.gpulock("mirror add pylock.cu126.toml pylock.nightly.toml --to mirror --offline");
  INFO(describe(offline));
  CHECK(offline.status == 1);
  CHECK(offline.err.find(torch_path.filename().string()) != std::string::npos);
  log.mark();
  auto resumed = f.gpulock("mirror add pylock.cu126.toml pylock.nightly.toml --to mirror");
  INFO(describe(resumed));
  REQUIRE(resumed.status == 0);
  CHECK(resumed.err.find("1 downloaded (1 resumed)") != std::string::npos);
  CHECK(read_file(torch_path) == torch_bytes);
  const auto gets = log.entries();
  REQUIRE(gets.size() == 1);
  CHECK(gets[0].range == "bytes=" + std::to_string(torch_bytes.size() / 2) + "-");
  CHECK(gets[0].status == 206);
  CHECK(
      f.gpulock("mirror add pylock.cu126.toml pylock.nightly.toml --to mirror --offline").status ==
      0);
}

// verify catches a corrupted store file; gc keeps exactly what the kept lock needs;
// rewrite-lock points every URL at the mirror, hashes unchanged.
void verify_gc_rewrite(Fixture& f, const gpulock::lock::Lock& stable, const std::string& murl) {
  const auto store = store_of(f.mirror);
  // verify catches a corrupted store file.
  CHECK(f.gpulock("mirror verify mirror").status == 0);
  const auto victim = store.begin()->second;
  const std::string good = read_file(victim);
  fs::remove(victim);
  write_file(victim, good + "x");
  auto bad = f.gpulock("mirror verify mirror");
  INFO(describe(bad));
  CHECK(bad.status == 1);
  CHECK(bad.out.find("corrupt: files/sha256/") != std::string::npos);
  CHECK(bad.out.find(victim.filename().string()) != std::string::npos);
  fs::remove(victim);
  write_file(victim, good);

  // gc keeps exactly what the kept lock needs.
  auto gc = f.gpulock("mirror gc mirror --keep pylock.cu126.toml");
  INFO(describe(gc));
  REQUIRE(gc.status == 0);
  std::set<std::string> left, need;
  for (const auto& [h, p] : store_of(f.mirror))
    left.insert(h);
  for (const auto& [h, n] : files_of(stable))
    need.insert(h);
  CHECK(left == need);
  CHECK_FALSE(fs::exists(f.mirror / "whl/nightly"));
  CHECK(f.gpulock("mirror verify mirror").status == 0);

  // rewrite-lock: every URL at the mirror, hashes unchanged.
  fs::copy_file(f.dir / "pylock.cu126.toml", f.dir / "rewritten.toml");
  auto rw = f.gpulock("mirror rewrite-lock rewritten.toml --base-url " + murl);
  INFO(describe(rw));
  REQUIRE(rw.status == 0);
  const auto rewritten = read_lock(f.dir / "rewritten.toml");
  CHECK(files_of(rewritten) == files_of(stable));
  for (const auto& p : rewritten.packages) {
    for (const auto* file : p.files()) {
      const std::string& h = file->hashes.at("sha256");
      CHECK(file->url->starts_with(murl + "/files/sha256/" + h.substr(0, 2) + "/" + h + "/"));
    }
  }
}

}  // namespace

TEST_CASE("mirror: two locks in one mirror, served by nginx, survive an upstream prune",
          "[mirror][e2e]") {
  Fixture f;
  for (bool nightly : {false, true}) {
    auto r =
        f.gpulock(f.resolve(f.url, nightly, nightly ? "pylock.nightly.toml" : "pylock.cu126.toml"));
    INFO(describe(r));
    REQUIRE(r.status == 0);
  }
  const auto stable = read_lock(f.dir / "pylock.cu126.toml");
  const auto nightly = read_lock(f.dir / "pylock.nightly.toml");
  REQUIRE(versions(nightly).at("torch").starts_with("2.15.0.dev20260817"));
  REQUIRE(versions(stable).count("nvidia-cudnn-cu12") == 1);
  REQUIRE(versions(stable).at("torch").ends_with("+cu126"));
  auto wanted = files_of(stable);
  for (const auto& [h, name] : files_of(nightly))
    wanted[h] = name;
  std::size_t shared = 0;
  for (const auto& [h, name] : files_of(nightly))
    shared += files_of(stable).count(h);
  CHECK(shared > 0);  // the nvidia-* wheels both locks pin

  add_twice(f, wanted);
  gpulock::test::PrivateServerOptions o;
  o.root = f.mirror;
  o.copy = false;
  gpulock::test::PrivateServers served(o);
  const std::string murl = served.env().http_url();
  reproduce(f, Locks{stable, nightly}, murl);
  prune_and_install(f, stable, murl);
  resume_and_offline(f);
  verify_gc_rewrite(f, stable, murl);
}

TEST_CASE("mirror add: a file whose sha256 is not the lock's never enters the store",
          "[mirror][e2e]") {
  Fixture f;
  auto r = f.gpulock("resolve jinja2==3.1.4" + std::string(kTarget) + " --index-url " + f.url +
                     "/simple/ -o pylock.toml");
  INFO(describe(r));
  REQUIRE(r.status == 0);
  std::string text = read_file(f.dir / "pylock.toml");
  const auto lk = read_lock(f.dir / "pylock.toml");
  const std::string real = lk.packages.front().wheels->front().hashes.at("sha256");
  const std::string fake(64, 'a');
  text.replace(text.find(real), real.size(), fake);
  write_file(f.dir / "pylock.toml", text);
  auto add = f.gpulock("mirror add pylock.toml --to mirror");
  INFO(describe(add));
  CHECK(add.status == 4);
  CHECK(add.err.find("hash mismatch") != std::string::npos);
  CHECK(add.err.find(*lk.packages.front().wheels->front().url) != std::string::npos);
  CHECK_FALSE(fs::exists(f.mirror / "files/sha256/aa"));
}

TEST_CASE("mirror add: a download cut off midway is resumed with a Range request",
          "[mirror][e2e]") {
  gpulock::test::PrivateServerOptions o;
  o.fault = true;
  Fixture f(o);
  auto r = f.gpulock("resolve jinja2==3.1.4" + std::string(kTarget) + " --index-url " + f.url +
                     "/simple/ -o pylock.toml");
  INFO(describe(r));
  REQUIRE(r.status == 0);
  const std::string text = read_file(f.dir / "pylock.toml");
  const auto lk = read_lock(f.dir / "pylock.toml");
  const auto& wheel = lk.packages.front().wheels->front();
  const std::string& h = wheel.hashes.at("sha256");
  const fs::path stored = f.mirror / "files/sha256" / h.substr(0, 2) / h / wheel.filename();
  const fs::path partial = f.dir / "cache/partial" / h;
  // The lock with the wheel's URL on the fault server in `mode`.
  auto via = [&](const std::string& mode) {
    std::string t = text;
    const std::string faulty =
        f.upstream.env().fault_url() + "/" + mode + "/" + wheel.url->substr(f.url.size() + 1);
    t.replace(t.find(*wheel.url), wheel.url->size(), faulty);
    write_file(f.dir / "pylock.toml", t);
  };

  // The connection closes after half the body: exit 4, half a file kept, nothing in the store.
  via("truncated");
  auto cut = f.gpulock("mirror add pylock.toml --to mirror");
  INFO(describe(cut));
  CHECK(cut.status == 4);
  REQUIRE(fs::exists(partial));
  CHECK(fs::file_size(partial) == *wheel.size / 2);
  CHECK_FALSE(fs::exists(stored));

  // The next run asks nginx for the rest only.
  write_file(f.dir / "pylock.toml", text);
  gpulock::test::AccessLogCursor log(f.upstream.access_log());
  auto rest = f.gpulock("mirror add pylock.toml --to mirror");
  INFO(describe(rest));
  REQUIRE(rest.status == 0);
  // jinja2's half file at least; the other wheel's download, cancelled when jinja2's failed, may
  // have left a partial file too (seen in a full run: "(2 resumed)").
  CHECK((rest.err.find("(1 resumed)") != std::string::npos ||
         rest.err.find("(2 resumed)") != std::string::npos));
  bool ranged = false;
  for (const auto& e : log.entries()) {
    if (!e.uri.ends_with(".whl") || e.uri.find("jinja2") == std::string::npos) continue;
    CHECK(e.range == "bytes=" + std::to_string(*wheel.size / 2) + "-");
    CHECK(e.status == 206);
    ranged = true;
  }
  CHECK(ranged);
  CHECK(gpulock::test::run_shell("sha256sum " + shell_quote(stored.string())).out.starts_with(h));
  CHECK_FALSE(fs::exists(partial));

  // A server that ignores Range: the partial file is dropped and the whole file read again.
  const std::string bytes = read_file(stored);
  fs::remove(stored);
  write_file(partial, bytes.substr(0, bytes.size() / 3));
  via("no-range");
  auto whole = f.gpulock("mirror add pylock.toml --to mirror");
  INFO(describe(whole));
  REQUIRE(whole.status == 0);
  CHECK(read_file(stored) == bytes);

  // On a terminal, a progress line.
  const std::string tty =
      "python3 " +
      shell_quote((gpulock::test::source_dir() / "tests/resolve/with_tty_stderr.py").string()) +
      " ";
  write_file(f.dir / "pylock.toml", text);
  auto shown = f.gpulock("mirror add pylock.toml --to mirror-tty", "cache-tty", tty);
  INFO(describe(shown));
  REQUIRE(shown.status == 0);
  CHECK(shown.err.find("Mirroring  2/2 files") != std::string::npos);
  CHECK(shown.err.find("mirrored 2 files into mirror-tty") != std::string::npos);
}

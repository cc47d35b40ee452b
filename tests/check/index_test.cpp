// The index layer: a private nginx serving a copy of the fixture index, regenerated with
// overlays (fixtures/README.md "Overlays") so the index changes under a lock for real.
#include "check_support.h"

using namespace check_test;

namespace {

// The torch 2.15 nightly release of `date_from` (cpu), republished as `date_to`: a newer nightly.
std::string newer_nightly_overlay(const std::string& date_from, const std::string& date_to) {
  const fs::path script = fs::path(CHECK_WORK_DIR) / ("overlay-" + date_to + ".py");
  write_file(
      script,
      "import json, sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "r = [x for x in d['releases'] if x['name'] == 'torch' and x['version'] == '2.15.0.dev" +
          date_from +
          "+cpu'][0]\n"
          "r = dict(r, version='2.15.0.dev" +
          date_to + "+cpu', nightly='" + date_to + "', upload_time='" + date_to.substr(0, 4) + "-" +
          date_to.substr(4, 2) + "-" + date_to.substr(6, 2) +
          "T07:30:00Z')\n"
          "print(json.dumps({'releases': [r]}))\n");
  auto out =
      run_shell("/usr/bin/python3 " + shell_quote(script.string()) + " " +
                shell_quote((gpulock::test::source_dir() / "fixtures/data/torch.json").string()));
  INFO(out.err);
  REQUIRE(out.status == 0);
  return out.out;
}

struct IndexLock {
  Workdir w;
  gpulock::test::PrivateServers servers;
  std::string url;
  LockScan lock;
  std::string resolve_args;  // as the lock records them (single spaces)
  explicit IndexLock(const std::string& name) : w(name), url(servers.env().http_url()) {
    // torch's ordinary dependencies from the PyPI-like index (pypi_pins).
    resolve_args =
        "resolve torch jinja2==3.1.4 fsspec==2025.3.0 --nightly latest --torch-backend cpu " +
        fixture_indexes(url) + pypi_pins(url) + kTarget + " -o pylock.toml";
    for (auto at = resolve_args.find("  "); at != std::string::npos; at = resolve_args.find("  ")) {
      resolve_args.erase(at, 1);
    }
    auto r = w.gpulock(resolve_args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    lock = scan_lock(w / "pylock.toml");
    check_lock_independently(w / "pylock.toml");
  }
  std::string line_of_wheel(const std::string& name) const {
    return std::to_string(lock.at(name).wheel_line);
  }
};

}  // namespace

TEST_CASE("check index: every drift kind of a changing index", "[check][index]") {
  IndexLock l("index");
  const std::string pypi = l.url + "/simple/";
  const auto& torch = l.lock.at("torch");
  REQUIRE(torch.version.starts_with("2.15.0.dev20260818"));

  // Unchanged: clean; the nightly wheel has no hash on its page (not downloaded without --deep).
  auto clean = l.w.gpulock("check --index");
  INFO(clean.out << clean.err);
  CHECK(clean.status == 0);
  CHECK(clean.out.find("  info: 1 file is listed without a hash on its index page; not downloaded "
                       "to compare\n      " +
                       torch.wheel + "\n") != std::string::npos);
  CHECK(l.w.gpulock("check --index --deep --strict").status == 0);

  // A file removed from the index.
  const auto& fsspec = l.lock.at("fsspec");
  l.servers.regenerate(R"({"remove": [{"name": "fsspec", "version": ")" + fsspec.version +
                       R"(", "index": "pypi"}]})");
  auto pruned = l.w.gpulock("check --index");
  INFO(pruned.out);
  CHECK(pruned.status == 1);
  CHECK(lines_of(pruned.out).at(5) == "  error: pylock.toml:" + l.line_of_wheel("fsspec") +
                                          ": upstream pruned: " + fsspec.wheel +
                                          " is no longer listed on " + pypi);
  CHECK(
      pruned.out.find(
          "  warning: upstream moved: a resolve with the same inputs finds no solution today\n") !=
      std::string::npos);

  // A file with another hash.
  const auto& jinja2 = l.lock.at("jinja2");
  l.servers.regenerate(R"({"rehash": [{"name": "jinja2", "version": ")" + jinja2.version +
                       R"("}]})");
  std::string new_sha = sha256_of(l.servers.index_root() / "packages/jinja2" / jinja2.wheel);
  REQUIRE(new_sha != jinja2.sha256);
  auto rehashed = l.w.gpulock("check --index");
  INFO(rehashed.out);
  CHECK(rehashed.status == 1);
  CHECK(lines_of(rehashed.out).at(5) ==
        "  error: pylock.toml:" + l.line_of_wheel("jinja2") +
            ": upstream rehashed: " + jinja2.wheel + " on " + pypi + " now has sha256 " +
            new_sha.substr(0, 12) + "..., the lock has " + jinja2.sha256.substr(0, 12) + "...");

  // A file yanked since.
  const auto& filelock = l.lock.at("filelock");
  l.servers.regenerate(R"({"yank": [{"name": "filelock", "version": ")" + filelock.version +
                       R"(", "reason": "drift test"}]})");
  auto yanked = l.w.gpulock("check --index --format json");
  INFO(yanked.out);
  CHECK(yanked.status == 1);
  CHECK(yanked.out.find("\"message\": \"upstream yanked: " + filelock.wheel + " is yanked on " +
                        pypi + ": drift test\"") != std::string::npos);
  CHECK(yanked.out.find("\"line\": " + l.line_of_wheel("filelock")) != std::string::npos);

  // A newer nightly published: upstream moved, informational unless --strict.
  l.servers.regenerate(newer_nightly_overlay("20260818", "20260819"));
  auto moved = l.w.gpulock("check --index");
  INFO(moved.out);
  CHECK(moved.status == 0);
  const std::string moved_line =
      "  warning: pylock.toml:" + std::to_string(torch.line) +
      ": upstream moved: a resolve with the same inputs today picks torch "
      "2.15.0.dev20260819+cpu; the lock has " +
      torch.version;
  CHECK(moved.out.find(moved_line + "\n") != std::string::npos);
  CHECK(lines_of(moved.out).back() == "pylock.toml: no drift, 1 warning");
  auto strict = l.w.gpulock("check --index --strict --format github");
  CHECK(strict.status == 1);
  CHECK(lines_of(strict.out).at(1) ==
        "::error file=pylock.toml,line=" + std::to_string(torch.line) +
            "::upstream moved: a resolve with the same inputs today picks torch "
            "2.15.0.dev20260819+cpu; the lock has " +
            torch.version + "%0Ahint: `gpulock " + l.resolve_args +
            " --upgrade-package torch` takes it; until then "
            "the lock stays as it is");
  // The hint's command is complete (issue 16 item 8): run as it is, it takes the newer nightly.
  auto followed = l.w.gpulock(l.resolve_args + " --upgrade-package torch");
  INFO(followed.err);
  CHECK(followed.status == 0);
  CHECK(scan_lock(l.w / "pylock.toml").at("torch").version == "2.15.0.dev20260819+cpu");
  CHECK(l.w.gpulock("check --index --strict").status == 0);
}

TEST_CASE("check index: GitHub annotations for pruned, rehashed and yanked files, line by line",
          "[check][index]") {
  IndexLock l("index-github");
  const auto& fsspec = l.lock.at("fsspec");
  const auto& jinja2 = l.lock.at("jinja2");
  const auto& filelock = l.lock.at("filelock");
  l.servers.regenerate(R"({"remove": [{"name": "fsspec", "version": ")" + fsspec.version +
                       R"(", "index": "pypi"}], "rehash": [{"name": "jinja2", "version": ")" +
                       jinja2.version + R"("}], "yank": [{"name": "filelock", "version": ")" +
                       filelock.version + R"(", "reason": "drift test"}]})");
  auto g = l.w.gpulock("check --index --format github");
  INFO(g.out << g.err);
  CHECK(g.status == 1);
  std::string text = replace_all(g.out, l.url, "<URL>");
  auto gl = lines_of(text);
  REQUIRE(gl.size() == 6);
  CHECK(gl[0].starts_with("::error file=pylock.toml,line=" + l.line_of_wheel("filelock") +
                          "::upstream yanked: "));
  CHECK(gl[1].starts_with("::error file=pylock.toml,line=" + l.line_of_wheel("fsspec") +
                          "::upstream pruned: "));
  CHECK(gl[2].starts_with("::error file=pylock.toml,line=" + l.line_of_wheel("jinja2") +
                          "::upstream rehashed: "));
  CHECK(gl[3].starts_with("::notice file=pylock.toml::1 file is listed without a hash"));
  CHECK(gl[4].starts_with(
      "::warning file=pylock.toml::upstream moved: a resolve with the same inputs finds no "
      "solution today%0A"));
  CHECK(gl[5] == "gpulock check pylock.toml (index): drift found: 3 errors, 1 warning");
}

TEST_CASE("check index: an unreachable index is exit 4, not drift", "[check][index]") {
  Workdir w("index-unreachable");
  std::string url;
  {
    gpulock::test::PrivateServers servers(gpulock::test::PrivateServerOptions{{}, false});
    url = servers.env().http_url();
    auto r = w.gpulock("resolve jinja2==3.1.4 " + fixture_indexes(url) + " " + kTarget +
                       " --driver none -o pylock.toml");
    INFO(r.err);
    REQUIRE(r.status == 0);
  }  // the server is gone
  auto r = w.gpulock("check --index");
  INFO(r.out << r.err);
  CHECK(r.status == 4);
  CHECK(r.err.starts_with("error: "));
  CHECK(r.out.empty());
}

TEST_CASE("check index: --deep downloads a file listed without a hash and sees it rehashed",
          "[check][index]") {
  IndexLock l("index-deep");
  const auto& torch = l.lock.at("torch");
  REQUIRE(torch.version.starts_with("2.15.0.dev"));
  // Nightly pages give no hash (fixtures/README.md): only a download can tell a rebuilt wheel.
  l.servers.regenerate(R"({"rehash": [{"name": "torch", "version": ")" + torch.version + R"("}]})");
  const fs::path wheel = l.servers.index_root() / "whl/nightly/cpu" / torch.wheel;
  REQUIRE(fs::exists(wheel));
  const std::string new_sha = sha256_of(wheel);
  REQUIRE(new_sha != torch.sha256);

  // Without --deep the change cannot be seen: information, exit 0.
  auto shallow = l.w.gpulock("check --index");
  INFO(shallow.out << shallow.err);
  CHECK(shallow.status == 0);
  CHECK(shallow.out.find("  info: 1 file is listed without a hash on its index page; not "
                         "downloaded to compare\n      " +
                         torch.wheel + "\n") != std::string::npos);
  CHECK(shallow.out.find("upstream rehashed") == std::string::npos);

  // --deep downloads it: drift on the wheel's line.
  auto deep = l.w.gpulock("check --index --deep");
  INFO(deep.out << deep.err);
  CHECK(deep.status == 1);
  auto errors = std::vector<std::string>{};
  for (const auto& line : lines_of(deep.out)) {
    if (line.starts_with("  error: ")) errors.push_back(line);
  }
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].starts_with("  error: pylock.toml:" + l.line_of_wheel("torch") +
                              ": upstream rehashed: " + torch.wheel + " on " + l.url +
                              "/whl/nightly/cpu"));
  CHECK(errors[0].ends_with(" now has sha256 " + new_sha.substr(0, 12) + "..., the lock has " +
                            torch.sha256.substr(0, 12) + "..."));
  CHECK(deep.out.find("listed without a hash") == std::string::npos);

  auto g = l.w.gpulock("check --index --deep --format github");
  CHECK(g.status == 1);
  CHECK(lines_of(g.out).at(0).starts_with(
      "::error file=pylock.toml,line=" + l.line_of_wheel("torch") +
      "::upstream rehashed: " + torch.wheel + " on "));
}

TEST_CASE("check index: the lock's recorded options are read back through the flags' own parsers",
          "[check][index]") {
  // Issue 21: `check --index` rebuilds the resolve from the lock's record with the parsers the
  // command line uses (TorchBackend, NightlyDate, ...), so a recorded value they refuse is said,
  // never re-resolved with as text.
  IndexLock l("index-record");
  const fs::path lock = l.w / "pylock.toml";
  const std::string text = read_file(lock);
  REQUIRE(text.find("torch-backend = \"cpu\"\n") != std::string::npos);
  write_file(lock, replace_all(text, "torch-backend = \"cpu\"\n", "torch-backend = \"cu!\"\n"));
  auto r = l.w.gpulock("check --index");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("  note: upstream moves not checked: the lock's recorded options do not read: "
                   "[tool.gpulock.inputs.options] torch-backend: invalid --torch-backend 'cu!': "
                   "expected auto, cpu "
                   "or cuXYZ (e.g. cu124)\n") != std::string::npos);
  // The record as resolve wrote it reads back: the same resolve, no drift.
  write_file(lock, text);
  auto clean = l.w.gpulock("check --index --strict");
  INFO(clean.out);
  CHECK(clean.status == 0);
}

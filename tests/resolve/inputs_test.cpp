// `gpulock resolve` on ordinary packages (issue 6): requirement inputs (-r nesting and loops,
// -c, ${VAR}, --project with extras and groups), stable re-locking, bad input with exact
// messages and exit codes, and the --explain / --report output. Agreement with pip is
// pip_agreement.py (ctest resolve_pip_agreement).
#include "resolve_support.h"

using namespace resolve_test;

namespace {

// Just the `error:`/`hint:`/explanation text of a failed run, normalized.
std::string errors_of(const Run& r) {
  return normalize(r.err);
}

}  // namespace

TEST_CASE(
    "resolve reads -r files with nesting, comments, continuations and ${VAR}, and -c constraints",
    "[resolve][inputs]") {
  fs::path dir = fresh_dir("inputs-files");
  write_file(dir / "reqs.txt",
             "# top-level requirements\n"
             "-r sub/more.txt   # nested, relative to this file\n"
             "jinja2 \\\n"
             "  >=3.1\n"
             "-c cons.txt\n");
  write_file(dir / "sub/more.txt", "fixture-versions~=1.2  # a comment\n${EXTRA_PKG}\n");
  // markupsafe is used (by jinja2), numpy is not: a constraint never adds a package.
  write_file(dir / "cons.txt", "markupsafe<3\nfixture-versions!=1.4.2\nnumpy<2\n");

  Options o;
  o.cwd = dir;
  o.env["EXTRA_PKG"] = "filelock<3.19";
  Run r = resolve({"-r", "reqs.txt", "-o", "pylock.toml"}, o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto got = lock_versions(dir / "pylock.toml");
  CHECK(got == std::map<std::string, std::string>{{"filelock", "3.18.0"},
                                                  {"fixture-versions", "1.4"},
                                                  {"jinja2", "3.1.6"},
                                                  {"markupsafe", "2.1.5"}});

  // The lock records every input file with its kind and hash, relative to the lock.
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->inputs);
  std::vector<std::string> files;
  for (const auto& f : lock.gpulock->inputs->files) {
    files.push_back(f.kind + " " + f.path);
    CHECK(std::regex_match(f.sha256, std::regex("[0-9a-f]{64}")));
  }
  CHECK(files == std::vector<std::string>{"requirements reqs.txt", "requirements sub/more.txt",
                                          "constraints cons.txt"});

  SECTION("index options in a requirements file") {
    write_file(dir / "indexed.txt", "--index-url " + servers().pypi_url() + "\nfixture-py312\n");
    Options no_flag;
    no_flag.cwd = dir;
    no_flag.index_url = "-";  // no --index-url: the file's own
    Run f = resolve({"-r", "indexed.txt", "-o", "indexed.toml"}, no_flag);
    INFO(describe(f));
    REQUIRE(f.status == 0);
    CHECK(lock_versions(dir / "indexed.toml") ==
          std::map<std::string, std::string>{{"fixture-py312", "1.0"}});
    auto indexed = read_lock(dir / "indexed.toml");
    REQUIRE(indexed.packages.size() == 1);
    CHECK(indexed.packages[0].index == servers().pypi_url());
  }
  SECTION("an unset ${VAR} is left as written and named in a hint") {
    Options unset;
    unset.cwd = dir;
    expect_resolve_error({"-r", "reqs.txt"}, unset, 3,
                         "error: sub/more.txt:2:1: invalid requirement '${EXTRA_PKG}': expected a "
                         "package name at the start\n"
                         "hint: the environment variable EXTRA_PKG is not set\n");
  }
}

TEST_CASE("resolve: requirements files that include each other in a loop are an error",
          "[resolve][inputs]") {
  fs::path dir = fresh_dir("inputs-loop");
  write_file(dir / "a.txt", "jinja2\n-r b.txt\n");
  write_file(dir / "b.txt", "# b\n-r a.txt\n");
  Options o;
  o.cwd = dir;
  Run r = expect_resolve_error(
      {"-r", "a.txt"}, o, 3,
      "error: b.txt:2: requirements files include each other in a loop: a.txt -> b.txt -> a.txt\n");
  CHECK(r.out.empty());
}

TEST_CASE("resolve --project reads dependencies, extras and dependency groups with include-group",
          "[resolve][inputs]") {
  fs::path dir = fresh_dir("inputs-project");
  write_file(dir / "pyproject.toml",
             "[project]\n"
             "name = \"demo\"\n"
             "version = \"0.1\"\n"
             "dependencies = [\"fixture-versions>=1.1,<2\"]\n"
             "[project.optional-dependencies]\n"
             "remote = [\"fsspec<2025\"]\n"
             "gpu = [\"numpy\"]\n"
             "[dependency-groups]\n"
             "test = [\"mpmath\"]\n"
             "dev = [{include-group = \"test\"}, \"sympy<1.14\"]\n"
             "loop-a = [{include-group = \"loop-b\"}]\n"
             "loop-b = [{include-group = \"loop-a\"}]\n");
  Options o;
  o.cwd = dir;

  SECTION("dependencies only") {
    Run r = resolve({"--project", "pyproject.toml", "-o", "pylock.toml"}, o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(lock_versions(dir / "pylock.toml") ==
          std::map<std::string, std::string>{{"fixture-versions", "1.4.2"}});
  }
  SECTION("an extra and a group that includes another group") {
    Run r = resolve(
        {"--project", "pyproject.toml", "--extra", "remote", "--group", "dev", "-o", "pylock.toml"},
        o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(lock_versions(dir / "pylock.toml") ==
          std::map<std::string, std::string>{{"fixture-versions", "1.4.2"},
                                             {"fsspec", "2024.6.1"},
                                             {"mpmath", "1.3.0"},
                                             {"sympy", "1.13.3"}});
    auto lock = read_lock(dir / "pylock.toml");
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->inputs);
    CHECK(lock.gpulock->inputs->extras == std::vector<std::string>{"remote"});
    CHECK(lock.gpulock->inputs->groups == std::vector<std::string>{"dev"});
    REQUIRE(lock.gpulock->inputs->files.size() == 1);
    CHECK(lock.gpulock->inputs->files[0].kind == "project");
    CHECK(lock.gpulock->inputs->files[0].path == "pyproject.toml");
  }
  SECTION("an unknown extra") {
    Run r = resolve({"--project", "pyproject.toml", "--extra", "nope", "-o", "-"}, o);
    INFO(describe(r));
    CHECK(r.status == 3);
    CHECK(errors_of(r).starts_with("error: pyproject.toml"));
    CHECK(r.err.find("nope") != std::string::npos);
  }
  SECTION("an include-group loop") {
    expect_resolve_error({"--project", "pyproject.toml", "--group", "loop-a"}, o, 3,
                         "error: pyproject.toml:12: dependency groups include each other in a "
                         "loop: loop-a -> loop-b -> loop-a\n");
  }
}

TEST_CASE("resolve keeps an existing lock's pins, --upgrade-package moves one, --upgrade all",
          "[resolve][relock]") {
  // The old lock comes from constraints that held two packages back; re-locking without them
  // keeps both pins, because they are still allowed.
  fs::path dir = fresh_dir("relock-constraints");
  write_file(dir / "old.txt", "fixture-versions<1.3\nmarkupsafe<3\n");
  Options o;
  o.cwd = dir;
  Run first = resolve({"fixture-versions", "jinja2", "-c", "old.txt", "-o", "pylock.toml"}, o);
  INFO(describe(first));
  REQUIRE(first.status == 0);
  std::map<std::string, std::string> old = {
      {"fixture-versions", "1.2.5"}, {"jinja2", "3.1.6"}, {"markupsafe", "2.1.5"}};
  REQUIRE(lock_versions(dir / "pylock.toml") == old);

  Run again = resolve({"fixture-versions", "jinja2", "-o", "pylock.toml"}, o);
  INFO(describe(again));
  REQUIRE(again.status == 0);
  CHECK(lock_versions(dir / "pylock.toml") == old);

  Run one = resolve(
      {"fixture-versions", "jinja2", "-o", "pylock.toml", "--upgrade-package", "Fixture_Versions"},
      o);
  INFO(describe(one));
  REQUIRE(one.status == 0);
  CHECK(lock_versions(dir / "pylock.toml") ==
        std::map<std::string, std::string>{
            {"fixture-versions", "2.0.1"}, {"jinja2", "3.1.6"}, {"markupsafe", "2.1.5"}});

  Run all = resolve({"fixture-versions", "jinja2", "-o", "pylock.toml", "--upgrade"}, o);
  INFO(describe(all));
  REQUIRE(all.status == 0);
  CHECK(lock_versions(dir / "pylock.toml") ==
        std::map<std::string, std::string>{
            {"fixture-versions", "2.0.1"}, {"jinja2", "3.1.6"}, {"markupsafe", "3.0.2"}});

  SECTION("a pin the new requirements exclude gives way") {
    Run moved = resolve({"fixture-versions<2", "jinja2", "-o", "pylock.toml"}, o);
    INFO(describe(moved));
    REQUIRE(moved.status == 0);
    CHECK(lock_versions(dir / "pylock.toml").at("fixture-versions") == "1.4.2");
  }
}

TEST_CASE(
    "resolve on an index that publishes newer versions: re-locking changes only what must change",
    "[resolve][relock][private]") {
  // One private server (a copy of the tree) and one regeneration: both cost seconds.
  gpulock::test::PrivateServers srv;
  fs::path dir = fresh_dir("relock-private");
  Options o;
  o.cwd = dir;
  o.index_url = srv.env().pypi_url();
  o.cache = dir / "cache";

  Run first = resolve({"fixture-versions", "jinja2", "-o", "pylock.toml"}, o);
  INFO(describe(first));
  REQUIRE(first.status == 0);
  std::map<std::string, std::string> old = {
      {"fixture-versions", "2.0.1"}, {"jinja2", "3.1.6"}, {"markupsafe", "3.0.2"}};
  REQUIRE(lock_versions(dir / "pylock.toml") == old);

  // Newer fixture-versions and MarkupSafe are published, and a new package whose only version
  // needs a Python the target lacks, through a dependency.
  srv.regenerate(R"({"releases": [
    {"name": "fixture-versions", "version": "2.2.0", "family": "synthetic", "indexes": ["pypi"],
     "requires_python": ">=3.8", "wheels": ["py3-none-any"], "verification": "illustrative"},
    {"name": "MarkupSafe", "version": "3.1.0", "family": "dep", "indexes": ["pypi"],
     "requires_python": ">=3.9", "wheels": ["py3-none-any"], "filename_name": "MarkupSafe",
     "verification": "illustrative"},
    {"name": "fixture-needs-py312", "version": "1.0", "family": "synthetic", "indexes": ["pypi"],
     "requires_python": ">=3.8", "requires_dist": ["fixture-py312>=2.0"], "wheels": ["py3-none-any"],
     "verification": "illustrative"}]})");

  // --refresh: the pages are cacheable for 600 s; the new versions must be seen.
  Run again = resolve({"fixture-versions", "jinja2", "-o", "pylock.toml", "--refresh"}, o);
  INFO(describe(again));
  REQUIRE(again.status == 0);
  CHECK(lock_versions(dir / "pylock.toml") == old);

  Run one =
      resolve({"fixture-versions", "jinja2", "-o", "pylock.toml", "-P", "fixture-versions"}, o);
  INFO(describe(one));
  REQUIRE(one.status == 0);
  CHECK(lock_versions(dir / "pylock.toml") ==
        std::map<std::string, std::string>{
            {"fixture-versions", "2.2.0"}, {"jinja2", "3.1.6"}, {"markupsafe", "3.0.2"}});

  Run all = resolve({"fixture-versions", "jinja2", "-o", "pylock.toml", "-U"}, o);
  INFO(describe(all));
  REQUIRE(all.status == 0);
  CHECK(lock_versions(dir / "pylock.toml") ==
        std::map<std::string, std::string>{
            {"fixture-versions", "2.2.0"}, {"jinja2", "3.1.6"}, {"markupsafe", "3.1.0"}});

  // A needs B>=2 and B>=2 needs Python >= 3.12.
  Run py311 = resolve({"fixture-needs-py312", "-o", "-"}, o);
  INFO(describe(py311));
  CHECK(py311.status == 1);
  CHECK(py311.out.empty());
  CHECK(py311.err ==
        "error: no solution: fixture-py312==2.0 needs Python >= 3.12, and fixture-needs-py312 "
        "needs fixture-py312\n"
        "  Because fixture-needs-py312 depends on fixture-py312>=2.0 and fixture-py312==2.0 needs "
        "Python >= 3.12, "
        "fixture-needs-py312 cannot be used.\n"
        "  And because you require fixture-needs-py312, version solving failed.\n");
  Options o312 = o;
  o312.python = "3.12";
  Run py312 = resolve({"fixture-needs-py312", "-o", "-"}, o312);
  INFO(describe(py312));
  CHECK(py312.status == 0);
}

TEST_CASE("resolve explains bad input with exact messages and exit codes", "[resolve][errors]") {
  Options o;
  o.cwd = fresh_dir("errors");

  SECTION("an unknown package: no solution, exit 1") {
    Run r = resolve({"no-such-package", "-o", "-"}, o);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(errors_of(r) ==
          "error: no solution: 'no-such-package' is not on http://INDEX/simple/\n"
          "  Because you require no-such-package and there are no versions of no-such-package, "
          "version solving "
          "failed.\n");
  }
  SECTION("an invalid requirement argument: exit 3 with the text and column") {
    expect_resolve_error({"jinja2", "numpy>=2,<"}, o, 3,
                         "error: argument 2:11: invalid requirement 'numpy>=2,<': invalid version "
                         "specifier '<': expected a version "
                         "after '<'\n");
  }
  SECTION("an invalid requirement in a file: exit 3 naming file, line and column") {
    write_file(o.cwd / "bad.txt", "jinja2\n  torch[cuda\n");
    expect_resolve_error({"-r", "bad.txt"}, o, 3,
                         "error: bad.txt:2:13: invalid requirement 'torch[cuda': expected ']' to "
                         "close the '[' at column 6\n");
  }
  SECTION("an unreachable index: exit 4") {
    Options down = o;
    down.index_url = "http://127.0.0.1:1/simple/";
    Run r = resolve({"jinja2", "-o", "-"}, down);
    INFO(describe(r));
    CHECK(r.status == 4);
    CHECK(r.err.starts_with("error: http://127.0.0.1:1/simple/jinja2/: cannot reach the server"));
    CHECK(r.err.find("while listing the versions of jinja2") != std::string::npos);
  }
  SECTION("a dependency that has only an sdist") {
    expect_resolve_error(
        {"fixture-needs-sdist"}, o, 1,
        "error: no solution: fixture-sdistonly has only a source distribution (gpulock locks "
        "wheels; building "
        "sdists is out of scope), and fixture-needs-sdist needs fixture-sdistonly\n"
        "  Because fixture-needs-sdist depends on fixture-sdistonly>=1.0 and fixture-sdistonly has "
        "only a source "
        "distribution (gpulock locks wheels; building sdists is out of scope), fixture-needs-sdist "
        "cannot be used.\n"
        "  And because you require fixture-needs-sdist, version solving failed.\n"
        "hint: fixture-sdistonly has only source distributions on the index; gpulock does not "
        "build sdists\n");
  }
  SECTION("wheels only for other platforms") {
    expect_resolve_error(
        {"fixture-winonly"}, o, 1,
        "error: no solution: fixture-winonly has no wheel for cp311-manylinux_2_28_x86_64 (wheels "
        "exist only for "
        "other platforms or Pythons)\n"
        "  Because you require fixture-winonly and fixture-winonly has no wheel for "
        "cp311-manylinux_2_28_x86_64 "
        "(wheels exist only for other platforms or Pythons), version solving failed.\n"
        "hint: fixture-winonly has wheels only for other platforms or Pythons than "
        "cp311-manylinux_2_28_x86_64\n");
  }
  SECTION("a yanked version that is not pinned with ==") {
    expect_resolve_error({"filelock>=3.20"}, o, 1,
                         "error: no solution: filelock==3.20.0 is yanked\n"
                         "  Because you require filelock>=3.20 and filelock==3.20.0 is yanked, "
                         "version solving failed.\n"
                         "hint: yanked versions of filelock (3.20.0) are used only when a "
                         "requirement pins them exactly with ==\n");
  }
  SECTION("Requires-Python of the only matching version") {
    expect_resolve_error({"fixture-py312>=2"}, o, 1,
                         "error: no solution: fixture-py312==2.0 needs Python >= 3.12\n"
                         "  Because you require fixture-py312>=2 and fixture-py312==2.0 needs "
                         "Python >= 3.12, version solving "
                         "failed.\n");
  }
  SECTION("pre-releases disallowed") {
    expect_resolve_error(
        {"fixture-conflict", "--prerelease", "disallow"}, o, 1,
        "error: no solution: mpmath==1.4.0a1 is a pre-release and pre-releases are disallowed, and "
        "fixture-conflict needs mpmath\n"
        "  Because fixture-conflict depends on mpmath>=1.4.0a1 and mpmath==1.4.0a1 is a "
        "pre-release and "
        "pre-releases are disallowed, fixture-conflict cannot be used.\n"
        "  And because you require fixture-conflict, version solving failed.\n"
        "hint: pre-releases of mpmath would satisfy the requirements (1.4.0a1), but pre-releases "
        "are disallowed "
        "(try --prerelease allow)\n");
  }
  SECTION("first-index: a version found only on a lower-priority index") {
    // The cu124 index mirrors the stale MarkupSafe 2.1.5; PyPI has 3.0.2.
    Options fi = o;
    fi.index_url = servers().torch_index_base() + "/cu124/";
    Run hinted = expect_resolve_error(
        {"markupsafe==3.0.2", "--extra-index-url", servers().pypi_url()}, fi, 1,
        "error: no solution: there is no version of markupsafe==3.0.2\n"
        "  Because you require markupsafe==3.0.2 and there is no version of markupsafe==3.0.2, "
        "version solving "
        "failed.\n"
        "hint: markupsafe was also found on http://INDEX/simple/, but under first-index only "
        "http://INDEX/whl/cu124/ is used for it (protection against dependency confusion); to take "
        "markupsafe "
        "from http://INDEX/simple/: `" +
            normalize(hint_command(
                {"markupsafe==3.0.2", "--extra-index-url", servers().pypi_url(), "-o", "-"}, fi,
                {"--index", "other=" + servers().pypi_url(), "--index-for", "markupsafe=other"})) +
            "` (or, trusting every index equally, `--index-strategy unsafe-best-match` instead of "
            "those two "
            "flags)\n");
    Run followed = run_hint(hint_line(hinted.err, "to take markupsafe"), fi);
    INFO(describe(followed));
    CHECK(followed.status == 0);
    CHECK(locked_version(followed.out, "markupsafe") == "3.0.2");
    Run best = resolve({"markupsafe==3.0.2", "--extra-index-url", servers().pypi_url(),
                        "--index-strategy", "unsafe-best-match", "-o", "-"},
                       fi);
    INFO(describe(best));
    CHECK(best.status == 0);
  }
}

TEST_CASE("resolve --explain and --report describe the resolution", "[resolve][report]") {
  fs::path dir = fresh_dir("report-ordinary");
  Options o;
  o.cwd = dir;
  Run r = resolve({"jinja2", "fixture-markers[remote]", "-o", "pylock.toml", "--explain",
                   "--report", "report.json"},
                  o);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  check_golden("explain_ordinary.txt", normalize(r.out));
  std::string report = normalize_report(read_file(dir / "report.json"));
  check_golden("report_ordinary.json", report);
  // Fields a tool relies on, whatever the golden says.
  CHECK(report.find("\"schema\": \"gpulock.resolve-report/2\"") != std::string::npos);
  CHECK(report.find("\"solved\": true") != std::string::npos);
  CHECK(report.find("\"requirement\": \"fsspec>=2024.6\"") != std::string::npos);
  CHECK(report.find("\"timings_ms\": {") != std::string::npos);
  CHECK(report.find("\"requests\": {") != std::string::npos);

  SECTION("a failed resolution's report carries the explanation and hints") {
    Run f = resolve({"fixture-needs-sdist", "-o", "pylock2.toml", "--report", "failed.json"}, o);
    INFO(describe(f));
    CHECK(f.status == 1);
    CHECK(!fs::exists(dir / "pylock2.toml"));
    check_golden("report_no_solution.json", normalize_report(read_file(dir / "failed.json")));
  }
}

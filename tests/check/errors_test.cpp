// Exit codes other than drift (DESIGN.md §Commands), and locks gpulock did not write.
#include "check_support.h"

using namespace check_test;

TEST_CASE("check: a lock that breaks PEP 751 is exit 3, a missing one 74, a bad flag 2",
          "[check][errors]") {
  Workdir w("errors");
  write_file(w / "bad.toml",
             "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"A\"\n");
  auto bad = w.gpulock("check --lock bad.toml");
  CHECK(bad.status == 3);
  CHECK(bad.err.starts_with("error: bad.toml:"));
  CHECK(bad.out.empty());

  auto missing = w.gpulock("check --lock nothing-here.toml");
  CHECK(missing.status == 74);
  CHECK(missing.err.starts_with("error: "));
  CHECK(missing.err.find("nothing-here.toml") != std::string::npos);

  auto flag = w.gpulock("check --format yaml");
  CHECK(flag.status == 2);

  auto driver = w.gpulock("check --lock bad.toml", "GPULOCK_DRIVER=not-a-driver");
  CHECK(driver.status == 3);  // the lock is read first
}

TEST_CASE("check: a lock without [tool.gpulock] warns that its inputs are not recorded",
          "[check][errors]") {
  Workdir w("foreign");
  fs::copy_file(gpulock::test::source_dir() / "fixtures/locks/foreign/uv-export.toml",
                w / "pylock.toml");
  auto r = w.gpulock("check", "GPULOCK_DRIVER=550.54.14 GPULOCK_GPU_ARCH=sm_90");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  auto out = lines_of(r.out);
  REQUIRE(out.size() >= 3);
  CHECK(out[0] == "inputs: 1 warning");
  CHECK(out[2] ==
        "  warning: the lock records no inputs ([tool.gpulock.inputs]), so they cannot be checked");
  CHECK(out.back() == "pylock.toml: no drift, 1 warning");
  // --strict: warnings fail.
  auto strict = w.gpulock("check --strict", "GPULOCK_DRIVER=550.54.14 GPULOCK_GPU_ARCH=sm_90");
  CHECK(strict.status == 1);
  CHECK(lines_of(strict.out).at(2) ==
        "  error: the lock records no inputs ([tool.gpulock.inputs]), so they cannot be checked");
}

TEST_CASE("check: an environment whose interpreter cannot run is exit 74, not drift",
          "[check][errors]") {
  Workdir w("bad-python");
  fs::copy_file(gpulock::test::source_dir() / "fixtures/locks/gpulock-cu124.toml",
                w / "pylock.toml");
  auto missing = w.gpulock("check --env --python /nonexistent/python");
  CHECK(missing.status == 74);
  CHECK(missing.out.empty());
  CHECK(missing.err == "error: cannot run '/nonexistent/python': No such file or directory\n");

  auto not_python = w.gpulock("check --env --python /bin/false");
  CHECK(not_python.status == 74);
  CHECK(not_python.out.empty());
  CHECK(not_python.err.starts_with(
      "error: /bin/false: the interpreter failed to report its site-packages"));
  CHECK(not_python.err.find("\nhint: ") != std::string::npos);
}

TEST_CASE("check: resolve's input flags are refused as resolve refuses them", "[check][errors]") {
  Workdir w("bad-flags");
  fs::copy_file(gpulock::test::source_dir() / "fixtures/locks/gpulock-cu124.toml",
                w / "pylock.toml");
  // A requirement that does not parse: invalid input (3) naming the argument, as resolve says.
  auto bad = w.gpulock("check --inputs torch==2.5.1 'filelock>=['");
  CHECK(bad.status == 3);
  CHECK(bad.out.empty());
  CHECK(bad.err ==
        "error: argument 2:11: invalid requirement 'filelock>=[': invalid version specifier "
        "'>=[': expected a release number\n");
  auto resolve = w.gpulock("resolve 'filelock>=[' -o -");
  CHECK(resolve.status == 3);
  CHECK(resolve.err.starts_with(
      "error: argument 1:11: invalid requirement 'filelock>=[': invalid version specifier"));

  // A --torch-backend resolve refuses: a usage error (2) here too, not "option-changed" drift
  // (issue 21: check accepted 'cu!' and reported drift, exit 1).
  auto backend = w.gpulock("check --inputs torch==2.5.1 --torch-backend 'cu!'");
  CHECK(backend.status == 2);
  CHECK(backend.out.empty());
  CHECK(backend.err ==
        "error: invalid --torch-backend 'cu!': expected auto, cpu or cuXYZ (e.g. cu124)\n");
  auto resolve_backend = w.gpulock("resolve torch --torch-backend 'cu!' --driver 550.54.14 -o -");
  CHECK(resolve_backend.status == 2);
  CHECK(resolve_backend.err == backend.err);

  // --extra without --project: a usage error (2), not "extra-added" drift.
  auto extra = w.gpulock("check --inputs torch==2.5.1 --extra fs");
  CHECK(extra.status == 2);
  CHECK(extra.out.empty());
  CHECK(extra.err == "error: --extra and --group need --project PYPROJECT\n");

  // resolve's `--index NAME=URL` copied into check, where --index is the layer flag: exit 2.
  auto named = w.gpulock("check --inputs --index pinned=https://example.org/simple/ torch==2.5.1");
  CHECK(named.status == 2);
  CHECK(named.out.empty());
  CHECK(named.err ==
        "error: 'pinned=https://example.org/simple/' looks like resolve's --index NAME=URL, which "
        "check does not take: --index selects the index layer here\nhint: leave out --index "
        "NAME=URL and --index-for; the lock records its indexes and `check --index` reads them "
        "from it\n");

  // An unreadable -r file given to check: exit 74 naming it.
  auto missing = w.gpulock("check --inputs -r nothing.txt");
  CHECK(missing.status == 74);
  CHECK(missing.err.starts_with("error: nothing.txt"));
}

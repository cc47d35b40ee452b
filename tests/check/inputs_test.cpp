// The inputs layer: the lock's record of its inputs against the files and flags (no network).
#include "check_support.h"

using namespace check_test;

namespace {

// A lock written by `gpulock resolve -r requirements.txt -c constraints.txt` (CPU only).
struct InputsLock {
  Workdir w;
  std::string url = gpulock::test::shared_servers().http_url();
  std::string resolve_args;
  explicit InputsLock(const std::string& name) : w(name) {
    write_file(w / "requirements.txt", "jinja2==3.1.4\n");
    write_file(w / "constraints.txt", "markupsafe<3.1\n");
    resolve_args = "-r requirements.txt -c constraints.txt " + fixture_indexes(url) + " " +
                   kTarget + " --driver none";
    auto r = w.gpulock("resolve " + resolve_args + " -o pylock.toml");
    INFO(r.err);
    REQUIRE(r.status == 0);
    check_lock_independently(w / "pylock.toml");
  }
};

}  // namespace

TEST_CASE("check inputs: a lock that matches its input files is clean (exit 0)",
          "[check][inputs]") {
  InputsLock l("inputs-clean");
  auto r = l.w.gpulock("check --inputs");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(lines_of(r.out).at(0) == "inputs: ok");
  CHECK(lines_of(r.out).back() == "pylock.toml: no drift");
  // Default layers without a virtualenv: inputs and machine.
  auto d = l.w.gpulock("check");
  CHECK(d.status == 0);
  CHECK(lines_of(d.out).at(2) ==
        "env: not checked (no --python, no active virtualenv, no ./.venv)");
}

TEST_CASE("check inputs: an edited requirements file is drift, with what it now asks",
          "[check][inputs]") {
  InputsLock l("inputs-edited");
  std::string before = sha256_of(l.w / "requirements.txt");
  write_file(l.w / "requirements.txt", "jinja2>=3.1.5\nfixture-versions>=2\n");
  std::string after = sha256_of(l.w / "requirements.txt");
  auto lock = scan_lock(l.w / "pylock.toml");
  const std::size_t line = lock.table("[tool.gpulock.inputs]");

  auto r = l.w.gpulock("check --inputs");
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  auto out = lines_of(r.out);
  REQUIRE(out.size() >= 6);
  CHECK(out[0] == "inputs: drift (1 error)");
  CHECK(out[2] == "  error: pylock.toml:" + std::to_string(line) +
                      ": requirements.txt changed since the lock was resolved (sha256 " +
                      before.substr(0, 12) + "... is now " + after.substr(0, 12) + "...)");
  CHECK(out[3] == "      line 1: jinja2>=3.1.5: the lock has jinja2 " + lock.at("jinja2").version);
  CHECK(out[4] == "      line 2: fixture-versions>=2: not in the lock");
  check_golden("inputs_edited.txt", replace_all(r.out, l.url, "<URL>"));

  // GitHub annotations, line by line.
  auto g = l.w.gpulock("check --inputs --format github");
  CHECK(g.status == 1);
  auto gl = lines_of(g.out);
  REQUIRE(gl.size() == 2);
  CHECK(gl[0] == "::error file=pylock.toml,line=" + std::to_string(line) +
                     "::requirements.txt changed since the lock was resolved (sha256 " +
                     before.substr(0, 12) + "... is now " + after.substr(0, 12) +
                     "...)%0A  line 1: jinja2>=3.1.5: the lock has jinja2 " +
                     lock.at("jinja2").version +
                     "%0A  line 2: fixture-versions>=2: not in the lock%0Ahint: update the lock: "
                     "gpulock resolve " +
                     l.resolve_args + " -o pylock.toml");
  CHECK(gl[1] == "gpulock check pylock.toml (inputs): drift found: 1 error");

  // A comment-only edit is still a changed input, explained as such.
  write_file(l.w / "requirements.txt", "# pinned for CI\njinja2==3.1.4\n");
  auto c = l.w.gpulock("check --inputs");
  CHECK(c.status == 1);
  CHECK(lines_of(c.out).at(3) ==
        "      every requirement in it is still met by the locked versions");
}

TEST_CASE("check inputs: a removed constraints file and an edited record", "[check][inputs]") {
  InputsLock l("inputs-missing");
  auto lock = scan_lock(l.w / "pylock.toml");
  const std::size_t line = lock.table("[tool.gpulock.inputs]");
  fs::remove(l.w / "constraints.txt");
  auto r = l.w.gpulock("check --inputs");
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  CHECK(lines_of(r.out).at(2) ==
        "  error: pylock.toml:" + std::to_string(line) +
            ": constraints.txt (constraints file the lock was resolved from) is missing");

  // Editing [tool.gpulock.inputs] by hand breaks its sha256.
  write_file(l.w / "constraints.txt", "markupsafe<3.1\n");
  std::string text = read_file(l.w / "pylock.toml");
  text = replace_all(text, "requirements = []", "requirements = [\"numpy\"]");
  write_file(l.w / "pylock.toml", text);
  auto e = l.w.gpulock("check --inputs --format json");
  INFO(e.out << e.err);
  CHECK(e.status == 1);
  CHECK(e.out.find("\"kind\": \"inputs-record-edited\"") != std::string::npos);
  CHECK(e.out.find("\"message\": \"the lock's [tool.gpulock.inputs] does not match its sha256: the "
                   "record was "
                   "edited after gpulock wrote it\"") != std::string::npos);
}

TEST_CASE("check inputs: resolve's flags given to check are compared with the record",
          "[check][inputs]") {
  InputsLock l("inputs-flags");
  auto lock = scan_lock(l.w / "pylock.toml");
  const std::string at =
      "  error: pylock.toml:" + std::to_string(lock.table("[tool.gpulock.inputs]")) + ": ";

  // The same flags: clean.
  auto same = l.w.gpulock("check --inputs " + l.resolve_args);
  INFO(same.out << same.err);
  CHECK(same.status == 0);
  CHECK(lines_of(same.out).at(1) ==
        "  2 input files, 0 requirement arguments, 4 options recorded; compared with the input "
        "flags given");

  // Another requirement argument, a file left out, another option, another index.
  auto r = l.w.gpulock("check --inputs numpy -r requirements.txt --pre " + std::string(kTarget));
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  auto out = lines_of(r.out);
  REQUIRE(out.size() >= 7);
  CHECK(out[0] == "inputs: drift (4 errors)");
  CHECK(out[2] == at + "the requirement numpy is given but the lock was not resolved with it");
  CHECK(out[3] ==
        at + "the lock was resolved from constraints.txt (constraints file), which is not given");
  CHECK(out[4] == at + "--prerelease is allow but the lock was resolved with if-necessary");
  CHECK(out[5] == at +
                      "the indexes given (default https://pypi.org/simple/) are not the ones the "
                      "lock was resolved "
                      "from (default " +
                      l.url + "/simple/)");
  CHECK(out[6] == "    hint: the lock was resolved with: gpulock resolve " + l.resolve_args +
                      " -o pylock.toml");

  // Another target and torch backend.
  auto t = l.w.gpulock(
      "check --inputs -r requirements.txt -c constraints.txt " + fixture_indexes(l.url) +
      " --python-version 3.12 --platform manylinux_2_28_x86_64 --torch-backend cpu");
  INFO(t.out << t.err);
  CHECK(t.status == 1);
  auto tl = lines_of(t.out);
  REQUIRE(tl.size() >= 4);
  CHECK(tl[2] == at + "--torch-backend cpu is given but the lock was resolved without it");
  CHECK(tl[3] == at + "--python-version is 3.12 but the lock is for Python 3.11");

  // The machine the lock was resolved for (--driver none here, recorded as an input, issue 16):
  // compared when check is given one, never when it is not (check then describes this machine).
  CHECK(read_file(l.w / "pylock.toml").find("driver = \"none\"") != std::string::npos);
  std::string other_machine =
      replace_all(l.resolve_args, "--driver none", "--driver 550.54.14 --gpu-arch sm_90");
  REQUIRE(other_machine != l.resolve_args);
  auto m = l.w.gpulock("check --inputs " + other_machine);
  INFO(m.out << m.err);
  CHECK(m.status == 1);
  auto ml = lines_of(m.out);
  REQUIRE(ml.size() >= 4);
  CHECK(ml[2] == at + "--driver is 550.54.14 but the lock was resolved with none");
  CHECK(ml[3] == at + "--gpu-arch sm_90 is given but the lock was resolved without it");
  auto unsaid = l.w.gpulock("check --inputs " + replace_all(l.resolve_args, "--driver none", ""));
  INFO(unsaid.out << unsaid.err);
  CHECK(unsaid.status == 0);
}

TEST_CASE("check inputs: recorded paths are relative to the lock, wherever check runs",
          "[check][inputs]") {
  Workdir w("inputs-relative");
  const std::string url = gpulock::test::shared_servers().http_url();
  write_file(w / "reqs/requirements.txt", "jinja2==3.1.4\n");
  fs::create_directories(w / "locks");
  auto r = w.gpulock("resolve -r reqs/requirements.txt " + fixture_indexes(url) + " " + kTarget +
                     " --driver none -o locks/pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(read_file(w / "locks/pylock.toml").find("path = \"../reqs/requirements.txt\"") !=
        std::string::npos);
  // From another directory, naming the lock with --lock or with resolve's -o.
  fs::create_directories(w / "elsewhere");
  // Without the test machine's configuration variables (PIP_FIND_LINKS...): one set now and not
  // when the lock was made is input drift.
  auto from = w.shell("cd elsewhere && env " + std::string(Workdir::kNoConfiguration) +
                      " NO_COLOR=1 GPULOCK_DRIVER=none " + shell_quote(GPULOCK_EXE) +
                      " check --inputs --lock ../locks/pylock.toml");
  INFO(from.out << from.err);
  CHECK(from.status == 0);
  write_file(w / "reqs/requirements.txt", "jinja2==3.1.5\n");
  auto changed = w.gpulock("check --inputs -o locks/pylock.toml");
  CHECK(changed.status == 1);
  CHECK(lines_of(changed.out).at(3) == "      line 1: jinja2==3.1.5: the lock has jinja2 3.1.4");
  CHECK(lines_of(changed.out)
            .at(2)
            .find(": ../reqs/requirements.txt changed since the lock was resolved") !=
        std::string::npos);
}

TEST_CASE("check inputs: a pyproject.toml input and its extras", "[check][inputs]") {
  Workdir w("inputs-project");
  const std::string url = gpulock::test::shared_servers().http_url();
  const std::string project =
      "[project]\nname = \"demo\"\nversion = \"0.1\"\ndependencies = [\"jinja2==3.1.4\"]\n"
      "[project.optional-dependencies]\nfs = [\"fsspec\"]\n";
  write_file(w / "pyproject.toml", project);
  auto r = w.gpulock("resolve --project pyproject.toml --extra fs " + fixture_indexes(url) + " " +
                     kTarget + " --driver none -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string at =
      "  error: pylock.toml:" +
      std::to_string(scan_lock(w / "pylock.toml").table("[tool.gpulock.inputs]")) + ": ";
  CHECK(w.gpulock("check --inputs").status == 0);
  write_file(w / "pyproject.toml",
             replace_all(project, "\"jinja2==3.1.4\"", "\"jinja2==3.1.4\", \"filelock<3\""));
  auto c = w.gpulock("check --inputs --project pyproject.toml " + fixture_indexes(url));
  INFO(c.out << c.err);
  CHECK(c.status == 1);
  auto out = lines_of(c.out);
  REQUIRE(out.size() >= 6);
  CHECK(out[2].starts_with(at + "pyproject.toml changed since the lock was resolved (sha256 "));
  CHECK(out[3] == "      line 4: filelock<3: not in the lock");
  CHECK(out[5] == at + "the lock was resolved with the extra fs, which is not given");
}

TEST_CASE("check inputs: a requirement argument left out and a file given that was not recorded",
          "[check][inputs]") {
  Workdir w("inputs-added");
  const std::string url = gpulock::test::shared_servers().http_url();
  write_file(w / "requirements.txt", "jinja2==3.1.4\n");
  write_file(w / "more.txt", "filelock\n");
  const std::string resolve_args =
      "filelock -r requirements.txt " + fixture_indexes(url) + " " + kTarget + " --driver none";
  auto r = w.gpulock("resolve " + resolve_args + " -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  check_lock_independently(w / "pylock.toml");
  const std::string line =
      std::to_string(scan_lock(w / "pylock.toml").table("[tool.gpulock.inputs]"));

  // The requirement moved from the command line into another file: both sides are drift.
  auto c = w.gpulock("check --inputs -r requirements.txt -r more.txt " + fixture_indexes(url) +
                     " " + kTarget);
  INFO(c.out << c.err);
  CHECK(c.status == 1);
  auto out = lines_of(c.out);
  REQUIRE(out.size() >= 5);
  CHECK(out[0] == "inputs: drift (2 errors)");
  CHECK(out[1] ==
        "  1 input file, 1 requirement argument, 4 options recorded; compared with the input "
        "flags given");
  CHECK(out[2] == "  error: pylock.toml:" + line +
                      ": the lock was resolved with the requirement filelock, which is not given");
  CHECK(out[3] == "  error: pylock.toml:" + line +
                      ": more.txt (requirements file) is given but the lock was not resolved "
                      "from it");
  CHECK(out[4] == "    hint: the lock was resolved with: gpulock resolve " + resolve_args +
                      " -o pylock.toml");

  // The same in JSON: kinds, subjects, expected / actual.
  auto j = w.gpulock("check --inputs --json -r requirements.txt -r more.txt " +
                     fixture_indexes(url) + " " + kTarget);
  CHECK(j.status == 1);
  const std::string removed =
      "\"kind\": \"requirement-removed\",\n      \"severity\": \"error\",\n      \"subject\": "
      "\"filelock\"";
  const std::string added =
      "\"kind\": \"input-added\",\n      \"severity\": \"error\",\n      \"subject\": "
      "\"more.txt\"";
  CHECK(j.out.find(removed) != std::string::npos);
  CHECK(j.out.find(added) != std::string::npos);
  CHECK(j.out.find("\"expected\": \"filelock\",\n      \"actual\": null") != std::string::npos);
  CHECK(j.out.find("\"expected\": null,\n      \"actual\": \"more.txt\"") != std::string::npos);

  // The very flags of the resolve: clean.
  auto same = w.gpulock("check --inputs " + resolve_args);
  INFO(same.out);
  CHECK(same.status == 0);
}

TEST_CASE("check inputs: extras and dependency groups added and removed", "[check][inputs]") {
  Workdir w("inputs-groups");
  const std::string url = gpulock::test::shared_servers().http_url();
  write_file(w / "pyproject.toml",
             "[project]\nname = \"demo\"\nversion = \"0.1\"\ndependencies = [\"jinja2==3.1.4\"]\n"
             "[project.optional-dependencies]\nfs = [\"fsspec\"]\n"
             "[dependency-groups]\ntest = [\"filelock\"]\nlint = [\"typing-extensions\"]\n");
  const std::string indexes = fixture_indexes(url);
  auto r = w.gpulock("resolve --project pyproject.toml --group test " + indexes + " " + kTarget +
                     " --driver none -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  check_lock_independently(w / "pylock.toml");
  const std::string at =
      "  error: pylock.toml:" +
      std::to_string(scan_lock(w / "pylock.toml").table("[tool.gpulock.inputs]")) + ": ";
  CHECK(w.gpulock("check --inputs --project pyproject.toml --group test " + indexes).status == 0);

  auto c = w.gpulock("check --inputs --project pyproject.toml --extra fs --group lint " + indexes);
  INFO(c.out << c.err);
  CHECK(c.status == 1);
  auto out = lines_of(c.out);
  REQUIRE(out.size() >= 6);
  CHECK(out[0] == "inputs: drift (3 errors)");
  CHECK(out[2] == at + "the extra fs is given but the lock was resolved without it");
  CHECK(out[3] == at + "the group lint is given but the lock was resolved without it");
  CHECK(out[4] == at + "the lock was resolved with the group test, which is not given");
  CHECK(
      out[5].starts_with("    hint: the lock was resolved with: gpulock resolve --project "
                         "pyproject.toml --group test "));

  auto j = w.gpulock(
      "check --inputs --format json --project pyproject.toml --extra fs --group "
      "lint " +
      indexes);
  CHECK(j.status == 1);
  for (const char* kind : {"extra-added", "group-added", "group-removed"})
    CHECK(j.out.find(std::string("\"kind\": \"") + kind + "\"") != std::string::npos);
}

TEST_CASE("check inputs: a file included with -r is an input of its own", "[check][inputs]") {
  Workdir w("inputs-nested");
  const std::string url = gpulock::test::shared_servers().http_url();
  write_file(w / "requirements.txt", "-r base.txt\njinja2==3.1.4\n");
  write_file(w / "base.txt", "filelock<3.17\n");
  auto r = w.gpulock("resolve -r requirements.txt " + fixture_indexes(url) + " " + kTarget +
                     " --driver none -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  check_lock_independently(w / "pylock.toml");
  const LockScan lock = scan_lock(w / "pylock.toml");
  const std::string text = read_file(w / "pylock.toml");
  CHECK(text.find("{ path = \"base.txt\", kind = \"requirements\", sha256 = \"" +
                  sha256_of(w / "base.txt") + "\" }") != std::string::npos);
  CHECK(w.gpulock("check --inputs").status == 0);

  // Only the included file changes: it is the one named, with its own line numbers.
  const std::string before = sha256_of(w / "base.txt");
  write_file(w / "base.txt", "filelock>=3.17\n");
  auto c = w.gpulock("check --inputs");
  INFO(c.out << c.err);
  CHECK(c.status == 1);
  auto out = lines_of(c.out);
  REQUIRE(out.size() >= 4);
  CHECK(out[0] == "inputs: drift (1 error)");
  CHECK(out[2] == "  error: pylock.toml:" + std::to_string(lock.table("[tool.gpulock.inputs]")) +
                      ": base.txt changed since the lock was resolved (sha256 " +
                      before.substr(0, 12) + "... is now " +
                      sha256_of(w / "base.txt").substr(0, 12) + "...)");
  CHECK(out[3] ==
        "      line 1: filelock>=3.17: the lock has filelock " + lock.at("filelock").version);
}

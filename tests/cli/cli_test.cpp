// `gpulock` itself, before any command runs: version, help, unknown commands and the output
// convention (DESIGN.md §CLI): results on stdout; `error:` then `hint:` lines on stderr; exit 2
// for usage errors; colour only on a terminal or when asked for, never with NO_COLOR.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "golden.h"

using gpulock::test::describe;
using gpulock::test::Env;
using gpulock::test::RunResult;

namespace {

// A minimal, colour-free environment: nothing inherited from the test runner.
Env plain_env() {
  return {{"PATH", "/usr/bin:/bin"}, {"NO_COLOR", "1"}, {"HOME", "/nonexistent"}};
}

RunResult gpulock_run(std::vector<std::string> args, const Env& env = plain_env()) {
  args.insert(args.begin(), GPULOCK_EXE);
  return gpulock::test::run_process(args, env);
}

std::string golden_path(const std::string& name) {
  return std::string(GPULOCK_SOURCE_DIR) + "/tests/cli/golden/" + name;
}

// The command names listed under "Subcommands:" in the overview.
std::vector<std::string> listed_commands(const std::string& help) {
  std::vector<std::string> names;
  auto at = help.find("Subcommands:\n");
  REQUIRE(at != std::string::npos);
  std::size_t pos = at + std::string("Subcommands:\n").size();
  while (pos < help.size() && help.compare(pos, 2, "  ") == 0) {
    auto end = help.find_first_of(" \n", pos + 2);
    names.push_back(help.substr(pos + 2, end - pos - 2));
    pos = help.find('\n', pos) + 1;
  }
  return names;
}

}  // namespace

TEST_CASE("gpulock --version and -V print the project's version on stdout", "[cli]") {
  for (const char* flag : {"--version", "-V"}) {
    auto r = gpulock_run({flag});
    INFO(flag << "\n" << describe(r));
    CHECK(r.status == 0);
    CHECK(r.out == std::string("gpulock ") + GPULOCK_PROJECT_VERSION + "\n");
    CHECK(r.err.empty());
  }
}

TEST_CASE("gpulock --help, -h and `help` print the same overview (golden)", "[cli][golden]") {
  auto r = gpulock_run({"--help"});
  INFO(describe(r));
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  GPULOCK_CHECK_GOLDEN(golden_path("help.txt"), r.out);
  for (const char* form : {"-h", "help"}) {
    auto other = gpulock_run({form});
    INFO(form);
    CHECK(other.status == 0);
    CHECK(other.out == r.out);
  }
}

TEST_CASE("`help COMMAND` and `COMMAND --help` agree for every listed command", "[cli]") {
  auto overview = gpulock_run({"--help"});
  auto names = listed_commands(overview.out);
  CHECK(names.size() >= 8);
  for (const auto& name : names) {
    if (name == "help") continue;
    INFO(name);
    auto via_help = gpulock_run({"help", name});
    auto via_flag = gpulock_run({name, "--help"});
    CHECK(via_help.status == 0);
    CHECK(via_flag.status == 0);
    CHECK(via_help.out == via_flag.out);
    CHECK(via_help.out.find("Usage: gpulock " + name + " [OPTIONS]") != std::string::npos);
    CHECK(via_help.err.empty());
  }
}

TEST_CASE("an unknown command suggests the closest one and exits 2", "[cli][bad]") {
  auto r = gpulock_run({"reslove", "torch"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "error: unknown command 'reslove'\n"
        "hint: did you mean 'gpulock resolve'?\n"
        "hint: run 'gpulock --help' for the list of commands\n");

  auto far = gpulock_run({"xyzzy"});
  CHECK(far.status == 2);
  CHECK(far.err ==
        "error: unknown command 'xyzzy'\n"
        "hint: run 'gpulock --help' for the list of commands\n");

  // Global options before the command are skipped, with their values.
  auto after_flags = gpulock_run({"--color", "never", "-q", "chek"});
  CHECK(after_flags.status == 2);
  CHECK(after_flags.err.find("hint: did you mean 'gpulock check'?\n") != std::string::npos);
}

TEST_CASE("`help` of an unknown command exits 2 with a suggestion", "[cli][bad]") {
  auto r = gpulock_run({"help", "expotr"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "error: unknown command 'expotr'\n"
        "hint: did you mean 'gpulock help export'?\n"
        "hint: run 'gpulock --help' for the list of commands\n");
}

TEST_CASE("usage errors: an unknown flag, a bad value, no command", "[cli][bad]") {
  auto flag = gpulock_run({"resolve", "--no-such-flag"});
  INFO(describe(flag));
  CHECK(flag.status == 2);
  CHECK(flag.out.empty());
  CHECK(flag.err.starts_with("error: "));
  CHECK(flag.err.ends_with("hint: run 'gpulock resolve --help' for usage\n"));

  auto value = gpulock_run({"--color", "sometimes", "probe", "--machine"});
  CHECK(value.status == 2);
  CHECK(value.err.starts_with("error: "));
  CHECK(value.err.find("sometimes") != std::string::npos);

  // No command: the overview, on stderr, and exit 2 (as uv and cargo do).
  auto none = gpulock_run({});
  CHECK(none.status == 2);
  CHECK(none.out.empty());
  CHECK(none.err.starts_with("error: no command given\n"));
  CHECK(none.err.find("Subcommands:\n") != std::string::npos);

  // A mistyped flag gets a suggestion, as a mistyped command does (issue 16).
  auto typo = gpulock_run({"resolve", "--torch-bakend", "cu126", "torch"});
  CHECK(typo.status == 2);
  CHECK(typo.err ==
        "error: unknown flag '--torch-bakend'\n"
        "hint: did you mean '--torch-backend'?\n"
        "hint: run 'gpulock resolve --help' for usage\n");

  // Words a user reads, not a parser's field names (issue 41 item 8).
  auto one = gpulock_run({"diff", "a.toml"});
  CHECK(one.status == 2);
  CHECK(one.err.starts_with("error: diff needs OLD and NEW (two lock files); only one given\n"));
  CHECK(one.err.find("new is required") == std::string::npos);
  auto format = gpulock_run({"export", "--format", "requirements"});
  CHECK(format.status == 2);
  CHECK(
      format.err.starts_with("error: --format: 'requirements' is not a format (the format is "
                             "requirements-txt); did you mean 'requirements-txt'?\n"));
}

TEST_CASE("help of a nested command", "[cli][help]") {
  auto r = gpulock_run({"help", "index", "show"});
  INFO(describe(r));
  CHECK(r.status == 0);
  CHECK(r.out.find("gpulock index show") != std::string::npos);
  auto bad = gpulock_run({"help", "index", "shwo"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("hint: did you mean 'gpulock help index show'?\n") != std::string::npos);
}

TEST_CASE("colour: never with NO_COLOR or off a terminal, forced with CLICOLOR_FORCE",
          "[cli][color]") {
  auto plain = gpulock_run({"reslove"});
  CHECK(plain.err.find('\x1b') == std::string::npos);

  Env forced = plain_env();
  forced.erase("NO_COLOR");
  forced["CLICOLOR_FORCE"] = "1";
  auto forced_run = gpulock_run({"reslove"}, forced);
  CHECK(forced_run.status == 2);
  CHECK(forced_run.err.find("\x1b[") != std::string::npos);

  // NO_COLOR beats CLICOLOR_FORCE (https://no-color.org).
  forced["NO_COLOR"] = "1";
  CHECK(gpulock_run({"reslove"}, forced).err.find('\x1b') == std::string::npos);
}

// Child processes (gpulock/sys/process.h): forked calls and spawned programs with a deadline,
// their process groups, and run_program for the workflows (an interpreter, pip).
#include "gpulock/sys/process.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

using namespace gpulock::sys;

TEST_CASE("a forked child reports through its pipe", "[sys][process]") {
  auto child = ChildProcess::fork_call([](int fd) { write_all(fd, "hello\n"); });
  REQUIRE(child);
  auto results = wait_all({&*child}, std::chrono::seconds(10));
  CHECK(results[0].end == ChildResult::End::Exited);
  CHECK(results[0].code == 0);
  CHECK(results[0].out == "hello\n");
}

TEST_CASE("a hanging child is killed at the deadline with what it wrote kept", "[sys][process]") {
  auto child = ChildProcess::fork_call([](int fd) {
    write_all(fd, "before\n");
    for (;;)
      ::pause();
  });
  REQUIRE(child);
  auto results = wait_all({&*child}, std::chrono::milliseconds(200));
  CHECK(results[0].end == ChildResult::End::TimedOut);
  CHECK(results[0].out == "before\n");
}

TEST_CASE("a crashing child is reported with its signal", "[sys][process]") {
  auto child = ChildProcess::fork_call([](int fd) {
    write_all(fd, "call\tx\n");
    ::signal(SIGSEGV, SIG_DFL);  // not a sanitizer's handler, which would exit instead
    ::raise(SIGSEGV);
  });
  REQUIRE(child);
  auto results = wait_all({&*child}, std::chrono::seconds(10));
  CHECK(results[0].end == ChildResult::End::Signaled);
  CHECK(signal_name(results[0].code) == "SIGSEGV");
  CHECK(results[0].out == "call\tx\n");
}

TEST_CASE("two children run at once, and one hanging does not hold up the other's result",
          "[sys][process]") {
  auto fast = ChildProcess::fork_call([](int fd) { write_all(fd, "fast\n"); });
  auto slow = ChildProcess::fork_call([](int) {
    for (;;)
      ::pause();
  });
  REQUIRE(fast);
  REQUIRE(slow);
  auto results = wait_all({&*fast, &*slow}, std::chrono::milliseconds(300));
  CHECK(results[0].end == ChildResult::End::Exited);
  CHECK(results[0].out == "fast\n");
  CHECK(results[1].end == ChildResult::End::TimedOut);
}

namespace {

// Is the process gone (or a zombie waiting for a reaper)?
bool gone(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

}  // namespace

TEST_CASE("a spawned program's grandchildren die with it at the deadline", "[sys][process]") {
  auto sh = find_on_path("sh");
  REQUIRE(sh);
  // The shell starts `sleep` and waits: killing the shell alone would leave sleep running and
  // the pipe open.
  auto child = ChildProcess::spawn(*sh, {"sh", "-c", "sleep 30 & echo $!; wait; echo never"});
  REQUIRE(child);
  auto results = wait_all({&*child}, std::chrono::milliseconds(300));
  CHECK(results[0].end == ChildResult::End::TimedOut);
  std::string pid = results[0].out.substr(0, results[0].out.find('\n'));
  REQUIRE_FALSE(pid.empty());
  bool sleep_gone = false;
  for (int i = 0; i < 500 && !sleep_gone; ++i) {
    sleep_gone = gone(pid);
    if (!sleep_gone) ::usleep(10000);
  }
  CHECK(sleep_gone);
}

TEST_CASE("a spawned program's exit status and both streams", "[sys][process]") {
  auto sh = find_on_path("sh");
  REQUIRE(sh);
  auto child = ChildProcess::spawn(*sh, {"sh", "-c", "echo out; echo err >&2; exit 3"});
  REQUIRE(child);
  auto results = wait_all({&*child}, std::chrono::seconds(10));
  CHECK(results[0].end == ChildResult::End::Exited);
  CHECK(results[0].code == 3);
  CHECK(results[0].out == "out\n");
  CHECK(results[0].err == "err\n");
  CHECK_FALSE(find_on_path("gpulock-no-such-program"));
}

TEST_CASE("run_program captures both streams and the exit status", "[sys][process]") {
  auto r = run_program({"sh", "-c", "echo out; echo err >&2; exit 4"});
  REQUIRE(r);
  CHECK_FALSE(r->timed_out);
  CHECK(r->exit_code == 4);
  CHECK(r->signal == 0);
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
}

TEST_CASE("run_program passes extra environment entries over the current ones", "[sys][process]") {
  ProgramOptions o;
  o.env = {"GPULOCK_SYS_TEST=one", "PATH=/usr/bin:/bin"};
  auto r = run_program({"sh", "-c", "echo \"$GPULOCK_SYS_TEST:$PATH\""}, o);
  REQUIRE(r);
  CHECK(r->out == "one:/usr/bin:/bin\n");
}

TEST_CASE("run_program streams output to a callback instead of capturing it", "[sys][process]") {
  ProgramOptions o;
  std::string seen;
  o.on_output = [&](std::string_view chunk, bool is_stderr) {
    seen += is_stderr ? "E:" : "O:";
    seen += chunk;
  };
  auto r = run_program({"sh", "-c", "echo a; sleep 0.1; echo b >&2"}, o);
  REQUIRE(r);
  CHECK(r->out.empty());
  CHECK(r->err.empty());
  CHECK(seen == "O:a\nE:b\n");
}

TEST_CASE("run_program: a timeout kills the program, a signal is reported", "[sys][process]") {
  ProgramOptions o;
  o.timeout = std::chrono::milliseconds(200);
  auto slow = run_program({"sh", "-c", "echo started; sleep 30"}, o);
  REQUIRE(slow);
  CHECK(slow->timed_out);
  CHECK(slow->signal == SIGKILL);
  CHECK(slow->exit_code == 128 + SIGKILL);
  CHECK(slow->out == "started\n");
  auto killed = run_program({"sh", "-c", "kill -TERM $$"});
  REQUIRE(killed);
  CHECK_FALSE(killed->timed_out);
  CHECK(killed->signal == SIGTERM);
  CHECK(killed->exit_code == 128 + SIGTERM);
}

TEST_CASE("run_program: a program that cannot start is an Io error naming it", "[sys][process]") {
  auto missing = run_program({"gpulock-no-such-program", "--version"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == gpulock::core::ErrorCode::Io);
  CHECK(missing.error().message ==
        "cannot run 'gpulock-no-such-program': No such file or directory");
  auto not_executable = run_program({"/etc/passwd"});
  REQUIRE_FALSE(not_executable);
  CHECK(not_executable.error().message == "cannot run '/etc/passwd': Permission denied");
}

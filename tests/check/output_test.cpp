// Output of `gpulock check` on a terminal: the text report is coloured (unless NO_COLOR), the
// machine-readable formats never are. A real pseudo-terminal (Python's pty) stands in for one.
#include "check_support.h"

using namespace check_test;

namespace {

// gpulock with stdout on a pseudo-terminal; carriage returns the terminal adds are removed.
Run on_terminal(const Workdir& w, const std::string& env, const std::string& args) {
  Run r = w.shell(
      "env -u NO_COLOR -u VIRTUAL_ENV -u GPULOCK_DRIVER -u GPULOCK_CUDA_CEILING -u "
      "GPULOCK_GPU_ARCH " +
      env + " " + gpulock::test::on_pseudo_terminal() + " " + shell_quote(GPULOCK_EXE) + " " +
      args);
  r.out = replace_all(r.out, "\r", "");
  return r;
}

}  // namespace

TEST_CASE("check: coloured text on a terminal, never in JSON or annotations", "[check][output]") {
  Workdir w("output-terminal");
  const std::string url = gpulock::test::shared_servers().http_url();
  auto r = w.gpulock("resolve torch==2.5.1 --torch-backend cu124 " + fixture_indexes(url) + " " +
                     kTarget + " --driver 550.54.14 --gpu-arch sm_90 -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string machine =
      "GPULOCK_DRIVER=535.104.05 GPULOCK_GPU_ARCH=sm_90 GPULOCK_CACHE_DIR=" +
      shell_quote((w / "cache").string());
  const std::string gpu_line =
      std::to_string(scan_lock(w / "pylock.toml").table("[tool.gpulock.gpu]"));

  auto text = on_terminal(w, machine, "check --machine");
  INFO(text.out << text.err);
  CHECK(text.status == 1);
  auto out = lines_of(text.out);
  REQUIRE(out.size() >= 6);
  CHECK(out[0] == "\x1b[1minputs\x1b[0m: \x1b[2mnot checked (--inputs checks them)\x1b[0m");
  CHECK(out[2] == "\x1b[1mmachine\x1b[0m: \x1b[1;31mdrift\x1b[0m (1 error)");
  CHECK(out[4] == "  \x1b[1;31merror\x1b[0m: pylock.toml:" + gpu_line +
                      ": this machine's NVIDIA driver 535.104.05 is older than the lock's minimum "
                      "550.54.14 (for CUDA 12.4)");
  CHECK(out[5].starts_with("    \x1b[36mhint\x1b[0m: update the driver"));
  CHECK(out.back() == "pylock.toml: \x1b[1;31mdrift found\x1b[0m: 1 error");

  // NO_COLOR on the same terminal: the plain text, byte for byte as in a pipe.
  auto plain = on_terminal(w, machine + " NO_COLOR=1", "check --machine");
  CHECK(plain.status == 1);
  CHECK(plain.out.find('\x1b') == std::string::npos);
  CHECK(plain.out == w.gpulock("check --machine",
                               "GPULOCK_DRIVER=535.104.05 "
                               "GPULOCK_GPU_ARCH=sm_90")
                         .out);

  // Annotations and JSON are for machines: no colour even on a terminal, even when forced.
  for (const char* args : {"check --machine --format github", "check --machine --json",
                           "--color always check --machine --format github",
                           "--color always check --machine --format json"}) {
    auto m = on_terminal(w, machine, args);
    INFO(args << "\n" << m.out);
    CHECK(m.status == 1);
    CHECK(m.out.find('\x1b') == std::string::npos);
  }
}

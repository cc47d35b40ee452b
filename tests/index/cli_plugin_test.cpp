// The network plugin libgpulock-net.so (index/src/net_plugin.h) through the real binary: gpulock
// itself links neither libcurl, libzip nor libcrypto; a warm run never loads the plugin (it
// succeeds with the plugin made unloadable); a run that needs the network and cannot load it
// fails with an error naming what was searched.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <sys/wait.h>

#include "http_support.h"

using index_test::servers;

namespace {

struct Run {
  int rc = -1;
  std::string out;
  std::string err;
};

Run run(const std::string& command_and_args, const std::string& env = {}) {
  static int n = 0;
  std::string dir = index_test::scratch_dir("plugin-run-" + std::to_string(n++));
  std::string out = dir + "/out", err = dir + "/err";
  std::string cmd = "env NO_COLOR=1 " + env + " " + command_and_args + " >" +
                    gpulock::test::shell_quote(out) + " 2>" + gpulock::test::shell_quote(err) +
                    " </dev/null";
  int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = index_test::read_text(out);
  r.err = index_test::read_text(err);
  return r;
}

std::string gpulock_exe() {
  return gpulock::test::shell_quote(GPULOCK_EXE);
}

const std::string kMissing = "/nonexistent/gpulock-test/libgpulock-net.so";

}  // namespace

TEST_CASE("gpulock does not link libcurl, libzip or libcrypto", "[cli][plugin]") {
  Run r = run("ldd " + gpulock_exe());
  REQUIRE(r.rc == 0);
  INFO(r.out);
  CHECK(r.out.find("libc.so") != std::string::npos);  // ldd really listed something
  CHECK(r.out.find("libcurl") == std::string::npos);
  CHECK(r.out.find("libzip") == std::string::npos);
  CHECK(r.out.find("libcrypto") == std::string::npos);
  CHECK(r.out.find("libssl") == std::string::npos);
}

TEST_CASE("a warm resolve never loads the network plugin and a cold one says where it looked",
          "[cli][plugin]") {
  std::string work = index_test::scratch_dir("plugin-resolve");
  std::string cache = "GPULOCK_CACHE_DIR=" + gpulock::test::shell_quote(work + "/cache");
  std::string args = " resolve filelock jinja2 --index-url " + servers().pypi_url() +
                     " --driver none --python-version 3.11 --platform manylinux_2_28_x86_64 -q";
  std::string unloadable = "GPULOCK_NET_PLUGIN=" + kMissing;

  SECTION("cold, plugin missing: exit 74 (a missing file, not a bug) naming the path searched") {
    Run cold = run(gpulock_exe() + args + " -o " + work + "/a.toml", cache + " " + unloadable);
    INFO(cold.err);
    CHECK(cold.rc == 74);
    CHECK(cold.err.find("error: ") == 0);
    CHECK(cold.err.find("libgpulock-net.so") != std::string::npos);
    CHECK(cold.err.find(kMissing + " (not found)") != std::string::npos);
    CHECK(cold.err.find("hint: GPULOCK_NET_PLUGIN") != std::string::npos);
  }
  SECTION("warm: the same lock without the plugin") {
    std::string out = work + "/pylock.toml";
    Run cold = run(gpulock_exe() + args + " -o " + out, cache);
    INFO(cold.err);
    REQUIRE(cold.rc == 0);
    std::string first = index_test::read_text(out);
    std::filesystem::remove(out);  // no existing lock to keep: the warm run writes it anew
    Run warm = run(gpulock_exe() + args + " -o " + out, cache + " " + unloadable);
    INFO(warm.err);
    REQUIRE(warm.rc == 0);
    CHECK(first.find("name = \"filelock\"") != std::string::npos);
    CHECK(index_test::read_text(out) == first);
  }
}

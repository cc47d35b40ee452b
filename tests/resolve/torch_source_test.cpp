// Issue 41 item 4: the names the torch source owns (the torch family), and what happens when it
// lacks one. The 'no-triton' fixture variant (fixtures/variants/no-triton.json) is the fixture
// index with triton on the PyPI-like index only: no CUDA variant tree has it. Before the fix,
// driver 550 got "there are no versions of triton" as the headline with an unrelated driver hint,
// and the triton a torch build needs was never named with the way to take it from elsewhere.
#include <sstream>

#include "resolve_support.h"

using namespace resolve_test;

namespace {

const gpulock::test::ServersEnv& no_triton() {
  static gpulock::test::PrivateServers server(
      gpulock::test::PrivateServerOptions{.root = RESOLVE_NO_TRITON_INDEX, .copy = false});
  return server.env();
}

Options on_no_triton(const fs::path& dir) {
  Options o;
  o.cwd = dir;
  o.index_url = no_triton().pypi_url();
  o.torch_index_base = no_triton().torch_index_base();
  o.cache = dir / "cache";
  return o;
}

std::string nt_normalize(std::string text) {
  return normalize(replace_all(text, no_triton().http_url(), "http://NT"));
}

// The lines of `err` that start with "hint:", in order.
std::vector<std::string> hint_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("hint:")) out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("a torch-family name the PyTorch index lacks is named first, with the way out",
          "[resolve][issue41]") {
  fs::path dir = fresh_dir("torch-source-no-triton");
  Options o = on_no_triton(dir);
  const std::vector<std::string> args = {
      "torch", "--torch-backend", "auto", "--driver", "550.54.14", "-o", "pylock.toml"};
  Run r = resolve(args, o);
  INFO(describe(r));
  CHECK(r.status == 1);
  CHECK_FALSE(fs::exists(dir / "pylock.toml"));
  std::string err = nt_normalize(r.err);
  INFO(err);
  // The headline: the missing name, the tree that lacks it and the build that needs it.
  CHECK(err.find("error: no solution: triton: the PyTorch index http://NT/whl/cu118/ has no "
                 "triton; torch 2.7.1+cu118 needs triton==3.3.1\n") != std::string::npos);
  // The way out comes before any driver hint: a named index for triton.
  auto hints = hint_lines(r.err);
  REQUIRE_FALSE(hints.empty());
  CHECK(hints.front().starts_with(
      "hint: triton is a torch-family name, which comes only from the PyTorch index unless "
      "--index-for names another; to take triton from "));
  CHECK(hints.front().find("--index-for triton=other`") != std::string::npos);
  // The command works: triton from the named index, torch still from the PyTorch index.
  Run followed = run_hint(hints.front(), o);
  INFO(describe(followed));
  REQUIRE(followed.status == 0);
  auto versions = lock_versions(dir / "pylock.toml");
  CHECK(versions.at("torch") == "2.7.1+cu118");
  CHECK(versions.at("triton") == "3.3.1");
}

TEST_CASE("a torch build passed over for a name the PyTorch index lacks is said, not silent",
          "[resolve][issue41]") {
  fs::path dir = fresh_dir("torch-source-no-triton-580");
  Options o = on_no_triton(dir);
  Run r = resolve({"torch", "--torch-backend", "auto", "--driver", "580.65.06", "-o", "-"}, o);
  INFO(describe(r));
  std::string err = nt_normalize(r.err);
  INFO(err);
  // No torch CUDA build can be used without triton: the headline names triton first, never a
  // cuda-toolkit pin or the driver.
  CHECK(r.status == 1);
  CHECK(err.find("error: no solution: triton: the PyTorch index http://NT/whl/cu130/ has no "
                 "triton; torch 2.13.0+cu130 needs triton==3.7.1\n") != std::string::npos);
  CHECK(err.find("cuda-toolkit 12.9.1 was chosen") == std::string::npos);
}

// Issue 43 item 5 (proven words): a hint's command is given only when a second solve confirms
// it. At driver 580 no torch build can be used without triton, and torch 2.13 also needs a
// setuptools that only the PyPI-like index has: taking setuptools alone from there still fails
// (triton is missing), so that hint names the command that takes both, and every command a hint
// gives works when followed.
TEST_CASE("a fix that needs another name from the same index names both, and works",
          "[resolve][issue41][issue43]") {
  fs::path dir = fresh_dir("torch-source-no-triton-580-proven");
  Options o = on_no_triton(dir);
  Run r = resolve({"torch", "--torch-backend", "auto", "--driver", "580.65.06", "-o", "-"}, o);
  INFO(describe(r));
  CHECK(r.status == 1);
  std::string setuptools = hint_line(r.err, "setuptools was also found on");
  INFO(setuptools);
  REQUIRE_FALSE(setuptools.empty());
  CHECK(setuptools.find("to take setuptools and triton from ") != std::string::npos);
  CHECK(setuptools.find("--index-for setuptools=other --index-for triton=other`") !=
        std::string::npos);
  int commands = 0;
  for (const auto& hint : hint_lines(r.err)) {
    if (hint.find("`gpulock ") == std::string::npos) continue;
    ++commands;
    Run followed = run_hint(hint, o);
    INFO(hint);
    INFO(describe(followed));
    CHECK(followed.status == 0);
  }
  CHECK(commands >= 2);
}

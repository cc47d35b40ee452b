// Project configuration end to end (issue 26): a pyproject.toml written for uv resolves
// unchanged (explicit index, [tool.uv.sources] with markers choosing the index per platform),
// GPULOCK_* variables and pip's files reach resolve, `gpulock config` prints every setting
// with its origin (golden), invalid configuration exits with its exact error, and the lock
// records where its options came from so `check --inputs` names a changed source.
#include <catch2/catch.hpp>

#include "resolve_support.h"

using namespace resolve_test;

namespace {

const gpulock::lock::Package& locked(const gpulock::lock::Lock& lock, const std::string& name) {
  for (const auto& p : lock.packages) {
    if (p.name == name) return p;
  }
  FAIL("no package " << name << " in the lock");
  throw std::logic_error("unreachable");
}

// A uv project: the fixture PyPI as uv's default index, the torch variants as explicit
// indexes, torch pinned by marker as uv's documentation writes it: cu126 on Linux, CPU builds
// elsewhere.
std::string uv_pyproject(const gpulock::test::ServersEnv& srv = servers()) {
  const std::string base = srv.torch_index_base();
  return R"([project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["torch", "jinja2"]

[tool.uv.sources]
torch = [
  { index = "pytorch-cu126", marker = "sys_platform == 'linux'" },
  { index = "pytorch-cpu", marker = "sys_platform != 'linux'" },
]

[[tool.uv.index]]
name = "pypi-fixture"
url = ")" +
         srv.pypi_url() +
         R"("
default = true

[[tool.uv.index]]
name = "pytorch-cu126"
url = ")" +
         base +
         R"(/cu126"
explicit = true

[[tool.uv.index]]
name = "pytorch-cpu"
url = ")" +
         base +
         R"(/cpu"
explicit = true
)";
}

// The machine and target through gpulock's variables: the command line has no flag at all.
Env machine_env(const std::string& platform) {
  Env env = base_env();
  env["GPULOCK_DRIVER"] = "560.35.03";
  env["GPULOCK_GPU_ARCH"] = "sm_90";
  env["GPULOCK_PYTHON_VERSION"] = "3.11";
  env["GPULOCK_PLATFORM"] = platform;
  env["GPULOCK_CACHE_DIR"] = shared_cache().string();
  return env;
}

}  // namespace

TEST_CASE("a uv project resolves unchanged: torch from its explicit index by marker",
          "[resolve][config]") {
  fs::path dir = fresh_dir("config-uv-project");
  write_file(dir / "pyproject.toml", uv_pyproject());
  const std::string base = normalize(servers().torch_index_base());

  SECTION("x86_64: torch from pytorch-cu126, everything else from the default index") {
    Run r = run({kExe, "resolve", "--project", "pyproject.toml"},
                machine_env("manylinux_2_28_x86_64"), dir);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto lock = read_lock(dir / "pylock.toml");
    CHECK(normalize(locked(lock, "torch").index.value_or("")) == base + "/cu126/");
    CHECK(locked(lock, "torch").version->ends_with("+cu126"));
    CHECK(locked(lock, "jinja2").index == servers().pypi_url());
    CHECK(locked(lock, "markupsafe").index == servers().pypi_url());
    // Torch's own dependencies are not pinned: they come from the default index, as in uv.
    for (const auto& p : lock.packages) {
      if (p.name != "torch") CHECK(p.index == servers().pypi_url());
    }
    // The record names the marker pins, so check --index re-resolves the same way.
    REQUIRE(lock.gpulock);
    REQUIRE(lock.gpulock->inputs);
    CHECK(lock.gpulock->inputs->options.at("index-for-when") ==
          "torch=pytorch-cu126; sys_platform == 'linux' | "
          "torch=pytorch-cpu; sys_platform != 'linux'");
    // A variable that supplied no file is not in the lock (issue 41 item 2).
    CHECK_FALSE(lock.gpulock->inputs->options.contains("env GPULOCK_PYTHON_VERSION"));
  }
  SECTION("aarch64 Linux: sys_platform is still linux, torch from pytorch-cu126") {
    Run r = run({kExe, "resolve", "--project", "pyproject.toml"},
                machine_env("manylinux_2_28_aarch64"), dir);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    auto lock = read_lock(dir / "pylock.toml");
    CHECK(normalize(locked(lock, "torch").index.value_or("")) == base + "/cu126/");
    CHECK(locked(lock, "jinja2").index == servers().pypi_url());
  }
  SECTION("macOS: the shared fixture has no macOS torch (the private test below adds one)") {
    Run r = run({kExe, "resolve", "--project", "pyproject.toml"}, machine_env("macosx_11_0_arm64"),
                dir);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(r.err.starts_with(
        "error: no solution: torch has no wheel for cp311-macosx_11_0_arm64 (wheels exist only "
        "for other platforms or Pythons)\n"));
  }
  SECTION("resolve -v prints the indexes in first-index order with their origin") {
    Run r = run({kExe, "resolve", "--project", "pyproject.toml", "-v", "-o", "-"},
                machine_env("manylinux_2_28_x86_64"), dir);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    std::string err = normalize(r.err);
    CHECK(err.find("index pytorch-cu126 (pinned): " + base +
                   "/cu126/  # pyproject.toml [[tool.uv.index]] line 18\n") != std::string::npos);
    CHECK(err.find("index default (default): http://INDEX/simple/  # pyproject.toml "
                   "[[tool.uv.index]] line 13\n") != std::string::npos);
  }
}

TEST_CASE("a uv project resolved for macOS takes torch from the index its marker selects",
          "[resolve][config][private]") {
  // A copy of the fixture index with what a macOS CPU torch needs (illustrative releases): torch
  // 2.13.0 on /whl/cpu (download.pytorch.org serves macOS wheels without a local label) and a
  // MarkupSafe with a macOS wheel. The shared tree is unchanged.
  gpulock::test::PrivateServers srv;
  srv.regenerate(R"({"releases": [
    {"name": "torch", "version": "2.13.0", "family": "torch", "indexes": ["whl/cpu"],
     "cuda_variant": "cpu", "requires_python": ">=3.10",
     "requires_dist": ["filelock", "typing-extensions>=4.10.0", "setuptools>=77.0.3",
                       "sympy>=1.13.3", "networkx>=2.5.1", "jinja2", "fsspec>=0.8.5"],
     "wheels": ["cp311-none-macosx_11_0_arm64"], "upload_time": "2026-07-08T16:00:00Z",
     "metadata": {"pytorch": true}, "verification": "illustrative"},
    {"name": "MarkupSafe", "version": "3.0.3", "family": "deps", "indexes": ["pypi"],
     "requires_python": ">=3.9", "wheels": ["cp311-cp311-macosx_11_0_arm64"],
     "upload_time": "2026-07-08T16:00:00Z", "verification": "illustrative"}]})");
  fs::path dir = fresh_dir("config-uv-macos");
  write_file(dir / "pyproject.toml", uv_pyproject(srv.env()));
  const std::string base = srv.env().torch_index_base();
  Env env = machine_env("macosx_11_0_arm64");
  env["GPULOCK_DRIVER"] = "none";
  env["GPULOCK_CACHE_DIR"] = (dir / "cache").string();
  Run r = run({kExe, "resolve", "--project", "pyproject.toml", "-v"}, env, dir);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto lock = read_lock(dir / "pylock.toml");
  CHECK(locked(lock, "torch").index == base + "/cpu/");
  CHECK(locked(lock, "torch").version == "2.13.0");
  CHECK(locked(lock, "jinja2").index == srv.env().pypi_url());
  CHECK(locked(lock, "markupsafe").version == "3.0.3");
  CHECK(r.err.find("index pytorch-cpu (pinned): " + base +
                   "/cpu/  # pyproject.toml [[tool.uv.index]] line 18\n") != std::string::npos);
  CHECK(r.err.find("pytorch-cu126") == std::string::npos);
  // The same project for Linux, from the same index copy: the other marker, the other index.
  env["GPULOCK_PLATFORM"] = "manylinux_2_28_x86_64";
  env["GPULOCK_DRIVER"] = "560.35.03";
  Run linux = run({kExe, "resolve", "--project", "pyproject.toml", "-o", "linux.toml"}, env, dir);
  INFO(describe(linux));
  REQUIRE(linux.status == 0);
  auto linux_lock = read_lock(dir / "linux.toml");
  CHECK(locked(linux_lock, "torch").index == base + "/cu126/");
  CHECK(locked(linux_lock, "torch").version->ends_with("+cu126"));
  CHECK(locked(linux_lock, "markupsafe").version == "3.0.2");
}

TEST_CASE("gpulock config prints every setting with its origin (golden)", "[resolve][config]") {
  fs::path dir = fresh_dir("config-show");
  write_file(dir / "pyproject.toml", uv_pyproject() + R"(
[tool.uv]
exclude-newer = "2026-01-01T00:00:00Z"
prerelease = "explicit"

[tool.uv.pip]
torch-backend = "cu126"
)");
  fs::path home = dir / "home";
  write_file(home / ".config" / "pip" / "pip.conf",
             "[global]\nextra-index-url = https://user:secret@private.example/simple\n");
  Env env = base_env();
  env["HOME"] = home.string();
  env["GPULOCK_CUDA_COMPAT"] = "minor";
  env["UV_TORCH_BACKEND"] = "cu128";
  env["GPULOCK_TORCH_BACKEND"] = "cu124";
  Run r = run({kExe, "config", "--python-version", "3.12"}, env, dir);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  std::string out = replace_all(normalize(r.out), dir.string(), "DIR");
  std::string err = replace_all(normalize(r.err), dir.string(), "DIR");
  check_golden("config.txt", out + "--- stderr\n" + err);
  Run j = run({kExe, "config", "--json"}, env, dir);
  REQUIRE(j.status == 0);
  check_golden("config.json", replace_all(normalize(j.out), dir.string(), "DIR"));
}

TEST_CASE("invalid configuration: exact errors and exit codes", "[resolve][config]") {
  fs::path dir = fresh_dir("config-invalid");
  Env env = base_env();
  SECTION("an unknown key in [tool.gpulock]: exit 3 with a did-you-mean") {
    write_file(dir / "pyproject.toml",
               "[project]\nname = \"p\"\ndependencies = [\"jinja2\"]\n\n[tool.gpulock]\n"
               "index-urls = \"https://example/simple\"\n");
    Run r = run({kExe, "config"}, env, dir);
    CHECK(r.status == 3);
    CHECK(r.err ==
          "error: pyproject.toml:6: unknown key 'index-urls' in [tool.gpulock]\n"
          "hint: did you mean 'index-url'?\n");
    Run res = run({kExe, "resolve", "--project", "pyproject.toml"}, env, dir);
    CHECK(res.status == 3);
    CHECK(res.err == r.err);
  }
  SECTION("an invalid GPULOCK_* variable: exit 2 naming it") {
    env["GPULOCK_INDEX_STRATEGY"] = "best";
    Run r = run({kExe, "config"}, env, dir);
    CHECK(r.status == 2);
    CHECK(r.err ==
          "error: invalid value for GPULOCK_INDEX_STRATEGY: 'best' (expected first-index or "
          "unsafe-best-match)\n");
  }
  SECTION("another tool's variable that cannot be used: a warning, ignored") {
    env["UV_EXCLUDE_NEWER"] = "yesterday";
    Run r = run({kExe, "config"}, env, dir);
    CHECK(r.status == 0);
    CHECK(r.err == "warning: gpulock cannot use UV_EXCLUDE_NEWER='yesterday'; ignored\n");
  }
}

TEST_CASE("configuration reaches resolve and check --inputs names a changed source",
          "[resolve][config]") {
  fs::path dir = fresh_dir("config-check");
  fs::path home = dir / "home";
  // pip's user file names the index; the variable names the Python.
  write_file(home / ".config" / "pip" / "pip.conf",
             "[global]\nindex-url = " + servers().pypi_url() + "\n");
  Env env = base_env();
  env["HOME"] = home.string();
  env["GPULOCK_PYTHON_VERSION"] = "3.11";
  env["GPULOCK_PLATFORM"] = "manylinux_2_28_x86_64";
  env["GPULOCK_CACHE_DIR"] = shared_cache().string();
  Run r = run({kExe, "resolve", "jinja2"}, env, dir);
  INFO(describe(r));
  REQUIRE(r.status == 0);
  auto lock = read_lock(dir / "pylock.toml");
  CHECK(locked(lock, "jinja2").index == servers().pypi_url());
  Run clean = run({kExe, "check", "--inputs"}, env, dir);
  INFO(describe(clean));
  CHECK(clean.status == 0);

  // pip.conf's index supplied jinja2: the lock names it as the index's origin (issue 41 item 2).
  REQUIRE(lock.gpulock);
  bool named = false;
  for (const auto& ix : lock.gpulock->indexes)
    named = named || (ix.role == "default" && ix.origin == "file ~/.config/pip/pip.conf");
  CHECK(named);

  SECTION("pip.conf names another index: the setting that supplied jinja2 is named") {
    write_file(home / ".config" / "pip" / "pip.conf",
               "[global]\nindex-url = https://other.example/simple\n");
    Run c = run({kExe, "check", "--inputs"}, env, dir);
    INFO(describe(c));
    CHECK(c.status == 1);
    CHECK(c.out.find("~/.config/pip/pip.conf supplied locked files (index-url " +
                     servers().pypi_url() +
                     ": jinja2 3.1.6, markupsafe 3.0.2) and now sets index-url "
                     "'https://other.example/simple'") != std::string::npos);
  }
  SECTION("pip.conf gains a find-links asked after the index jinja2 came from: nothing to say") {
    write_file(home / ".config" / "pip" / "pip.conf",
               "[global]\nindex-url = " + servers().pypi_url() + "\nfind-links = /nowhere\n");
    Run c = run({kExe, "check", "--inputs"}, env, dir);
    INFO(describe(c));
    CHECK(c.status == 0);
    CHECK(c.out.find("pip.conf") == std::string::npos);
  }
  SECTION("a variable that supplied no file changed: not the lock's business") {
    env["GPULOCK_PYTHON_VERSION"] = "3.12";
    Run c = run({kExe, "check", "--inputs"}, env, dir);
    INFO(describe(c));
    CHECK(c.status == 0);
    CHECK(c.out.find("GPULOCK_PYTHON_VERSION") == std::string::npos);
  }
  SECTION("a variable set now overrides the pip.conf that supplied jinja2: named once") {
    env["UV_INDEX_URL"] = "https://user:secret@uv.example/simple";
    env["GPULOCK_TORCH_BACKEND"] = "cu126";
    // The PyTorch index that backend reads is the loopback one (the hint's command, run by
    // hints_run in this environment, asks it for jinja2).
    env["GPULOCK_TORCH_INDEX_BASE"] = servers().torch_index_base();
    Run c = run({kExe, "check", "--inputs"}, env, dir);
    INFO(describe(c));
    CHECK(c.status == 1);
    // Named, credentials redacted; the torch backend supplied nothing and is not mentioned.
    CHECK(c.out.find("~/.config/pip/pip.conf supplied locked files (index-url " +
                     servers().pypi_url() +
                     ": jinja2 3.1.6, markupsafe 3.0.2) and is overridden now by env UV_INDEX_URL "
                     "'https://user:****@uv.example/simple'") != std::string::npos);
    CHECK(c.out.find("is set now and would be asked before") == std::string::npos);
    CHECK(c.out.find("GPULOCK_TORCH_BACKEND") == std::string::npos);
    CHECK(c.out.find("secret") == std::string::npos);
    CHECK(c.err == "");
  }
}

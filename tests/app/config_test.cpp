// Project configuration (issue 26): each source, their precedence, uv's and pip's files, the
// variables, invalid values with their exact errors, and `gpulock config`'s text. Hermetic: the
// environment, the working directory, HOME and the root of /etc are given to the loader.
#include "gpulock/app/config.h"

#include <filesystem>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "gpulock/app/targets.h"

#include "test_files.h"

namespace {

namespace fs = std::filesystem;
using gpulock::app::Config;
using gpulock::app::ConfigEnvironment;
using gpulock::app::load_config;
using gpulock::app::SettingOrigin;
using gpulock::test::write_file;

struct Sandbox {
  fs::path root;
  fs::path project;  ///< the project directory (the working directory)
  fs::path home;
  fs::path system;  ///< the fake root holding etc/
  std::map<std::string, std::string> variables;
  std::map<std::string, std::vector<std::string>> flags;

  explicit Sandbox(const std::string& name)
      : root(gpulock::test::fresh_directory(fs::path(GPULOCK_BINARY_DIR) / "tests" / "app" /
                                            "config-work" / name)),
        project(root / "project"),
        home(root / "home"),
        system(root / "system") {
    fs::create_directories(project);
    fs::create_directories(home);
    fs::create_directories(system);
  }

  ConfigEnvironment environment() const {
    ConfigEnvironment e;
    auto vars = variables;
    e.env = [vars](std::string_view name) -> std::optional<std::string> {
      auto it = vars.find(std::string(name));
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
    e.cwd = project;
    e.home = home;
    e.system_root = system;
    e.flags = flags;
    return e;
  }

  Config load() const {
    auto c = load_config(environment());
    INFO((c ? std::string() : c.error().to_string()));
    REQUIRE(c);
    return *c;
  }
};

std::string origin_of(const Config& c, std::string_view key) {
  const auto* s = c.find(key);
  return s == nullptr ? std::string("unset") : s->origin.to_string();
}

std::string value_of(const Config& c, std::string_view key) {
  const auto* s = c.find(key);
  if (s == nullptr) return "unset";
  std::string out;
  for (const auto& v : s->values)
    out += (out.empty() ? "" : " ") + v;
  return out;
}

}  // namespace

TEST_CASE("config: each source, highest first, for torch-backend", "[config]") {
  Sandbox box("precedence");
  write_file(box.system / "etc" / "uv" / "uv.toml", "index-url = \"https://uv-system/simple\"\n");
  write_file(box.home / ".config" / "pip" / "pip.conf",
             "[global]\nindex-url = https://pip-user/simple\n");
  write_file(box.home / ".config" / "gpulock" / "gpulock.toml", "torch-backend = \"cu118\"\n");
  write_file(box.project / "pyproject.toml",
             "[project]\nname = \"p\"\n\n[tool.uv.pip]\ntorch-backend = \"cu121\"\n");
  {
    auto c = box.load();
    CHECK(value_of(c, "torch-backend") == "cu121");
    CHECK(origin_of(c, "torch-backend") == "pyproject.toml [tool.uv.pip] line 5");
    CHECK(value_of(c, "index-url") == "https://pip-user/simple");
    CHECK(origin_of(c, "index-url") == box.home.string() + "/.config/pip/pip.conf [global] line 2");
    REQUIRE(c.find("torch-backend")->overridden.size() == 1);
    CHECK(c.find("torch-backend")->overridden[0].second.to_string() ==
          box.home.string() + "/.config/gpulock/gpulock.toml line 1");
  }
  write_file(box.project / "pyproject.toml",
             "[project]\nname = \"p\"\n\n[tool.gpulock]\ntorch-backend = \"cu124\"\n\n"
             "[tool.uv.pip]\ntorch-backend = \"cu121\"\n");
  CHECK(origin_of(box.load(), "torch-backend") == "pyproject.toml [tool.gpulock] line 5");
  box.variables["PIP_INDEX_URL"] = "https://pip-env/simple";
  CHECK(origin_of(box.load(), "index-url") == "env PIP_INDEX_URL");
  box.variables["UV_TORCH_BACKEND"] = "cu126";
  CHECK(origin_of(box.load(), "torch-backend") == "env UV_TORCH_BACKEND");
  box.variables["UV_INDEX_URL"] = "https://uv-env/simple";
  CHECK(origin_of(box.load(), "index-url") == "env UV_INDEX_URL");
  box.variables["GPULOCK_TORCH_BACKEND"] = "cu128";
  {
    auto c = box.load();
    CHECK(value_of(c, "torch-backend") == "cu128");
    CHECK(origin_of(c, "torch-backend") == "env GPULOCK_TORCH_BACKEND");
  }
  box.flags["torch-backend"] = {"cpu"};
  {
    auto c = box.load();
    CHECK(value_of(c, "torch-backend") == "cpu");
    CHECK(origin_of(c, "torch-backend") == "command line --torch-backend");
    // Every lower source is kept, highest first.
    const auto& over = c.find("torch-backend")->overridden;
    REQUIRE(over.size() == 5);
    CHECK(over[0].second.to_string() == "env GPULOCK_TORCH_BACKEND");
    CHECK(over[1].second.to_string() == "env UV_TORCH_BACKEND");
    CHECK(over[2].second.to_string() == "pyproject.toml [tool.gpulock] line 5");
    CHECK(over[3].second.to_string() == "pyproject.toml [tool.uv.pip] line 8");
  }
  // Defaults are shown as such.
  CHECK(origin_of(box.load(), "index-strategy") == "default");
  CHECK(value_of(box.load(), "cuda-compat") == "strict");
}

TEST_CASE("config: the user's uv.toml gives indexes when nothing else does", "[config]") {
  Sandbox box("uv-user");
  write_file(box.home / ".config" / "uv" / "uv.toml",
             "[[index]]\nname = \"mine\"\nurl = \"https://mine/simple\"\n");
  auto c = box.load();
  CHECK(value_of(c, "index-url") == "https://mine/simple");
  CHECK(value_of(c, "extra-index-url") == "https://pypi.org/simple/");
  CHECK(origin_of(c, "index-url") == box.home.string() + "/.config/uv/uv.toml [[index]] line 1");
}

TEST_CASE("config: a uv project's explicit index and sources with markers", "[config]") {
  Sandbox box("uv-project");
  write_file(box.project / "pyproject.toml", R"([project]
name = "demo"
dependencies = ["torch", "numpy"]

[tool.uv]
index-strategy = "first-index"
exclude-newer = "2026-01-01T00:00:00Z"
prerelease = "explicit"
override-dependencies = ["numpy<3"]

[tool.uv.sources]
torch = [
  { index = "pytorch-cu126", marker = "sys_platform == 'linux'" },
  { index = "pytorch-cpu", marker = "sys_platform != 'linux'" },
]
numpy = { git = "https://github.com/numpy/numpy" }

[[tool.uv.index]]
name = "pytorch-cu126"
url = "https://download.pytorch.org/whl/cu126"
explicit = true

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true
authenticate = "always"
)");
  auto c = box.load();
  CHECK(value_of(c, "index") ==
        "pytorch-cu126=https://download.pytorch.org/whl/cu126 "
        "pytorch-cpu=https://download.pytorch.org/whl/cpu");
  CHECK(origin_of(c, "index") == "pyproject.toml [[tool.uv.index]] line 18");
  const auto* pins = c.find("index-for");
  REQUIRE(pins != nullptr);
  CHECK(pins->values == std::vector<std::string>{"torch=pytorch-cu126; sys_platform == 'linux'",
                                                 "torch=pytorch-cpu; sys_platform != 'linux'"});
  CHECK(origin_of(c, "index-for") == "pyproject.toml [tool.uv.sources] line 12");
  // Explicit indexes are not searched for other packages: PyPI stays the default.
  CHECK(origin_of(c, "index-url") == "default");
  CHECK(value_of(c, "exclude-newer") == "2026-01-01T00:00:00Z");
  CHECK(origin_of(c, "exclude-newer") == "pyproject.toml [tool.uv] line 7");
  CHECK(origin_of(c, "index-strategy") == "pyproject.toml [tool.uv] line 6");
  CHECK(c.warnings == std::vector<std::string>{
                          "pyproject.toml line 27: [[tool.uv.index]] authenticate is not "
                          "honoured by gpulock",
                          "pyproject.toml line 16: [tool.uv.sources] numpy: a source that is not "
                          "an index (git, url, path or workspace) is not honoured by gpulock; "
                          "numpy comes from the indexes",
                          "pyproject.toml line 8: gpulock cannot use [tool.uv] prerelease = "
                          "'explicit'; ignored",
                          "pyproject.toml line 9: [tool.uv] override-dependencies is not "
                          "honoured by gpulock"});
  CHECK(c.files == std::vector<std::string>{"pyproject.toml"});

  gpulock::app::ResolveRequest request;
  REQUIRE(gpulock::app::apply_config(c, request));
  REQUIRE(request.named_indexes.size() == 2);
  CHECK(request.named_indexes[0].name == "pytorch-cu126");
  REQUIRE(request.index_for_when.size() == 2);
  CHECK(request.index_for_when[0].pin.glob == "torch");
  CHECK(request.index_for_when[0].pin.index == "pytorch-cu126");
  CHECK(request.index_for_when[0].marker == "sys_platform == 'linux'");
  CHECK(request.index_for.empty());
  CHECK(!request.index_url);
  REQUIRE(request.exclude_newer);
  CHECK(request.config_files.size() == 1);
}

TEST_CASE("config: non-explicit uv indexes come first, the default one last", "[config]") {
  Sandbox box("uv-order");
  write_file(box.project / "pyproject.toml", R"([tool.uv]
[[tool.uv.index]]
name = "internal"
url = "https://internal/simple"

[[tool.uv.index]]
name = "corp"
url = "https://corp/simple"
default = true
)");
  auto c = box.load();
  CHECK(value_of(c, "index-url") == "https://internal/simple");
  CHECK(value_of(c, "extra-index-url") == "https://corp/simple");
}

TEST_CASE("config: [tool.gpulock] indexes turn uv's off", "[config]") {
  Sandbox box("gpulock-over-uv");
  write_file(box.project / "pyproject.toml", R"([tool.gpulock]
index = [{ name = "cu126", url = "https://download.pytorch.org/whl/cu126" }]
index-for = ["torch*=cu126"]

[tool.uv]
exclude-newer = "2026-02-01"

[[tool.uv.index]]
name = "internal"
url = "https://internal/simple"
)");
  auto c = box.load();
  CHECK(value_of(c, "index") == "cu126=https://download.pytorch.org/whl/cu126");
  CHECK(origin_of(c, "index") == "pyproject.toml [tool.gpulock] line 2");
  CHECK(origin_of(c, "index-url") == "default");
  // uv's other settings still apply.
  CHECK(origin_of(c, "exclude-newer") == "pyproject.toml [tool.uv] line 6");
}

TEST_CASE("config: gpulock.toml beside pyproject.toml, found from a subdirectory", "[config]") {
  Sandbox box("walk-up");
  write_file(box.project / "pyproject.toml", "[tool.gpulock]\ntorch-backend = \"cu118\"\n");
  write_file(box.project / "gpulock.toml",
             "python-version = \"3.12\"\nplatform = [\"manylinux_2_28_x86_64\"]\n\n"
             "[targets.a]\npython-version = \"3.11\"\n");
  fs::create_directories(box.project / "src" / "pkg");
  auto env = box.environment();
  env.cwd = box.project / "src" / "pkg";
  auto c = load_config(env);
  REQUIRE(c);
  CHECK(origin_of(*c, "python-version") == (box.project / "gpulock.toml").string() + " line 1");
  // gpulock.toml wins over pyproject's table.
  CHECK(origin_of(*c, "torch-backend") == "unset");
}

TEST_CASE("config: pip.conf, PIP_CONFIG_FILE and the torch-family warning", "[config]") {
  Sandbox box("pip-conf");
  write_file(box.system / "etc" / "pip.conf",
             "[global]\nindex-url = https://mirror.example/simple\n"
             "extra-index-url =\n    https://download.pytorch.org/whl/cu126\n"
             "    https://other.example/simple\n\n[install]\nfind-links = /opt/wheels\n");
  auto c = box.load();
  CHECK(value_of(c, "index-url") == "https://mirror.example/simple");
  CHECK(value_of(c, "extra-index-url") ==
        "https://download.pytorch.org/whl/cu126 https://other.example/simple");
  CHECK(origin_of(c, "extra-index-url") == box.system.string() + "/etc/pip.conf [global] line 3");
  CHECK(value_of(c, "find-links") == "/opt/wheels");
  CHECK(origin_of(c, "find-links") == box.system.string() + "/etc/pip.conf [install] line 8");
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] ==
        box.system.string() +
            "/etc/pip.conf [global] line 3 names https://download.pytorch.org/whl/cu126 as an "
            "extra index, which serves the torch family: pip takes the best match across indexes "
            "there, gpulock takes a package from the first index that has it (PyPI's torch); "
            "choose with --torch-backend cuXYZ, or --index NAME=https://download.pytorch.org/whl/"
            "cu126 --index-for 'torch*=NAME'");
  // With a backend chosen there is nothing to warn about.
  box.variables["GPULOCK_TORCH_BACKEND"] = "cu126";
  CHECK(box.load().warnings.empty());
  // The user's file wins over the system's; PIP_CONFIG_FILE=/dev/null turns all off.
  write_file(box.home / ".pip" / "pip.conf", "[global]\nindex_url = https://user.example/simple\n");
  CHECK(value_of(box.load(), "index-url") == "https://user.example/simple");
  box.variables["PIP_CONFIG_FILE"] = "/dev/null";
  CHECK(origin_of(box.load(), "index-url") == "default");
}

TEST_CASE("config: the ecosystem's variables", "[config]") {
  Sandbox box("variables");
  box.variables = {{"UV_DEFAULT_INDEX", "https://uv.example/simple"},
                   {"UV_INDEX", "first=https://a.example/simple https://b.example/simple"},
                   {"UV_EXCLUDE_NEWER", "2026-03-01"},
                   {"PIP_FIND_LINKS", "/wheels /more"},
                   {"PIP_PRE", "true"},
                   {"PIP_INDEX_URL", "https://pip.example/simple"}};
  auto c = box.load();
  CHECK(value_of(c, "index-url") == "https://uv.example/simple");
  CHECK(origin_of(c, "index-url") == "env UV_DEFAULT_INDEX");
  CHECK(c.find("index-url")->overridden[0].second.to_string() == "env PIP_INDEX_URL");
  CHECK(value_of(c, "extra-index-url") == "https://a.example/simple https://b.example/simple");
  CHECK(value_of(c, "find-links") == "/wheels /more");
  CHECK(value_of(c, "prerelease") == "allow");
  CHECK(origin_of(c, "prerelease") == "env PIP_PRE");
  CHECK(value_of(c, "exclude-newer") == "2026-03-01");
}

TEST_CASE("config: another tool's value gpulock cannot parse is a warning", "[config]") {
  Sandbox box("other-invalid");
  box.variables = {{"UV_TORCH_BACKEND", "rocm6.3"}, {"PIP_PRE", "maybe"}};
  auto c = box.load();
  CHECK(origin_of(c, "torch-backend") == "unset");
  CHECK(c.warnings == std::vector<std::string>{"gpulock cannot use UV_TORCH_BACKEND='rocm6.3'; "
                                               "ignored",
                                               "gpulock cannot use PIP_PRE='maybe'; ignored"});
}

TEST_CASE("config: an invalid GPULOCK_* variable is a usage error naming it", "[config]") {
  Sandbox box("gpulock-invalid");
  box.variables = {{"GPULOCK_TORCH_BACKEND", "cuda12"}};
  auto c = load_config(box.environment());
  REQUIRE(!c);
  CHECK(c.error().code == gpulock::core::ErrorCode::Usage);
  CHECK(c.error().to_string() ==
        "invalid value for GPULOCK_TORCH_BACKEND: 'cuda12' (expected auto, cpu or cuXYZ)");
  box.variables = {{"GPULOCK_INDEX_FOR", "torch"}};
  auto d = load_config(box.environment());
  REQUIRE(!d);
  CHECK(d.error().to_string() ==
        "invalid value for GPULOCK_INDEX_FOR: 'torch' (expected GLOB=NAME, optionally '; "
        "MARKER')");
}

TEST_CASE("config: invalid [tool.gpulock] keys and values name file, table, key, line",
          "[config]") {
  Sandbox box("gpulock-table-invalid");
  SECTION("an unknown key, with a did-you-mean") {
    write_file(box.project / "pyproject.toml",
               "[project]\nname = \"p\"\n\n[tool.gpulock]\ntorch-backnd = \"cu126\"\n");
    auto c = load_config(box.environment());
    REQUIRE(!c);
    CHECK(c.error().code == gpulock::core::ErrorCode::InvalidInput);
    CHECK(c.error().to_string() ==
          "pyproject.toml:5: unknown key 'torch-backnd' in [tool.gpulock]");
    CHECK(c.error().hints == std::vector<std::string>{"did you mean 'torch-backend'?"});
  }
  SECTION("a value the flag's parser refuses") {
    write_file(box.project / "pyproject.toml",
               "[tool.gpulock]\nindex-strategy = \"first-index\"\ncuda-compat = \"loose\"\n");
    auto c = load_config(box.environment());
    REQUIRE(!c);
    CHECK(c.error().code == gpulock::core::ErrorCode::InvalidInput);
    CHECK(c.error().to_string() ==
          "pyproject.toml:3: invalid [tool.gpulock] cuda-compat 'loose': expected strict or minor");
  }
  SECTION("a value of the wrong type") {
    write_file(box.project / "gpulock.toml", "python-version = 3.11\n");
    auto c = load_config(box.environment());
    REQUIRE(!c);
    CHECK(c.error().to_string() == "gpulock.toml:1: gpulock.toml python-version must be a string");
  }
  SECTION("not TOML") {
    write_file(box.project / "pyproject.toml", "[tool.gpulock\n");
    auto c = load_config(box.environment());
    REQUIRE(!c);
    CHECK(c.error().code == gpulock::core::ErrorCode::InvalidInput);
    CHECK(c.error().where == "pyproject.toml");
  }
  SECTION("an unknown key in another tool's table is ignored") {
    write_file(box.project / "pyproject.toml", "[tool.uv]\nno-such-setting = 1\n");
    auto c = load_config(box.environment());
    REQUIRE(c);
    CHECK(c->warnings.empty());
  }
}

TEST_CASE("config: gpulock config's text", "[config]") {
  Sandbox box("text");
  write_file(box.project / "pyproject.toml", R"([tool.uv.pip]
torch-backend = "cu124"

[tool.uv]
exclude-newer = "2026-01-01"
)");
  box.variables = {{"GPULOCK_TORCH_BACKEND", "cu126"},
                   {"UV_TORCH_BACKEND", "cu128"},
                   {"PIP_EXTRA_INDEX_URL", "https://user:secret@private.example/simple"}};
  box.flags["python-version"] = {"3.12"};
  auto c = box.load();
  CHECK(gpulock::app::config_text(c) ==
        R"(index-url = "https://pypi.org/simple/"  # default
extra-index-url = ["https://user:****@private.example/simple"]  # env PIP_EXTRA_INDEX_URL
index-strategy = "first-index"  # default
torch-backend = "cu126"  # env GPULOCK_TORCH_BACKEND
  # conflict: env UV_TORCH_BACKEND = "cu128"; env GPULOCK_TORCH_BACKEND wins
  # overridden: pyproject.toml [tool.uv.pip] line 2 = "cu124"
torch-index-base = "https://download.pytorch.org/whl"  # default
exclude-newer = "2026-01-01"  # pyproject.toml [tool.uv] line 5
prerelease = "if-necessary"  # default
cuda-compat = "strict"  # default
python-version = "3.12"  # command line --python-version
)");
}

TEST_CASE("config: a declared target's own keys win over every source", "[config]") {
  Sandbox box("targets");
  write_file(box.project / "pyproject.toml", R"([tool.gpulock]
torch-backend = "cu126"
cuda-compat = "minor"
python-version = "3.12"

[tool.gpulock.targets.old]
python-version = "3.10"
platform = "manylinux_2_28_x86_64"
torch-backend = "cpu"
)");
  box.variables["GPULOCK_MIRROR"] = "/srv/mirror";
  auto c = box.load();
  CHECK(value_of(c, "mirror") == "/srv/mirror");
  gpulock::app::ResolveRequest shared;
  REQUIRE(gpulock::app::apply_config(c, shared));
  REQUIRE(shared.torch_backend);
  CHECK(shared.torch_backend->to_string() == "cu126");
  CHECK(shared.target.python_version == "3.12");
  auto declared =
      gpulock::app::read_targets((box.project / "pyproject.toml").string(), box.project);
  REQUIRE(declared);
  REQUIRE(declared->targets.size() == 1);
  auto r = gpulock::app::request_for_target(shared, declared->targets[0], box.project);
  REQUIRE(r.torch_backend);
  CHECK(r.torch_backend->to_string() == "cpu");
  CHECK(r.target.python_version == "3.10");
  // What the target does not declare comes from the configuration.
  CHECK(r.cuda_compat == gpulock::gpu::CudaCompat::Minor);
}

TEST_CASE("config: a requirements file's --index-url wins over a configured one", "[config]") {
  Sandbox box("requirements-index");
  box.variables["PIP_INDEX_URL"] = "https://pip.example/simple";
  auto c = box.load();
  gpulock::app::ResolveRequest request;
  REQUIRE(gpulock::app::apply_config(c, request));
  CHECK(!request.index_url);
  CHECK(request.configured_index_url == "https://pip.example/simple");
}

TEST_CASE("config: gpulock's variable wins over another tool's, a disagreeing pair is a conflict",
          "[config]") {
  Sandbox box("conflicts");
  box.variables = {{"GPULOCK_INDEX_URL", "https://gpulock.example/simple"},
                   {"UV_INDEX_URL", "https://uv.example/simple"},
                   {"PIP_INDEX_URL", "https://gpulock.example/simple/"},
                   {"GPULOCK_TORCH_BACKEND", "cu126"},
                   {"UV_TORCH_BACKEND", "cu126"},
                   {"UV_EXTRA_INDEX_URL", "https://user:secret@uv.example/extra"},
                   {"PIP_EXTRA_INDEX_URL", "https://pip.example/extra"}};
  auto c = box.load();
  CHECK(value_of(c, "index-url") == "https://gpulock.example/simple");
  CHECK(origin_of(c, "index-url") == "env GPULOCK_INDEX_URL");
  CHECK(value_of(c, "torch-backend") == "cu126");
  REQUIRE(c.conflicts.size() == 2);
  // PIP_INDEX_URL names the same index (a trailing slash apart) and UV_TORCH_BACKEND the same
  // backend: an agreeing pair is no conflict.
  CHECK(c.conflicts[0].to_string() ==
        "GPULOCK_INDEX_URL='https://gpulock.example/simple' wins over "
        "UV_INDEX_URL='https://uv.example/simple'");
  CHECK(c.conflicts[1].to_string() ==
        "UV_EXTRA_INDEX_URL='https://user:****@uv.example/extra' wins over "
        "PIP_EXTRA_INDEX_URL='https://pip.example/extra'");
  CHECK(gpulock::app::config_text(c) ==
        R"(index-url = "https://gpulock.example/simple"  # env GPULOCK_INDEX_URL
  # conflict: env UV_INDEX_URL = "https://uv.example/simple"; env GPULOCK_INDEX_URL wins
  # overridden: env PIP_INDEX_URL = "https://gpulock.example/simple/"
extra-index-url = ["https://user:****@uv.example/extra"]  # env UV_EXTRA_INDEX_URL
  # conflict: env PIP_EXTRA_INDEX_URL = ["https://pip.example/extra"]; env UV_EXTRA_INDEX_URL wins
index-strategy = "first-index"  # default
torch-backend = "cu126"  # env GPULOCK_TORCH_BACKEND
  # overridden: env UV_TORCH_BACKEND = "cu126"
torch-index-base = "https://download.pytorch.org/whl"  # default
prerelease = "if-necessary"  # default
cuda-compat = "strict"  # default
)");
  // Issue 41 item 2: each winning setting from a variable is a user-level setting with its
  // origin (the lock records one only when it supplied a locked file); overridden ones are not.
  gpulock::app::ResolveRequest request;
  REQUIRE(gpulock::app::apply_config(c, request));
  std::vector<std::string> origins;
  for (const auto& s : request.user_settings)
    origins.push_back(s.key + " <- " + s.origin);
  CHECK(origins == std::vector<std::string>{"index-url <- env GPULOCK_INDEX_URL",
                                            "extra-index-url <- env UV_EXTRA_INDEX_URL",
                                            "torch-backend <- env GPULOCK_TORCH_BACKEND"});
  CHECK(request.config_files.empty());
}

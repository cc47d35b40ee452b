#include "gpulock/install/interpreter.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <sys/utsname.h>

#include "gpulock/core/text.h"
#include "gpulock/core/version.h"
#include "gpulock/sys/process.h"

namespace gpulock::install {
namespace fs = std::filesystem;
namespace {

// Asks the interpreter for its version, its site-packages directories in sys.path order, and
// the PEP 508 marker environment (the same values packaging's default_environment() reads).
constexpr const char* kQuery = R"PY(
import os, platform, sys, sysconfig
def emit(k, v): print(k + "\t" + str(v))
emit("version", platform.python_version())
emit("executable", sys.executable)
emit("prefix", sys.prefix)
emit("base_prefix", getattr(sys, "base_prefix", sys.prefix))
for k, v in sysconfig.get_paths().items(): emit("path." + k, v)
seen = set()
cands = [p for p in sys.path if p and os.path.basename(os.path.normpath(p)) in ("site-packages", "dist-packages")]
cands += [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
for p in cands:
    if not p or not os.path.isdir(p): continue
    r = os.path.realpath(p)
    if r in seen: continue
    seen.add(r)
    emit("site", p)
iv = sys.implementation.version
ver = "{0.major}.{0.minor}.{0.micro}".format(iv)
if iv.releaselevel != "final": ver += iv.releaselevel[0] + str(iv.serial)
emit("m.implementation_name", sys.implementation.name)
emit("m.implementation_version", ver)
emit("m.os_name", os.name)
emit("m.platform_machine", platform.machine())
emit("m.platform_python_implementation", platform.python_implementation())
emit("m.platform_release", platform.release())
emit("m.platform_system", platform.system())
emit("m.platform_version", platform.version())
emit("m.python_full_version", platform.python_version())
emit("m.python_version", ".".join(platform.python_version_tuple()[:2]))
emit("m.sys_platform", sys.platform)
)PY";

}  // namespace

core::Result<Interpreter> ask_interpreter(const std::string& python) {
  sys::ProgramOptions options;
  options.timeout = std::chrono::milliseconds(60'000);
  auto r = sys::run_program({python, "-c", kQuery}, options);
  if (!r) return std::unexpected(r.error());
  if (r->timed_out || r->exit_code != 0) {
    std::string last = r->err;
    while (!last.empty() && last.back() == '\n')
      last.pop_back();
    if (auto nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
    return std::unexpected(
        core::make_error(
            core::ErrorCode::Io,
            r->timed_out ? std::string("the interpreter did not answer within 60 s")
                         : fmt::format("the interpreter failed to report its site-packages (exit "
                                       "status {}){}",
                                       r->exit_code, last.empty() ? "" : ": " + last),
            python)
            .with_hint("check --python; it must be a Python 3 interpreter"));
  }
  Interpreter in;
  std::istringstream lines(r->out);
  std::string line;
  while (std::getline(lines, line)) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string key = line.substr(0, tab), value = line.substr(tab + 1);
    if (key == "version") {
      in.version = value;
    } else if (key == "executable") {
      in.executable = value;
    } else if (key == "prefix") {
      in.prefix = value;
    } else if (key == "base_prefix") {
      in.base_prefix = value;
    } else if (key.starts_with("path.")) {
      in.paths[key.substr(5)] = value;
    } else if (key == "site") {
      in.site_packages.emplace_back(value);
    } else if (key.starts_with("m.")) {
      std::string name = key.substr(2);
      auto& m = in.markers;
      if (name == "implementation_name")
        m.implementation_name = value;
      else if (name == "implementation_version")
        m.implementation_version = value;
      else if (name == "os_name")
        m.os_name = value;
      else if (name == "platform_machine")
        m.platform_machine = value;
      else if (name == "platform_python_implementation")
        m.platform_python_implementation = value;
      else if (name == "platform_release")
        m.platform_release = value;
      else if (name == "platform_system")
        m.platform_system = value;
      else if (name == "platform_version")
        m.platform_version = value;
      else if (name == "python_full_version")
        m.python_full_version = value;
      else if (name == "python_version")
        m.python_version = value;
      else if (name == "sys_platform")
        m.sys_platform = value;
    }
  }
  if (in.site_packages.empty()) {
    return std::unexpected(core::make_error(
        core::ErrorCode::Io, "the interpreter reports no site-packages directory", python));
  }
  return in;
}

std::optional<Interpreter> read_venv(const std::string& python) {
  std::error_code ec;
  const fs::path exe = fs::absolute(python, ec);
  if (ec || exe.parent_path().filename() != "bin") return std::nullopt;
  const fs::path prefix = exe.parent_path().parent_path();
  std::ifstream cfg(prefix / "pyvenv.cfg");
  if (!cfg || !fs::exists(exe, ec)) return std::nullopt;
  std::string version, home;
  for (std::string line; std::getline(cfg, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key(core::trim(std::string_view(line).substr(0, eq)));
    std::string value(core::trim(std::string_view(line).substr(eq + 1)));
    if (key == "version" || (key == "version_info" && version.empty())) version = value;
    if (key == "home") home = value;
  }
  // virtualenv: "3.11.7.final.0".
  if (auto f = version.find(".final"); f != std::string::npos) version.resize(f);
  auto v = core::Version::parse(version);
  if (!v || v->release().size() < 3 || home.empty() || !v->local_string().empty() ||
      v->is_prerelease())
    return std::nullopt;
  const std::string xy = fmt::format("{}.{}", v->release()[0], v->release()[1]);
  const fs::path site = prefix / "lib" / ("python" + xy) / "site-packages";
  if (!fs::is_directory(site, ec)) return std::nullopt;
  struct utsname u {};
  if (::uname(&u) != 0) return std::nullopt;
  Interpreter in;
  in.version = version;
  in.executable = exe.string();
  in.prefix = prefix;
  in.base_prefix = fs::path(home).parent_path();
  in.paths = {{"purelib", site}, {"platlib", site}, {"scripts", prefix / "bin"}, {"data", prefix}};
  in.site_packages = {site};
  in.markers = core::Environment::linux_cpython(xy, u.machine, version);
  return in;
}

}  // namespace gpulock::install

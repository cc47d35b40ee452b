#include "gpulock/app/target.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>
#include <sys/utsname.h>

#include "gpulock/sys/process.h"

namespace gpulock::app {
namespace {

using core::ErrorCode;

// Asked of an interpreter: its marker values and what its wheel tags depend on, one
// `key=value` per line (no JSON parser is needed to read it back).
constexpr std::string_view kQueryScript = R"PY(
import os, platform, sys, sysconfig
v = sys.version_info
impl = sys.implementation.name
glibc = ""
try:
    glibc = os.confstr("CS_GNU_LIBC_VERSION") or ""
except (AttributeError, ValueError, OSError):
    pass
print("python_version=%d.%d" % (v[0], v[1]))
print("python_full_version=%s" % platform.python_version())
print("implementation_name=%s" % impl)
print("implementation_version=%d.%d.%d" % sys.implementation.version[:3])
print("platform_python_implementation=%s" % platform.python_implementation())
print("platform_machine=%s" % platform.machine())
print("platform_system=%s" % platform.system())
print("platform_release=%s" % platform.release())
print("platform_version=%s" % platform.version())
print("sys_platform=%s" % sys.platform)
print("os_name=%s" % os.name)
print("glibc=%s" % glibc)
print("free_threaded=%s" % ("1" if sysconfig.get_config_var("Py_GIL_DISABLED") else "0"))
print("executable=%s" % (sys.executable or ""))
)PY";

std::string host_machine() {
  utsname u{};
  if (::uname(&u) == 0) return u.machine;
  return "x86_64";
}

core::Result<Target> finish(core::TagTarget tags, std::string python_version, core::Version full,
                            core::Environment env) {
  Target t;
  t.python_version = std::move(python_version);
  t.python_full = std::move(full);
  t.tags = std::move(tags);
  t.environment = std::move(env);
  t.supported = core::supported_tags(t.tags);
  auto platforms = core::platform_tags(t.tags);
  t.platform = platforms.empty() ? "any" : platforms.front();
  return t;
}

}  // namespace

core::Result<Target> make_target(std::string_view python_version, std::string_view platform) {
  auto tags = core::TagTarget::from_platform_tag(python_version, platform);
  if (!tags) {
    return std::unexpected(tags.error().with_code(ErrorCode::Usage));
  }
  std::string xy = fmt::format("{}.{}", tags->python_major, tags->python_minor);
  // --python-version 3.11.4 keeps its micro for python_full_version markers.
  std::string full_text = fmt::format("{}.0", xy);
  {
    std::string_view pv = python_version;
    if (pv.ends_with("t")) pv.remove_suffix(1);
    if (std::count(pv.begin(), pv.end(), '.') == 2) full_text = std::string(pv);
  }
  auto full = core::Version::parse(full_text);
  if (!full)
    return core::fail(ErrorCode::Usage, fmt::format("invalid --python-version {}",
                                                    core::quote_for_message(python_version)));

  std::string machine = tags->arch;
  core::Environment env = core::Environment::linux_cpython(xy, machine, full_text);
  switch (tags->os) {
    case core::Os::Linux:
      break;
    case core::Os::MacOs:
      env.sys_platform = "darwin";
      env.platform_system = "Darwin";
      env.platform_machine = machine == "universal2" ? "arm64" : machine;
      break;
    case core::Os::Windows:
      env.sys_platform = "win32";
      env.platform_system = "Windows";
      env.os_name = "nt";
      env.platform_machine = machine == "amd64" ? "AMD64" : machine == "x86" ? "x86" : "ARM64";
      break;
  }
  return finish(*tags, xy, *full, env);
}

core::Result<Target> make_target(const TargetRequest& request) {
  if (!request.python.empty() && (!request.python_version.empty() || !request.platform.empty())) {
    return core::fail(ErrorCode::Usage,
                      "--python cannot be combined with --python-version or --platform");
  }
  if (!request.python_version.empty() || !request.platform.empty()) {
    if (request.python_version.empty()) {
      return core::fail(ErrorCode::Usage, "--platform needs --python-version");
    }
    std::string platform =
        request.platform.empty() ? "manylinux_2_28_" + host_machine() : request.platform;
    auto target = make_target(request.python_version, platform);
    if (!target) return target;
    for (const auto& more : request.more_platforms) {
      auto other = make_target(request.python_version, more);
      if (!other) return other;
      if (other->tags.os != target->tags.os ||
          other->environment.platform_machine != target->environment.platform_machine) {
        return core::fail(
            ErrorCode::Usage,
            fmt::format(
                "--platform {} and --platform {} are different machines; lock each with its own "
                "resolve",
                platform, more));
      }
      // pip's repeated --platform: the union of the tags, the first platform's first.
      for (auto& t : other->supported) {
        if (std::find(target->supported.begin(), target->supported.end(), t) ==
            target->supported.end()) {
          target->supported.push_back(std::move(t));
        }
      }
    }
    return target;
  }

  std::string python = request.python.empty() ? "python3" : request.python;
  sys::ProgramOptions options;
  options.timeout = std::chrono::milliseconds(30'000);
  auto run = sys::run_program({python, "-I", "-c", std::string(kQueryScript)}, options);
  auto cannot = [&](std::string why) {
    return std::unexpected(
        core::make_error(ErrorCode::Usage,
                         fmt::format("cannot ask the interpreter {} for the target: {}",
                                     core::quote_for_message(python), why))
            .with_hint(
                "name the target instead: --python-version 3.11 --platform manylinux_2_28_x86_64"));
  };
  if (!run) return cannot(run.error().message);
  if (run->timed_out) return cannot("it did not answer within 30 s");
  if (run->exit_code != 0) return cannot(fmt::format("it exited with status {}", run->exit_code));

  std::map<std::string, std::string> values;
  std::string_view out = run->out;
  while (!out.empty()) {
    auto nl = out.find('\n');
    std::string_view line = out.substr(0, nl);
    out = nl == std::string_view::npos ? std::string_view{} : out.substr(nl + 1);
    auto eq = line.find('=');
    if (eq != std::string_view::npos)
      values[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  std::string xy = values["python_version"];
  if (xy.empty()) return cannot("its answer could not be read");

  std::string machine = values["platform_machine"];
  std::string platform;
  std::string glibc = values["glibc"];  // "glibc 2.36"
  if (values["sys_platform"] == "linux") {
    if (glibc.starts_with("glibc ")) {
      std::string ver = glibc.substr(6);
      auto dot = ver.find('.');
      platform = fmt::format("manylinux_{}_{}_{}", ver.substr(0, dot),
                             dot == std::string::npos ? "0" : ver.substr(dot + 1), machine);
    } else {
      platform = "linux_" + machine;
    }
  } else if (values["sys_platform"] == "darwin") {
    platform = fmt::format("macosx_11_0_{}", machine);
  } else if (values["sys_platform"] == "win32") {
    platform = machine == "ARM64" ? "win_arm64" : machine == "x86" ? "win32" : "win_amd64";
  } else {
    return cannot(fmt::format("unsupported platform {}", values["sys_platform"]));
  }
  std::string python_version = xy + (values["free_threaded"] == "1" ? "t" : "");
  auto tags = core::TagTarget::from_platform_tag(python_version, platform);
  if (!tags) return cannot(tags.error().message);
  auto full = core::Version::parse(core::pep440_python_full_version(values["python_full_version"]));
  if (!full) return cannot("its version could not be read");

  core::Environment env;
  env.implementation_name = values["implementation_name"];
  env.implementation_version = values["implementation_version"];
  env.os_name = values["os_name"];
  env.platform_machine = machine;
  env.platform_python_implementation = values["platform_python_implementation"];
  env.platform_release = values["platform_release"];
  env.platform_system = values["platform_system"];
  env.platform_version = values["platform_version"];
  env.python_full_version = values["python_full_version"];
  env.python_version = xy;
  env.sys_platform = values["sys_platform"];
  auto target = finish(*tags, xy, *full, env);
  if (target) target->executable = values["executable"];
  return target;
}

}  // namespace gpulock::app

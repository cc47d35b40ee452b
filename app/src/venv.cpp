#include "gpulock/app/venv.h"

#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"
#include "gpulock/sys/process.h"

namespace gpulock::app {
namespace {

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  if (auto nl = text.rfind('\n'); nl != std::string::npos) text = text.substr(nl + 1);
  return text;
}

// Why the lock refuses this version ("" when it accepts it).
std::string refusal(const std::string& version, const VenvRequest& request) {
  auto v = core::Version::parse(version);
  if (!v) return fmt::format("version '{}' does not parse", version);
  if (request.target_python) {
    const std::string& xy = *request.target_python;
    if (version != xy && !version.starts_with(xy + "."))
      return fmt::format("Python {}, the lock's target is {}", version, xy);
  }
  if (request.requires_python) {
    auto spec = core::SpecifierSet::parse(*request.requires_python);
    if (spec && !spec->contains(*v, true))
      return fmt::format("Python {} is outside requires-python {}", version,
                         *request.requires_python);
  }
  return {};
}

}  // namespace

core::Result<CreatedVenv> choose_venv_interpreter(const VenvRequest& request) {
  std::vector<std::string> names = {"python3"};
  for (int minor = 14; minor >= 8; --minor)
    names.push_back(fmt::format("python3.{}", minor));
  names.push_back("python");
  std::vector<std::string> tried;
  sys::ProgramOptions quick;
  quick.timeout = std::chrono::milliseconds(30'000);
  for (const auto& name : names) {
    auto path = sys::find_on_path(name);
    if (!path) continue;
    auto r =
        sys::run_program({*path, "-c", "import platform; print(platform.python_version())"}, quick);
    if (!r || r->exit_code != 0) {
      tried.push_back(fmt::format("{}: does not run", *path));
      continue;
    }
    const std::string version = last_line(r->out);
    if (auto why = refusal(version, request); !why.empty()) {
      tried.push_back(fmt::format("{}: {}", *path, why));
      continue;
    }
    return CreatedVenv{request.dir / "bin" / "python", *path, version};
  }
  std::string list;
  for (const auto& t : tried)
    list += "\n  " + t;
  return std::unexpected(
      core::make_error(core::ErrorCode::NotFound,
                       fmt::format("no interpreter on PATH fits the lock{}",
                                   tried.empty() ? std::string(" (none found)") : ":" + list),
                       request.dir.string())
          .with_hint("install a Python the lock accepts, or give --python"));
}

core::Result<CreatedVenv> create_venv(const VenvRequest& request) {
  auto chosen = choose_venv_interpreter(request);
  if (!chosen) return chosen;
  sys::ProgramOptions po;
  po.timeout = std::chrono::milliseconds(120'000);
  auto made = sys::run_program(
      {chosen->base_python, "-m", "venv", "--without-pip", request.dir.string()}, po);
  if (!made) return std::unexpected(made.error());
  if (made->exit_code != 0) {
    return std::unexpected(
        core::make_error(core::ErrorCode::Io,
                         fmt::format("{} -m venv failed (exit status {}): {}", chosen->base_python,
                                     made->exit_code, last_line(made->err)),
                         request.dir.string()));
  }
  return chosen;
}

}  // namespace gpulock::app

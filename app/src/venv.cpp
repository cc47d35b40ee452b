#include "gpulock/app/venv.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/targets.h"
#include "gpulock/sys/env.h"
#include "gpulock/sys/process.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  if (auto nl = text.rfind('\n'); nl != std::string::npos) text = text.substr(nl + 1);
  return text;
}

std::vector<fs::path> path_dirs() {
  std::vector<fs::path> dirs;
  auto path = sys::env_value("PATH");
  if (!path) return dirs;
  std::string_view rest = *path;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view d = rest.substr(0, colon);
    if (!d.empty()) dirs.emplace_back(d);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return dirs;
}

// What an interpreter said of itself, by path, for the life of the process: PATH's interpreters
// do not change while one gpulock runs, and a shim is slow to start (PathPythons).
PathPython ask_once(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, PathPython> answers;
  {
    std::lock_guard lock(mutex);
    if (auto it = answers.find(path); it != answers.end()) return it->second;
  }
  PathPython p;
  p.path = path;
  auto target = make_target(TargetRequest{p.path, {}, {}, {}});
  if (target) {
    p.target = std::move(*target);
  } else {
    p.error = target.error().message;
  }
  std::lock_guard lock(mutex);
  return answers.emplace(path, std::move(p)).first->second;
}

}  // namespace

PathPythons::PathPythons() {
  std::vector<std::string> names = {"python3"};
  for (int minor = 15; minor >= 6; --minor)
    names.push_back(fmt::format("python3.{}", minor));
  names.push_back("python");
  const auto dirs = path_dirs();
  std::set<fs::path> seen;
  for (const auto& name : names) {
    for (const auto& dir : dirs) {
      const fs::path candidate = dir / name;
      std::error_code ec;
      if (::access(candidate.c_str(), X_OK) != 0 || fs::is_directory(candidate, ec)) continue;
      fs::path real = fs::canonical(candidate, ec);
      if (ec) real = candidate;
      if (!seen.insert(real).second) continue;
      items_.push_back(PathPython{candidate.string(), std::nullopt, {}});
    }
  }
  asked_.assign(items_.size(), false);
}

PathPythons::PathPythons(std::vector<PathPython> asked)
    : items_(std::move(asked)), asked_(items_.size(), true) {}

const PathPython& PathPythons::operator[](std::size_t i) {
  if (!asked_[i]) {
    items_[i] = ask_once(items_[i].path);
    asked_[i] = true;
  }
  return items_[i];
}

std::string describe_python(const PathPython& p) {
  return p.target ? fmt::format("{} (Python {})", p.path, p.target->python_full.to_string())
                  : p.path;
}

core::Result<CreatedVenv> choose_venv_interpreter(const VenvRequest& request) {
  std::vector<std::string> tried;
  const lock::GpulockTarget* target = request.target ? &*request.target : nullptr;
  PathPythons pythons;
  // In turn, and only until one fits: each one asked costs a process (seconds for a shim).
  for (std::size_t i = 0; i < pythons.size(); ++i) {
    const PathPython& p = pythons[i];
    if (!p.target) {
      tried.push_back(fmt::format("{}: does not run ({})", p.path, p.error));
      continue;
    }
    if (auto why = python_refusal(request.requires_python, target, *p.target); !why.empty()) {
      tried.push_back(fmt::format("{}: {}", describe_python(p), why));
      continue;
    }
    return CreatedVenv{request.dir / "bin" / "python", p.path,
                       p.target->executable.empty() ? p.path : p.target->executable,
                       p.target->python_full.to_string(), std::move(tried)};
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
  // The real interpreter, not the name PATH has (a pyenv shim would start pyenv once more).
  auto made = sys::run_program(
      {chosen->base_executable, "-m", "venv", "--without-pip", request.dir.string()}, po);
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

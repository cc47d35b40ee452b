// `gpulock install` (app/install.h): the lock, the mirror as the installers' file source, the
// environment (a venv made when missing), the installer's plan and apply, then the probe.
#include "gpulock/app/install.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "gpulock/app/mirror.h"
#include "gpulock/app/venv.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/env.h"
#include "gpulock/sys/paths.h"

namespace gpulock::app {
namespace fs = std::filesystem;
namespace {

using core::ErrorCode;

// --mirror / --mirror-fallback: each file from the mirror's store by its sha256 (a fallback only
// when the lock's URL answers 404/410).
class MirrorSource final : public install::FileSource {
 public:
  explicit MirrorSource(const InstallRequest& request)
      : fallback_(request.mirror.empty()),
        location_(fallback_ ? request.mirror_fallback : request.mirror) {
    if (fallback_) client_.emplace(request.options.client);
  }

  core::Result<std::optional<std::string>> url_for(const lock::FileEntry& f) override {
    if (fallback_) {
      auto status = client_->probe_url(*f.url);
      if (!status) return std::unexpected(status.error());
      if (*status != 404 && *status != 410) return std::nullopt;
    }
    return mirror_file_url(location_, f.hashes.at("sha256"), f.filename());
  }

 private:
  bool fallback_;
  std::string location_;
  std::optional<index::IndexClient> client_;
};

// The native installer's environment: --venv, --python, $VIRTUAL_ENV, else ./.venv (created
// when missing).
core::Result<install::Environment> native_environment(const InstallRequest& request,
                                                      const lock::Lock& lk,
                                                      const install::Observer& observer,
                                                      InstallResult& result) {
  if (!request.venv.empty() && !request.python.empty())
    return core::fail(ErrorCode::Usage, "--venv and --python exclude each other");
  fs::path venv;
  if (!request.venv.empty()) {
    venv = request.venv;
  } else if (!request.python.empty()) {
    return install::Environment{request.python, std::nullopt};
  } else if (auto v = sys::env_value("VIRTUAL_ENV")) {
    return install::Environment{(fs::path(*v) / "bin" / "python").string(), std::nullopt};
  } else {
    venv = ".venv";
  }
  std::error_code ec;
  if (fs::exists(venv / "bin" / "python", ec))
    return install::Environment{(venv / "bin" / "python").string(), std::nullopt};
  if (fs::exists(venv, ec) && !fs::is_empty(venv, ec)) {
    return core::fail_at(ErrorCode::Usage,
                         "this directory exists and is not a virtual environment (no bin/python)",
                         venv.string());
  }
  VenvRequest vr;
  vr.dir = sys::absolute_path(venv);
  vr.requires_python = lk.requires_python;
  if (lk.gpulock && lk.gpulock->target) vr.target = lk.gpulock->target;
  // Why the interpreters found before the chosen one were not taken.
  auto passed_over = [&](const CreatedVenv& chosen) {
    if (!observer.info) return;
    for (const auto& line : chosen.passed_over)
      observer.info(fmt::format("not chosen: {}", line));
  };
  if (request.options.dry_run) {
    // Nothing is created: the plan is made with the interpreter that would make the venv.
    auto chosen = choose_venv_interpreter(vr);
    if (!chosen) return std::unexpected(chosen.error());
    result.would_create_with = chosen->base_python;
    if (observer.info) {
      observer.info(
          fmt::format("would create a virtual environment at {} with {} (Python {}), "
                      "the first interpreter on PATH the lock accepts",
                      venv.string(), chosen->base_python, chosen->version));
    }
    passed_over(*chosen);
    return install::Environment{chosen->base_python, vr.dir};
  }
  const auto started = std::chrono::steady_clock::now();
  auto made = create_venv(vr);
  if (!made) return std::unexpected(made.error());
  result.created = true;
  result.venv_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (observer.info) {
    observer.info(fmt::format(
        "created a virtual environment at {} (Python {}, {}{}): the first "
        "interpreter on PATH the lock accepts",
        venv.string(), made->version, made->base_python,
        made->base_executable == made->base_python ? "" : " -> " + made->base_executable));
  }
  passed_over(*made);
  return install::Environment{made->python.string(), std::nullopt};
}

// The probe after an install (either installer): `request`'s probe settings, run with the
// environment's `python` against the lock just installed.
core::Result<EnvironmentReport> probe_installed(const InstallRequest& request,
                                                const std::string& python) {
  ProbeRequest probe = request.probe_request;
  probe.python = python;
  probe.site_packages.clear();
  probe.lock = request.lock;
  probe.client = request.options.client;  // the cache this install read the member lists into
  return probe_environment(probe);
}

}  // namespace

core::Result<InstallResult> install(const InstallRequest& request,
                                    const install::Observer& observer) {
  InstallResult result;
  result.lock = request.lock;
  result.installer = request.installer;
  result.dry_run = request.options.dry_run;
  auto file = lock::read_lock_file(request.lock);
  if (!file) return std::unexpected(file.error());
  for (const auto& w : file->warnings)
    result.warnings.push_back(w.message);
  if (!request.mirror.empty() || !request.mirror_fallback.empty()) {
    MirrorSource mirror(request);
    if (auto s = install::take_files_from(mirror, file->lock, result.from_mirror); !s)
      return std::unexpected(s.error());
  }
  install::Environment env;
  if (request.installer == install::Kind::Native) {
    auto native = native_environment(request, file->lock, observer, result);
    if (!native) return std::unexpected(native.error());
    env = std::move(*native);
  } else {
    env.python = default_python(request.python);
  }

  install::Options options = request.options;
  options.lock_path = request.lock;
  auto installer = install::make_installer(request.installer, std::move(options));
  auto plan = installer->plan(file->lock, env, observer);
  if (!plan) return std::unexpected(plan.error());
  result.plan = std::move(*plan);
  result.warnings.insert(result.warnings.end(), result.plan.warnings.begin(),
                         result.plan.warnings.end());
  if (request.options.dry_run) {
    result.plan.state.reset();  // what the plan held (a shared lock of the environment)
    return result;
  }
  auto applied = installer->apply(result.plan, observer);
  if (!applied) return std::unexpected(applied.error());
  result.applied = std::move(*applied);
  result.warnings.insert(result.warnings.end(), result.applied.warnings.begin(),
                         result.applied.warnings.end());

  if (!result.applied.ok() || !request.probe) return result;
  auto report = probe_installed(request, result.plan.python);
  if (!report) return std::unexpected(report.error());
  result.probe = std::move(*report);
  return result;
}

}  // namespace gpulock::app

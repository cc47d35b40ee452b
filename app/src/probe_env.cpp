#include "gpulock/app/probe_env.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <sys/utsname.h>

#include "gpulock/app/command_line.h"
#include "gpulock/core/environment.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/version.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/install/env_lock.h"
#include "gpulock/install/interpreter.h"
#include "gpulock/install/record.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/paths.h"
#include "gpulock/sys/process.h"

#include "locked_files.h"

namespace gpulock::app {
namespace fs = std::filesystem;
namespace {

std::string host_machine() {
  struct utsname u {};
  if (::uname(&u) == 0) return u.machine;
  return "x86_64";
}

bool versions_equal(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto va = core::Version::parse(a);
  auto vb = core::Version::parse(b);
  return va && vb && *va == *vb;
}

probe::Finding finding(std::string id, probe::Severity s, std::string subject, std::string message,
                       std::string hint) {
  return {std::move(id), s, std::move(subject), std::move(message), std::move(hint)};
}

// Issue 44 item 4: the files the lock records for `p`'s wheel (read from its own zip at lock
// time) against those installed, RECORD or not: the shared libraries (`locked-file-missing`),
// then, with `lists`, every member (`locked-file-mismatch`, leaving out a library named already).
void compare_locked_files(const lock::Package& p, const probe::InstalledDistribution& installed,
                          const detail::LockedLists* lists, const std::string& install,
                          EnvironmentReport& report, std::vector<detail::ListChecked>& listed) {
  auto libs = install::record::check_locked_libraries(p, installed.site_packages);
  if (!libs.missing.empty()) {
    std::string names;
    for (const auto& m : libs.missing)
      names += (names.empty() ? "" : ", ") + m;
    report.findings.push_back(
        finding("locked-file-missing", probe::Severity::Fail, p.name,
                fmt::format("{} {}: {} of the {} shared libraries the lock records for {} {} not "
                            "installed: {}.",
                            p.name, installed.version, libs.missing.size(), libs.total, libs.file,
                            libs.missing.size() == 1 ? "is" : "are", names),
                fmt::format("`{}` replaces it", install)));
  }
  if (lists == nullptr) return;
  const std::set<std::string> named(libs.missing.begin(), libs.missing.end());
  listed.push_back(detail::check_locked_members(p, installed, *lists, named));
  const auto& checked = listed.back();
  if (checked.outcome != detail::ListCheck::Compared || checked.problems.empty()) return;
  constexpr std::size_t kMaxShown = 20;
  std::string files;
  for (const auto& d : detail::members_details(checked, kMaxShown))
    files += (files.empty() ? "" : "; ") + d;
  // RECORD may still list the file and its hash (another tool rewrote it): install's sync keeps
  // such a package, so it is removed first, as check --env says.
  const std::string& python = report.environment.python;
  report.findings.push_back(
      finding("locked-file-mismatch", probe::Severity::Fail, p.name,
              fmt::format("{}: {}.", detail::members_message(p, installed, checked), files),
              python.empty() ? fmt::format("reinstall it: uninstall {}, then `{}`", p.name, install)
                             : detail::reinstall_hint(python, p.name, install)));
}

// The lock against the environment.
// `install` is the complete command that installs the lock into the environment probed;
// `lists`: the locked wheels' member lists (null: their files are not compared).
void compare_with_lock(const lock::Lock& lk, const core::Environment& markers,
                       const std::string& install, const detail::LockedLists* lists,
                       EnvironmentReport& report) {
  const auto& env = report.environment;
  std::vector<std::string> locked_names;
  std::vector<detail::ListChecked> listed;
  for (const auto& p : lk.packages) {
    if (p.marker) {
      auto m = core::Marker::parse(*p.marker);
      if (m && !m->matches(markers)) continue;
    }
    locked_names.push_back(p.name);
    PackageCheck check{p.name, p.version.value_or(""), "", false};
    const auto* installed = env.find(core::normalize_name(p.name));
    if (installed != nullptr) check.installed = installed->version;
    check.matches =
        installed != nullptr && (!p.version || versions_equal(installed->version, *p.version));
    report.packages.push_back(check);
    if (check.matches) {
      compare_locked_files(p, *installed, lists, install, report, listed);
      continue;
    }
    if (installed == nullptr) {
      report.findings.push_back(
          finding("lock-missing", probe::Severity::Fail, p.name,
                  fmt::format("{} {} is in the lock but not installed.", p.name, check.locked),
                  fmt::format("`{}` installs every locked package", install)));
      continue;
    }
    auto iv = core::Version::parse(installed->version);
    auto lv = core::Version::parse(check.locked);
    if (iv && lv && gpu::is_cuda_linked(p.name)) {
      auto ib = gpu::classify_build(*iv);
      auto lb = gpu::classify_build(*lv);
      if (ib.kind == gpu::BuildKind::Cpu && lb.kind == gpu::BuildKind::Cuda) {
        report.findings.push_back(
            finding("cpu-torch", probe::Severity::Fail, p.name,
                    fmt::format("{} {} is a CPU build, but the lock has {} (CUDA {}).", p.name,
                                installed->version, check.locked, lb.cuda->to_string()),
                    fmt::format("`{}` replaces it with the locked CUDA build (pip sees "
                                "another version, so there is no \"already satisfied\" trap)",
                                install)));
        continue;
      }
    }
    report.findings.push_back(finding(
        "lock-version", probe::Severity::Fail, p.name,
        fmt::format("{} {} installed, lock says {}.", p.name, installed->version, check.locked),
        fmt::format("`{}` installs the locked versions", install)));
  }
  // What the member lists allowed (check --env's notes), where the comparison was not possible.
  for (auto& note : detail::file_list_notes(listed)) {
    report.findings.push_back(
        finding(note.compared ? "locked-files-compared" : "locked-files-not-compared",
                probe::Severity::Info, std::move(note.subject), std::move(note.text) + ".", ""));
  }
  // GPU-related packages installed that the lock does not have.
  for (const auto& d : env.distributions) {
    bool gpu_related = d.name.starts_with("nvidia-") || gpu::is_torch_family(d.name);
    if (!gpu_related) continue;
    if (std::find(locked_names.begin(), locked_names.end(), d.name) != locked_names.end()) continue;
    report.findings.push_back(
        finding("not-in-lock", probe::Severity::Warn, d.name,
                fmt::format("{} {} is installed but not in the lock.", d.name, d.version),
                fmt::format("`pip uninstall {}` unless something else needs it", d.name)));
  }
}

// The locked wheels' member lists (offline: the cache or a local wheel); nullopt when the
// request leaves them out.
std::optional<detail::LockedLists> member_lists(const ProbeRequest& request, const lock::Lock& lk,
                                                const std::string& lock_path,
                                                const probe::PythonEnvironment& env) {
  if (!request.member_lists) return std::nullopt;
  return detail::read_locked_lists(lk, sys::absolute_path(lock_path).parent_path(), request.client,
                                   env);
}

// The machine against the lock and the installed torch build.
// `lock_command`: the lock's resolve command ("" without a lock), for complete relock hints.
void compare_machine(const ProbeRequest& request, const std::string& lock_command,
                     EnvironmentReport& report) {
  const auto& m = report.machine;
  const bool lock_needs_gpu =
      report.lock_gpu && (report.lock_gpu->cuda || report.lock_gpu->variant);
  if (report.lock_gpu && report.lock_gpu->min_driver && m.driver) {
    const auto& min = report.lock_gpu->min_driver;
    if (m.driver->value < *min) {
      const auto& cuda = report.lock_gpu->cuda;
      report.findings.push_back(finding(
          "driver-below-minimum", probe::Severity::Fail, "driver",
          fmt::format("The NVIDIA driver is {} but the lock needs at least {}{}.",
                      m.driver->value.to_string(), min->to_string(),
                      cuda ? fmt::format(" (for CUDA {})", cuda->to_string()) : std::string()),
          fmt::format("update the driver to {} or newer, or resolve a lock for this driver ({})",
                      min->to_string(), relock_here(lock_command))));
    }
  }
  // GPU architectures against the installed (else locked) torch build's arch list.
  if (m.gpu_archs && report.environment.torch) {
    auto tv = core::Version::parse(report.environment.torch->version);
    std::optional<gpu::CudaVersion> cuda;
    if (tv) {
      auto label = gpu::classify_build(*tv);
      if (label.cuda) cuda = label.cuda;
    }
    if (!cuda && report.environment.torch->cuda) {
      if (auto c = gpu::CudaVersion::parse(*report.environment.torch->cuda)) cuda = *c;
    }
    if (tv && cuda) {
      if (auto list = gpu::torch_arch_list(*tv, *cuda, host_machine())) {
        for (const auto& arch : m.gpu_archs->value) {
          if (gpu::arch_list_runs_on(*list, arch)) continue;
          report.findings.push_back(
              finding("gpu-arch", probe::Severity::Fail, arch.to_string(),
                      fmt::format("torch {} has no kernels for this GPU ({}): it carries {}.",
                                  report.environment.torch->version, arch.to_string(),
                                  gpu::describe_arch_list(*list)),
                      fmt::format("resolve the lock again for this GPU ({}): it picks a build with "
                                  "kernels for {} when one fits the requirements",
                                  relock_here(lock_command), arch.to_string())));
        }
      }
    }
  }
  // cuDNN 9.11+ dropped GPUs below 7.5.
  if (m.gpu_archs && report.load.cudnn_version) {
    auto cv = core::Version::parse(report.load.cudnn_version->to_string());
    if (cv) {
      if (auto floor = gpu::cudnn_min_capability(*cv)) {
        for (const auto& arch : m.gpu_archs->value) {
          if (arch >= *floor) continue;
          report.findings.push_back(finding(
              "gpu-arch-cudnn", probe::Severity::Fail, arch.to_string(),
              fmt::format("cuDNN {} does not support this GPU ({}): it needs compute capability "
                          "{} or newer.",
                          report.load.cudnn_version->to_string(), arch.to_string(),
                          floor->dotted()),
              "use a lock with an older cuDNN (torch builds before cuDNN 9.11) for this GPU"));
        }
      }
    }
  }
  if (request.require_gpu && lock_needs_gpu && !report.load.kernels.gpu_usable) {
    const LockGpuFacts& g = *report.lock_gpu;
    const std::string locked =
        g.variant ? *g.variant : "CUDA " + (g.cuda ? g.cuda->to_string() : std::string("?"));
    report.findings.push_back(
        finding("gpu-required", probe::Severity::Fail, "gpu",
                fmt::format("The lock is for {} but no GPU is usable here{}.", locked,
                            report.load.kernels.reason.empty()
                                ? std::string()
                                : fmt::format(" ({})", report.load.kernels.reason)),
                "run on a machine with an NVIDIA GPU and driver, or drop --require-gpu"));
  }
}

}  // namespace

bool EnvironmentReport::ok() const noexcept {
  return std::none_of(findings.begin(), findings.end(),
                      [](const probe::Finding& f) { return f.severity == probe::Severity::Fail; });
}

std::string default_python(const std::string& requested) {
  if (!requested.empty()) return requested;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0') {
    return (fs::path(venv) / "bin" / "python").string();
  }
  // The environment `gpulock install` makes by default (issue 41: one default everywhere).
  std::error_code ec;
  if (fs::exists(fs::path(".venv") / "bin" / "python", ec)) return ".venv/bin/python";
  return "python3";
}

core::Result<EnvironmentReport> probe_environment(const ProbeRequest& request) {
  if (!request.python.empty() && !request.site_packages.empty()) {
    return core::fail(core::ErrorCode::Usage, "--python and --site-packages exclude each other");
  }
  auto load_options = probe::load_probe_options_from_env();
  if (!load_options) return std::unexpected(load_options.error());
  load_options->run_kernels = request.run_kernels;

  // The lock first: a bad lock is an input error before any work.
  std::optional<lock::LockFile> lock_file;
  std::string lock_path = request.lock;
  if (lock_path.empty()) {
    std::error_code ec;
    if (fs::exists("pylock.toml", ec)) {
      lock_path = "pylock.toml";
    } else if (ec && ec != std::errc::no_such_file_or_directory) {
      return core::fail_at(core::ErrorCode::Io,
                           fmt::format("cannot look for the lock: {}", ec.message()),
                           "pylock.toml");
    }
  }
  if (!lock_path.empty()) {
    auto lf = lock::read_lock_file(lock_path);
    if (!lf) return std::unexpected(lf.error());
    lock_file = std::move(*lf);
  }

  EnvironmentReport report;
  core::Environment markers;
  install::EnvLock sync_guard;
  if (!request.site_packages.empty()) {
    std::error_code ec;
    fs::path site = fs::absolute(request.site_packages, ec);
    if (ec) site = request.site_packages;
    auto env = probe::scan_environment({site});
    if (!env) return std::unexpected(env.error());
    report.environment = std::move(*env);
    std::string python = "3.11";
    if (lock_file && lock_file->lock.gpulock && lock_file->lock.gpulock->target) {
      python = lock_file->lock.gpulock->target->python;
    }
    markers = core::Environment::linux_cpython(python, host_machine());
  } else {
    const std::string python = default_python(request.python);
    auto in = install::ask_interpreter(python);
    if (!in) return std::unexpected(in.error());
    // Held (shared) while the environment is read: a sync running now would show half its
    // work as drift.
    auto held = install::EnvLock::acquire(in->prefix, false, std::chrono::milliseconds(0));
    if (!held) {
      return std::unexpected(
          core::make_error(core::ErrorCode::Io,
                           fmt::format("a sync is in progress: {}", held.error().message),
                           held.error().where)
              .with_hint("run this again when the sync has ended; nothing was checked"));
    }
    sync_guard = std::move(*held);
    auto env = probe::scan_environment(in->site_packages);
    if (!env) return std::unexpected(env.error());
    report.environment = std::move(*env);
    report.environment.python = python;
    report.environment.python_version = in->version;
    markers = in->markers;
  }
  report.warnings = report.environment.warnings;

  auto machine = probe_machine(request.machine);
  if (!machine) return std::unexpected(machine.error());
  report.machine = std::move(*machine);

  report.load = probe::run_load_probe(report.environment, *load_options);
  report.findings = probe::assess_load(report.environment, report.load);
  // The install command for this environment and lock (issue 16 item 8: after `probe --python
  // X`, a bare `gpulock install` would install into another environment). Without a lock (none
  // given, no ./pylock.toml) the command names the lock to make as LOCK, not a file not there.
  std::string install =
      fmt::format("gpulock install --lock {}",
                  lock_path.empty() ? std::string("LOCK") : shell_quote(lock_path));
  if (!report.environment.python.empty()) {
    install += " --python " + shell_quote(report.environment.python);
  } else {
    install += " --python PYTHON";  // --site-packages: gpulock does not know its interpreter
  }
  std::string probe_kernels = "gpulock probe";
  if (!request.python.empty()) probe_kernels += " --python " + shell_quote(request.python);
  if (!request.site_packages.empty())
    probe_kernels += " --site-packages " + shell_quote(request.site_packages);
  probe_kernels += " --run-kernels";
  auto complete = [](std::string& text, std::string_view bare, const std::string& full) {
    for (auto at = text.find(bare); at != std::string::npos;
         at = text.find(bare, at + full.size() + 2)) {
      text.replace(at, bare.size(), "`" + full + "`");
    }
  };
  for (auto& f : report.findings) {
    complete(f.hint, "`gpulock install`", install);
    complete(f.hint, "`gpulock probe --run-kernels`", probe_kernels);
  }

  if (lock_file) {
    report.lock_path = lock_path;
    for (const auto& w : lock_file->warnings)
      report.warnings.push_back(w.to_string());
    if (lock_file->lock.gpulock && lock_file->lock.gpulock->gpu) {
      const auto& g = *lock_file->lock.gpulock->gpu;
      report.lock_gpu = LockGpuFacts{g.variant, g.cuda, g.cudnn, g.min_driver, g.archs};
    }
    const auto lists = member_lists(request, lock_file->lock, lock_path, report.environment);
    compare_with_lock(lock_file->lock, markers, install, lists ? &*lists : nullptr, report);
  }
  compare_machine(request, lock_file ? lock_file->lock.command : std::string(), report);
  // Failures first, then warnings, then information; the order within each is the probe's.
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const probe::Finding& a, const probe::Finding& b) {
                     return static_cast<int>(a.severity) < static_cast<int>(b.severity);
                   });
  return report;
}

}  // namespace gpulock::app

// Which of a project's locks this machine installs (targets.h: choose_lock, issue 22).
#include <algorithm>

#include <fmt/format.h>

#include "gpulock/app/machine.h"
#include "gpulock/app/requirements_file.h"
#include "gpulock/app/targets.h"
#include "gpulock/core/specifier.h"
#include "gpulock/gpu/fit.h"
#include "gpulock/lock/gpu_facts.h"
#include "gpulock/lock/lockfile.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;

bool is_lock_name(const std::string& name) {
  return name == "pylock.toml" ||
         (name.starts_with("pylock.") && name.ends_with(".toml") && name.size() > 12);
}

std::string driver_text(const probe::MachineInfo& machine) {
  return machine.driver ? fmt::format("driver {}", machine.driver->value.to_string())
                        : std::string("the driver");
}

// The first reason of the fit rule, in install's words.
std::string why_not(const gpu::FitReason& r, const probe::MachineInfo& machine,
                    const gpu::LockFacts& lock) {
  const auto& cuda = lock.cuda;
  switch (r.problem) {
    case gpu::FitProblem::NoDriver:
      return fmt::format("needs CUDA {} and {}", cuda ? cuda->to_string() : std::string("builds"),
                         machine.status == probe::MachineStatus::NoGpuOverride
                             ? "this machine has no GPU (--driver none)"
                             : "no NVIDIA driver was found");
    case gpu::FitProblem::DriverBelow:
      // Below the minimum because its ceiling is below the lock's CUDA: said as the ceiling.
      if (cuda && machine.cuda_ceiling &&
          !gpu::ceiling_allows(machine.cuda_ceiling->value, *cuda, lock.compat)) {
        return fmt::format("{} supports CUDA <= {}, this lock needs {}", driver_text(machine),
                           machine.cuda_ceiling->value.to_string(), cuda->to_string());
      }
      return fmt::format("{} is older than the lock's minimum {}", driver_text(machine),
                         r.expected);
    case gpu::FitProblem::CeilingBelow:
      return fmt::format("{} supports CUDA <= {}, this lock needs {}", driver_text(machine),
                         r.actual, r.expected);
    case gpu::FitProblem::Platform:
    case gpu::FitProblem::CudnnArch:
    case gpu::FitProblem::NoKernels:
      break;
  }
  return gpu::reason_text(r);
}

// One lock against the machine. `python_refused` is set when it is the interpreter that does not
// fit (the lock's Python, platform or requires-python).
LockFit judge(const fs::path& path, const probe::MachineInfo& machine, const Target* python,
              bool* python_refused = nullptr) {
  LockFit fit;
  fit.path = path.string();
  fit.target = path.filename().string();
  auto text = read_text_file(fit.path);
  if (!text) {
    fit.why = fmt::format("does not read: {}", text.error().message);
    return fit;
  }
  auto parsed = lock::parse_lock(*text, fit.path);
  if (!parsed) {
    fit.why = fmt::format("does not read: {}", parsed.error().to_string());
    return fit;
  }
  const auto& tool = parsed->lock.gpulock;
  if (tool && tool->target && tool->target->name) fit.target = *tool->target->name;
  auto facts = lock::gpu_facts(parsed->lock);
  if (python != nullptr) {
    const lock::GpulockTarget* target = tool && tool->target ? &*tool->target : nullptr;
    if (auto why = python_refusal(parsed->lock.requires_python, target, *python); !why.empty()) {
      fit.gpu = facts.cuda_builds;
      fit.why = std::move(why);
      if (python_refused != nullptr) *python_refused = true;
      return fit;
    }
  }
  const gpu::Machine here = probe::fit_machine(machine);
  // A lock that names no platform: its arch tables are read for this host's CPU.
  if (facts.cpu.empty() && here.platform) facts.cpu = here.platform->cpu;
  const gpu::Fit verdict = gpu::lock_fits(facts, here);
  fit.gpu = verdict.cuda_lock;
  fit.cuda = facts.cuda;
  if (!verdict.fits) {
    fit.why = why_not(verdict.reasons.front(), machine, facts);
    return fit;
  }
  fit.fits = true;
  if (!fit.gpu) {
    fit.why = "fits: CPU builds run on any machine";
  } else if (const auto* raised = gpu::cuda_raised_by(facts); raised && machine.cuda_ceiling) {
    // A CUDA 12.6 torch with an unpinned nvidia-cublas-cu12 12.9: the build is 12.6, the lock
    // needs 12.9 because of that package (issue 43).
    fit.why = fmt::format(
        "fits: a CUDA {} build whose {} {} needs CUDA {}, and {} supports CUDA "
        "<= {}",
        facts.build_cuda->to_string(), raised->name, raised->version.to_string(),
        facts.cuda->to_string(), driver_text(machine), machine.cuda_ceiling->value.to_string());
  } else if (facts.cuda && machine.cuda_ceiling) {
    fit.why =
        fmt::format("fits: a CUDA {} build, and {} supports CUDA <= {}", facts.cuda->to_string(),
                    driver_text(machine), machine.cuda_ceiling->value.to_string());
  } else {
    fit.why = "fits: its CUDA builds run on this machine's driver and GPUs";
  }
  for (const auto& unknown : verdict.unknown)
    fit.why += fmt::format(" ({})", unknown);
  return fit;
}

// The best fit: the CUDA lock with the highest CUDA, else the first CPU lock.
void pick(LockChoice& choice) {
  const LockFit* best = nullptr;
  const LockFit* cpu = nullptr;
  for (const auto& f : choice.locks) {
    if (!f.fits) continue;
    if (!f.gpu) {
      if (cpu == nullptr) cpu = &f;
    } else if (best == nullptr || best->cuda < f.cuda) {
      best = &f;
    }
  }
  if (best != nullptr) {
    choice.chosen = best->path;
  } else if (cpu != nullptr) {
    choice.chosen = cpu->path;
    choice.cpu_fallback = std::any_of(choice.locks.begin(), choice.locks.end(),
                                      [](const LockFit& f) { return f.gpu; });
  }
}

}  // namespace

std::string python_refusal(const std::optional<std::string>& requires_python,
                           const lock::GpulockTarget* target, const Target& here) {
  if (target != nullptr) {
    std::vector<std::string> pythons = target->pythons;
    if (pythons.empty() && !target->python.empty()) pythons.push_back(target->python);
    auto same_minor = [&](const std::string& p) {
      return p == here.python_version || p.starts_with(here.python_version + ".") ||
             (p.ends_with('t') && p.substr(0, p.size() - 1) == here.python_version);
    };
    if (!pythons.empty() && std::none_of(pythons.begin(), pythons.end(), same_minor)) {
      return fmt::format("this lock is for Python {}, this environment's is {}",
                         fmt::join(pythons, ", "), here.python_version);
    }
    std::vector<std::string> platforms = target->platforms;
    if (platforms.empty() && !target->platform.empty()) platforms.push_back(target->platform);
    auto accepted = [&](const std::string& platform) {
      return std::any_of(here.supported.begin(), here.supported.end(),
                         [&](const core::Tag& tag) { return tag.platform == platform; });
    };
    if (!platforms.empty() && std::none_of(platforms.begin(), platforms.end(), accepted)) {
      return fmt::format("this lock is for {}, which this machine's Python ({}) cannot install",
                         fmt::join(platforms, ", "), here.platform);
    }
  }
  if (requires_python) {
    auto spec = core::SpecifierSet::parse(*requires_python);
    if (spec && !spec->contains(here.python_full, true)) {
      return fmt::format("this lock's requires-python is {}, this environment's Python is {}",
                         *requires_python, here.python_full.to_string());
    }
  }
  return {};
}

core::Result<std::vector<fs::path>> lock_files(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> paths;
  fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec);
  if (ec)
    return core::fail_at(core::ErrorCode::Io,
                         fmt::format("cannot list the locks: {}", ec.message()), dir.string());
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (is_lock_name(name)) paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

namespace {

core::Result<std::vector<fs::path>> locks_to_judge(const fs::path& dir,
                                                   const std::vector<fs::path>& only) {
  if (!only.empty()) return only;
  return lock_files(dir);
}

LockChoice choose_among(const std::vector<fs::path>& paths, const probe::MachineInfo& machine,
                        const Target* python) {
  LockChoice choice;
  for (const auto& p : paths)
    choice.locks.push_back(judge(p, machine, python));
  pick(choice);
  return choice;
}

}  // namespace

core::Result<LockChoice> choose_lock(const fs::path& dir, const probe::MachineInfo& machine,
                                     const Target* python) {
  auto paths = lock_files(dir);
  if (!paths) return std::unexpected(paths.error());
  LockChoice choice;
  for (const auto& p : *paths)
    choice.locks.push_back(judge(p, machine, python));
  pick(choice);
  return choice;
}

core::Result<HereChoice> choose_lock_here(const fs::path& dir,
                                          const probe::OverrideFlags& machine_flags,
                                          const std::string& python,
                                          const std::vector<fs::path>& only) {
  auto machine = probe_machine(machine_flags);
  if (!machine) return std::unexpected(machine.error());
  HereChoice here;
  auto interpreter = make_target(TargetRequest{python, {}, {}, {}});
  if (interpreter) {
    here.python = interpreter->python_version;
  } else {
    here.python_unasked = interpreter.error().message;
  }
  auto paths = locks_to_judge(dir, only);
  if (!paths) return std::unexpected(paths.error());
  here.choice = choose_among(*paths, *machine, interpreter ? &*interpreter : nullptr);
  return here;
}

core::Result<HereChoice> choose_lock_for_new_venv(const fs::path& dir,
                                                  const probe::OverrideFlags& machine_flags,
                                                  PathPythons& pythons,
                                                  const std::vector<fs::path>& only) {
  auto machine = probe_machine(machine_flags);
  if (!machine) return std::unexpected(machine.error());
  auto paths = locks_to_judge(dir, only);
  if (!paths) return std::unexpected(paths.error());
  // The interpreters that could be asked, found in turn: each is asked only when no interpreter
  // before it fits a lock still to judge (a shim takes seconds to answer).
  std::vector<const PathPython*> asked;
  std::size_t next = 0;
  auto interpreter = [&](std::size_t i) -> const PathPython* {
    while (asked.size() <= i && next < pythons.size()) {
      const PathPython& p = pythons[next++];
      if (p.target) asked.push_back(&p);
    }
    return i < asked.size() ? asked[i] : nullptr;
  };
  HereChoice here;
  if (interpreter(0) == nullptr) {
    here.python_unasked =
        pythons.size() == 0
            ? std::string("no Python interpreter on PATH")
            : fmt::format("no interpreter on PATH could be asked ({})", pythons[0].error);
  }
  for (const auto& path : *paths) {
    if (asked.empty()) {
      here.choice.locks.push_back(judge(path, *machine, nullptr));
      continue;
    }
    std::optional<LockFit> machine_refusal;
    std::vector<std::string> refused;
    std::optional<LockFit> fit;
    for (std::size_t i = 0; const PathPython* p = interpreter(i); ++i) {
      bool python_refused = false;
      LockFit f = judge(path, *machine, &*p->target, &python_refused);
      if (f.fits) {
        f.python = p->path;
        f.why += fmt::format(", with {}", describe_python(*p));
        fit = std::move(f);
        break;
      }
      if (python_refused) {
        refused.push_back(fmt::format("{}: {}", describe_python(*p), f.why));
        if (!fit) fit = std::move(f);  // kept for its path, target and CUDA
      } else if (!machine_refusal) {
        machine_refusal = std::move(f);
        break;  // the machine refuses it whatever the Python
      }
    }
    if (fit && fit->fits) {
      here.choice.locks.push_back(std::move(*fit));
    } else if (machine_refusal) {
      here.choice.locks.push_back(std::move(*machine_refusal));  // the machine is the reason
    } else {
      fit->why = fmt::format("no interpreter on PATH runs it: {}", fmt::join(refused, "; "));
      here.choice.locks.push_back(std::move(*fit));
    }
  }
  pick(here.choice);
  if (here.choice.chosen) {
    for (const auto& f : here.choice.locks) {
      if (f.path != *here.choice.chosen || f.python.empty()) continue;
      for (const auto* p : asked) {
        if (p->path == f.python) here.python = p->target->python_version;
      }
    }
  }
  return here;
}

}  // namespace gpulock::app

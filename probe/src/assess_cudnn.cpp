// cuDNN's sub-libraries in the environment's verdict (assess_impl.h): where each comes from,
// whether it loads, its version, against the cuDNN file table (cudnn_files.txt, issue 41 item
// 6): a file the version ships is required; one it only looks for (cuDNN 9.20 and
// libcudnn_engines_tensor_ir.so.9) is missing by design, and a copy the loader reaches is
// another release's. A hint says "reinstall" only for a wheel whose RECORD lists the file.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "assess_impl.h"

namespace gpulock::probe::detail {
namespace {

// "reinstall nvidia-cudnn-cu12 9.1.0.70 (`gpulock install` or `pip install --force-reinstall
// --no-deps nvidia-cudnn-cu12==9.1.0.70`)" for "<name> <version>".
std::string reinstall_text(const std::string& dist) {
  return dist.empty()
             ? std::string("reinstall the cuDNN wheel")
             : fmt::format(
                   "reinstall {} (`gpulock install` or `pip install "
                   "--force-reinstall --no-deps {}`)",
                   dist, dist.substr(0, dist.find(' ')) + "==" + dist.substr(dist.find(' ') + 1));
}

// Why the loader took a file: one clause, and the hint that removes the cause. `reinstall` is
// what brings the environment's own file back.
std::pair<std::string, std::string> cause(const LibraryReport& lib, const std::string& reinstall) {
  const std::string found = lib.path.value_or("");
  switch (lib.found_via.value_or(FoundVia::SystemDir)) {
    case FoundVia::LdLibraryPath:
      return {"through LD_LIBRARY_PATH",
              fmt::format("LD_LIBRARY_PATH lists {}, which the loader searches before the "
                          "wheel's own directory (RUNPATH $ORIGIN): remove it from "
                          "LD_LIBRARY_PATH",
                          lib.search_entry)};
    case FoundVia::LdCache:
      return {"through the ld.so cache",
              fmt::format("the ld.so cache (ldconfig) lists the system cuDNN in {}, and the "
                          "loader falls back to it because the wheel lacks the file: {}, or take "
                          "{} out of /etc/ld.so.conf.d and run ldconfig",
                          dir_of(found), reinstall, dir_of(found))};
    case FoundVia::Rpath:
      return {fmt::format("through the RPATH of {} ({})", lib.loaded_by, lib.search_entry),
              fmt::format("{} has an RPATH that points outside the environment: {}", lib.loaded_by,
                          reinstall)};
    case FoundVia::Runpath:
      return {fmt::format("through the RUNPATH of {} ({})", lib.loaded_by, lib.search_entry),
              fmt::format("{}'s RUNPATH entry {} leads outside the environment: {}", lib.loaded_by,
                          lib.search_entry, reinstall)};
    case FoundVia::SystemDir:
      return {fmt::format("from the system directory {}", lib.search_entry),
              fmt::format("the loader falls back to the system cuDNN in {} because the wheel "
                          "lacks the file: {}",
                          dir_of(found), reinstall)};
    case FoundVia::AbsolutePath:
      return {"by its path", reinstall};
  }
  return {"", reinstall};
}

// The cuDNN version the sub-libraries were planned with ("9.20.0"), else the one that loads.
std::string planned_version(const LoadReport& report, const std::optional<CudnnVersion>& cudnn) {
  if (report.cudnn_plan_version) return report.cudnn_plan_version->text;
  return cudnn ? cudnn->to_string() : std::string("?");
}

}  // namespace

// What brings a sub-library the environment lacks back: reinstalling the wheel whose RECORD
// lists it, never a wheel that does not ship it (its RECORD lacks the file) nor a directory no
// wheel installed.
std::string Assessment::restore(const LibraryReport& lib) const {
  const bool wheel_owned = !report.cudnn_distribution.empty();
  if (wheel_owned && (lib.recorded || lib.in_wheel_dir)) return reinstall_text(dist);
  const std::string v = planned_version(report, cudnn);
  return fmt::format(
      "{}: put {} of cuDNN {} (the release of the other files) into {}, or install cuDNN {} "
      "from its nvidia-cudnn wheel",
      wheel_owned ? fmt::format("{} does not ship the file, so reinstalling it adds nothing", dist)
                  : std::string("no wheel installed these files, so there is nothing to reinstall"),
      lib.soname, v, lib.wheel_dir, v);
}

// The cuDNN files no RECORD lists: the probe read the directory itself (issue 41 item 6).
void Assessment::unrecorded() {
  if (report.cudnn_unrecorded.empty()) return;
  const std::string dir = dir_of(report.cudnn_library);
  const std::string version =
      report.cudnn_plan_version
          ? fmt::format("cuDNN {} (from the {})", report.cudnn_plan_version->text,
                        report.cudnn_plan_version->source)
          : std::string("a cuDNN whose version no file states");
  if (report.cudnn_distribution.empty()) {
    add("cudnn-unrecorded", Severity::Info, dir,
        fmt::format("No RECORD lists the cuDNN files in {} (copied by hand, a conda or vendored "
                    "layout): the probe read the directory itself and checks it as {}.",
                    dir, version),
        "");
  } else {
    add("cudnn-unrecorded", Severity::Info, dir,
        fmt::format("{} in {} {} in no RECORD ({} does not list {}): the probe read the "
                    "directory itself.",
                    fmt::join(report.cudnn_unrecorded, ", "), dir,
                    report.cudnn_unrecorded.size() == 1 ? "is" : "are", dist,
                    report.cudnn_unrecorded.size() == 1 ? "it" : "them"),
        "");
  }
}

// A sub-library this cuDNN version does not ship but its loader looks for (cuDNN 9.20 and
// libcudnn_engines_tensor_ir.so.9, cudnn_files.txt): missing is the upstream state (info); a
// copy the loader reaches belongs to another release (fail, with both ways out). False when the
// copy found sits among the directory's own unrecorded files, which are checked as the others.
bool Assessment::not_shipped(const LibraryReport& lib) {
  const std::string v = planned_version(report, cudnn);
  const std::string since = lib.shipped_since.empty()
                                ? std::string("later releases")
                                : fmt::format("cuDNN {} and newer", lib.shipped_since);
  const std::string owner = dist.empty() ? lib.wheel_dir : dist;
  if (!lib.path) {
    add("sublibrary-not-shipped", Severity::Info, lib.soname,
        fmt::format("cuDNN {} ({}) has no {}, which its {} looks for ({} ship it): that is how "
                    "this release ships, and the loader finds no other copy, so none loads in "
                    "its place.",
                    v, owner, lib.soname, lib.loaded_by, since),
        "");
    return true;
  }
  const bool wheel_owned = !report.cudnn_distribution.empty();
  if (lib.in_wheel_dir && lib.inside_environment && !wheel_owned) return false;
  const std::string real = lib.real_path.value_or(*lib.path);
  const FoundVia via = lib.found_via.value_or(FoundVia::SystemDir);
  std::string where(found_via_name(via));
  if (!lib.search_entry.empty()) where += " " + lib.search_entry;
  std::string remove;
  switch (via) {
    case FoundVia::LdLibraryPath:
      remove = fmt::format("remove {} from LD_LIBRARY_PATH", lib.search_entry);
      break;
    case FoundVia::LdCache:
      remove = fmt::format(
          "take {} out of the ld.so cache (its file in /etc/ld.so.conf.d, then "
          "run ldconfig)",
          dir_of(real));
      break;
    case FoundVia::SystemDir:
      remove = fmt::format("remove {} from the system directory {}", real, dir_of(real));
      break;
    default:
      remove = lib.in_wheel_dir
                   ? fmt::format("remove {}, which {} does not ship", *lib.path, owner)
                   : fmt::format("remove that copy ({} of {} leads to it)", where, lib.loaded_by);
  }
  const std::string build =
      env.torch && env.torch->cudnn_pin && env.torch->cudnn_package
          ? fmt::format("use a torch build whose {} pin is {} or newer (torch {} pins {})",
                        *env.torch->cudnn_package,
                        lib.shipped_since.empty() ? "newer" : lib.shipped_since, env.torch->version,
                        *env.torch->cudnn_pin)
          : fmt::format("use a build whose cuDNN pin is {} or newer",
                        lib.shipped_since.empty() ? "newer" : lib.shipped_since);
  add("sublibrary-foreign", Severity::Fail, lib.soname,
      fmt::format(
          "cuDNN {} ({}) does not ship {} ({} do), but its {} looks for it and the loader "
          "finds {}{} through {}: a copy from another cuDNN release, which cuDNN {} "
          "would load (pytorch/pytorch#188892: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH){}.",
          v, owner, lib.soname, since, lib.loaded_by, real, version_suffix(lib.version), where, v,
          lib.load == LoadOutcome::Failed ? fmt::format("; it does not load: {}", lib.error)
                                          : std::string()),
      fmt::format("two ways out: {}; or {}, whose wheel ships {}", remove, build, lib.soname));
  named.insert(real);
  return true;
}

// Sub-libraries: where they come from, whether they load, their versions.
void Assessment::sublibraries() {
  unrecorded();
  for (const auto& lib : report.sublibraries) {
    if (!lib.required && not_shipped(lib)) continue;
    const bool outside = lib.path && !lib.inside_environment;
    const std::string load_error =
        lib.load == LoadOutcome::Failed ? fmt::format("; it does not load: {}", lib.error) : "";
    if (lib.required && !lib.in_wheel_dir) {
      // The wheel lists the file but it is gone (reinstall); the wheel does not ship it, or no
      // wheel installed the directory (reinstalling adds nothing).
      const bool gone = lib.recorded;
      const std::string from = dist.empty() ? lib.wheel_dir : dist;
      const std::string what = gone || dist.empty()
                                   ? fmt::format("{} is missing from {}", lib.soname, from)
                                   : fmt::format("{} does not ship {} (cuDNN {} loads it)", from,
                                                 lib.soname, planned_version(report, cudnn));
      if (outside) {
        auto [how, hint] = cause(lib, restore(lib));
        add("sublibrary-shadowed", Severity::Fail, lib.soname,
            fmt::format("{}, so {} loads {}{} {} instead of a {} copy{}.", what, lib.loaded_by,
                        *lib.path, version_suffix(lib.version), how,
                        cudnn ? cudnn->to_string() : std::string("matching"), load_error),
            hint);
        if (lib.real_path) named.insert(*lib.real_path);
      } else if (!lib.path) {
        add("sublibrary-missing", Severity::Fail, lib.soname,
            fmt::format("{} and the loader finds no other copy: cuDNN fails with "
                        "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED when it needs it.",
                        what),
            gone && !dist.empty()
                ? fmt::format("reinstall it: `gpulock install`, or `pip install "
                              "--force-reinstall --no-deps {}=={}`",
                              report.cudnn_distribution, report.cudnn_distribution_version)
                : restore(lib));
      }
      continue;
    }
    if (outside) {
      auto [how, hint] = cause(lib, restore(lib));
      // (A file this version does not ship was reported by not_shipped.)
      add("outside-environment", Severity::Fail, lib.soname,
          fmt::format("{} loads from {}{} {}, not the environment's copy from {}{}{}.", lib.soname,
                      *lib.path, version_suffix(lib.version), how,
                      dist.empty() ? lib.wheel_dir : dist,
                      cudnn ? fmt::format(" ({})", cudnn->to_string()) : std::string(), load_error),
          hint);
      if (lib.real_path) named.insert(*lib.real_path);
      continue;
    }
    if (lib.load == LoadOutcome::Failed) {
      add("load-failed", Severity::Fail, lib.soname,
          fmt::format("{} does not load from {}: {}.", lib.soname, lib.path.value_or("?"),
                      loader_error(lib)),
          fmt::format("{}{}",
                      lib.owner.empty() ? std::string("reinstall the cuDNN wheel")
                                        : fmt::format("reinstall {}", lib.owner),
                      lib.error.find("undefined symbol") != std::string::npos
                          ? "; an undefined symbol means this file and the libraries it "
                            "needs come from different cuDNN releases"
                          : ""));
    }
    if (lib.path && lib.version && cudnn) {
      auto v = CudnnVersion::from_text(lib.version->text);
      if (v && *v != *cudnn) {
        add("sublibrary-version", Severity::Fail, lib.soname,
            fmt::format("{} is cuDNN {} but libcudnn is {} (from {}).", lib.soname, v->to_string(),
                        cudnn->to_string(), lib.version->source),
            "all cuDNN libraries must come from one release; reinstall the cuDNN wheel");
      }
    }
    if (lib.actually_mapped) {
      // A library LD_PRELOAD loaded first is taken by soname before any search.
      const auto entry = preloaded_by(report, *lib.actually_mapped);
      add("plan-differs", Severity::Warn, lib.soname,
          fmt::format("{} mapped {} where gpulock expected {}{}.", lib.loaded_by,
                      *lib.actually_mapped, lib.path.value_or("no file"),
                      entry ? fmt::format(": LD_PRELOAD lists {}, and the loader takes a "
                                          "library already loaded under that soname before "
                                          "searching",
                                          *entry)
                            : std::string()),
          entry ? std::string("remove it from LD_PRELOAD")
                : std::string("gpulock's model of the loader's search missed something here; "
                              "LD_DEBUG=libs shows the loader's own search"));
    }
  }
}

}  // namespace gpulock::probe::detail

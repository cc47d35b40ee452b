#include "gpulock/app/install.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "gpulock/app/mirror.h"
#include "gpulock/core/tags.h"
#include "gpulock/lock/export.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/process.h"

#include "install_internal.h"

namespace gpulock::app {
namespace fs = std::filesystem;
namespace {

// A private temporary directory, removed with everything in it.
class TempDir {
 public:
  static core::Result<TempDir> make() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        fmt::format("{}/gpulock-install-XXXXXX", base != nullptr && *base != '\0' ? base : "/tmp");
    if (::mkdtemp(tmpl.data()) == nullptr) {
      return std::unexpected(core::make_error(
          core::ErrorCode::Io,
          fmt::format("cannot create a temporary directory: {}", std::strerror(errno)), tmpl));
    }
    TempDir d;
    d.path_ = tmpl;
    return d;
  }
  TempDir() = default;
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

core::Status use_mirror(const InstallRequest& request, lock::Lock& lk,
                        std::vector<std::string>& from_mirror) {
  const bool fallback = request.mirror.empty();
  const std::string& location = fallback ? request.mirror_fallback : request.mirror;
  std::optional<index::IndexClient> client;
  if (fallback) client.emplace(request.client);
  auto redirect = [&](lock::FileEntry& f) -> core::Status {
    auto sha = f.hashes.find("sha256");
    if (sha == f.hashes.end() || !f.url) return {};
    if (fallback) {
      auto status = client->probe_url(*f.url);
      if (!status) return std::unexpected(status.error());
      if (*status != 404 && *status != 410) return {};
    }
    const std::string name = f.filename();
    f.url = mirror_file_url(location, sha->second, name);
    from_mirror.push_back(name);
    return {};
  };
  for (auto& p : lk.packages) {
    if (p.wheels) {
      for (auto& w : *p.wheels) {
        if (auto s = redirect(w); !s) return s;
      }
    }
    if (p.sdist) {
      if (auto s = redirect(*p.sdist); !s) return s;
    }
    if (p.archive) {
      if (auto s = redirect(*p.archive); !s) return s;
    }
  }
  return {};
}

core::Result<EnvironmentReport> probe_installed(const InstallRequest& request,
                                                const std::string& python) {
  ProbeRequest probe = request.probe_request;
  probe.python = python;
  probe.site_packages.clear();
  probe.lock = request.lock;
  return probe_environment(probe);
}

core::Result<InstallResult> install_lock(const InstallRequest& request, const OutputFn& on_output) {
  auto file = lock::read_lock_file(request.lock);
  if (!file) return std::unexpected(file.error());
  std::vector<std::string> from_mirror;
  if (!request.mirror.empty() || !request.mirror_fallback.empty()) {
    if (auto s = use_mirror(request, file->lock, from_mirror); !s)
      return std::unexpected(s.error());
  }

  lock::ExportOptions options;
  options.direct_urls = true;
  options.source_name = request.lock;
  const fs::path lock_path(request.lock);
  options.lock_dir = lock_path.has_parent_path() ? lock_path.parent_path() : fs::path(".");
  if (file->lock.gpulock && file->lock.gpulock->target) {
    const auto& t = *file->lock.gpulock->target;
    auto target = core::TagTarget::from_platform_tag(t.python, t.platform);
    if (!target) {
      return std::unexpected(
          target.error().located(request.lock).with_context("while reading [tool.gpulock.target]"));
    }
    options.target_tags = core::supported_tags(*target);
  }
  auto text = lock::export_requirements(file->lock, options);
  if (!text) {
    core::Error e = text.error();
    if (e.where.empty()) e.where = request.lock;
    return std::unexpected(e.with_context("while exporting the lock for pip"));
  }

  InstallResult result;
  result.python = default_python(request.python);
  result.requirements = *text;
  result.from_mirror = std::move(from_mirror);
  auto dir = TempDir::make();
  if (!dir) return std::unexpected(dir.error());
  const fs::path req = dir->path() / "requirements.txt";
  {
    std::ofstream out(req, std::ios::binary);
    out << *text;
    if (!out.flush()) {
      return std::unexpected(core::make_error(core::ErrorCode::Io,
                                              "cannot write the requirements file", req.string()));
    }
  }
  result.pip_argv = {result.python, "-m",
                     "pip",         "install",
                     "--no-deps",   "--require-hashes",
                     "--no-input",  "--disable-pip-version-check",
                     "-r",          req.string()};
  sys::ProgramOptions po;
  po.timeout = std::chrono::milliseconds(0);  // large wheels take what they take
  // pip's hash-checking mode reports a file that is not the lock's with this line; chunks may
  // split it, so a short tail of the previous chunk is kept.
  static constexpr std::string_view kPipHashMismatch = "DO NOT MATCH THE HASHES";
  std::string tail;
  po.on_output = [&](std::string_view chunk, bool is_stderr) {
    tail.append(chunk);
    if (tail.find(kPipHashMismatch) != std::string::npos) result.hash_mismatch = true;
    if (tail.size() > kPipHashMismatch.size()) tail.erase(0, tail.size() - kPipHashMismatch.size());
    if (on_output) on_output(chunk, is_stderr);
  };
  auto pip = sys::run_program(result.pip_argv, po);
  if (!pip) return std::unexpected(pip.error());
  result.pip_exit_code = pip->exit_code;
  result.pip_timed_out = pip->timed_out;
  if (result.pip_exit_code != 0 || !request.probe) return result;

  auto report = probe_installed(request, result.python);
  if (!report) return std::unexpected(report.error());
  result.probe = std::move(*report);
  return result;
}

}  // namespace gpulock::app

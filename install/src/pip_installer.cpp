// The pip installer (install/installer.h): the lock exported as a temporary requirements file of
// direct URLs with hashes (`name @ URL --hash=sha256:...`, lock/export.h), so pip needs no index
// configuration and re-resolves nothing; then `PYTHON -m pip install --no-deps
// --require-hashes -r FILE` (argv, never a shell), its output streamed.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "gpulock/core/tags.h"
#include "gpulock/install/installer.h"
#include "gpulock/lock/export.h"
#include "gpulock/sys/process.h"

#include "installers.h"

namespace gpulock::install {
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

class PipInstaller final : public Installer {
 public:
  explicit PipInstaller(Options options) : options_(std::move(options)) {}

  // The lock exported for pip; nothing runs yet.
  core::Result<Plan> plan(const lock::Lock& lk, const Environment& env,
                          const Observer& /*observer*/) override {
    lock::ExportOptions options;
    options.direct_urls = true;
    options.source_name = options_.lock_path;
    const fs::path lock_path(options_.lock_path);
    options.lock_dir = lock_path.has_parent_path() ? lock_path.parent_path() : fs::path(".");
    if (lk.gpulock && lk.gpulock->target) {
      const auto& t = *lk.gpulock->target;
      auto target = core::TagTarget::from_platform_tag(t.python, t.platform);
      if (!target) {
        return std::unexpected(target.error()
                                   .located(options_.lock_path)
                                   .with_context("while reading [tool.gpulock.target]"));
      }
      options.target_tags = core::supported_tags(*target);
    }
    auto text = lock::export_requirements(lk, options);
    if (!text) {
      core::Error e = text.error();
      if (e.where.empty()) e.where = options_.lock_path;
      return std::unexpected(e.with_context("while exporting the lock for pip"));
    }
    Plan result;
    result.python = env.python;
    result.requirements = std::move(*text);
    return result;
  }

  // pip failing is a result (`pip_exit_code`), not an error.
  core::Result<Applied> apply(Plan& plan, const Observer& observer) override {
    Applied result;
    auto dir = TempDir::make();
    if (!dir) return std::unexpected(dir.error());
    const fs::path req = dir->path() / "requirements.txt";
    {
      std::ofstream out(req, std::ios::binary);
      out << plan.requirements;
      if (!out.flush()) {
        return std::unexpected(core::make_error(
            core::ErrorCode::Io, "cannot write the requirements file", req.string()));
      }
    }
    result.pip_argv = {plan.python,  "-m",
                       "pip",        "install",
                       "--no-deps",  "--require-hashes",
                       "--no-input", "--disable-pip-version-check",
                       "-r",         req.string()};
    sys::ProgramOptions po;
    po.timeout = std::chrono::milliseconds(0);  // large wheels take what they take
    // pip's hash-checking mode reports a file that is not the lock's with this line; chunks may
    // split it, so a short tail of the previous chunk is kept.
    static constexpr std::string_view kPipHashMismatch = "DO NOT MATCH THE HASHES";
    std::string tail;
    po.on_output = [&](std::string_view chunk, bool is_stderr) {
      tail.append(chunk);
      if (tail.find(kPipHashMismatch) != std::string::npos) result.hash_mismatch = true;
      if (tail.size() > kPipHashMismatch.size())
        tail.erase(0, tail.size() - kPipHashMismatch.size());
      if (observer.output) observer.output(chunk, is_stderr);
    };
    auto pip = sys::run_program(result.pip_argv, po);
    if (!pip) return std::unexpected(pip.error());
    result.pip_exit_code = pip->exit_code;
    result.pip_timed_out = pip->timed_out;
    return result;
  }

 private:
  Options options_;
};

}  // namespace

std::unique_ptr<Installer> make_pip_installer(Options options) {
  return std::make_unique<PipInstaller>(std::move(options));
}

}  // namespace gpulock::install

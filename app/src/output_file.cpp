// `-o` safety (issue 16 item 5): never replace an input or a file that is not a lock, and write
// device nodes and FIFOs in place instead of replacing them with a regular file.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "gpulock/app/requirements_file.h"
#include "gpulock/app/resolve.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/atomic_file.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;

core::Error output_error(core::ErrorCode code, const std::string& path, std::string message) {
  return core::make_error(code, std::move(message), path);
}

}  // namespace

core::Result<std::optional<std::string>> check_output(const std::string& output, bool force,
                                                      const std::vector<std::string>& inputs) {
  if (output == "-") return std::optional<std::string>{};
  std::error_code ec;
  auto st = fs::status(output, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return std::unexpected(
        output_error(core::ErrorCode::Io, output,
                     fmt::format("cannot write the lock {}: {}", output, ec.message())));
  }
  if (!fs::exists(st)) return std::optional<std::string>{};
  for (const auto& in : inputs) {
    std::error_code same_ec;
    if (fs::equivalent(output, in, same_ec)) {
      core::Error e =
          output_error(core::ErrorCode::Usage, output,
                       "-o names one of the inputs; writing the lock there would replace it");
      e.hints.push_back("write the lock elsewhere, e.g. -o pylock.toml");
      return std::unexpected(e);
    }
  }
  if (!fs::is_regular_file(st))
    return std::optional<std::string>{};  // /dev/null, a FIFO: written in place
  auto text = read_text_file(output);
  if (!text) return std::unexpected(text.error());
  if (lock::parse_lock(*text, output)) return std::optional<std::string>{std::move(*text)};
  // A lock gpulock cannot read any more is still a lock; anything else is the user's file.
  if (force || text->find("lock-version") != std::string::npos) return std::optional<std::string>{};
  core::Error e = output_error(core::ErrorCode::InvalidInput, output,
                               "exists and is not a lock file; refusing to replace it");
  e.hints.push_back("give another -o, or --force to replace it");
  return std::unexpected(e);
}

core::Status write_output(const std::string& path, std::string_view content) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) {
    // A run killed while writing (kill -9) left its temporary beside the lock: gone now.
    sys::AtomicWriteOptions options;
    options.remove_stale_temporaries = true;
    return sys::write_file_atomically(path, content, options);
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::unexpected(output_error(
        core::ErrorCode::Io, path, fmt::format("cannot write {}: {}", path, std::strerror(errno))));
  }
  std::size_t done = 0;
  while (done < content.size()) {
    auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      return std::unexpected(output_error(
          core::ErrorCode::Io, path, fmt::format("cannot write {}: {}", path, std::strerror(err))));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return {};
}

}  // namespace gpulock::app

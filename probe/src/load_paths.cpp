// Paths as text for the load probe's parts (load_probe_impl.h), and the distribution that owns
// a file.
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "load_probe_impl.h"

namespace gpulock::probe::detail {
namespace fs = std::filesystem;

std::string canonical(const std::string& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p : c.string();
}

std::string dirname_of(const std::string& p) {
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string basename_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

std::string owner_text(const InstalledDistribution* d) {
  return d == nullptr ? std::string() : fmt::format("{} {}", d->display_name, d->version);
}

}  // namespace gpulock::probe::detail

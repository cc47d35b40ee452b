#include "loader_search.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace gpulock::probe::detail {
namespace {

std::string dirname_of(const std::string& p) {
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string join(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

}  // namespace

bool LoaderSearch::usable(const std::string& path) {
  // glibc (open_verify) passes over a file it cannot open and an ELF object of another class or
  // machine; anything else it opens is taken, and a file that is not a loadable object (a text
  // file, a directory, an executable) then fails the dlopen instead of letting the search go on.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char ident[20] = {0};
  ssize_t n = ::read(fd, ident, sizeof ident);
  ::close(fd);
  const bool elf =
      n >= 20 && ident[0] == 0x7f && ident[1] == 'E' && ident[2] == 'L' && ident[3] == 'F';
  if (!elf) return true;
  const bool is_64 = ident[4] == 2;
  const auto machine = static_cast<std::uint16_t>(ident[18] | (ident[19] << 8));
  return is_64 == host_elf_is_64() && machine == host_elf_machine();
}

std::optional<LoaderSearch::Hit> LoaderSearch::find(const std::string& soname,
                                                    const std::string& caller_path,
                                                    const ElfInfo* caller) const {
  const std::string origin = dirname_of(caller_path);
  auto in_list = [&](const std::string& list, FoundVia via) -> std::optional<Hit> {
    for (const auto& entry : split_path_list(list, ":")) {
      auto dir = entry.empty() ? std::optional<std::string>(cwd) : expand_origin(entry, origin);
      if (!dir) continue;
      std::string candidate = join(*dir, soname);
      if (usable(candidate)) return Hit{candidate, via, entry};
    }
    return std::nullopt;
  };
  if (caller != nullptr && !caller->runpath && caller->rpath) {
    if (auto h = in_list(*caller->rpath, FoundVia::Rpath)) return h;
  }
  for (const auto& entry : ld_library_path) {
    std::string candidate = join(entry.empty() ? cwd : entry, soname);
    if (usable(candidate)) return Hit{candidate, FoundVia::LdLibraryPath, entry};
  }
  if (caller != nullptr && caller->runpath) {
    if (auto h = in_list(*caller->runpath, FoundVia::Runpath)) return h;
  }
  if (cache) {
    if (auto p = cache->lookup(soname); p && usable(*p)) {
      return Hit{*p, FoundVia::LdCache, cache->path()};
    }
  }
  for (const auto& dir : system_dirs) {
    std::string candidate = join(dir, soname);
    if (usable(candidate)) return Hit{candidate, FoundVia::SystemDir, dir};
  }
  return std::nullopt;
}

std::vector<std::string> default_system_dirs() {
#if defined(__x86_64__)
  const char* triplet = "x86_64-linux-gnu";
#elif defined(__aarch64__)
  const char* triplet = "aarch64-linux-gnu";
#elif defined(__powerpc64__)
  const char* triplet = "powerpc64le-linux-gnu";
#else
  const char* triplet = "";
#endif
  std::vector<std::string> out;
  if (*triplet != '\0') {
    out.push_back(fmt::format("/lib/{}/", triplet));
    out.push_back(fmt::format("/usr/lib/{}/", triplet));
  }
  out.push_back("/lib/");
  out.push_back("/usr/lib/");
  return out;
}

}  // namespace gpulock::probe::detail

namespace gpulock::probe {

std::optional<LibraryCopy> find_library_copy(const std::string& soname,
                                             const LoadProbeOptions& options) {
  detail::LoaderSearch loader;
  char buf[4096];
  if (::getcwd(buf, sizeof buf) != nullptr) loader.cwd = buf;
  loader.ld_library_path = detail::split_path_list(options.ld_library_path, ":;");
  if (auto cache = detail::LdCache::read(options.ld_cache)) loader.cache = std::move(*cache);
  loader.system_dirs =
      options.system_dirs.empty() ? detail::default_system_dirs() : options.system_dirs;
  auto hit = loader.find(soname, "", nullptr);
  if (!hit) return std::nullopt;
  return LibraryCopy{std::move(hit->path), hit->via, std::move(hit->entry)};
}

}  // namespace gpulock::probe

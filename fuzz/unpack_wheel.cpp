// Whole-wheel extraction (index::unpack_wheel: index/src/zip_extract.cpp, libzip, the native
// installer's cache). The input is a wheel, written to a file and unpacked into a fresh
// directory. Properties: nothing is written outside that directory (the run's scratch directory
// holds only the input and the destination's tree, and nothing in it is a link); every file
// returned has a safe relative name and is a regular file under the destination, with its size
// and execute bit when the archive names it once.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/index/wheel.h"

#include "fuzz_check.h"
#include "net_impl.h"

namespace fs = std::filesystem;
namespace net = gpulock::index::net;

namespace {

const fs::path& scratch() {
  static const fs::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/fuzz_unpack_XXXXXX", tmp != nullptr ? tmp : "/tmp");
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    return fs::path(pattern);
  }();
  return dir;
}

bool unsafe(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string_view::npos) return true;
  std::string_view rest = name;
  while (!rest.empty()) {
    auto slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    if (part == ".." || part == ".") return true;
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& base = scratch();
  std::error_code ec;
  const fs::path wheel = base / "in.whl";
  const fs::path out = base / "out";
  fs::remove_all(out, ec);
  fs::create_directory(out, ec);
  {
    std::ofstream f(wheel, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const fs::path dest = out / "a" / "dest";
  auto files = net::unpack_archive(wheel.string(), dest.string(), "in.whl");
  // Nothing outside dest: the scratch directory has the input and out/a/dest's tree only.
  for (fs::recursive_directory_iterator it(base, fs::directory_options::none, ec), end;
       !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    FUZZ_CHECK(!it->is_symlink(ec), fmt::format("a link was made: {}", p.string()));
    if (p == wheel || p == out || p == out / "a" || p == dest) continue;
    const auto rel = p.lexically_relative(dest);
    FUZZ_CHECK(!rel.empty() && *rel.begin() != "..",
               fmt::format("written outside the destination: {}", p.string()));
  }
  FUZZ_CHECK(!ec, fmt::format("cannot walk the scratch directory: {}", ec.message()));
  if (files) {
    std::map<std::string, int> seen;
    for (const auto& f : *files)
      ++seen[f.path];
    for (const auto& f : *files) {
      FUZZ_CHECK(!unsafe(f.path), fmt::format("unsafe name returned: '{}'", f.path));
      const fs::path p = dest / f.path;
      struct stat st {};
      FUZZ_CHECK(::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode),
                 fmt::format("{} is not a regular file under the destination", f.path));
      if (seen[f.path] == 1) {
        FUZZ_CHECK(static_cast<std::uint64_t>(st.st_size) == f.size,
                   fmt::format("{}: {} bytes written, {} returned", f.path, st.st_size, f.size));
        FUZZ_CHECK(
            ((st.st_mode & 0100) != 0) == f.executable,
            fmt::format("{}: mode {:o}, executable {}", f.path, st.st_mode & 0777, f.executable));
      }
    }
  }
  fs::remove_all(out, ec);
  return 0;
}

// The loader-search model (probe/src/loader_search.h) against glibc itself: a helper process
// loads a fake libcudnn.so.9 by path and lets it dlopen libcudnn_graph.so.9 by soname (with its
// RUNPATH $ORIGIN), under each LD_LIBRARY_PATH and directory layout; the file the loader really
// mapped must be the one the model predicts.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "elf_file.h"
#include "ld_cache.h"
#include "loader_search.h"
#include "test_files.h"

namespace fs = std::filesystem;
using namespace gpulock::probe;
using namespace gpulock::probe::detail;

namespace {

const fs::path kFakes = ENVPROBE_FAKES_DIR;
const fs::path k910 = kFakes / "nvidia_cudnn_cu12-9.1.0.70/nvidia/cudnn/lib";
const fs::path k951 = kFakes / "nvidia_cudnn_cu12-9.5.1.17/nvidia/cudnn/lib";

struct Dir : gpulock::test::TempDir {
  Dir() : TempDir(fs::temp_directory_path(), "gpulock-loader-") {}
};

// Runs the helper with exactly these environment variables and working directory; returns its
// stdout ("<status> <mapped graph path>").
std::string oracle(const fs::path& shim, const std::string& ld_library_path,
                   const fs::path& cwd = "/") {
  auto r = gpulock::test::run_process({ENVPROBE_DLOPEN_HELPER, shim.string()},
                                      {{"LD_LIBRARY_PATH", ld_library_path}}, {.cwd = cwd});
  std::string text = r.out;
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

LoaderSearch model(const std::string& ld_library_path, const fs::path& cwd = "/") {
  LoaderSearch s;
  s.ld_library_path = split_path_list(ld_library_path, ":;");
  auto cache = LdCache::read("/etc/ld.so.cache");
  REQUIRE(cache.has_value());
  s.cache = std::move(*cache);
  s.system_dirs = default_system_dirs();
  s.cwd = cwd.string();
  return s;
}

std::optional<LoaderSearch::Hit> predict(const LoaderSearch& s, const fs::path& shim) {
  auto elf = read_elf(shim.string());
  REQUIRE(elf.has_value());
  return s.find("libcudnn_graph.so.9", shim.string(), &*elf);
}

std::string canonical(const std::string& p) {
  return fs::weakly_canonical(p).string();
}

void copy_lib(const fs::path& from_dir, const std::string& name, const fs::path& to_dir) {
  fs::create_directories(to_dir);
  fs::copy_file(from_dir / name, to_dir / name, fs::copy_options::overwrite_existing);
}

}  // namespace

TEST_CASE("RUNPATH $ORIGIN finds the wheel's own copy", "[envprobe][loader]") {
  Dir d;
  copy_lib(k910, "libcudnn.so.9", d.path() / "wheel");
  copy_lib(k910, "libcudnn_graph.so.9", d.path() / "wheel");
  const fs::path shim = d.path() / "wheel/libcudnn.so.9";
  auto hit = predict(model(""), shim);
  REQUIRE(hit.has_value());
  CHECK(hit->via == FoundVia::Runpath);
  CHECK(hit->entry == "$ORIGIN");
  CHECK(hit->path == (d.path() / "wheel/libcudnn_graph.so.9").string());
  CHECK(oracle(shim, "") == "0 " + canonical(hit->path));
}

TEST_CASE("LD_LIBRARY_PATH comes before RUNPATH (pytorch#80637)", "[envprobe][loader]") {
  Dir d;
  copy_lib(k910, "libcudnn.so.9", d.path() / "wheel");
  copy_lib(k910, "libcudnn_graph.so.9", d.path() / "wheel");
  copy_lib(k951, "libcudnn_graph.so.9", d.path() / "other");
  const fs::path shim = d.path() / "wheel/libcudnn.so.9";
  const std::string llp = "/nonexistent:" + (d.path() / "other").string();
  auto hit = predict(model(llp), shim);
  REQUIRE(hit.has_value());
  CHECK(hit->via == FoundVia::LdLibraryPath);
  CHECK(hit->entry == (d.path() / "other").string());
  // 1002: the fake libcudnn 9.1.0 sees graph 9.5.1 (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH).
  CHECK(oracle(shim, llp) == "1002 " + canonical(hit->path));
}

TEST_CASE("the ld.so cache is the fallback when the wheel lacks the file (pytorch#188892)",
          "[envprobe][loader]") {
  Dir d;
  copy_lib(k910, "libcudnn.so.9", d.path() / "wheel");
  const fs::path shim = d.path() / "wheel/libcudnn.so.9";
  auto s = model("");
  REQUIRE(s.cache->lookup("libcudnn_graph.so.9").has_value());
  auto hit = predict(s, shim);
  REQUIRE(hit.has_value());
  CHECK(hit->via == FoundVia::LdCache);
  CHECK(hit->path == *s.cache->lookup("libcudnn_graph.so.9"));
  auto seen = oracle(shim, "");
  CHECK(seen.substr(seen.find(' ') + 1) == canonical(hit->path));
}

TEST_CASE("objects of another class or machine are skipped", "[envprobe][loader]") {
  Dir d;
  copy_lib(k910, "libcudnn.so.9", d.path() / "wheel");
  copy_lib(k910, "libcudnn_graph.so.9", d.path() / "wheel");
  // Copies of a 9.5.1 graph library with the class byte (EI_CLASS, offset 4) or the machine
  // (e_machine, offset 18) changed, earlier on LD_LIBRARY_PATH.
  auto patched = [&](const std::string& dir, std::size_t offset, std::string bytes) {
    copy_lib(k951, "libcudnn_graph.so.9", d.path() / dir);
    std::fstream f(d.path() / dir / "libcudnn_graph.so.9",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  patched("elf32", 4, std::string(1, '\x01'));
  patched("aarch64", 18, std::string("\xb7\x00", 2));
  const fs::path shim = d.path() / "wheel/libcudnn.so.9";
  const std::string llp = (d.path() / "elf32").string() + ":" + (d.path() / "aarch64").string();
  auto hit = predict(model(llp), shim);
  REQUIRE(hit.has_value());
  CHECK(hit->via == FoundVia::Runpath);
  CHECK(oracle(shim, llp) == "0 " + canonical(hit->path));
}

TEST_CASE("a file that is not a loadable object stops the search", "[envprobe][loader]") {
  // glibc takes the first file it can open; a text file or a directory of that name then makes
  // the dlopen fail (the fake libcudnn answers 1008, CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED).
  Dir d;
  copy_lib(k910, "libcudnn.so.9", d.path() / "wheel");
  copy_lib(k910, "libcudnn_graph.so.9", d.path() / "wheel");
  fs::create_directories(d.path() / "a/libcudnn_graph.so.9");
  fs::create_directories(d.path() / "b");
  std::ofstream(d.path() / "b/libcudnn_graph.so.9") << "not an ELF file\n";
  const fs::path shim = d.path() / "wheel/libcudnn.so.9";
  for (const char* dir : {"a", "b"}) {
    INFO(dir);
    const std::string llp = (d.path() / dir).string();
    auto hit = predict(model(llp), shim);
    REQUIRE(hit.has_value());
    CHECK(hit->via == FoundVia::LdLibraryPath);
    CHECK(hit->path == (d.path() / dir / "libcudnn_graph.so.9").string());
    CHECK(oracle(shim, llp) == "1008 none");
  }
}

TEST_CASE("an empty LD_LIBRARY_PATH entry is the current directory", "[envprobe][loader]") {
  Dir d;
  copy_lib(k910, "libcudnn.so.9", d.path() / "wheel");
  copy_lib(k910, "libcudnn_graph.so.9", d.path() / "wheel");
  copy_lib(k951, "libcudnn_graph.so.9", d.path() / "cwd");
  const fs::path shim = d.path() / "wheel/libcudnn.so.9";
  const std::string llp = "/nonexistent::/also-nonexistent";
  auto hit = predict(model(llp, d.path() / "cwd"), shim);
  REQUIRE(hit.has_value());
  CHECK(hit->via == FoundVia::LdLibraryPath);
  CHECK(hit->entry.empty());
  CHECK(oracle(shim, llp, d.path() / "cwd") == "1002 " + canonical(hit->path));
}

TEST_CASE("RPATH without RUNPATH comes before LD_LIBRARY_PATH", "[envprobe][loader]") {
  // The model alone (the fake libraries all have RUNPATH): a caller with DT_RPATH only.
  Dir d;
  fs::create_directories(d.path() / "wheel");
  copy_lib(k910, "libcudnn_graph.so.9", d.path() / "rpath");
  copy_lib(k951, "libcudnn_graph.so.9", d.path() / "llp");
  ElfInfo caller;
  caller.rpath = "$ORIGIN/../rpath";
  auto s = model((d.path() / "llp").string());
  auto hit = s.find("libcudnn_graph.so.9", (d.path() / "wheel/libcudnn.so.9").string(), &caller);
  REQUIRE(hit.has_value());
  CHECK(hit->via == FoundVia::Rpath);
  CHECK(hit->path == (d.path() / "wheel/../rpath/libcudnn_graph.so.9").string());
  // With a RUNPATH as well, DT_RPATH is ignored.
  caller.runpath = "$ORIGIN";
  hit = s.find("libcudnn_graph.so.9", (d.path() / "wheel/libcudnn.so.9").string(), &caller);
  REQUIRE(hit.has_value());
  CHECK(hit->via == FoundVia::LdLibraryPath);
  // Nothing anywhere.
  CHECK_FALSE(s.find("libgpulock_none.so.1", "/x/lib.so", &caller).has_value());
}

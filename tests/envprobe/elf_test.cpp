// The ELF reader (probe/src/elf_file.h) against readelf, on the real cuDNN 9 of
// /usr/local/cuda/lib64 and on the fake wheel libraries; hostile files never crash it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "gpulock/probe/cudnn.h"

#include "cli_runner.h"
#include "elf_file.h"

namespace fs = std::filesystem;
using namespace gpulock::probe;
using namespace gpulock::probe::detail;

namespace {

const fs::path kCuda = "/usr/local/cuda/lib64";
const fs::path kFakes = ENVPROBE_FAKES_DIR;

// What `command` (/bin/sh) prints on stdout.
std::string run(const std::string& command) {
  return gpulock::test::run_shell(command).out;
}

// readelf -d: SONAME, NEEDED, RPATH, RUNPATH.
struct ReadelfDynamic {
  std::string soname;
  std::vector<std::string> needed;
  std::optional<std::string> rpath, runpath;
};

ReadelfDynamic readelf(const fs::path& file) {
  ReadelfDynamic d;
  std::istringstream in(run("readelf -d '" + file.string() + "'"));
  std::string line;
  std::regex re(R"(\((SONAME|NEEDED|RPATH|RUNPATH)\)\s+[^\[]*\[(.*)\])");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    if (m[1] == "SONAME") d.soname = m[2];
    if (m[1] == "NEEDED") d.needed.push_back(m[2]);
    if (m[1] == "RPATH") d.rpath = m[2];
    if (m[1] == "RUNPATH") d.runpath = m[2];
  }
  return d;
}

std::vector<fs::path> cudnn_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kCuda)) {
    auto name = e.path().filename().string();
    if (name.starts_with("libcudnn") && name.ends_with(".so.9")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// CUDNN_MAJOR/MINOR/PATCHLEVEL from the toolkit's header.
CudnnVersion header_version() {
  std::ifstream in("/usr/local/cuda/include/cudnn_version.h");
  REQUIRE(in);
  std::string line;
  CudnnVersion v;
  std::regex re(R"(#define CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+))");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    auto n = static_cast<std::uint32_t>(std::stoul(m[2]));
    if (m[1] == "MAJOR") v.major = n;
    if (m[1] == "MINOR") v.minor = n;
    if (m[1] == "PATCHLEVEL") v.patch = n;
  }
  return v;
}

}  // namespace

TEST_CASE("the dynamic section of every real cuDNN 9 library matches readelf", "[envprobe][elf]") {
  auto files = cudnn_files();
  REQUIRE(files.size() >= 8);
  for (const auto& f : files) {
    INFO(f);
    auto info = read_elf(f.string());
    REQUIRE(info.has_value());
    auto expected = readelf(f);
    CHECK(info->soname == expected.soname);
    CHECK(info->needed == expected.needed);
    CHECK(info->rpath == expected.rpath);
    CHECK(info->runpath == expected.runpath);
    CHECK(info->is_64);
    CHECK(info->compatible);
  }
}

TEST_CASE("the version objects of the real cuDNN match cudnn_version.h", "[envprobe][elf]") {
  const CudnnVersion expected = header_version();
  REQUIRE(expected.major == 9);
  for (const auto& [file, symbol] : std::vector<std::pair<std::string, std::string>>{
           {"libcudnn_graph.so.9", "cudnn_graph_version"},
           {"libcudnn_ops.so.9", "cudnn_ops_infer_version"},
           {"libcudnn_adv.so.9", "cudnn_adv_infer_version"}}) {
    INFO(file << " " << symbol);
    auto bytes = read_symbol_bytes((kCuda / file).string(), symbol, 4);
    REQUIRE(bytes.has_value());
    auto v = CudnnVersion::from_symbol_bytes(*bytes);
    REQUIRE(v.has_value());
    CHECK(*v == expected);
  }
  // Libraries without such an object, and names that do not exist.
  CHECK_FALSE(read_symbol_bytes((kCuda / "libcudnn_heuristic.so.9").string(),
                                "cudnn_heuristic_version", 4));
  CHECK_FALSE(read_symbol_bytes((kCuda / "libcudnn_graph.so.9").string(), "cudnn_graph_versio", 4));
  // An undefined reference is not a definition: ops needs graph's symbols, not its version.
  CHECK_FALSE(read_symbol_bytes((kCuda / "libcudnn_ops.so.9").string(), "cudnn_graph_version", 4));
}

TEST_CASE("the fake wheel libraries have the shape of the real ones", "[envprobe][elf]") {
  const fs::path dir = kFakes / "nvidia_cudnn_cu12-9.1.0.70/nvidia/cudnn/lib";
  auto shim = read_elf((dir / "libcudnn.so.9").string());
  REQUIRE(shim.has_value());
  CHECK(shim->soname == "libcudnn.so.9");
  CHECK(shim->runpath == "$ORIGIN");
  CHECK_FALSE(shim->rpath.has_value());
  auto ops = read_elf((dir / "libcudnn_ops.so.9").string());
  REQUIRE(ops.has_value());
  CHECK(ops->runpath == "$ORIGIN");
  CHECK(std::find(ops->needed.begin(), ops->needed.end(), "libcudnn_graph.so.9") !=
        ops->needed.end());
  auto graph = read_symbol_bytes((dir / "libcudnn_graph.so.9").string(), "cudnn_graph_version", 4);
  REQUIRE(graph.has_value());
  CHECK(*graph == std::vector<unsigned char>{0, 1, 9, 0});
  auto v95 = read_symbol_bytes(
      (kFakes / "nvidia_cudnn_cu12-9.5.1.17/nvidia/cudnn/lib/libcudnn_ops.so.9").string(),
      "cudnn_ops_infer_version", 4);
  REQUIRE(v95.has_value());
  CHECK(CudnnVersion::from_symbol_bytes(*v95)->to_string() == "9.5.1");
}

TEST_CASE("damaged and foreign files give errors, never a crash", "[envprobe][elf]") {
  const fs::path tmp = fs::temp_directory_path() / ("gpulock-elf-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const fs::path real = kCuda / "libcudnn.so.9";
  std::ifstream in(real, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 4096);
  auto write = [&](const std::string& content) {
    const fs::path p = tmp / "lib.so";
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  };
  // Every prefix length around the headers, and a few beyond.
  for (std::size_t n : {0, 1, 4, 16, 63, 64, 65, 100, 500, 1000, 4000}) {
    INFO("prefix " << n);
    auto p = write(bytes.substr(0, n));
    auto r = read_elf(p);
    if (n < 64) CHECK_FALSE(r.has_value());
    (void)read_symbol_bytes(p, "cudnnGetVersion", 4);
  }
  CHECK_FALSE(read_elf(write("not an elf file at all")).has_value());
  CHECK_FALSE(read_elf((tmp / "missing.so").string()).has_value());
  CHECK(read_elf((tmp / "missing.so").string()).error().code == gpulock::core::ErrorCode::Io);
  // Random corruption of the headers and the dynamic section.
  std::mt19937 rng(8);
  for (int i = 0; i < 300; ++i) {
    std::string damaged = bytes.substr(0, 16384);
    for (int k = 0; k < 24; ++k) {
      auto at = std::uniform_int_distribution<std::size_t>(0, 4095)(rng);
      damaged[at] = static_cast<char>(rng());
    }
    auto p = write(damaged);
    (void)read_elf(p);
    (void)read_symbol_bytes(p, "cudnnGetVersion", 4);
  }
  fs::remove_all(tmp);
}

TEST_CASE("$ORIGIN expansion and path lists", "[envprobe][elf]") {
  CHECK(expand_origin("$ORIGIN", "/a/b") == "/a/b");
  CHECK(expand_origin("${ORIGIN}/../lib", "/a/b") == "/a/b/../lib");
  CHECK(expand_origin("$ORIGIN/../../cublas/lib", "/s/nvidia/cudnn/lib") ==
        "/s/nvidia/cudnn/lib/../../cublas/lib");
  CHECK(expand_origin("/usr/lib", "/a") == "/usr/lib");
  CHECK_FALSE(expand_origin("$LIB/x", "/a").has_value());
  CHECK_FALSE(expand_origin("$ORIGINAL", "/a").has_value());
  CHECK(split_path_list("", ":;").empty());
  CHECK(split_path_list("/a:/b;/c", ":;") == std::vector<std::string>{"/a", "/b", "/c"});
  CHECK(split_path_list("/a::/b", ":") == std::vector<std::string>{"/a", "", "/b"});
  CHECK(split_path_list("/a;b", ":") == std::vector<std::string>{"/a;b"});
}

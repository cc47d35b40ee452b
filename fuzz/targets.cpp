// Declared targets (app/targets.h read_targets, app/src/targets.cpp): `[tool.gpulock.targets]`
// of a pyproject.toml or `[targets]` of a gpulock.toml, each key through its flag's parser. Byte
// 0 picks the file (even: pyproject.toml, odd: gpulock.toml); the rest is written to it.
// Properties: every target read has a name of a-z, 0-9 and '-', at least one Python (X.Y from
// 3.8 to 3.15 for a specifier, else the version as written) and one platform, and not both a
// driver and a CUDA ceiling; reading the file again gives the same targets.
#include "gpulock/app/targets.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "fuzz_check.h"

namespace fs = std::filesystem;
using namespace gpulock;

namespace {

const fs::path& scratch() {
  static const fs::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/fuzz_targets_XXXXXX", tmp != nullptr ? tmp : "/tmp");
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    return fs::path(pattern);
  }();
  return dir;
}

bool same(const app::TargetSpec& a, const app::TargetSpec& b) {
  return a.name == b.name && a.python_version == b.python_version && a.pythons == b.pythons &&
         a.platforms == b.platforms && a.driver.to_string() == b.driver.to_string() &&
         a.cuda_ceiling == b.cuda_ceiling && a.gpu_archs == b.gpu_archs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const fs::path file = scratch() / ((data[0] & 1) ? "gpulock.toml" : "pyproject.toml");
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  auto read = app::read_targets(file.string(), scratch());
  std::error_code ec;
  if (!read) {
    FUZZ_CHECK(!read.error().message.empty(), "an error without a message");
    fs::remove(file, ec);
    return 0;
  }
  for (const auto& t : read->targets) {
    FUZZ_CHECK(!t.name.empty() && std::all_of(t.name.begin(), t.name.end(),
                                              [](char c) {
                                                return (c >= 'a' && c <= 'z') ||
                                                       (c >= '0' && c <= '9') || c == '-';
                                              }),
               fmt::format("target name '{}'", t.name));
    FUZZ_CHECK(!t.pythons.empty() && !t.platforms.empty(),
               fmt::format("target {} without a Python or a platform", t.name));
    if (t.pythons.size() > 1 || t.pythons.front() != t.python_version) {
      for (const auto& p : t.pythons) {
        FUZZ_CHECK(p.size() >= 3 && p.size() <= 4 && p.starts_with("3."),
                   fmt::format("target {}: Python '{}' from '{}'", t.name, p, t.python_version));
      }
    }
    FUZZ_CHECK(t.driver.is_auto() || t.cuda_ceiling.empty(),
               fmt::format("target {}: a driver and a CUDA ceiling", t.name));
  }
  auto again = app::read_targets(file.string(), scratch());
  FUZZ_CHECK(
      again && again->targets.size() == read->targets.size() &&
          std::equal(read->targets.begin(), read->targets.end(), again->targets.begin(), same),
      "a second read gives other targets");
  fs::remove(file, ec);
  return 0;
}

#include "pages.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace gpulock::bench {
namespace {

// splitmix64: deterministic pseudo-random hex digests.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::string hex(std::size_t digits) {
    std::string out;
    while (out.size() < digits)
      out += fmt::format("{:016x}", next());
    out.resize(digits);
    return out;
  }
};

constexpr std::array<std::string_view, 6> kPythons = {"cp39",  "cp310", "cp311",
                                                      "cp312", "cp313", "cp314"};
constexpr std::array<std::string_view, 8> kPlatforms = {
    "manylinux_2_17_x86_64.manylinux2014_x86_64",
    "manylinux_2_17_aarch64.manylinux2014_aarch64",
    "musllinux_1_1_x86_64",
    "musllinux_1_1_aarch64",
    "win_amd64",
    "win32",
    "macosx_10_9_x86_64",
    "macosx_11_0_arm64"};

struct File {
  std::string filename;
  std::string url;
  std::string sha256;
  std::string metadata_sha256;  // empty for sdists
  std::string upload_time;
  std::uint64_t size;
};

// Files of versions 1.0.0, 1.0.1, ... until their JSON rendering reaches `min_bytes` (the
// HTML rendering of the same files is a little smaller).
std::vector<File> files_for(std::size_t min_bytes, const std::string& project) {
  Rng rng{0x5eed};
  std::vector<File> files;
  std::size_t bytes = 0;
  for (std::size_t v = 0; bytes < min_bytes; ++v) {
    std::string version = fmt::format("1.{}.{}", v / 10, v % 10);
    auto add = [&](std::string filename, bool wheel) {
      File f;
      f.url = fmt::format("https://files.pythonhosted.org/packages/{}/{}/{}/{}", rng.hex(2),
                          rng.hex(2), rng.hex(60), filename);
      f.filename = std::move(filename);
      f.sha256 = rng.hex(64);
      if (wheel) f.metadata_sha256 = rng.hex(64);
      f.size = 1000000 + rng.next() % 20000000;
      f.upload_time =
          fmt::format("20{:02}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", 12 + v % 13, 1 + v % 12,
                      1 + v % 28, v % 24, v % 60, (v * 7) % 60, (v * 123457) % 1000000);
      bytes += 360 + f.url.size() + f.filename.size();
      files.push_back(std::move(f));
    };
    add(fmt::format("{}-{}.tar.gz", project, version), false);
    for (auto py : kPythons) {
      for (auto plat : kPlatforms) {
        add(fmt::format("{}-{}-{}-{}-{}.whl", project, version, py, py, plat), true);
      }
    }
  }
  return files;
}

}  // namespace

std::string synthetic_json_page(std::size_t min_bytes, const std::string& project) {
  auto files = files_for(min_bytes, project);
  std::string out = fmt::format(R"({{"meta":{{"api-version":"1.1","_last-serial":27446157}},)"
                                R"("name":"{}","files":[)",
                                project);
  std::vector<std::string> versions;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const File& f = files[i];
    std::string core = f.metadata_sha256.empty()
                           ? std::string("false")
                           : fmt::format(R"({{"sha256":"{}"}})", f.metadata_sha256);
    if (i) out += ',';
    out += fmt::format(R"({{"core-metadata":{},"data-dist-info-metadata":{},"filename":"{}",)"
                       R"("hashes":{{"sha256":"{}"}},"requires-python":">=3.9","size":{},)"
                       R"("upload-time":"{}","url":"{}","yanked":false}})",
                       core, core, f.filename, f.sha256, f.size, f.upload_time, f.url);
  }
  out += R"(],"versions":[)";
  std::string last;
  bool first = true;
  for (const File& f : files) {
    // "<project>-<version>-..." or "<project>-<version>.tar.gz"
    std::string_view rest = std::string_view(f.filename).substr(project.size() + 1);
    std::string version(rest.substr(0, rest.find_first_of("-")));
    if (version.ends_with(".tar.gz")) version.resize(version.size() - 7);
    if (version == last) continue;
    out += first ? "" : ",";
    out += '"' + version + '"';
    first = false;
    last = version;
  }
  out += "]}";
  return out;
}

std::string synthetic_html_page(std::size_t min_bytes, const std::string& project) {
  auto files = files_for(min_bytes, project);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html>\n  <head>\n"
      "    <meta name=\"pypi:repository-version\" content=\"1.1\">\n"
      "    <title>Links for {0}</title>\n  </head>\n  <body>\n    <h1>Links for {0}</h1>\n",
      project);
  for (const File& f : files) {
    out += fmt::format("    <a href=\"{}#sha256={}\" data-requires-python=\"&gt;=3.9\"", f.url,
                       f.sha256);
    if (!f.metadata_sha256.empty()) {
      out +=
          fmt::format(" data-dist-info-metadata=\"sha256={0}\" data-core-metadata=\"sha256={0}\"",
                      f.metadata_sha256);
    }
    out += fmt::format(">{}</a><br />\n", f.filename);
  }
  out += "  </body>\n</html>\n<!--SERIAL 27446157-->\n";
  return out;
}

}  // namespace gpulock::bench

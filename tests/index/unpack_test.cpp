// index::unpack_wheel (index/src/zip_extract.cpp) on archives built byte by byte here.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "gpulock/index/wheel.h"

namespace fs = std::filesystem;
using namespace gpulock;

namespace {

std::uint32_t crc32(const std::string& data) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>((v >> 8) & 0xFF);
}

void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

// A zip of one deflated entry (a single stored deflate block) whose central directory declares
// `declared` bytes uncompressed; the local header and the data say `content.size()`.
std::string zip_with_declared_size(const std::string& name, const std::string& content,
                                   std::uint32_t declared) {
  std::string deflated = "\x01";
  put16(deflated, static_cast<std::uint32_t>(content.size()));
  put16(deflated, static_cast<std::uint32_t>(~content.size() & 0xFFFF));
  deflated += content;
  const std::uint32_t crc = crc32(content);
  std::string zip;
  put32(zip, 0x04034b50);
  put16(zip, 20);
  put16(zip, 0);
  put16(zip, 8);
  put32(zip, 0);
  put32(zip, crc);
  put32(zip, static_cast<std::uint32_t>(deflated.size()));
  put32(zip, static_cast<std::uint32_t>(content.size()));
  put16(zip, static_cast<std::uint32_t>(name.size()));
  put16(zip, 0);
  zip += name + deflated;
  const auto central = static_cast<std::uint32_t>(zip.size());
  put32(zip, 0x02014b50);
  put16(zip, (3u << 8) | 20u);
  put16(zip, 20);
  put16(zip, 0);
  put16(zip, 8);
  put32(zip, 0);
  put32(zip, crc);
  put32(zip, static_cast<std::uint32_t>(deflated.size()));
  put32(zip, declared);
  put16(zip, static_cast<std::uint32_t>(name.size()));
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, 0);
  put32(zip, 0100644u << 16);
  put32(zip, 0);
  zip += name;
  const auto central_size = static_cast<std::uint32_t>(zip.size()) - central;
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, 1);
  put16(zip, 1);
  put32(zip, central_size);
  put32(zip, central);
  put16(zip, 0);
  return zip;
}

}  // namespace

// Found by fuzz/unpack_wheel (fuzz/corpus/unpack_wheel/crash-declared-size): an entry whose
// stream ends before the size its central directory declares was returned with the declared
// size, not the bytes it wrote.
TEST_CASE("unpack_wheel returns the bytes each file holds, not the size the zip declares",
          "[wheel][unpack]") {
  const fs::path dir = fs::path(INDEX_TEST_WORK_DIR) / "unpack-declared-size";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  const fs::path wheel = dir / "demo-1.0-py3-none-any.whl";
  {
    std::ofstream out(wheel, std::ios::binary);
    out << zip_with_declared_size("demo/data.txt", "hello\n", 600);
  }
  auto files = index::unpack_wheel(wheel.string(), (dir / "out").string());
  REQUIRE(files);
  REQUIRE(files->size() == 1);
  CHECK(files->front().path == "demo/data.txt");
  CHECK(fs::file_size(dir / "out/demo/data.txt") == 6);
  CHECK(files->front().size == 6);
  fs::remove_all(dir, ec);
}

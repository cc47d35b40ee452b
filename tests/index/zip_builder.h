#pragma once
// Zip files built in the tests (PKWARE APPNOTE 6.3.x): stored entries with their real CRC-32,
// optionally with zip64 end records and zip64 extra fields, so that a test controls every field
// of the central directory (and can make one lie). Python's zipfile and libzip read what this
// writes (wheel_members_test.cpp checks both).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace index_test {

/// CRC-32 (ISO 3309, the zip one: reflected 0xEDB88320).
inline std::uint32_t crc32(std::string_view data) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data)
    c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

struct ZipEntry {
  std::string name;
  std::string data;
};

struct ZipOptions {
  bool zip64 = false;   ///< zip64 extra fields, record and locator; 0xFFFF... in the EOCD
  std::string comment;  ///< the archive comment
};

/// Where build_zip put things, for tests that patch them.
struct ZipLayout {
  std::uint64_t directory_offset = 0;
  std::uint64_t directory_size = 0;
  std::uint64_t eocd_offset = 0;
  std::uint64_t zip64_record_offset = 0;  ///< 0 without zip64
};

namespace zip_detail {
inline void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
}  // namespace zip_detail

inline std::string build_zip(const std::vector<ZipEntry>& entries, const ZipOptions& o = {},
                             ZipLayout* layout = nullptr) {
  using zip_detail::put;
  std::string out, central;
  const std::uint16_t version = o.zip64 ? 45 : 20;
  for (const auto& e : entries) {
    const std::uint64_t offset = out.size();
    const std::uint32_t crc = crc32(e.data);
    std::string extra;
    if (o.zip64) {
      put(extra, 0x0001, 2);
      put(extra, 24, 2);
      put(extra, e.data.size(), 8);
      put(extra, e.data.size(), 8);
      put(extra, offset, 8);
    }
    // Local header (§4.3.7): stored, sizes in the header (the zip64 ones in its extra field).
    put(out, 0x04034b50, 4);
    put(out, version, 2);
    put(out, 0, 2);
    put(out, 0, 2);  // method: stored
    put(out, 0, 2);
    put(out, 0x5821, 2);  // 2024-01-01
    put(out, crc, 4);
    std::string local_extra;
    if (o.zip64) {
      put(local_extra, 0x0001, 2);
      put(local_extra, 16, 2);
      put(local_extra, e.data.size(), 8);
      put(local_extra, e.data.size(), 8);
    }
    put(out, o.zip64 ? 0xFFFFFFFFu : e.data.size(), 4);
    put(out, o.zip64 ? 0xFFFFFFFFu : e.data.size(), 4);
    put(out, e.name.size(), 2);
    put(out, local_extra.size(), 2);
    out += e.name;
    out += local_extra;
    out += e.data;
    // Central header (§4.3.12).
    put(central, 0x02014b50, 4);
    put(central, 0x0300 | version, 2);  // made by Unix
    put(central, version, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0x5821, 2);
    put(central, crc, 4);
    put(central, o.zip64 ? 0xFFFFFFFFu : e.data.size(), 4);
    put(central, o.zip64 ? 0xFFFFFFFFu : e.data.size(), 4);
    put(central, e.name.size(), 2);
    put(central, extra.size(), 2);
    put(central, 0, 2);  // comment
    put(central, 0, 2);  // disk
    put(central, 0, 2);
    put(central, (e.name.ends_with('/') ? 040755u : 0100644u) << 16, 4);
    put(central, o.zip64 ? 0xFFFFFFFFu : offset, 4);
    central += e.name;
    central += extra;
  }
  ZipLayout l;
  l.directory_offset = out.size();
  l.directory_size = central.size();
  out += central;
  if (o.zip64) {
    l.zip64_record_offset = out.size();
    put(out, 0x06064b50, 4);
    put(out, 44, 8);
    put(out, 0x0300 | version, 2);
    put(out, version, 2);
    put(out, 0, 4);
    put(out, 0, 4);
    put(out, entries.size(), 8);
    put(out, entries.size(), 8);
    put(out, l.directory_size, 8);
    put(out, l.directory_offset, 8);
    put(out, 0x07064b50, 4);  // locator
    put(out, 0, 4);
    put(out, l.zip64_record_offset, 8);
    put(out, 1, 4);
  }
  l.eocd_offset = out.size();
  put(out, 0x06054b50, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, o.zip64 ? 0xFFFFu : entries.size(), 2);
  put(out, o.zip64 ? 0xFFFFu : entries.size(), 2);
  put(out, o.zip64 ? 0xFFFFFFFFu : l.directory_size, 4);
  put(out, o.zip64 ? 0xFFFFFFFFu : l.directory_offset, 4);
  put(out, o.comment.size(), 2);
  out += o.comment;
  if (layout) *layout = l;
  return out;
}

/// Overwrites `bytes` little-endian bytes of `zip` at `at` with `value`.
inline void patch(std::string& zip, std::uint64_t at, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    zip[static_cast<std::size_t>(at) + static_cast<std::size_t>(i)] =
        static_cast<char>((value >> (8 * i)) & 0xFF);
}

/// A wheel shaped like nvidia-cudnn-cu13 9.20.0.48 (../shared/data/wheel-contents.md §1.2: the
/// 8 sonames, no libcudnn_engines_tensor_ir.so.9), small stand-in bytes for each library, the
/// empty nvidia/__init__.py every nvidia-* wheel ships, and its dist-info.
inline std::vector<ZipEntry> cudnn_like_entries() {
  std::vector<ZipEntry> e;
  e.push_back({"nvidia/__init__.py", ""});
  e.push_back({"nvidia/cudnn/", ""});
  e.push_back({"nvidia/cudnn/__init__.py", ""});
  for (const char* lib :
       {"libcudnn.so.9", "libcudnn_adv.so.9", "libcudnn_cnn.so.9", "libcudnn_ops.so.9",
        "libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9",
        "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9"}) {
    e.push_back({std::string("nvidia/cudnn/lib/") + lib, std::string("\x7f"
                                                                     "ELF stand-in for ") +
                                                             lib});
  }
  e.push_back({"nvidia/cudnn/include/cudnn.h", "/* cudnn.h */\n"});
  e.push_back({"nvidia_cudnn_cu13-9.20.0.48.dist-info/METADATA",
               "Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.20.0.48\n"});
  e.push_back(
      {"nvidia_cudnn_cu13-9.20.0.48.dist-info/WHEEL",
       "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_27_x86_64\n"});
  e.push_back({"nvidia_cudnn_cu13-9.20.0.48.dist-info/RECORD", ""});
  return e;
}

}  // namespace index_test

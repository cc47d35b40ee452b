// A zip's central directory read by gpulock (zip_directory.h): the end records, then the headers.
#include "zip_directory.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace gpulock::index::detail {
namespace {

constexpr std::uint32_t kEocdSignature = 0x06054b50;
constexpr std::uint32_t kLocatorSignature = 0x07064b50;
constexpr std::uint32_t kZip64EocdSignature = 0x06064b50;
constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint64_t kEocdSize = 22;
constexpr std::uint64_t kLocatorSize = 20;
constexpr std::uint64_t kZip64EocdSize = 56;
constexpr std::uint64_t kCentralSize = 46;
constexpr std::uint64_t kLocalHeaderSize = 30;
constexpr std::uint64_t kMaxComment = 0xffff;

// Little-endian fields (APPNOTE §4.4.1.1), whatever the host's order.
std::uint64_t le(std::string_view bytes, std::size_t at, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = width; i-- > 0;) {
    v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  }
  return v;
}
std::uint16_t u16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>(le(b, at, 2));
}
std::uint32_t u32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(le(b, at, 4));
}
std::uint64_t u64(std::string_view b, std::size_t at) {
  return le(b, at, 8);
}

// A member name as an error shows it: control bytes as \xNN, at most 200 bytes.
std::string shown(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 200)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  if (name.size() > 200) out += "...";
  return out;
}

std::unexpected<core::Error> bad_zip(std::string_view display, std::string message) {
  return std::unexpected(core::make_error(core::ErrorCode::InvalidInput,
                                          "cannot read the wheel's file list: " + message,
                                          std::string(display)));
}

// The EOCD record's offset in the file: the last signature whose comment ends the file exactly.
std::optional<std::uint64_t> find_eocd(const ZipWindow& w) {
  if (w.bytes.size() < kEocdSize) return std::nullopt;
  const std::uint64_t end = w.start + w.bytes.size();
  for (std::uint64_t at = end - kEocdSize + 1; at-- > w.start;) {
    const auto i = static_cast<std::size_t>(at - w.start);
    if (u32(w.bytes, i) != kEocdSignature) continue;
    if (at + kEocdSize + u16(w.bytes, i + 20) == w.total) return at;
    if (end - at > kEocdSize + kMaxComment) break;
  }
  return std::nullopt;
}

struct Zip64Fields {
  std::uint64_t entries = 0, size = 0, offset = 0;
  std::uint64_t record = 0;  // where the zip64 EOCD record starts: the directory ends there
};

// The zip64 record the locator at `locator` points to. need_from set when it lies before the
// window.
core::Result<std::optional<Zip64Fields>> read_zip64(const ZipWindow& w, std::uint64_t locator,
                                                    std::uint64_t& need_from,
                                                    std::string_view display) {
  const auto li = static_cast<std::size_t>(locator - w.start);
  if (u32(w.bytes, li + 4) != 0 || u32(w.bytes, li + 16) > 1) {
    return bad_zip(display, "it spans several disks");
  }
  const std::uint64_t record = u64(w.bytes, li + 8);
  if (record > locator || locator - record < kZip64EocdSize) {
    return bad_zip(display, fmt::format("its zip64 locator points to offset {}, not before the "
                                        "locator at {}",
                                        record, locator));
  }
  if (record < w.start) {
    need_from = record;
    return std::optional<Zip64Fields>();
  }
  const auto ri = static_cast<std::size_t>(record - w.start);
  if (u32(w.bytes, ri) != kZip64EocdSignature) {
    return bad_zip(display, fmt::format("no zip64 end record at offset {}", record));
  }
  // The record's own size field counts the bytes after its first 12; it ends at the locator.
  if (u64(w.bytes, ri + 4) != locator - record - 12) {
    return bad_zip(display, "its zip64 end record does not end at the zip64 locator");
  }
  if (u32(w.bytes, ri + 16) != 0 || u32(w.bytes, ri + 20) != 0 ||
      u64(w.bytes, ri + 24) != u64(w.bytes, ri + 32)) {
    return bad_zip(display, "it spans several disks");
  }
  Zip64Fields z;
  z.entries = u64(w.bytes, ri + 32);
  z.size = u64(w.bytes, ri + 40);
  z.offset = u64(w.bytes, ri + 48);
  z.record = record;
  return std::optional<Zip64Fields>(z);
}

// The values of a central header's zip64 extra field (§4.5.3) that its 32-bit fields defer to.
bool apply_zip64_extra(std::string_view extra, std::uint64_t& size, std::uint64_t& compressed,
                       std::uint64_t& local) {
  while (extra.size() >= 4) {
    const std::uint16_t id = u16(extra, 0);
    const std::uint16_t length = u16(extra, 2);
    if (extra.size() - 4 < length) return false;
    std::string_view data = extra.substr(4, length);
    extra.remove_prefix(4 + std::size_t{length});
    if (id != 0x0001) continue;
    std::size_t at = 0;
    for (std::uint64_t* field : {&size, &compressed, &local}) {
      if (*field != 0xffffffff) continue;
      if (data.size() - at < 8) return false;
      *field = u64(data, at);
      at += 8;
    }
    return true;
  }
  return size != 0xffffffff && compressed != 0xffffffff && local != 0xffffffff;
}

}  // namespace

std::uint64_t member_tail_bytes(std::optional<std::uint64_t> size) noexcept {
  if (!size) return kTailBytes;
  std::uint64_t want = std::clamp<std::uint64_t>(*size / 100, kTailBytes, kMaxTailBytes);
  return std::min(want, *size);
}

core::Result<ZipLocation> locate_zip_directory(const ZipWindow& w, std::string_view display) {
  ZipLocation out;
  auto eocd = find_eocd(w);
  if (!eocd) {
    const std::uint64_t reach = kEocdSize + kMaxComment + kLocatorSize;
    if (w.start > 0 && w.total - w.start < reach) {
      out.need_from = w.total > reach ? w.total - reach : 0;
      return out;
    }
    return bad_zip(display, "no end of central directory record (not a zip file?)");
  }
  const auto ei = static_cast<std::size_t>(*eocd - w.start);
  if (u16(w.bytes, ei + 4) != 0 || u16(w.bytes, ei + 6) != 0 ||
      u16(w.bytes, ei + 8) != u16(w.bytes, ei + 10)) {
    return bad_zip(display, "it spans several disks");
  }
  ZipDirectoryExtent e{u32(w.bytes, ei + 16), u32(w.bytes, ei + 12), u16(w.bytes, ei + 10)};
  std::uint64_t directory_end = *eocd;
  const bool wants_zip64 = e.entries == 0xffff || e.size == 0xffffffff || e.offset == 0xffffffff;
  const std::uint64_t locator = *eocd >= kLocatorSize ? *eocd - kLocatorSize : 0;
  if (*eocd >= kLocatorSize && locator < w.start) {
    out.need_from = locator;  // a zip64 locator may lie there: look before deciding
    return out;
  }
  const bool has_locator =
      *eocd >= kLocatorSize &&
      u32(w.bytes, static_cast<std::size_t>(locator - w.start)) == kLocatorSignature;
  if (wants_zip64 && !has_locator) {
    return bad_zip(display, "its end record defers to a zip64 record that is missing");
  }
  if (has_locator) {
    auto z = read_zip64(w, locator, out.need_from, display);
    if (!z) return std::unexpected(z.error());
    if (!*z) return out;
    e = ZipDirectoryExtent{(*z)->offset, (*z)->size, (*z)->entries};
    directory_end = (*z)->record;
  }
  if (e.offset > directory_end || directory_end - e.offset != e.size) {
    return bad_zip(display, fmt::format("its central directory claims {} bytes at offset {}, but "
                                        "the end records begin at offset {}",
                                        e.size, e.offset, directory_end));
  }
  if (e.entries > e.size / kCentralSize) {
    return bad_zip(display, fmt::format("its central directory claims {} entries in {} bytes",
                                        e.entries, e.size));
  }
  out.extent = e;
  return out;
}

core::Result<std::vector<WheelMember>> parse_zip_directory(std::string_view dir,
                                                           const ZipDirectoryExtent& extent,
                                                           std::string_view display) {
  std::vector<WheelMember> members;
  members.reserve(
      static_cast<std::size_t>(std::min<std::uint64_t>(extent.entries, dir.size() / kCentralSize)));
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < extent.entries; ++i) {
    if (dir.size() - at < kCentralSize || u32(dir, at) != kCentralSignature) {
      return bad_zip(display, fmt::format("central directory entry {} is cut short or has no "
                                          "signature",
                                          i + 1));
    }
    const std::size_t name_length = u16(dir, at + 28), extra_length = u16(dir, at + 30),
                      comment_length = u16(dir, at + 32);
    const std::size_t record = kCentralSize + name_length + extra_length + comment_length;
    if (dir.size() - at < record) {
      return bad_zip(display, fmt::format("central directory entry {} is cut short", i + 1));
    }
    std::string_view name = dir.substr(at + kCentralSize, name_length);
    std::string_view extra = dir.substr(at + kCentralSize + name_length, extra_length);
    std::uint64_t size = u32(dir, at + 24), compressed = u32(dir, at + 20),
                  local = u32(dir, at + 42);
    const std::uint32_t crc = u32(dir, at + 16);
    const std::uint16_t disk = u16(dir, at + 34);
    at += record;
    if (!apply_zip64_extra(extra, size, compressed, local)) {
      return bad_zip(display,
                     fmt::format("'{}' lacks the zip64 sizes its header defers to", shown(name)));
    }
    if (disk != 0 && disk != 0xffff) return bad_zip(display, "it spans several disks");
    // Its local header and data lie before the directory: a lying offset or size shows here.
    if (local > extent.offset || extent.offset - local < kLocalHeaderSize + name_length ||
        extent.offset - local - kLocalHeaderSize - name_length < compressed) {
      return bad_zip(display, fmt::format("'{}' claims {} bytes at offset {}, past the central "
                                          "directory at {}",
                                          shown(name), compressed, local, extent.offset));
    }
    if (name.find('\0') != std::string_view::npos) {
      return bad_zip(display, fmt::format("the name '{}' holds a NUL byte", shown(name)));
    }
    if (name.empty() || name.back() == '/') continue;
    members.push_back(WheelMember{std::string(name), size, crc});
  }
  if (at != dir.size()) {
    return bad_zip(display, fmt::format("its central directory holds {} bytes after its {} "
                                        "entries",
                                        dir.size() - at, extent.entries));
  }
  return members;
}

core::Result<std::vector<WheelMember>> members_via_ranges(std::uint64_t total, std::string tail,
                                                          const RangeFetch& fetch,
                                                          std::string_view display,
                                                          std::uint64_t* fetched) {
  if (tail.size() > total) return bad_zip(display, "the tail read is longer than the file");
  std::uint64_t read = tail.size();
  std::string window = std::move(tail);
  std::uint64_t start = total - window.size();
  // Prepends bytes [from, start) to the window: one range request, within the bound.
  auto extend = [&](std::uint64_t from) -> core::Status {
    if (read + (start - from) > kMaxRangeBytes) {
      return std::unexpected(core::make_error(
          core::ErrorCode::IndexFormat,
          fmt::format("reading the wheel's file list would take more than {} MiB (the limit); "
                      "its central directory is too large or lies about its offsets",
                      kMaxRangeBytes >> 20),
          std::string(display)));
    }
    auto bytes = fetch(from, start - 1);
    if (!bytes) {
      core::Error e = bytes.error();
      if (e.where.empty()) e.where = std::string(display);
      return std::unexpected(std::move(e));
    }
    if (bytes->size() != start - from) {
      return std::unexpected(core::make_error(
          core::ErrorCode::Network,
          fmt::format("range request returned {} bytes instead of {}", bytes->size(), start - from),
          std::string(display)));
    }
    read += start - from;
    bytes->append(window);
    window = std::move(*bytes);
    start = from;
    return {};
  };
  // At most: the EOCD's reach, a zip64 record, the directory itself.
  for (int round = 0; round < 4; ++round) {
    auto where = locate_zip_directory(ZipWindow{total, start, window}, display);
    if (!where) return std::unexpected(where.error());
    if (!where->extent) {
      if (where->need_from >= start) return bad_zip(display, "its end records are inconsistent");
      if (auto s = extend(where->need_from); !s) return std::unexpected(s.error());
      continue;
    }
    const ZipDirectoryExtent& e = *where->extent;
    if (e.offset < start) {
      if (auto s = extend(e.offset); !s) return std::unexpected(s.error());
    }
    if (fetched) *fetched = read;
    std::string_view dir = std::string_view(window).substr(
        static_cast<std::size_t>(e.offset - start), static_cast<std::size_t>(e.size));
    return parse_zip_directory(dir, e, display);
  }
  return bad_zip(display, "its end records are inconsistent");
}

core::Result<std::vector<WheelMember>> members_from_buffer(std::string_view data,
                                                           std::string_view display) {
  RangeFetch none = [](std::uint64_t, std::uint64_t) -> core::Result<std::string> {
    return core::fail(core::ErrorCode::Internal, "a whole file needs no range request");
  };
  return members_via_ranges(data.size(), std::string(data), none, display);
}

}  // namespace gpulock::index::detail

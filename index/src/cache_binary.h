#pragma once
// The cache's binary writer/reader (cache.cpp's entries, cache_codec.cpp's pages): integers in
// native byte order, strings with a u32 length before them. A Reader that runs out of bytes
// clears `ok` and returns empty values from then on.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace gpulock::index::detail {

inline void put_u8(std::string& out, std::uint8_t v) {
  out.push_back(static_cast<char>(v));
}
inline void put_u32(std::string& out, std::uint32_t v) {
  out.append(reinterpret_cast<const char*>(&v), 4);
}
inline void put_u64(std::string& out, std::uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), 8);
}
inline void put_i64(std::string& out, std::int64_t v) {
  out.append(reinterpret_cast<const char*>(&v), 8);
}
inline void put_str(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

struct Reader {
  std::string_view& in;
  bool ok = true;

  template <class T>
  T get() {
    T v{};
    if (in.size() < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, in.data(), sizeof(T));
    in.remove_prefix(sizeof(T));
    return v;
  }
  /// The next `n` bytes.
  std::string_view bytes(std::size_t n) {
    if (!ok || in.size() < n) {
      ok = false;
      return {};
    }
    std::string_view s = in.substr(0, n);
    in.remove_prefix(n);
    return s;
  }
  std::string_view str() {
    auto n = get<std::uint32_t>();
    return bytes(n);
  }
};

}  // namespace gpulock::index::detail

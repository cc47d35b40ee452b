// Inside libgpulock-net.so (net_plugin.h): METADATA out of a wheel archive with libzip, shared
// by local wheels, range reads and whole downloads.
#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/index/wheel.h"

#include "net_impl.h"

namespace gpulock::index::net {

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

core::Result<std::string> metadata_from_archive(zip_t* archive, const core::WheelFilename* expected,
                                                std::string_view display) {
  zip_int64_t count = zip_get_num_entries(archive, 0);
  zip_int64_t chosen = -1;
  zip_int64_t first = -1;
  std::size_t candidates = 0;
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw = zip_get_name(archive, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (!raw) continue;
    std::string_view name = raw;
    constexpr std::string_view kSuffix = ".dist-info/METADATA";
    if (!name.ends_with(kSuffix)) continue;
    std::string_view dir = name.substr(0, name.size() - kSuffix.size());
    if (dir.empty() || dir.find('/') != std::string_view::npos) continue;
    ++candidates;
    if (first < 0) first = i;
    if (expected) {
      std::string_view project = dir.substr(0, dir.find('-'));
      if (core::normalize_name(project) == expected->name) {
        chosen = i;
        break;
      }
    }
  }
  if (chosen < 0) chosen = first;
  if (chosen < 0) {
    return core::fail_at(core::ErrorCode::InvalidInput,
                         "the wheel has no *.dist-info/METADATA file", std::string(display));
  }
  (void)candidates;
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(archive, static_cast<zip_uint64_t>(chosen), 0, &st) != 0) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("cannot read the wheel's METADATA entry: {}", zip_strerror(archive)),
        std::string(display));
  }
  std::string entry = st.name ? st.name : "METADATA";
  // A zip bomb declares more than its compressed bytes can hold: deflate expands at most
  // ~1032:1, a stored entry not at all.
  if ((st.valid & ZIP_STAT_SIZE) && (st.valid & ZIP_STAT_COMP_SIZE) &&
      (st.valid & ZIP_STAT_COMP_METHOD)) {
    bool stored = st.comp_method == ZIP_CM_STORE;
    bool impossible = stored ? st.size != st.comp_size : st.size > st.comp_size * 1032 + 1024;
    if (impossible) {
      return core::fail_at(
          core::ErrorCode::InvalidInput,
          fmt::format("refusing {}: it declares {} bytes from {} compressed bytes (a zip bomb?)",
                      entry, st.size, st.comp_size),
          std::string(display));
    }
  }
  if ((st.valid & ZIP_STAT_SIZE) && st.size > kMaxMetadataBytes) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("{} is {} bytes, over the 10 MB limit for METADATA", entry, st.size),
        std::string(display));
  }
  zip_file_t* file = zip_fopen_index(archive, static_cast<zip_uint64_t>(chosen), 0);
  if (!file) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("cannot open {} in the wheel: {}", entry, zip_strerror(archive)),
        std::string(display));
  }
  std::string text;
  std::uint64_t declared = (st.valid & ZIP_STAT_SIZE) ? st.size : kMaxMetadataBytes;
  text.resize(static_cast<std::size_t>(declared) + 1);
  std::size_t filled = 0;
  while (filled < text.size()) {
    zip_int64_t n = zip_fread(file, text.data() + filled, text.size() - filled);
    if (n < 0) {
      std::string why = zip_file_strerror(file);
      zip_fclose(file);
      return core::fail_at(core::ErrorCode::InvalidInput,
                           fmt::format("cannot read {} from the wheel: {}", entry, why),
                           std::string(display));
    }
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  zip_fclose(file);
  if (filled > declared) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("refusing {}: it inflates beyond its declared size of {} bytes "
                    "(a zip bomb?)",
                    entry, declared),
        std::string(display));
  }
  text.resize(filled);
  return text;
}

core::Result<std::string> metadata_from_file(const std::string& path,
                                             const core::WheelFilename* expected,
                                             std::string_view display) {
  std::string where = display.empty() ? path : std::string(display);
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &code);
  if (!archive) {
    return core::fail_at(core::ErrorCode::InvalidInput,
                         fmt::format("cannot read the wheel: {}", zip_error_text(code)), where);
  }
  auto text = metadata_from_archive(archive, expected, where);
  zip_discard(archive);
  return text;
}

}  // namespace gpulock::index::net

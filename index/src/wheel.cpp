#include "gpulock/index/wheel.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/metadata.h"
#include "gpulock/core/name.h"
#include "gpulock/core/text.h"
#include "gpulock/core/version.h"

#include "local_file.h"
#include "net_plugin.h"

namespace gpulock::index {

core::Result<std::string> read_wheel_metadata(const std::string& path,
                                              const core::WheelFilename* expected,
                                              std::string_view display) {
  std::string where = display.empty() ? path : std::string(display);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return core::fail_at(core::ErrorCode::Io,
                         fmt::format("cannot open the wheel: {}", std::strerror(errno)), where);
  }
  // libzip opens the path itself: a FIFO or a device would block it or never end.
  if (auto s = detail::require_regular_file(path); !s) return std::unexpected(s.error());
  auto plugin = detail::load_net_plugin();
  if (!plugin) return std::unexpected(plugin.error());
  auto text = (*plugin)->metadata_from_file(path, expected, where);
  if (!text) return text;
  if (expected) {
    if (auto ok = check_metadata_matches(*text, *expected, where); !ok)
      return std::unexpected(ok.error());
  }
  return text;
}

core::Result<std::vector<UnpackedFile>> unpack_wheel(const std::string& path,
                                                     const std::string& dest,
                                                     std::string_view display) {
  std::string where = display.empty() ? path : std::string(display);
  if (auto s = detail::require_regular_file(path); !s) return std::unexpected(s.error());
  auto plugin = detail::load_net_plugin();
  if (!plugin) return std::unexpected(plugin.error());
  return (*plugin)->unpack_archive(path, dest, where);
}

core::Status check_metadata_matches(std::string_view metadata, const core::WheelFilename& wheel,
                                    std::string_view where) {
  std::string_view name, version;
  bool have_name = false, have_version = false;
  core::scan_metadata_headers(metadata, [&](const core::MetadataHeaderLine& h) {
    if (h.kind != core::MetadataHeaderLine::Kind::Field) return true;
    if (!have_name && core::iequals(h.name, "name")) {
      name = core::trim(h.value, " \t");
      have_name = true;
    } else if (!have_version && core::iequals(h.name, "version")) {
      version = core::trim(h.value, " \t");
      have_version = true;
    }
    return !(have_name && have_version);
  });
  if (!have_name || !have_version) {
    return core::fail_at(core::ErrorCode::InvalidMetadata,
                         fmt::format("METADATA has no {} field", have_name ? "Version" : "Name"),
                         std::string(where));
  }
  auto parsed = core::Version::parse(version);
  // A local label in the filename only (flash-attn's `2.8.3+cu12torch2.8...`, PyG's wheels):
  // METADATA names the public version; the filename's version is the one used.
  bool same_version =
      parsed && (*parsed == wheel.version || (wheel.version.has_local() && !parsed->has_local() &&
                                              *parsed == wheel.version.public_version()));
  if (core::normalize_name(name) != wheel.name || !same_version) {
    return core::fail_at(
        core::ErrorCode::InvalidMetadata,
        fmt::format("METADATA says {} {} but the wheel's filename says {} {}",
                    core::quote_for_message(name), core::quote_for_message(version),
                    core::quote_for_message(wheel.name),
                    core::quote_for_message(wheel.version.to_string())),
        std::string(where));
  }
  return {};
}

}  // namespace gpulock::index

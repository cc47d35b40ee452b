#include "gpulock/index/wheel.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/name.h"
#include "gpulock/core/version.h"

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

core::Status check_metadata_matches(std::string_view metadata, const core::WheelFilename& wheel,
                                    std::string_view where) {
  std::string_view name, version;
  bool have_name = false, have_version = false;
  std::size_t pos = 0;
  while (pos < metadata.size()) {
    auto eol = metadata.find('\n', pos);
    std::string_view line =
        metadata.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? metadata.size() : eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // end of the headers
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
      value.remove_suffix(1);
    auto iequals = [](std::string_view a, std::string_view b) {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != b[i]) return false;
      }
      return true;
    };
    if (!have_name && iequals(key, "name")) {
      name = value;
      have_name = true;
    } else if (!have_version && iequals(key, "version")) {
      version = value;
      have_version = true;
    }
  }
  if (!have_name || !have_version) {
    return core::fail_at(core::ErrorCode::InvalidMetadata,
                         fmt::format("METADATA has no {} field", have_name ? "Version" : "Name"),
                         std::string(where));
  }
  auto parsed = core::Version::parse(version);
  // A local label in the filename only (flash-attn's `2.8.3+cu12torch2.8...`, PyG's wheels):
  // METADATA names the public version; the filename's version is the one used.
  bool same_version = parsed && (*parsed == wheel.version ||
                                 (wheel.version.has_local() && !parsed->has_local() &&
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

// Generic TOML documents through toml++ (see toml_document.h).
#include "gpulock/lock/toml_document.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include "toml_convert.h"

namespace gpulock::lock {

core::Result<TomlTable> parse_toml_document(std::string_view text, std::string_view where) {
  auto fail_at = [&](const toml::source_region& at, std::string_view description) {
    return std::unexpected(core::make_error(core::ErrorCode::InvalidInput,
                                            fmt::format("not valid TOML: {}", description),
                                            std::string(where), at.begin.line, at.begin.column));
  };
#if TOML_EXCEPTIONS
  toml::table root;
  try {
    root = toml::parse(text, where);
  } catch (const toml::parse_error& e) {
    return fail_at(e.source(), e.description());
  }
#else
  toml::parse_result parsed = toml::parse(text, where);
  if (!parsed) return fail_at(parsed.error().source(), parsed.error().description());
  toml::table root = std::move(parsed).table();
#endif
  TomlValue value = to_value(root);
  return std::move(*std::get_if<TomlTable>(&value.data));
}

}  // namespace gpulock::lock

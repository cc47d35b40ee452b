// Shared by config.cpp (keys, merging, variables, apply) and config_files.cpp (the readers of
// gpulock's, uv's and pip's files).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/config.h"
#include "gpulock/lock/toml_value.h"

namespace gpulock::app::config_detail {

/// One source's value for one key.
struct Candidate {
  std::vector<std::string> values;
  SettingOrigin origin;
};

/// One source: key -> value.
using Layer = std::map<std::string, Candidate, std::less<>>;

/// The key's entry in config_keys(), or null.
[[nodiscard]] const ConfigKey* key_info(std::string_view key);

/// Checks one value of `key` with its flag's parser; the parser's error when it refuses it.
[[nodiscard]] core::Status check_value(std::string_view key, std::string_view value);

/// The 1-based line of `key = ...` inside the `occurrence`-th (0-based) table named `table`
/// ("tool.uv", "tool.uv.index" for [[tool.uv.index]]; "" for the top level); the table's own
/// line when `key` is empty; 0 when not found.
[[nodiscard]] std::size_t toml_line(std::string_view text, std::string_view table,
                                    std::size_t occurrence, std::string_view key);

/// A file read as a source.
struct SourceFile {
  std::string path;   ///< as read
  std::string shown;  ///< as `gpulock config` shows it
  std::string text;
};

/// gpulock's own table (`[tool.gpulock]`, or the top level of a gpulock.toml): `table` is its
/// dotted name ("tool.gpulock", ""). `targets` is allowed (declared targets, targets.h) when
/// `targets_allowed`. Errors: InvalidInput naming the file, table, key and line.
[[nodiscard]] core::Status read_gpulock_table(const lock::TomlTable& table, std::string_view name,
                                              const SourceFile& file, bool targets_allowed,
                                              Layer& out);

/// uv's settings (`[tool.uv]` of a pyproject.toml, or the top level of a uv.toml: `prefix`
/// "tool.uv" or ""). Index settings only when `with_indexes`. What cannot be used or honoured
/// is a warning.
void read_uv_table(const lock::TomlTable& uv, std::string_view prefix, const SourceFile& file,
                   bool with_indexes, Layer& out, std::vector<std::string>& warnings);

/// pip's configuration file (INI): `index-url`, `extra-index-url`, `find-links` of [global],
/// overridden by [install]. Adds to `out` (a later file overrides an earlier one's keys).
void read_pip_conf(const SourceFile& file, Layer& out);

}  // namespace gpulock::app::config_detail

#pragma once
/// @file
/// Project configuration (issue 26): resolve's options from every place a Python project keeps
/// them, merged by precedence, each effective value with where it came from.
///
/// Sources, highest first: command-line flags; `GPULOCK_*` variables, then uv's (`UV_*`), then
/// pip's (`PIP_*`); the project's `[tool.gpulock]` (or a `gpulock.toml` beside the
/// pyproject.toml, found by walking up from the working directory); uv's project settings
/// (`[[tool.uv.index]]`, `[tool.uv.sources]`, `[tool.uv]`, `[tool.uv.pip]`; its index settings
/// only when `[tool.gpulock]` sets none); the user's `$XDG_CONFIG_HOME/gpulock/gpulock.toml`,
/// pip's `pip.conf` and uv's `uv.toml`; then gpulock's defaults. A key is taken whole from the
/// highest source that sets it (a list key is not merged across sources). Keys are the flags'
/// names.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/resolve.h"
#include "gpulock/core/error.h"

namespace gpulock::app {

/// One configurable option: its key (as in TOML), its flag, its GPULOCK_* variable.
struct ConfigKey {
  std::string_view key;       ///< "torch-backend"
  std::string_view flag;      ///< "--torch-backend" ("" when none)
  std::string_view variable;  ///< "GPULOCK_TORCH_BACKEND"
  bool list = false;          ///< several values (variables: separated by whitespace)
  std::string_view expected;  ///< what a value looks like, for errors
};

/// Every key, in the order `gpulock config` prints them.
[[nodiscard]] std::span<const ConfigKey> config_keys() noexcept;

/// Every variable whose value is a resolve input: the keys' GPULOCK_* variables (not
/// GPULOCK_MIRROR: a mirror serves the same files), then uv's and pip's that gpulock reads. The
/// lock records each one that is set, so that `check --inputs` sees one set since (issue 26).
[[nodiscard]] std::span<const std::string_view> config_variables() noexcept;

/// Where a setting's value came from.
struct SettingOrigin {
  enum class Kind : std::uint8_t { Default, Flag, Env, File };
  Kind kind = Kind::Default;
  std::string name;   ///< the flag, the variable, or the file (as `gpulock config` shows it)
  std::string table;  ///< a file's table: "[tool.uv]", "[[tool.uv.index]]", "[global]"
  std::size_t line = 0;
  /// Issue 41 item 2: non-empty for a user-level source (a variable, or a file outside the
  /// project: the user's gpulock.toml, pip.conf, uv.toml), as the lock records it: "env
  /// PIP_FIND_LINKS", "file ~/.config/pip/pip.conf". Empty for flags, project files, defaults.
  std::string user_source;
  /// "command line --torch-backend", "env UV_TORCH_BACKEND", "pyproject.toml [tool.uv] line
  /// 14", "default".
  [[nodiscard]] std::string to_string() const;
};

struct Setting {
  std::string key;
  std::vector<std::string> values;  ///< one for a single-valued key; URLs as given (redact to show)
  SettingOrigin origin;
  /// Lower sources that set the same key, highest first (`gpulock config` shows them; a
  /// GPULOCK_* variable beside another tool's is a conflict).
  std::vector<std::pair<std::vector<std::string>, SettingOrigin>> overridden;
};

/// What the loader reads, injected so tests are hermetic.
struct ConfigEnvironment {
  /// A variable's value; nullopt (or empty) when unset.
  std::function<std::optional<std::string>(std::string_view)> env;
  std::filesystem::path cwd;  ///< the project is found walking up from here
  std::string project;        ///< --project PYPROJECT: the project is this file's directory
  std::filesystem::path home;
  std::filesystem::path system_root = "/";  ///< prefix of /etc (tests: a fake root)
  /// Values given on the command line, by key (flags win over every source).
  std::map<std::string, std::vector<std::string>> flags;
};

/// The environment of this process: getenv, HOME, the working directory, and
/// `$GPULOCK_TEST_ROOT` as the root of /etc when set.
[[nodiscard]] ConfigEnvironment process_config_environment(
    std::string project, std::map<std::string, std::vector<std::string>> flags);

/// Two variables that set one key to different values (issue 26): the one that wins (gpulock's
/// before uv's before pip's) and the one it overrides.
struct ConfigConflict {
  std::string key;
  std::string winner;  ///< "GPULOCK_TORCH_BACKEND"
  std::vector<std::string> winner_values;
  std::string overridden;  ///< "UV_TORCH_BACKEND"
  std::vector<std::string> overridden_values;
  /// "GPULOCK_TORCH_BACKEND='cu124' wins over UV_TORCH_BACKEND='cu128'" (credentials redacted).
  [[nodiscard]] std::string to_string() const;
};

struct Config {
  std::vector<Setting> settings;  ///< effective, in config_keys() order (defaults included)
  /// Pairs of variables that disagree about a key, in config_keys() order. Variables that agree
  /// are not a conflict.
  std::vector<ConfigConflict> conflicts;
  /// Every variable of config_variables() that is set, with its value (credentials redacted),
  /// whether it won, was overridden or could not be used.
  std::map<std::string, std::string> variables;
  /// Another tool's value that cannot be used, a uv setting gpulock cannot honour, a pip extra
  /// index that serves the torch family.
  std::vector<std::string> warnings;
  /// The configuration files read (paths as `gpulock config` shows them), in precedence order.
  std::vector<std::string> files;
  /// The absolute paths of those files.
  std::vector<std::string> file_paths;
  /// The project's files among them (the lock records their sha256; user-level files are
  /// recorded only through a setting that supplied a locked file, issue 41 item 2).
  std::vector<std::string> project_file_paths;

  [[nodiscard]] const Setting* find(std::string_view key) const;
};

/// Loads and merges every source. Errors: InvalidInput (exit 3) for gpulock's own files (not
/// TOML, an unknown key with a did-you-mean, a value of the wrong type or that its flag's parser
/// refuses), naming the file, table, key and line; Usage (exit 2) for an invalid GPULOCK_*
/// variable, naming it. Another tool's value that cannot be used is a warning.
[[nodiscard]] core::Result<Config> load_config(const ConfigEnvironment& environment);

/// Sets `request`'s options from `config`'s settings that did not come from flags (those are in
/// the request already) nor from defaults. `[tool.uv.sources]` pins with a marker go to
/// `request.index_for_when`. Errors: a value no parser takes (never, after load_config).
[[nodiscard]] core::Status apply_config(const Config& config, ResolveRequest& request);

/// `gpulock config`'s text: one `key = value  # origin` line per setting, overridden values
/// below it (`# conflict: ...` for a variable another variable overrides with a different
/// value), then `warning:` lines.
[[nodiscard]] std::string config_text(const Config& config);

}  // namespace gpulock::app

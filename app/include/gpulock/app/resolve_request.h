#pragma once
/// @file
/// What `gpulock resolve` is asked (issue 43 item 4): the user's inputs and nothing else, as the
/// command line, the configuration, a declared target, a hint's edit or a lock's record give
/// them. How one resolve runs (a trial, a lock returned unwritten, the clock) is the session's
/// (app/src/resolve_session.h), never the request's.
///
/// The options those places share are one table, request_options(): each row is a flag, its
/// configuration and lock-record key, its one parser (the type's own, resolve_options.h and the
/// types it names) writing the request's field, and how the lock records it. The CLI declares
/// the typed flags from it (cli/resolve_flags.cpp), the configuration checks and applies values
/// through it (config.cpp, config_apply.cpp), a hint's edit is applied through it (resolve.cpp),
/// and the lock's `[tool.gpulock.inputs.options]` are written and read back through it
/// (to_record / from_record, resolve_record.h).

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/resolve_options.h"
#include "gpulock/app/target.h"
#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/machine_flags.h"
#include "gpulock/index/client.h"
#include "gpulock/index/index_spec.h"
#include "gpulock/resolver/provider.h"

namespace gpulock::app {

/// A `--index-for` pin that applies when a PEP 508 marker matches the target: how uv's
/// `[tool.uv.sources]` entries with a `marker` are honoured (issue 26).
struct MarkedIndexPin {
  index::IndexPin pin;
  std::string marker;  ///< PEP 508 marker text, checked when the value was read
  friend bool operator==(const MarkedIndexPin&, const MarkedIndexPin&) = default;
};

/// A setting from the user's environment or user-level configuration (issue 41 item 2).
struct UserSetting {
  std::string key;                  ///< the configuration key: "find-links"
  std::string origin;               ///< "env PIP_FIND_LINKS", "file ~/.config/pip/pip.conf"
  std::vector<std::string> values;  ///< as given (redact to show)
  friend bool operator==(const UserSetting&, const UserSetting&) = default;
};

/// Everything `gpulock resolve` takes (flag names in comments). Option values are typed, parsed
/// once by their own parsers; the options several places spell are request_options()' rows.
struct ResolveRequest {
  std::vector<std::string> requirements;       ///< REQ ...
  std::vector<std::string> requirement_files;  ///< -r FILE
  std::vector<std::string> constraint_files;   ///< -c FILE
  std::string project;                         ///< --project PYPROJECT
  std::vector<std::string> extras;             ///< --extra X
  std::vector<std::string> groups;             ///< --group G
  std::string output = "pylock.toml";          ///< -o FILE ("-": stdout)
  bool force = false;                          ///< --force: replace an -o file that is not a lock

  std::optional<std::string> index_url;  ///< --index-url (default https://pypi.org/simple/)
  /// The configured default index (app/config.h): below a requirements file's --index-url line.
  std::optional<std::string> configured_index_url;
  std::vector<std::string> extra_index_urls;     ///< --extra-index-url
  std::vector<index::NamedIndex> named_indexes;  ///< --index NAME=URL
  std::vector<index::IndexPin> index_for;        ///< --index-for GLOB=NAME
  std::vector<MarkedIndexPin> index_for_when;    ///< --index-for 'GLOB=NAME; MARKER'
  std::vector<std::string> find_links;           ///< --find-links
  std::optional<TorchBackend> torch_backend;  ///< --torch-backend auto|cpu|cuXYZ (none: not given)
  std::string torch_index_base = "https://download.pytorch.org/whl";  ///< --torch-index-base
  std::optional<NightlyDate> nightly;  ///< --nightly DATE|latest (none: not given)
  IndexStrategy index_strategy = IndexStrategy::FirstIndex;  ///< --index-strategy

  TargetRequest target;  ///< --python | --python-version --platform
  /// --driver, --cuda-ceiling, --gpu-arch as given (gpu::parse_machine is their parser; the
  /// plan reads them with GPULOCK_DRIVER and the others, or alone for a declared target).
  gpu::MachineFlags machine;
  gpu::CudaCompat cuda_compat = gpu::CudaCompat::Strict;  ///< --cuda-compat strict|minor

  resolver::PrereleasePolicy prerelease =
      resolver::PrereleasePolicy::IfNecessary;  ///< --prerelease, --pre
  std::optional<ExcludeNewer> exclude_newer;    ///< --exclude-newer DATE|TIMESTAMP|DURATION
  bool upgrade = false;                         ///< --upgrade
  /// --allow-incomplete (issue 44 item 3): lock a set that breaks a rule between its wheels (two
  /// writing one path, an nvJitLink older than a library links) with a warning, the conflict
  /// recorded in the lock, instead of avoiding or refusing it.
  bool allow_incomplete = false;
  std::vector<std::string> upgrade_packages;  ///< --upgrade-package NAME

  index::ClientOptions client;  ///< --cache-dir --offline --refresh --no-cache
  /// The command line as typed, for the lock's header comment and the complete commands hints
  /// give (app/command_line.h).
  std::string command_line;
  /// The declared target resolved (`[tool.gpulock.targets.<name>]`), recorded in the lock.
  std::string target_name;
  /// The project's configuration files the options came from (app/config.h), recorded in the
  /// lock with their sha256 so that `check --inputs` sees them change.
  std::vector<std::string> config_files;
  /// Settings from the user's environment or user-level configuration (issue 41 item 2), each
  /// with its origin. The lock records one only when it supplied a locked file: on the index
  /// record of the index it named (`origin`), never as an input of its own.
  std::vector<UserSetting> user_settings;
};

/// The driver of `request.machine`, typed (Auto when not given or when the text does not parse:
/// the CLI and the configuration refuse such a text before a request is made).
[[nodiscard]] gpu::DriverSpec driver_of(const ResolveRequest& request);

/// A lock's `[tool.gpulock.inputs.options]`: key -> value.
using RecordedOptions = std::map<std::string, std::string, std::less<>>;

/// One option of the request as every place that spells it sees it.
struct RequestOption {
  std::string_view key;   ///< configuration key, and lock-record key when recorded
  std::string_view flag;  ///< "--torch-backend"
  /// Repeatable: apply() adds a value; a configured list replaces the whole (clear, then apply).
  bool list = false;
  /// A value of its own type, parsed by that type's parser. An untyped value (a URL, a platform
  /// tag) is only checked by the configuration (not empty, no whitespace).
  bool typed = false;
  /// Parses `value` into the request (a list adds it). Errors: the parser's, worded
  /// "invalid --FLAG 'VALUE': ..."; the request is unchanged then.
  core::Status (*apply)(ResolveRequest& request, std::string_view value) = nullptr;
  /// Resets the field to its default (a list: empty).
  void (*clear)(ResolveRequest& request) = nullptr;
  /// Writes the lock's record of the field into `out`; nullptr: not recorded as an input.
  void (*record)(const ResolveRequest& request, RecordedOptions& out) = nullptr;
  /// Reads that record back through the same parser (absent keys leave the field as it is);
  /// nullptr: not read from the record (the machine is read from [tool.gpulock.gpu]). Errors name
  /// the key.
  core::Status (*read)(const RecordedOptions& in, ResolveRequest& request) = nullptr;
};

/// Every row, in `gpulock config`'s order for the keys it knows.
[[nodiscard]] std::span<const RequestOption> request_options() noexcept;

/// The row of a configuration key ("torch-backend") or a flag ("--torch-backend"); nullptr when
/// none.
[[nodiscard]] const RequestOption* find_request_option(std::string_view key_or_flag) noexcept;

}  // namespace gpulock::app

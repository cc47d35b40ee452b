// What `gpulock resolve` reads from its inputs and records in [tool.gpulock.inputs], shared by
// resolve (which writes the record) and `gpulock check` (which recomputes it to compare): one
// place decides which files, options and indexes a lock depends on (the record's two sides are
// resolve_record.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gpulock/app/requirements_file.h"
#include "gpulock/app/resolve.h"
#include "gpulock/catalog/source.h"
#include "gpulock/core/error.h"
#include "gpulock/lock/lockfile.h"

namespace gpulock::app::detail {

/// The index PEP 503/691 clients ask when nothing else is named (pip's and uv's default).
inline constexpr std::string_view kDefaultIndexUrl = "https://pypi.org/simple/";

/// Requirements from arguments, -r/-c files and a pyproject.toml, as resolve reads them.
struct ResolveInputs {
  RequirementsInput req;
  std::vector<std::pair<std::string, std::string>> project_files;  ///< (path, content)
};

/// Reads every input of `request`. Errors: an argument that is not a PEP 508 requirement
/// (invalid input, `where` = "argument N"), --extra/--group without --project (usage), and any
/// error of a requirements or project file (naming file and line). No requirement at all is not
/// an error here: resolve refuses it, check compares it.
[[nodiscard]] core::Result<ResolveInputs> read_resolve_inputs(const ResolveRequest& request);

/// `path` relative to `dir` with '/' separators (absolute when it cannot be made relative), as
/// input files are recorded relative to the lock's directory.
[[nodiscard]] std::string path_relative_to(const std::filesystem::path& dir,
                                           const std::string& path);

/// The [tool.gpulock.inputs] record of `request` with its inputs already read (the public
/// to_record, resolve_record.h, reads them): requirement texts, input files (relative to
/// `lock_dir`, with their sha256), extras, groups, the options the table records, and the
/// record's own sha256 over lock::canonical_inputs_text.
[[nodiscard]] lock::GpulockInputs to_record(const ResolveRequest& request,
                                            const ResolveInputs& inputs,
                                            const std::filesystem::path& lock_dir);

/// One general (non-torch) index in first-index order: a Simple index with the Default or Extra
/// role, or a FindLinks page (Extra); `url` as the user gave it (default and extra through
/// index::url_from_user_input).
struct GeneralIndex {
  catalog::Source type;
  std::string url;
  /// The user-level setting it came from ("env PIP_FIND_LINKS", issue 41 item 2); "" for a
  /// flag, a project file, a requirements file or the default.
  std::string origin;
};

/// The origin of `request`'s user-level setting of `key` ("" when the key is not one).
[[nodiscard]] std::string user_origin(const ResolveRequest& request, std::string_view key);

/// The general indexes of `request` and its requirements files: --index-url (or a file's, or
/// PyPI) unless a file says --no-index, then every --extra-index-url, then every --find-links.
[[nodiscard]] std::vector<GeneralIndex> general_indexes(const ResolveRequest& request,
                                                        const RequirementsInput& req);

}  // namespace gpulock::app::detail

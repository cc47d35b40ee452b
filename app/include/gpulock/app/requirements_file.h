#pragma once
/// @file
/// Requirement inputs in pip's requirements-file dialect (pip's docs, "Requirements File
/// Format"): one PEP 508 requirement per line, `#` comments, `\` line continuations,
/// `${VAR}` environment expansion, nested `-r`/`--requirement` and `-c`/`--constraint` files
/// (paths relative to the including file; an include loop is an error), and the index options
/// `-i`/`--index-url`, `--extra-index-url`, `-f`/`--find-links`, `--no-index`, `--pre`, plus
/// per-requirement `--hash=algo:hex`. Options gpulock has no use for but pip accepts
/// (`--prefer-binary`, `--only-binary`, `--trusted-host`, `--use-feature`) are accepted and
/// ignored; editable (`-e`) and local-path requirements are rejected: gpulock locks wheels from
/// indexes.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/requirement.h"

namespace gpulock::app {

/// Where a requirement came from: a file and line, or a command-line argument (`line` 0).
struct RequirementOrigin {
  std::string file;  ///< empty for command-line arguments
  std::size_t line = 0;
};

struct RequirementEntry {
  core::Requirement requirement;
  RequirementOrigin origin;
  std::vector<std::string> hashes;  ///< "sha256:..." from --hash options
};

/// A file that was read, for the lock's record of its inputs.
struct InputFile {
  std::string path;     ///< as resolved (relative paths joined onto the including file's directory)
  std::string kind;     ///< "requirements" or "constraints"
  std::string content;  ///< the bytes read (the caller hashes them)
};

struct RequirementsInput {
  std::vector<RequirementEntry> requirements;
  std::vector<RequirementEntry> constraints;
  std::optional<std::string> index_url;
  std::vector<std::string> extra_index_urls;
  std::vector<std::string> find_links;
  bool no_index = false;
  bool pre = false;
  std::vector<InputFile> files;  ///< every file read, in reading order
};

/// Reads a file's bytes; injectable for tests. Errors: Io naming the path.
using FileReader = std::function<core::Result<std::string>(const std::string& path)>;

/// The default reader (std::ifstream; files over 16 MB are refused).
[[nodiscard]] core::Result<std::string> read_text_file(const std::string& path);

/// Looks up an environment variable for `${VAR}` expansion; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

struct RequirementsFileOptions {
  FileReader reader = read_text_file;
  EnvLookup env;  ///< defaults to getenv
};

/// Parses `path` as a requirements (`constraints == false`) or constraints file and appends
/// to `into`. Errors: InvalidInput / InvalidRequirement located at file:line:column; Io for a
/// missing file (naming the including file and line when nested); an include loop names the
/// chain of files.
[[nodiscard]] core::Status read_requirements_file(const std::string& path, bool constraints,
                                                  RequirementsInput& into,
                                                  const RequirementsFileOptions& options = {});

/// Parses requirement text given directly (the lines of one file), for tests and stdin.
[[nodiscard]] core::Status parse_requirements_text(std::string_view text, const std::string& path,
                                                   bool constraints, RequirementsInput& into,
                                                   const RequirementsFileOptions& options = {});

}  // namespace gpulock::app

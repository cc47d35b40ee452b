#pragma once
/// @file
/// Wheel-content rules (issue 44 item 2): facts about which shared libraries a wheel's own
/// libraries load, as data, and the hazards a wheel's file list leaves against them. Pure.
///
/// The cuDNN file table (`gpu/data/cudnn_files.txt`, compiled in; each row names its sources in
/// shared/data/wheel-contents.md §1) says, per cuDNN major, each sub-library, the library that
/// dlopens it by bare soname, the versions whose release ships it and the versions whose loader
/// asks for it without shipping it. The load probe plans with it (probe/cudnn.h); the resolve
/// judges a cuDNN wheel's file list with it (wheel_hazards).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"

namespace gpulock::gpu {

/// The cuDNN file table, parsed (the file's header says the row forms).
struct CudnnFileTable {
  struct Row {
    std::uint32_t major = 0;
    std::string name;       ///< "engines_tensor_ir"
    std::string loaded_by;  ///< "cudnn" (the shim) or "cudnn_graph"
    core::SpecifierSet ships;
    std::string ships_text;  ///< ">=9.21"
    std::optional<core::SpecifierSet> looked_up;
    std::string looked_up_text;        ///< "==9.20.*"; empty for none
    std::vector<std::string> sources;  ///< keys of `sources`
  };
  std::vector<Row> rows;
  /// key -> where it points ("github.com/pytorch/pytorch/issues/188892 (...)"), in file order.
  std::vector<std::pair<std::string, std::string>> sources;

  /// Errors: InvalidInput naming the line (an unknown row kind, a bad specifier, a source key
  /// no `source` row defines).
  [[nodiscard]] static core::Result<CudnnFileTable> parse(std::string_view text);
  /// "KEY where; KEY where" for the keys of a row.
  [[nodiscard]] std::string sources_text(const std::vector<std::string>& keys) const;
};

/// The text of `gpu/data/cudnn_files.txt`, compiled in.
[[nodiscard]] std::string_view cudnn_files_text();
/// The compiled-in table, parsed once (a table that does not parse is a build defect: the unit
/// tests parse it).
[[nodiscard]] const CudnnFileTable& cudnn_file_table();

/// A library a wheel's own library loads by bare soname and the wheel does not ship: the loader
/// then takes whatever copy the search path offers (LD_LIBRARY_PATH, the system), which belongs
/// to another release (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH at the first convolution).
struct WheelHazard {
  std::string file;       ///< "libcudnn_engines_tensor_ir.so.9"
  std::string loaded_by;  ///< "libcudnn_graph.so.9"
  /// True: the release ships the file and this wheel lacks it (an incomplete wheel). False: the
  /// release does not ship it, but its loader asks for it (cuDNN 9.20's engines_tensor_ir).
  bool release_ships = false;
  std::string sources;  ///< the table row's sources

  /// "ships no libcudnn_engines_tensor_ir.so.9, which its libcudnn_graph.so.9 loads by name:
  /// another release's copy on the library path would be loaded
  /// (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)": completes "<package> <version> ...".
  [[nodiscard]] std::string text() const;
  friend bool operator==(const WheelHazard&, const WheelHazard&) = default;
};

/// Whether the rules judge wheels of `package` (a normalized name): `nvidia-cudnn-cu<N>`.
[[nodiscard]] bool has_wheel_rules(std::string_view package);

/// The hazards of a wheel of `package` `version` whose shared libraries (member paths, as
/// index::WheelMembers lists them) are `shared_libraries`. Judged only for a wheel that ships
/// the library that loads the others (`libcudnn.so.<major>`): a placeholder without it is not a
/// cuDNN build. Empty for a package without rules.
[[nodiscard]] std::vector<WheelHazard> wheel_hazards(std::string_view package,
                                                     const core::Version& version,
                                                     std::span<const std::string> shared_libraries);

}  // namespace gpulock::gpu

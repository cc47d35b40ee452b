#pragma once
/// @file
/// Rules between NVIDIA library families (issue 44 item 2), as data: a library built with CUDA
/// 12.M links nvJitLink's 12.M symbols, so the set's nvJitLink must be at least 12.M
/// (`gpu/data/library_rules.txt`, compiled in; each row names its sources). The resolve offers
/// them to the solver as conflict rules (resolver::Conflict), so an older
/// nvJitLink beside the linking library is avoided when the solver can and explained when it
/// cannot. Pure.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/version.h"
#include "gpulock/resolver/provider.h"

namespace gpulock::gpu {

/// The library rules table, parsed (the file's header says the row forms).
struct LibraryRules {
  struct Link {
    std::string package;  ///< "nvidia-cusparse-cu12"
    core::Version from;   ///< 12.3.1.170: the first version built with `cuda`
    std::string cuda;     ///< "12.4"
    std::string needs;    ///< "nvidia-nvjitlink-cu12": must be >= cuda
    std::string library;  ///< "libcusparse.so.12"
    std::vector<std::string> sources;
  };
  std::vector<Link> links;
  std::vector<std::pair<std::string, std::string>> sources;  ///< key -> where, in file order

  /// Errors: InvalidInput naming the line (an unknown row kind, a bad version, a source key no
  /// `source` row defines).
  [[nodiscard]] static core::Result<LibraryRules> parse(std::string_view text);
};

/// The text of `gpu/data/library_rules.txt`, compiled in.
[[nodiscard]] std::string_view library_rules_text();
/// The compiled-in table, parsed once (the unit tests parse it).
[[nodiscard]] const LibraryRules& library_rules();

/// The conflict rules of `package` (normalized) at `version`: for the row with the highest FROM
/// at or below it, "`needs` >= CUDA" with the reason ("its libcusparse.so.12 is built with CUDA
/// 12.4 and links nvJitLink 12.4's symbols, so an older libnvJitLink fails at load with an
/// undefined symbol"; for a later version "built with CUDA 12.4 or later"). Empty for a package
/// without rows or a version below them all.
[[nodiscard]] std::vector<resolver::Conflict> library_conflicts(std::string_view package,
                                                                const core::Version& version);

}  // namespace gpulock::gpu

#pragma once
/// @file
/// Rules between NVIDIA library families (issue 44 item 2), as data: a library built with CUDA
/// 12.M links nvJitLink's 12.M symbols, so the set's nvJitLink must be at least 12.M
/// (`gpu/data/library_rules.txt`, compiled in; each row names its sources). The resolve offers
/// them to the solver as conflict rules (resolver::Conflict), so an older
/// nvJitLink beside the linking library is avoided when the solver can and explained when it
/// cannot. The table's `preloads` rows say which files torch and JAX's CUDA plugin load from the
/// set's wheel directories (preload_gaps). Pure.

#include <cstddef>
#include <span>
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
  /// "LOADER loads FILE from DIRS": when LOADER and one of `providers` are in a set, some wheel
  /// of the set must ship it (preload_gaps).
  struct Preload {
    std::string loader;                  ///< "torch"
    std::string when;                    ///< "libtorch_cuda.so": a file name glob
    std::vector<std::string> dirs;       ///< "nvidia/cusparselt/lib", "nvidia/cu*/lib", ...
    std::string file;                    ///< "libcusparseLt.so.*[0-9]", a glob
    std::vector<std::string> providers;  ///< "nvidia-cusparselt-cu12", ...
    bool raises = false;                 ///< the import fails; else the failure is ignored
    std::vector<std::string> sources;
  };
  /// "LOADER's libraries load FILE by bare name": the set holds one of `providers` or another
  /// wheel shipping FILE (companion_gaps).
  struct Need {
    std::string loader;                  ///< "nvidia-cudnn-cu12"
    std::string when;                    ///< "libcudnn.so.9"
    std::string file;                    ///< "libnvrtc.so.12"
    std::vector<std::string> providers;  ///< "nvidia-cuda-nvrtc-cu12"
    std::vector<std::string> sources;
  };
  std::vector<Link> links;
  std::vector<Preload> preloads;
  std::vector<Need> needs;
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

/// One wheel of a set, as preload_gaps sees it.
struct SetWheel {
  std::string_view name;     ///< normalized
  std::string_view version;  ///< for the words
  /// The site-packages paths of the shared libraries it installs ("nvidia/cublas/lib/...").
  std::span<const std::string> shared_libraries;
  /// For a loader (is_preload_loader): whether its wheel ships a member preload_marker names.
  bool loads = false;
};

/// Whether `package` is the LOADER of a `preloads` or `needs` row.
[[nodiscard]] bool is_preload_loader(std::string_view package);
/// Whether `member` (a path in `loader`'s wheel) is the file a row's WHEN names: the wheel is
/// the build whose loading code the rows describe.
[[nodiscard]] bool preload_marker(std::string_view loader, std::string_view member);

/// A `preloads` row a set leaves unmet: its loader is in the set and `loads`, its own wheel ships
/// no copy of the file, one or more of its providers are in the set, and no wheel of the set ships
/// the file in one of the row's directories.
struct PreloadGap {
  const LibraryRules::Preload* row = nullptr;
  std::size_t loader = 0;    ///< index into the set
  std::size_t provider = 0;  ///< index into the set: one gap per provider the set holds
  /// "nvidia-cusparselt-cu12 0.8.0 ships no libcusparseLt.so.*[0-9], which torch loads from
  /// nvidia/cusparselt/lib, nvidia/cu*/lib or cusparselt/lib when it is imported (its preload
  /// list), and no other wheel of the set ships it: `import torch` raises ValueError"
  std::string reason;
};

/// A `needs` row a set leaves unmet: its loader is in the set and `loads` (its wheel ships WHEN),
/// and the set holds none of its providers and no other wheel shipping its file.
struct CompanionGap {
  const LibraryRules::Need* row = nullptr;
  std::size_t loader = 0;  ///< index into the set
  /// "loads libnvrtc.so.12 by name (its libraries dlopen it when they need it), and the set has
  /// no nvidia-cuda-nvrtc-cu12 and no other wheel shipping it: the machine's copy is loaded, or
  /// the load fails"
  std::string reason;
};
[[nodiscard]] std::vector<CompanionGap> companion_gaps(std::span<const SetWheel> set);

/// The `preloads` rows `set` leaves unmet (the set's every wheel with its list: a set with a
/// wheel whose list is unknown cannot be judged, and the caller passes none).
[[nodiscard]] std::vector<PreloadGap> preload_gaps(std::span<const SetWheel> set);

}  // namespace gpulock::gpu

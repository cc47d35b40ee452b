#pragma once
/// @file
/// An installed Python environment as the probe sees it (DESIGN.md §Probe; issue "Post-install:
/// `gpulock install` and the cuDNN/CUDA load probe"): the site-packages directories in
/// `sys.path` order, the distributions installed there (`*.dist-info/METADATA` per the core
/// metadata spec; file ownership from `RECORD`, PEP 376 / "Recording installed projects"), and
/// the wheel library directories torch loads CUDA libraries from (`nvidia/<lib>/lib`,
/// `nvidia/cu13/lib`).
///
/// Asking the interpreter for its site-packages is the app's job (it runs programs); this module
/// only reads directories.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/requirement.h"

namespace gpulock::probe {

/// One `*.dist-info` directory.
struct InstalledDistribution {
  std::string name;          ///< PEP 503 normalized ("nvidia-cudnn-cu12")
  std::string display_name;  ///< as METADATA writes it
  std::string version;       ///< as METADATA writes it ("9.1.0.70", "2.5.1+cu124")
  std::filesystem::path dist_info;
  std::filesystem::path site_packages;
  std::vector<core::Requirement> requires_dist;
  /// RECORD entries that are shared libraries (a ".so" in the name), relative to
  /// `site_packages` with '/' separators, as written.
  std::vector<std::string> libraries;
  bool has_record = false;
};

/// A wheel library directory torch would search (`nvidia/<folder>/lib`).
struct LibraryDir {
  std::filesystem::path path;  ///< <site-packages>/nvidia/<folder>/lib
  std::string folder;          ///< "cudnn", "cublas", "cu13"
};

/// What `torch` says about its build, from its METADATA and `torch/version.py`.
struct TorchBuild {
  std::string version;              ///< "2.5.1+cu124"
  std::optional<std::string> cuda;  ///< `torch.version.cuda` ("12.4"); nullopt: None/unknown
  bool version_py_read = false;     ///< torch/version.py was found and read
  /// The nvidia-cudnn-* pin of its Requires-Dist (the cuDNN it was built against), if any.
  std::optional<std::string> cudnn_package;  ///< "nvidia-cudnn-cu12"
  std::optional<std::string> cudnn_pin;      ///< "9.1.0.70"
};

struct PythonEnvironment {
  std::string python;          ///< the interpreter asked; empty with --site-packages
  std::string python_version;  ///< "3.11.7"; empty when unknown
  std::vector<std::filesystem::path> site_packages;  ///< search order
  std::vector<InstalledDistribution> distributions;  ///< sorted by name; first wins on duplicates
  std::vector<LibraryDir> library_dirs;              ///< in site-packages order, then folder
  std::optional<TorchBuild> torch;
  std::vector<std::string> warnings;  ///< unreadable METADATA, a distribution installed twice

  /// The distribution with this normalized name (the first in search order), or null.
  [[nodiscard]] const InstalledDistribution* find(std::string_view normalized_name) const;

  /// The distribution whose RECORD lists this file (compared by canonical path), or null.
  [[nodiscard]] const InstalledDistribution* owner_of(const std::filesystem::path& file) const;

  /// True when the file (canonical path) is inside one of the environment's site-packages
  /// directories or library directories, or an environment distribution's RECORD lists it.
  [[nodiscard]] bool contains(const std::filesystem::path& file) const;

  /// Canonical path -> index into `distributions`, for the libraries RECORDs list.
  std::map<std::string, std::size_t> library_owners;
  /// Canonical site-packages and library directories, each ending in '/'.
  std::vector<std::string> canonical_roots;
};

/// Reads the given site-packages directories (which must exist), in order. Missing or
/// malformed METADATA/RECORD files become warnings. Errors: Io when a directory cannot be read
/// (naming it).
[[nodiscard]] core::Result<PythonEnvironment> scan_environment(
    const std::vector<std::filesystem::path>& site_packages);

/// `cuda = '12.4'` / `cuda: Optional[str] = None` from the text of torch/version.py: the
/// value, nullopt for None or when absent.
[[nodiscard]] std::optional<std::string> parse_torch_version_py_cuda(std::string_view text,
                                                                     bool* found = nullptr);

}  // namespace gpulock::probe

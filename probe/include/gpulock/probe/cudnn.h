#pragma once
/// @file
/// cuDNN facts the load probe needs (shared/research/standards-and-peers.md §C): the version
/// encodings, the CUDNN_STATUS_* names, and which sub-libraries each cuDNN version ships and
/// which library loads each of them: the cuDNN file table, data in `gpu/data/cudnn_files.txt`
/// (compiled in; each row names its sources, shared/data/wheel-contents.md §1).

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/specifier.h"
#include "gpulock/gpu/wheel_rules.h"

namespace gpulock::probe {

/// A cuDNN version major.minor.patch (the library's own version; a wheel adds a fourth part,
/// `nvidia-cudnn-cu12 9.1.0.70` is cuDNN 9.1.0).
struct CudnnVersion {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  std::uint32_t patch = 0;

  /// `cudnnGetVersion()`: MAJOR*10000 + MINOR*100 + PATCH from cuDNN 9 on (90100 = 9.1.0),
  /// MAJOR*1000 + MINOR*100 + PATCH before (8902 = 8.9.2). nullopt for 0 or implausible values.
  [[nodiscard]] static std::optional<CudnnVersion> from_runtime(std::uint64_t encoded) noexcept;
  /// The first three numbers of "9.1.0.70" / "9.1.0"; nullopt when there are fewer than two.
  [[nodiscard]] static std::optional<CudnnVersion> from_text(std::string_view text) noexcept;
  /// The 4-byte version objects cuDNN 9 sub-libraries export (`cudnn_graph_version`,
  /// `cudnn_ops_infer_version`, `cudnn_adv_infer_version`): a little-endian
  /// MAJOR<<16 | MINOR<<8 | PATCH. nullopt when implausible.
  [[nodiscard]] static std::optional<CudnnVersion> from_symbol_bytes(
      std::span<const unsigned char> bytes) noexcept;

  /// "9.1.0".
  [[nodiscard]] std::string to_string() const;
  friend auto operator<=>(const CudnnVersion&, const CudnnVersion&) = default;
};

/// "CUDNN_STATUS_NOT_INITIALIZED" for 1001 (cuDNN 9 codes and the 8.x values that differ);
/// "CUDNN_STATUS_<code>" for codes gpulock does not know.
[[nodiscard]] std::string cudnn_status_name(int code);

/// The cuDNN file table lives in the pure gpu module (gpu/wheel_rules.h), which the lock-time
/// check of wheel contents shares (issue 44).
using gpu::cudnn_file_table;
using gpu::cudnn_files_text;
using gpu::CudnnFileTable;

/// One cuDNN sub-library a cuDNN version ships (or may load).
struct CudnnSublibrary {
  std::string name;       ///< "graph", "engines_tensor_ir", "ops_infer"
  std::string soname;     ///< "libcudnn_graph.so.9"
  std::string loaded_by;  ///< soname of the library that dlopens it: "libcudnn.so.9"
  /// True: this version ships it, so a wheel without it is incomplete. False: the loader looks
  /// for it but the version does not ship it (a copy found elsewhere belongs to another release).
  bool required = true;
  /// The first version that ships it ("9.21", the table's `>=` bound); empty when unknown.
  std::string shipped_since;
  /// The table row's sources ("RMLT-280 github.com/...; PT-188892 ..."), "the wheel's RECORD"
  /// or "the directory" for a file the table does not know.
  std::string source;
};

/// The sub-libraries of cuDNN `version`: the table's rows for that version, plus every
/// `libcudnn_<x>.so.<major>` in `record_files` (file names the installed wheel's RECORD lists)
/// that the table lacks (source "the wheel's RECORD"), then every one in `directory_files`
/// (file names in the library directory itself) that neither has (source "the directory"). A
/// RECORD that lists a file makes it required. For a major the table does not know, only the
/// files.
[[nodiscard]] std::vector<CudnnSublibrary> cudnn_sublibraries(
    const CudnnVersion& version, std::span<const std::string> record_files,
    std::span<const std::string> directory_files = {});

/// The version-check functions of libcudnn for a major: cuDNN 9's four
/// (`cudnnGraphVersionCheck`, `cudnnOpsVersionCheck`, `cudnnCnnVersionCheck`,
/// `cudnnAdvVersionCheck`), cuDNN 8's six (`cudnnOpsInferVersionCheck`, ...).
[[nodiscard]] std::vector<std::string> cudnn_version_check_functions(std::uint32_t major);

/// The exported data symbols that carry a sub-library's own version, most specific first:
/// `cudnn_<name>_version`, `cudnn_<name>_infer_version`.
[[nodiscard]] std::vector<std::string> cudnn_version_symbols(std::string_view sublibrary_name);

}  // namespace gpulock::probe

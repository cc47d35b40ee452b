#pragma once
/// @file
/// Distribution filenames: wheels (PEP 427; canonical spec: packaging.python.org, "Binary
/// distribution format" §File name convention) and sdists ("Source distribution format").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/tags.h"
#include "gpulock/core/version.h"

namespace gpulock::core {

/// `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`.
struct WheelFilename {
  std::string name;  ///< PEP 503 normalized (`typing_extensions` -> `typing-extensions`)
  Version version;
  /// The build tag: leading digits as a number, the rest as a string; sorts as (int, str).
  std::optional<std::pair<std::uint64_t, std::string>> build;
  std::vector<Tag> tags;  ///< the expanded cross product of the compressed tag sets
  std::string python_tag, abi_tag, platform_tag;  ///< as written (compressed), e.g. "py2.py3"
  /// PEP 825 (Draft): the variant label after the platform tag; only parse_with_variant sets it.
  std::string variant_label;

  /// Errors: InvalidFilename (wrong extension, wrong number of parts, invalid name or version,
  /// build tag not starting with a digit), with the column.
  [[nodiscard]] static Result<WheelFilename> parse(std::string_view filename);
  /// parse(), also accepting a PEP 825 variant label (`...-manylinux_2_28_x86_64-cuda12.8.whl`,
  /// split_variant_label): where gpulock reads its own locks and installs. Errors: parse()'s for
  /// the name without the label; an invalid label is InvalidFilename.
  [[nodiscard]] static Result<WheelFilename> parse_with_variant(std::string_view filename);
};

/// PEP 825 (Draft) §filename: a wheel file name's variant label. With 6 dash-separated parts
/// whose third does not start with a digit (it is the Python tag, not a build tag), or with 7,
/// the last part is the label: {the file name without `-{label}`, the label}. nullopt for
/// other shapes. The label's characters are not checked (is_variant_label).
[[nodiscard]] std::optional<std::pair<std::string, std::string>> split_variant_label(
    std::string_view filename);
/// `^[0-9a-z_.]+$` (PEP 825).
[[nodiscard]] bool is_variant_label(std::string_view label) noexcept;

/// `{name}-{version}.tar.gz` (also .zip, .tar.bz2, .tar.xz, .tar for legacy sdists). The name
/// may itself contain dashes in legacy files; the version is the part after the last dash
/// that parses as a version.
struct SdistFilename {
  std::string name;  ///< PEP 503 normalized
  Version version;
  std::string extension;  ///< ".tar.gz", ".zip", ...

  /// Errors: InvalidFilename.
  [[nodiscard]] static Result<SdistFilename> parse(std::string_view filename);
};

/// True if `filename` ends in ".whl".
[[nodiscard]] bool is_wheel_filename(std::string_view filename) noexcept;

}  // namespace gpulock::core

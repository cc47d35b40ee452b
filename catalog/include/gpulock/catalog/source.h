#pragma once
/// @file
/// What a source is, as a type (issue 43 item 2): the kind of index it is (a sum type: a new
/// index kind is one more alternative) and its role in the priority order. The lock records it
/// as one string, `[[tool.gpulock.indexes]] role`; recorded_role and read_recorded_role are the
/// one pair that writes and reads that string. Where a source's pages are read from is its
/// index::IndexSource (catalog::SourceSpec::source).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::catalog {

/// A source's place in the priority order (catalog.h): `--index-for` pins, then the torch
/// family's source, then `--index-url`, then the extra indexes and find-links pages.
enum class Role : std::uint8_t {
  Pinned,   ///< `--index NAME=URL` named by `--index-for GLOB=NAME`, or a direct reference
  Family,   ///< the torch family's variant indexes (`--torch-backend`, `--nightly`)
  Default,  ///< `--index-url` (PyPI unless given)
  Extra,    ///< `--extra-index-url` and `--find-links`, in the order given
};

/// A PEP 503/691 Simple API index.
struct Simple {
  friend bool operator==(const Simple&, const Simple&) = default;
};
/// A find-links page or directory of wheels.
struct FindLinks {
  friend bool operator==(const FindLinks&, const FindLinks&) = default;
};
/// The one wheel of a direct reference (`name @ URL`, issue 17 item 5), with its sha256 (the
/// URL's `#sha256=` fragment, or the digest of the wheel downloaded once); "" when not known.
struct Direct {
  std::string sha256;
  friend bool operator==(const Direct&, const Direct&) = default;
};
/// One variant index of the torch family (`<base>/<backend>/`, `<base>/nightly/<backend>/`).
struct Variant {
  /// The backend's CUDA (`cu130`); nullopt: the cpu variant, or one read back from a lock,
  /// which records only the role.
  std::optional<gpu::CudaVersion> cuda;
  bool nightly = false;
  friend bool operator==(const Variant&, const Variant&) = default;
};

/// A source: its kind, with its role.
struct Source {
  using Kind = std::variant<Simple, FindLinks, Direct, Variant>;
  Kind kind;
  Role role = Role::Default;

  /// Whether the kind is `K` (`source.is<FindLinks>()`).
  template <class K>
  [[nodiscard]] bool is() const noexcept {
    return std::holds_alternative<K>(kind);
  }
  friend bool operator==(const Source&, const Source&) = default;
};

/// The role the lock records for `source` (`[[tool.gpulock.indexes]] role`): "pinned", "torch"
/// (the family's variants), "default", "extra", "find-links" or "direct".
[[nodiscard]] std::string_view recorded_role(const Source& source) noexcept;

/// The other way: the source a recorded role names (a Variant read back has no CUDA); nullopt
/// for a role gpulock does not write.
[[nodiscard]] std::optional<Source> read_recorded_role(std::string_view role);

}  // namespace gpulock::catalog

#pragma once
/// @file
/// Platform compatibility tags (PEP 425; canonical spec: packaging.python.org, "Platform
/// compatibility tags"), manylinux (PEP 600, with the legacy aliases manylinux1/2010/2014),
/// musllinux (PEP 656), macOS and Windows platform tags, and the ordered list of tags a
/// target supports in pip's priority order (pypa/packaging `tags.sys_tags()`).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::core {

/// One (interpreter, abi, platform) triple, e.g. cp311-cp311-manylinux_2_17_x86_64. Lowercase.
struct Tag {
  std::string interpreter;
  std::string abi;
  std::string platform;

  /// "cp311-cp311-manylinux_2_17_x86_64".
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Tag&, const Tag&) = default;
};

/// Expands a compressed tag set `py2.py3-none-any` into its cross product, in order.
/// Errors: InvalidTag.
[[nodiscard]] Result<std::vector<Tag>> parse_tag_set(std::string_view text);

/// The operating system of a target.
enum class Os : std::uint8_t { Linux, MacOs, Windows };

/// What the supported-tag list is computed for.
struct TagTarget {
  std::uint32_t python_major = 3;
  std::uint32_t python_minor = 11;
  std::string implementation = "cp";  ///< "cp" (CPython) or "pp"
  bool free_threaded = false;          ///< a `t` ABI build (cp313t)
  Os os = Os::Linux;
  std::string arch = "x86_64";        ///< x86_64, aarch64, i686, ... (macOS: arm64, x86_64)
  /// Linux: the glibc version (manylinux_X_Y up to this), or nullopt for none.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> glibc = std::pair{2u, 28u};
  /// Linux: the musl version (musllinux_X_Y up to this), or nullopt.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> musl;
  /// macOS: the OS version (e.g. {14, 0}).
  std::pair<std::uint32_t, std::uint32_t> macos = {14, 0};

  /// Builds a target from `--python-version 3.11` and a platform tag as pip's `--platform`
  /// takes it (`manylinux_2_28_x86_64`, `manylinux2014_aarch64`, `linux_x86_64`,
  /// `musllinux_1_2_x86_64`, `macosx_14_0_arm64`, `win_amd64`). A manylinux/musllinux tag
  /// means "that glibc/musl or older". Errors: InvalidTag, Usage-level message.
  [[nodiscard]] static Result<TagTarget> from_platform_tag(std::string_view python_version,
                                                           std::string_view platform_tag);
};

/// The platform tags a target accepts, best first: manylinux_X_Y from the target's glibc down
/// to 2_5 with each legacy alias right after its equivalent (manylinux_2_17_x86_64,
/// manylinux2014_x86_64, ...), then musllinux when the target has musl, then `linux_<arch>`
/// last (packaging <= 26.2 order, which pip 23-26.2 uses).
[[nodiscard]] std::vector<std::string> platform_tags(const TagTarget& target);

/// Every tag the target supports, in pip's priority order (interpreter > platform > abi):
/// cpXY-cpXY-*, cpXY-abi3-*, cpXY-none-*, cpX(Y-1..2)-abi3-*, pyXY..py X0-none-*, cpXY-none-any,
/// pyXY..-none-any.
[[nodiscard]] std::vector<Tag> supported_tags(const TagTarget& target);

/// Ranks wheels for one target: lower is better; nullopt if no tag of the wheel is supported.
/// Built once per resolve; ranking is a hash lookup per tag.
class TagRanker {
 public:
  explicit TagRanker(std::span<const Tag> supported_in_priority_order);
  /// The best (lowest) priority among `tags`, or nullopt when none is supported.
  [[nodiscard]] std::optional<std::size_t> rank(std::span<const Tag> tags) const;
  [[nodiscard]] std::size_t size() const noexcept { return index_.size(); }

 private:
  std::unordered_map<std::string, std::size_t> index_;  // "interp-abi-plat" -> priority
};

}  // namespace gpulock::core

#pragma once
/// @file
/// Platform compatibility tags (PEP 425; canonical spec: packaging.python.org, "Platform
/// compatibility tags"), manylinux (PEP 600, with the legacy aliases manylinux1/2010/2014),
/// musllinux (PEP 656), macOS and Windows platform tags, and the ordered list of tags a
/// target supports in pip's priority order (pypa/packaging `tags.sys_tags()`).

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
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
  friend auto operator<=>(const Tag&, const Tag&) = default;
};

/// The most tags one compressed tag set may expand to; more is an InvalidTag error (a
/// crafted `a.a.a...-b.b.b...-c.c.c...` would otherwise expand cubically).
inline constexpr std::size_t kMaxExpandedTags = 4096;

/// Expands a compressed tag set `py2.py3-none-any` into its cross product, in order
/// (interpreter, then abi, then platform; duplicates dropped, first kept). Tags are lowercased
/// as packaging's `Tag` does. Each component must be non-empty and consist of ASCII letters,
/// digits and `_` (stricter than packaging, which accepts any character but `-` and `.`: no
/// supported tag contains anything else, so such a tag could never match).
/// Errors: InvalidTag with the 1-based column in `text`.
[[nodiscard]] Result<std::vector<Tag>> parse_tag_set(std::string_view text);

/// The operating system of a target.
enum class Os : std::uint8_t { Linux, MacOs, Windows };

/// What the supported-tag list is computed for.
struct TagTarget {
  std::uint32_t python_major = 3;
  std::uint32_t python_minor = 11;
  std::string implementation = "cp";  ///< "cp" (CPython) or "pp"
  bool free_threaded = false;         ///< a `t` ABI build (cp313t)
  Os os = Os::Linux;
  /// The machine: Linux x86_64, aarch64, i686, armv7l, ppc64le, s390x, riscv64, ...; macOS
  /// arm64 (aarch64 is read as arm64), x86_64, universal2, ...; Windows amd64 (or x86_64),
  /// arm64 (or aarch64), x86 (or i686/win32).
  std::string arch = "x86_64";
  /// Linux: the glibc version (manylinux_X_Y up to this), or nullopt for none.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> glibc = std::pair{2u, 28u};
  /// Linux: the musl version (musllinux_X_Y up to this), or nullopt.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> musl;
  /// macOS: the OS version (e.g. {14, 0}).
  std::pair<std::uint32_t, std::uint32_t> macos = {14, 0};

  /// Builds a target from `--python-version 3.11` and a platform tag as pip's `--platform`
  /// takes it (`manylinux_2_28_x86_64`, `manylinux2014_aarch64`, `linux_x86_64`,
  /// `musllinux_1_2_x86_64`, `macosx_14_0_arm64`, `win_amd64`). A manylinux/musllinux tag
  /// means "that glibc/musl or older" (uv's `--python-platform` semantics; pip's `--platform`
  /// would accept only that exact tag); `linux_<arch>` means no manylinux and no musllinux.
  /// The python version is `3.11`, `3.11.4` (the micro is ignored), `311`, and `3.13t` /
  /// `313t` for a free-threaded build. Windows tags set `arch` to `amd64`, `arm64` or `x86`
  /// (`win32`). Errors: InvalidTag, with a message written for the user of a command-line flag.
  [[nodiscard]] static Result<TagTarget> from_platform_tag(std::string_view python_version,
                                                           std::string_view platform_tag);

  /// The CPython-style interpreter tag of this target: "cp311" (implementation + XY).
  [[nodiscard]] std::string interpreter_tag() const;
  /// The most specific ABI tag: "cp311", "cp313t", "cp37m" (CPython); "pypy310_pp73" (PyPy).
  [[nodiscard]] std::string abi_tag() const;
};

/// The platform tags a target accepts, best first: manylinux_X_Y from the target's glibc down
/// to 2_5 (x86_64, i686) or 2_17 (other architectures) with each legacy alias right after its
/// equivalent (manylinux_2_17_x86_64, manylinux2014_x86_64, ...), then musllinux_X_Y from the
/// target's musl down to X_0, then `linux_<arch>` last (packaging <= 26.2 order, which pip
/// 23-26.2 uses; packaging 26.3 moved `linux_<arch>` first). manylinux is emitted only for
/// the architectures packaging allows (x86_64, i686, aarch64, armv7l, ppc64, ppc64le, s390x,
/// loongarch64, riscv64). macOS follows packaging's `mac_platforms(version, arch)`; Windows
/// yields one of win_amd64, win_arm64, win32.
[[nodiscard]] std::vector<std::string> platform_tags(const TagTarget& target);

/// Every tag the target supports, in pip's priority order (interpreter > platform > abi), as
/// packaging's `sys_tags()` = `cpython_tags()` + `compatible_tags()` for that interpreter:
/// cpXY-cpXY-*, cpXY-abi3-*, cpXY-none-*, cpX(Y-1..2)-abi3-*, pyXY, pyX, pyX(Y-1)..pyX0-none-*,
/// cpXY-none-any, pyXY..-none-any. A free-threaded target uses the ABI cpXYt and the stable
/// ABI `abi3t` in place of `abi3` (packaging >= 26.1; abi3 wheels do not load on a
/// free-threaded interpreter).
[[nodiscard]] std::vector<Tag> supported_tags(const TagTarget& target);

/// Ranks wheels for one target: lower is better; nullopt if no tag of the wheel is supported.
/// Built once per resolve; ranking is a hash lookup per tag.
/// A tag that appears twice in the supported list keeps its first (best) priority, as
/// packaging's `create_compatible_tags_selector` does. Lookups do not allocate.
class TagRanker {
 public:
  explicit TagRanker(std::span<const Tag> supported_in_priority_order);
  /// The best (lowest) priority among `tags`, or nullopt when none is supported.
  [[nodiscard]] std::optional<std::size_t> rank(std::span<const Tag> tags) const;
  /// The priority of one tag, or nullopt when it is not supported.
  [[nodiscard]] std::optional<std::size_t> rank(const Tag& tag) const;
  [[nodiscard]] std::size_t size() const noexcept { return index_.size(); }

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept {
      return std::hash<std::string_view>{}(key);
    }
  };
  std::unordered_map<std::string, std::size_t, KeyHash, std::equal_to<>>
      index_;                     // "interp-abi-plat" -> priority
  std::size_t max_key_size_ = 0;  // no longer key can match
};

}  // namespace gpulock::core

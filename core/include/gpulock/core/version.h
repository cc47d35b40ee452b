#pragma once
/// @file
/// PEP 440 versions (canonical spec: packaging.python.org, "Version specifiers").
///
/// Where pypa/packaging (the reference implementation, 23.x as shipped by Debian 12) and the
/// PEP text differ, Version follows packaging; each such case is documented at the point in
/// version.cpp where it is implemented. Round trip: `Version::parse(v.to_string()) == v`, and
/// `to_string()` is packaging's normalized form (`str(Version(text))`).

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::core {

class Version {
 public:
  /// A pre-release segment: a/b/rc and a number (`1.0rc2` -> {Rc, 2}).
  struct Pre {
    enum class Kind : std::uint8_t { Alpha, Beta, Rc };
    Kind kind = Kind::Alpha;
    std::uint64_t number = 0;
    friend bool operator==(const Pre&, const Pre&) = default;
  };
  /// A local-version segment: a number, or a lowercase alphanumeric string (`cu124`).
  using LocalSegment = std::variant<std::uint64_t, std::string>;

  /// Version "0".
  Version();

  /// Parses any spelling PEP 440 accepts (leading `v`, surrounding whitespace, `alpha`/`beta`/
  /// `c`/`pre`/`preview`/`rev`/`r`, `-`/`_`/`.` separators, implicit numbers, implicit post
  /// `1.0-1`, local `+ubuntu-1`), exactly the strings packaging 23.0's Version() accepts, with
  /// two deliberate exceptions: numbers larger than 2^64-1 are rejected (packaging has big
  /// ints), and letters match case-insensitively in ASCII only (Python's re.IGNORECASE also
  /// folds U+212A KELVIN SIGN onto `k` and a few others). Whitespace is Python's (Unicode).
  /// Errors: InvalidVersion, with `column` at the first character that cannot be part of a
  /// version (1-based byte position; the length+1 when the text ends too early).
  [[nodiscard]] static Result<Version> parse(std::string_view text);

  /// Builds a final release from its numbers (`from_release({2, 5, 1})` is 2.5.1).
  [[nodiscard]] static Version from_release(std::span<const std::uint64_t> release);

  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  /// The release numbers as written, trailing zeros included (`2.5.0` -> {2, 5, 0}).
  [[nodiscard]] std::span<const std::uint64_t> release() const noexcept {
    return {release_data(), release_size_};
  }
  [[nodiscard]] const std::optional<Pre>& pre() const noexcept { return pre_; }
  [[nodiscard]] const std::optional<std::uint64_t>& post() const noexcept { return post_; }
  [[nodiscard]] const std::optional<std::uint64_t>& dev() const noexcept { return dev_; }
  [[nodiscard]] std::span<const LocalSegment> local() const noexcept { return local_; }

  /// `release()[i]`, or 0 past its end (`2.5` has major 2, minor 5, micro 0).
  [[nodiscard]] std::uint64_t release_at(std::size_t i) const noexcept;

  /// True for a pre-release or a development release (PEP 440: `.devN` is a pre-release).
  [[nodiscard]] bool is_prerelease() const noexcept { return pre_.has_value() || dev_.has_value(); }
  [[nodiscard]] bool is_postrelease() const noexcept { return post_.has_value(); }
  [[nodiscard]] bool is_devrelease() const noexcept { return dev_.has_value(); }
  [[nodiscard]] bool has_local() const noexcept { return !local_.empty(); }

  /// The version without its local label (`2.5.1+cu124` -> `2.5.1`).
  [[nodiscard]] Version public_version() const;
  /// Epoch and release only (`1!2.5.1rc1.post2+x` -> `1!2.5.1`).
  [[nodiscard]] Version base_version() const;
  /// The local label as written in normalized form (`cu124`, `rocm6.2`), empty if none.
  [[nodiscard]] std::string local_string() const;

  /// packaging's normalized form.
  [[nodiscard]] std::string to_string() const;

  /// PEP 440 total order, including local labels (numeric segments above alphanumeric ones,
  /// compared segment by segment; more segments win when the prefix is equal). Trailing zeros
  /// of the release are insignificant: `1.0 == 1.0.0`.
  friend std::strong_ordering operator<=>(const Version& a, const Version& b) noexcept;
  friend bool operator==(const Version& a, const Version& b) noexcept;

  /// Consistent with ==.
  [[nodiscard]] std::size_t hash() const noexcept;

 private:
  friend struct VersionAccess;  // the parser and the specifier matcher in core/src

  // The release lives inline when it has at most kInlineRelease components (almost every real
  // version), so parsing and copying a typical version does not allocate.
  static constexpr std::size_t kInlineRelease = 4;

  std::uint64_t epoch_ = 0;
  std::uint64_t release_inline_[kInlineRelease] = {0, 0, 0, 0};
  std::vector<std::uint64_t> release_heap_;  // used instead when size > kInlineRelease
  std::uint32_t release_size_ = 1;
  // Components up to and including the last non-zero one: the part that takes part in
  // comparison and hashing (PEP 440: trailing zeros are insignificant).
  std::uint32_t release_significant_ = 0;
  std::optional<Pre> pre_;
  std::optional<std::uint64_t> post_;
  std::optional<std::uint64_t> dev_;
  std::vector<LocalSegment> local_;

  [[nodiscard]] const std::uint64_t* release_data() const noexcept {
    return release_size_ <= kInlineRelease ? release_inline_ : release_heap_.data();
  }
  void set_release(std::span<const std::uint64_t> release);
};

struct VersionHash {
  std::size_t operator()(const Version& v) const noexcept { return v.hash(); }
};

}  // namespace gpulock::core

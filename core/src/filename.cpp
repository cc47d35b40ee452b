// Wheel (PEP 427, "Binary distribution format" §File name convention) and sdist filenames.
// Rules follow packaging.utils.parse_wheel_filename / parse_sdist_filename (23.x-26.x), with
// the deviations noted where they are implemented.
#include "gpulock/core/filename.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/name.h"

#include "text_util.h"

namespace gpulock::core {
namespace {

using detail::is_alnum;
using detail::is_digit;

std::unexpected<Error> bad_filename(std::string_view filename, std::string why,
                                    std::size_t column) {
  return fail(ErrorCode::InvalidFilename,
              fmt::format("invalid filename {}: {}", quote_for_message(filename), why), column);
}

// Spaces, control bytes and non-ASCII bytes appear in no valid distribution filename: reject
// them up front so that no later step (Version::parse trims whitespace) lets them through.
std::optional<std::size_t> first_bad_byte(std::string_view filename) noexcept {
  for (std::size_t i = 0; i < filename.size(); ++i) {
    auto c = static_cast<unsigned char>(filename[i]);
    if (c <= 0x20 || c >= 0x7f) return i;
  }
  return std::nullopt;
}

// A nested parse error (version, tags) located inside the filename at `offset` (0-based).
std::unexpected<Error> nested(std::string_view filename, std::string_view what, const Error& inner,
                              std::size_t offset) {
  return fail(ErrorCode::InvalidFilename,
              fmt::format("invalid filename {}: invalid {}: {}", quote_for_message(filename), what,
                          inner.message),
              inner.column != 0 ? inner.column + offset : offset + 1);
}

bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool is_wheel_filename(std::string_view filename) noexcept {
  return ends_with(filename, ".whl");
}

std::optional<std::pair<std::string, std::string>> split_variant_label(std::string_view filename) {
  if (!ends_with(filename, ".whl")) return std::nullopt;
  std::string_view stem = filename.substr(0, filename.size() - 4);
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    auto dash = stem.find('-', start);
    parts.push_back(stem.substr(start, dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  bool labeled = parts.size() == 7 || (parts.size() == 6 && !parts[2].empty() &&
                                       !(parts[2][0] >= '0' && parts[2][0] <= '9'));
  if (!labeled) return std::nullopt;
  std::string_view label = parts.back();
  return std::pair{std::string(stem.substr(0, stem.size() - label.size() - 1)) + ".whl",
                   std::string(label)};
}

bool is_variant_label(std::string_view label) noexcept {
  return !label.empty() && std::all_of(label.begin(), label.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '.';
  });
}

Result<WheelFilename> WheelFilename::parse_with_variant(std::string_view filename) {
  auto plain = parse(filename);
  if (plain) return plain;
  auto split = split_variant_label(filename);
  if (!split) return plain;
  if (!is_variant_label(split->second)) {
    return fail(
        ErrorCode::InvalidFilename,
        fmt::format("invalid filename '{}': variant label '{}' is not [0-9a-z_.]+ (PEP 825)",
                    filename, split->second));
  }
  auto base = parse(split->first);
  if (!base) return plain;
  base->variant_label = std::move(split->second);
  return base;
}

Result<WheelFilename> WheelFilename::parse(std::string_view filename) {
  if (filename.empty()) return bad_filename(filename, "empty", 1);
  if (auto bad = first_bad_byte(filename)) {
    return bad_filename(filename, "unexpected character", *bad + 1);
  }
  if (!is_wheel_filename(filename)) {
    // Point at the extension when there is one after the last dash, else at the end.
    std::size_t dot = filename.rfind('.');
    std::size_t dash = filename.rfind('-');
    bool has_extension =
        dot != std::string_view::npos && (dash == std::string_view::npos || dot > dash);
    return bad_filename(filename, "a wheel filename must end in '.whl'",
                        has_extension ? dot + 1 : filename.size() + 1);
  }
  const std::string_view stem = filename.substr(0, filename.size() - 4);
  // Dash positions; a name or version never contains one (PEP 427 escapes them to `_`).
  std::size_t dashes[6];
  std::size_t count = 0;
  for (std::size_t i = 0; i < stem.size(); ++i) {
    if (stem[i] != '-') continue;
    if (count == 5) {
      return bad_filename(filename,
                          "too many '-'-separated parts (expected "
                          "name-version[-build]-python-abi-platform.whl)",
                          i + 1);
    }
    dashes[count++] = i;
  }
  if (count < 4) {
    return bad_filename(filename,
                        "too few '-'-separated parts (expected "
                        "name-version[-build]-python-abi-platform.whl)",
                        stem.size() + 1);
  }

  WheelFilename out;
  // Name. packaging accepts `^[\w\d._]*$` without `__`; we also require PEP 508 validity
  // (non-empty, alphanumeric at both ends) and ASCII, since nothing else can name a project
  // a requirement refers to.
  const std::string_view name = stem.substr(0, dashes[0]);
  if (name.empty()) return bad_filename(filename, "empty project name", 1);
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = is_alnum(c) || c == '.' || c == '_';
    if (ok && (i == 0 || i + 1 == name.size()) && !is_alnum(c)) ok = false;
    if (!ok) {
      return bad_filename(filename,
                          fmt::format("invalid character {} in the project name",
                                      quote_for_message(name.substr(i, 1))),
                          i + 1);
    }
    if (c == '_' && i > 0 && name[i - 1] == '_') {
      // packaging rejects `__`: the escaping rule turns any run of -_. into one `_`.
      return bad_filename(filename, "'__' in the project name", i);
    }
  }
  out.name = normalize_name(name);

  // Version.
  const std::size_t vstart = dashes[0] + 1;
  const std::string_view version = stem.substr(vstart, dashes[1] - vstart);
  if (version.empty()) return bad_filename(filename, "empty version", vstart + 1);
  auto v = Version::parse(version);
  if (!v) return nested(filename, "version", v.error(), vstart);
  out.version = std::move(*v);

  // Build tag: PEP 427 "must start with a digit"; sorts as (int, rest-as-string).
  std::size_t tag_dash = 1;
  if (count == 5) {
    const std::size_t bstart = dashes[1] + 1;
    const std::string_view build = stem.substr(bstart, dashes[2] - bstart);
    if (build.empty() || !is_digit(build[0])) {
      return bad_filename(filename, "the build tag must start with a digit", bstart + 1);
    }
    std::uint64_t number = 0;
    std::size_t i = 0;
    for (; i < build.size() && is_digit(build[i]); ++i) {
      auto d = static_cast<std::uint64_t>(build[i] - '0');
      if (number > (UINT64_MAX - d) / 10) {
        return bad_filename(filename, "the build number is too large", bstart + 1);
      }
      number = number * 10 + d;
    }
    out.build = std::pair{number, std::string(build.substr(i))};
    tag_dash = 2;
  }

  // Compressed tag sets.
  const std::size_t tstart = dashes[tag_dash] + 1;
  const std::string_view tags = stem.substr(tstart);
  auto expanded = parse_tag_set(tags);
  if (!expanded) return nested(filename, "tags", expanded.error(), tstart);
  out.tags = std::move(*expanded);
  const std::size_t a = dashes[tag_dash + 1];
  const std::size_t p = dashes[tag_dash + 2];
  out.python_tag = std::string(stem.substr(tstart, a - tstart));
  out.abi_tag = std::string(stem.substr(a + 1, p - a - 1));
  out.platform_tag = std::string(stem.substr(p + 1));
  return out;
}

Result<SdistFilename> SdistFilename::parse(std::string_view filename) {
  if (filename.empty()) return bad_filename(filename, "empty", 1);
  if (auto bad = first_bad_byte(filename)) {
    return bad_filename(filename, "unexpected character", *bad + 1);
  }
  // packaging accepts .tar.gz and .zip (the current spec: .tar.gz only); the others are
  // legacy sdists that indexes still list.
  static constexpr std::string_view kExtensions[] = {".tar.gz", ".zip", ".tar.bz2", ".tar.xz",
                                                     ".tar"};
  std::string_view extension;
  for (auto ext : kExtensions) {
    if (ends_with(filename, ext)) {
      extension = ext;
      break;
    }
  }
  if (extension.empty()) {
    return bad_filename(filename, "an sdist filename must end in .tar.gz or .zip",
                        filename.size() + 1);
  }
  const std::string_view stem = filename.substr(0, filename.size() - extension.size());
  std::size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos) {
    return bad_filename(filename, "no '-' between the project name and the version",
                        stem.size() + 1);
  }
  // packaging splits at the last dash. Legacy sdists may spell the version with a dash
  // (`foo-1.0-rc1`): when the last split fails, try earlier dashes before reporting the
  // error of the last one.
  std::optional<Error> first_error;
  // At most a few dashes: each try is linear, and a real version never has more.
  constexpr int kMaxTries = 4;
  std::size_t d = dash;
  for (int tries = 0; tries < kMaxTries; ++tries) {
    const std::string_view name = stem.substr(0, d);
    const std::string_view version = stem.substr(d + 1);
    if (!is_valid_name(name)) {
      if (!first_error) {
        first_error =
            bad_filename(filename, fmt::format("invalid project name {}", quote_for_message(name)),
                         1)
                .error();
      }
    } else if (auto v = Version::parse(version)) {
      SdistFilename out;
      out.name = normalize_name(name);
      out.version = std::move(*v);
      out.extension = std::string(extension);
      return out;
    } else if (!first_error) {
      first_error = nested(filename, "version", v.error(), d + 1).error();
    }
    if (d == 0) break;
    d = stem.rfind('-', d - 1);
    if (d == std::string_view::npos) break;
  }
  return std::unexpected(*first_error);
}

}  // namespace gpulock::core

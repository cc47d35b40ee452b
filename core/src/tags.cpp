// Platform compatibility tags. The generators mirror pypa/packaging's tags.py function by
// function (cpython_tags, compatible_tags, mac_platforms, _manylinux.platform_tags,
// _musllinux.platform_tags) for an explicit target instead of the running interpreter.
#include "gpulock/core/tags.h"

#include <array>
#include <cstring>
#include <unordered_set>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "text_util.h"

namespace gpulock::core {
namespace {

using detail::is_digit;

bool is_tag_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = ascii_lower(c);
  return out;
}

// The dot-separated pieces of one component of a tag set.
struct Pieces {
  std::vector<std::string_view> parts;
};

Result<Pieces> split_component(std::string_view whole, std::string_view component,
                               std::size_t column, std::string_view what) {
  Pieces out;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = component.find('.', start);
    std::string_view piece = component.substr(
        start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (piece.empty()) {
      return fail(ErrorCode::InvalidTag,
                  fmt::format("invalid tag set {}: empty {} tag", quote_for_message(whole), what),
                  column + start);
    }
    for (std::size_t i = 0; i < piece.size(); ++i) {
      if (!is_tag_char(piece[i])) {
        return fail(
            ErrorCode::InvalidTag,
            fmt::format("invalid tag set {}: unexpected character {} in the {} tag",
                        quote_for_message(whole), quote_for_message(piece.substr(i, 1)), what),
            column + start + i);
      }
    }
    if (out.parts.size() == kMaxExpandedTags) {
      return fail(ErrorCode::InvalidTag,
                  fmt::format("invalid tag set {}: expands to more than {} tags",
                              quote_for_message(whole), kMaxExpandedTags),
                  1);
    }
    out.parts.push_back(piece);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

std::string version_nodot(std::uint32_t major, std::uint32_t minor) {
  return fmt::format("{}{}", major, minor);
}

// packaging's _manylinux._ALLOWED_ARCHS plus the two 32-bit ones it accepts after an ELF check
// of the running interpreter (armhf, i386), which a target description cannot do: we assume a
// target that names i686/armv7l has the matching ABI.
bool manylinux_arch(std::string_view arch) noexcept {
  static constexpr std::array<std::string_view, 9> kArchs = {
      "x86_64", "i686", "aarch64", "armv7l", "ppc64", "ppc64le", "s390x", "loongarch64", "riscv64"};
  for (auto a : kArchs) {
    if (a == arch) return true;
  }
  return false;
}

// packaging: _LAST_GLIBC_MINOR is a defaultdict(lambda: 50) "for testing" until glibc 3 exists.
constexpr std::uint32_t kLastGlibcMinor = 50;

void manylinux_tags(const std::string& arch, std::pair<std::uint32_t, std::uint32_t> glibc,
                    std::vector<std::string>& out) {
  if (!manylinux_arch(arch)) return;
  // Oldest glibc: 2.17 in general, 2.5 on x86 (PEP 513/599/600). "too old" is exclusive.
  const std::uint32_t too_old_major = 2;
  const std::int64_t too_old_minor = (arch == "x86_64" || arch == "i686") ? 4 : 16;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> maxima = {glibc};
  for (std::uint32_t major = glibc.first; major > 2;) {
    --major;
    maxima.emplace_back(major, kLastGlibcMinor);
  }
  for (auto [major, max_minor] : maxima) {
    if (major < 2) continue;  // packaging's range(current.major - 1, 1, -1) stops at 2
    std::int64_t min_minor = (major == too_old_major) ? too_old_minor : -1;
    for (std::int64_t minor = max_minor; minor > min_minor; --minor) {
      out.push_back(fmt::format("manylinux_{}_{}_{}", major, minor, arch));
      if (major == 2) {
        const char* legacy = minor == 17   ? "manylinux2014"
                             : minor == 12 ? "manylinux2010"
                             : minor == 5  ? "manylinux1"
                                           : nullptr;
        if (legacy != nullptr) out.push_back(fmt::format("{}_{}", legacy, arch));
      }
    }
  }
}

// packaging's _mac_binary_formats. `fat3` (i386+ppc+x86_64) is the distutils name; packaging
// 23.0 spelled it `fat32`, later releases (which pip 24+ vendors) fixed it to `fat3`.
std::vector<std::string_view> mac_binary_formats(std::uint32_t major, std::uint32_t minor,
                                                 std::string_view arch) {
  std::vector<std::string_view> formats = {arch};
  auto before = [&](std::uint32_t a, std::uint32_t b) {
    return std::pair{major, minor} < std::pair{a, b};
  };
  auto after = [&](std::uint32_t a, std::uint32_t b) {
    return std::pair{a, b} < std::pair{major, minor};
  };
  if (arch == "x86_64") {
    if (before(10, 4)) return {};
    formats.insert(formats.end(), {"intel", "fat64", "fat3"});
  } else if (arch == "i386") {
    if (before(10, 4)) return {};
    formats.insert(formats.end(), {"intel", "fat3", "fat"});
  } else if (arch == "ppc64") {
    if (after(10, 5) || before(10, 4)) return {};
    formats.push_back("fat64");
  } else if (arch == "ppc") {
    if (after(10, 6)) return {};
    formats.insert(formats.end(), {"fat3", "fat"});
  }
  if (arch == "arm64" || arch == "x86_64") formats.push_back("universal2");
  if (arch == "x86_64" || arch == "i386" || arch == "ppc64" || arch == "ppc" || arch == "intel") {
    formats.push_back("universal");
  }
  return formats;
}

void mac_platforms(std::pair<std::uint32_t, std::uint32_t> version, std::string_view arch,
                   std::vector<std::string>& out) {
  auto emit = [&](std::uint32_t major, std::uint32_t minor) {
    for (auto format : mac_binary_formats(major, minor, arch)) {
      out.push_back(fmt::format("macosx_{}_{}_{}", major, minor, format));
    }
  };
  if (version.first == 10) {
    // Before macOS 11 each yearly release bumped the minor version.
    for (std::int64_t minor = version.second; minor >= 0; --minor) {
      emit(10, static_cast<std::uint32_t>(minor));
    }
  }
  if (version.first >= 11) {
    // From 11 on the major is bumped yearly; packaging considers only X_0 of each major.
    for (std::uint32_t major = version.first; major > 10; --major)
      emit(major, 0);
    // macOS 11+ on x86_64 runs binaries for 10.x; arm64 only universal2 ones.
    for (std::uint32_t minor = 16; minor > 3; --minor) {
      if (arch == "x86_64") {
        emit(10, minor);
      } else {
        out.push_back(fmt::format("macosx_10_{}_universal2", minor));
      }
    }
  }
}

std::string windows_platform(std::string_view arch) {
  if (arch == "x86" || arch == "win32" || arch == "i686" || arch == "i386") return "win32";
  if (arch == "arm64" || arch == "aarch64") return "win_arm64";
  if (arch == "amd64" || arch == "x86_64") return "win_amd64";
  return fmt::format("win_{}", arch);
}

// Parses a non-empty run of digits at `text[pos...]` into `value`; returns the end index or
// npos. Rejects values that do not fit in 32 bits.
std::size_t parse_u32(std::string_view text, std::size_t pos, std::uint32_t& value) {
  std::size_t i = pos;
  std::uint64_t v = 0;
  while (i < text.size() && is_digit(text[i])) {
    v = v * 10 + static_cast<std::uint64_t>(text[i] - '0');
    if (v > 0xffffffffULL) return std::string_view::npos;
    ++i;
  }
  if (i == pos) return std::string_view::npos;
  value = static_cast<std::uint32_t>(v);
  return i;
}

// "X_Y_rest" at the start of `text`: X, Y and the arch after the second underscore.
bool parse_version_arch(std::string_view text, std::uint32_t& x, std::uint32_t& y,
                        std::string_view& arch) {
  std::size_t i = parse_u32(text, 0, x);
  if (i == std::string_view::npos || i >= text.size() || text[i] != '_') return false;
  i = parse_u32(text, i + 1, y);
  if (i == std::string_view::npos || i >= text.size() || text[i] != '_') return false;
  arch = text.substr(i + 1);
  return !arch.empty();
}

std::unexpected<Error> platform_error(std::string_view tag, std::string why) {
  return std::unexpected(
      make_error(ErrorCode::InvalidTag,
                 fmt::format("invalid platform {}: {}", quote_for_message(tag), why))
          .with_hint("use a wheel platform tag such as manylinux_2_28_x86_64, "
                     "manylinux2014_aarch64, musllinux_1_2_x86_64, linux_x86_64, "
                     "macosx_14_0_arm64, win_amd64"));
}

Status parse_python_version(std::string_view text, TagTarget& target) {
  auto bad = [&](std::string why) -> Status {
    return std::unexpected(
        make_error(ErrorCode::InvalidTag,
                   fmt::format("invalid python version {}: {}", quote_for_message(text), why))
            .with_hint("give MAJOR.MINOR, e.g. 3.11, or 3.13t for a free-threaded build"));
  };
  std::string_view s = text;
  bool threaded = false;
  if (!s.empty() && (s.back() == 't' || s.back() == 'T')) {
    threaded = true;
    s.remove_suffix(1);
  }
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  if (s.find('.') != std::string_view::npos) {
    std::size_t i = parse_u32(s, 0, major);
    if (i == std::string_view::npos || i >= s.size() || s[i] != '.') {
      return bad("expected MAJOR.MINOR");
    }
    i = parse_u32(s, i + 1, minor);
    if (i == std::string_view::npos) return bad("expected MAJOR.MINOR");
    if (i < s.size()) {  // a micro version is allowed and ignored, as pip does
      std::uint32_t micro = 0;
      if (s[i] != '.' || parse_u32(s, i + 1, micro) != s.size()) {
        return bad("expected MAJOR.MINOR");
      }
    }
  } else {
    // pip's "311" form: the first digit is the major, the rest the minor.
    if (s.size() < 2 || parse_u32(s, 0, major) != s.size()) {
      return bad("expected MAJOR.MINOR");
    }
    major = static_cast<std::uint32_t>(s[0] - '0');
    if (parse_u32(s, 1, minor) != s.size()) return bad("expected MAJOR.MINOR");
  }
  if (major != 3) return bad("only Python 3 targets are supported");
  if (minor > 99) return bad("the minor version is out of range");
  if (threaded && minor < 13) return bad("free-threaded builds exist from Python 3.13 on");
  target.python_major = major;
  target.python_minor = minor;
  target.free_threaded = threaded;
  return {};
}

}  // namespace

std::string Tag::to_string() const {
  return fmt::format("{}-{}-{}", interpreter, abi, platform);
}

Result<std::vector<Tag>> parse_tag_set(std::string_view text) {
  if (text.empty()) return fail(ErrorCode::InvalidTag, "empty tag set", 1);
  std::size_t dash1 = text.find('-');
  std::size_t dash2 = dash1 == std::string_view::npos ? dash1 : text.find('-', dash1 + 1);
  if (dash2 == std::string_view::npos) {
    return fail(
        ErrorCode::InvalidTag,
        fmt::format("invalid tag set {}: expected 'python-abi-platform'", quote_for_message(text)),
        text.size() + 1);
  }
  std::size_t dash3 = text.find('-', dash2 + 1);
  if (dash3 != std::string_view::npos) {
    return fail(ErrorCode::InvalidTag,
                fmt::format("invalid tag set {}: more than 3 parts, expected 'python-abi-platform'",
                            quote_for_message(text)),
                dash3 + 1);
  }
  auto py = split_component(text, text.substr(0, dash1), 1, "python");
  if (!py) return std::unexpected(py.error());
  auto abi = split_component(text, text.substr(dash1 + 1, dash2 - dash1 - 1), dash1 + 2, "abi");
  if (!abi) return std::unexpected(abi.error());
  auto plat = split_component(text, text.substr(dash2 + 1), dash2 + 2, "platform");
  if (!plat) return std::unexpected(plat.error());
  // Products of sizes bounded by the text length: fits in 64 bits for any real input.
  const std::size_t count = py->parts.size() * abi->parts.size() * plat->parts.size();
  if (py->parts.size() > kMaxExpandedTags || abi->parts.size() > kMaxExpandedTags ||
      plat->parts.size() > kMaxExpandedTags || count > kMaxExpandedTags) {
    return fail(ErrorCode::InvalidTag,
                fmt::format("invalid tag set {}: expands to more than {} tags",
                            quote_for_message(text), kMaxExpandedTags),
                1);
  }
  std::vector<std::string> abis;
  std::vector<std::string> plats;
  for (auto a : abi->parts)
    abis.push_back(lowered(a));
  for (auto p : plat->parts)
    plats.push_back(lowered(p));
  std::vector<Tag> out;
  out.reserve(count);
  std::unordered_set<std::string> seen;
  for (auto i : py->parts) {
    std::string interp = lowered(i);
    for (const auto& a : abis) {
      for (const auto& p : plats) {
        Tag t{interp, a, p};
        if (count == 1 || seen.insert(t.to_string()).second) out.push_back(std::move(t));
      }
    }
  }
  return out;
}

std::string TagTarget::interpreter_tag() const {
  return implementation + version_nodot(python_major, python_minor);
}

std::string TagTarget::abi_tag() const {
  const std::string xy = version_nodot(python_major, python_minor);
  if (implementation == "cp") {
    // packaging's _cpython_abis: "t" for free-threaded (3.13+), "m" (pymalloc) before 3.8.
    std::string abi = "cp" + xy;
    if (free_threaded) abi += 't';
    if (python_major == 3 && python_minor < 8) abi += 'm';
    return abi;
  }
  if (implementation == "pp") {
    // PyPy's EXT_SUFFIX ".pypy310-pp73-..." gives "pypy310_pp73"; every PyPy of the last
    // years is 7.3.x (pp73). A different PyPy ABI would need a new field here.
    return "pypy" + xy + "_pp73";
  }
  return {};
}

Result<TagTarget> TagTarget::from_platform_tag(std::string_view python_version,
                                               std::string_view platform_tag) {
  TagTarget target;
  if (auto st = parse_python_version(python_version, target); !st) {
    return std::unexpected(st.error());
  }
  if (platform_tag.empty()) return platform_error(platform_tag, "empty");
  for (char c : platform_tag) {
    if (!is_tag_char(c)) {
      return platform_error(platform_tag, fmt::format("unexpected character {}",
                                                      quote_for_message(std::string_view(&c, 1))));
    }
  }
  const std::string tag = lowered(platform_tag);
  std::string_view t = tag;
  auto starts = [&](std::string_view prefix) { return t.substr(0, prefix.size()) == prefix; };
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::string_view arch;

  if (starts("manylinux_")) {
    if (!parse_version_arch(t.substr(10), x, y, arch)) {
      return platform_error(platform_tag, "expected manylinux_<glibc major>_<minor>_<arch>");
    }
    if (!manylinux_arch(arch)) {
      return platform_error(
          platform_tag, fmt::format("manylinux is not defined for the architecture '{}'", arch));
    }
    target.os = Os::Linux;
    target.glibc = std::pair{x, y};
    target.musl.reset();
    target.arch = std::string(arch);
    return target;
  }
  static constexpr std::array<std::pair<std::string_view, std::uint32_t>, 3> kLegacy = {
      std::pair{std::string_view("manylinux1_"), 5u},
      std::pair{std::string_view("manylinux2010_"), 12u},
      std::pair{std::string_view("manylinux2014_"), 17u}};
  for (auto [prefix, minor] : kLegacy) {
    if (!starts(prefix)) continue;
    arch = t.substr(prefix.size());
    if (arch.empty()) return platform_error(platform_tag, "missing architecture");
    if (!manylinux_arch(arch)) {
      return platform_error(
          platform_tag, fmt::format("manylinux is not defined for the architecture '{}'", arch));
    }
    target.os = Os::Linux;
    target.glibc = std::pair{2u, minor};
    target.musl.reset();
    target.arch = std::string(arch);
    return target;
  }
  if (starts("musllinux_")) {
    if (!parse_version_arch(t.substr(10), x, y, arch)) {
      return platform_error(platform_tag, "expected musllinux_<musl major>_<minor>_<arch>");
    }
    target.os = Os::Linux;
    target.glibc.reset();
    target.musl = std::pair{x, y};
    target.arch = std::string(arch);
    return target;
  }
  if (starts("linux_")) {
    arch = t.substr(6);
    if (arch.empty()) return platform_error(platform_tag, "missing architecture");
    target.os = Os::Linux;
    target.glibc.reset();
    target.musl.reset();
    target.arch = std::string(arch);
    return target;
  }
  if (starts("macosx_")) {
    if (!parse_version_arch(t.substr(7), x, y, arch)) {
      return platform_error(platform_tag, "expected macosx_<major>_<minor>_<arch>");
    }
    if (x < 10) return platform_error(platform_tag, "macOS versions start at 10");
    target.os = Os::MacOs;
    target.glibc.reset();
    target.musl.reset();
    target.macos = {x, y};
    target.arch = std::string(arch);
    return target;
  }
  if (t == "win32" || t == "win_amd64" || t == "win_arm64") {
    target.os = Os::Windows;
    target.glibc.reset();
    target.musl.reset();
    target.arch = t == "win32" ? "x86" : std::string(t.substr(4));
    return target;
  }
  return platform_error(platform_tag, "not a Linux, macOS or Windows platform tag");
}

std::vector<std::string> platform_tags(const TagTarget& target) {
  std::vector<std::string> out;
  switch (target.os) {
    case Os::Linux:
      if (target.glibc) manylinux_tags(target.arch, *target.glibc, out);
      if (target.musl) {
        for (std::int64_t minor = target.musl->second; minor >= 0; --minor) {
          out.push_back(fmt::format("musllinux_{}_{}_{}", target.musl->first, minor, target.arch));
        }
      }
      out.push_back("linux_" + target.arch);
      break;
    case Os::MacOs: {
      // The machine name is arm64 on macOS; accept Linux's spelling too.
      std::string_view arch = target.arch == "aarch64" ? std::string_view("arm64") : target.arch;
      mac_platforms(target.macos, arch, out);
      break;
    }
    case Os::Windows:
      out.push_back(windows_platform(target.arch));
      break;
  }
  return out;
}

std::vector<Tag> supported_tags(const TagTarget& target) {
  const std::vector<std::string> platforms = platform_tags(target);
  const std::uint32_t major = target.python_major;
  const std::uint32_t minor = target.python_minor;
  const std::string interpreter = target.interpreter_tag();
  std::vector<Tag> out;
  auto emit_all = [&](const std::string& interp, const std::string& abi) {
    for (const auto& p : platforms)
      out.push_back(Tag{interp, abi, p});
  };

  std::string compat_interpreter;
  if (target.implementation == "cp") {
    // cpython_tags(): own ABI, stable ABI, none, then the stable ABI of older minors.
    emit_all(interpreter, target.abi_tag());
    const bool stable_applies = major > 3 || (major == 3 && minor >= 2);
    const std::string stable = target.free_threaded ? "abi3t" : "abi3";
    if (stable_applies) emit_all(interpreter, stable);
    emit_all(interpreter, "none");
    if (stable_applies) {
      for (std::int64_t m = static_cast<std::int64_t>(minor) - 1; m > 1; --m) {
        emit_all("cp" + version_nodot(major, static_cast<std::uint32_t>(m)), stable);
      }
    }
    compat_interpreter = interpreter;
  } else {
    // generic_tags(): the interpreter's ABI (if known), then none.
    std::string abi = target.abi_tag();
    if (!abi.empty()) emit_all(interpreter, abi);
    emit_all(interpreter, "none");
    if (target.implementation == "pp") compat_interpreter = "pp3";
  }

  // compatible_tags(): pyXY, pyX, pyX(Y-1)..pyX0 on each platform, then <interp>-none-any,
  // then the same py range on "any".
  std::vector<std::string> py_range;
  py_range.push_back("py" + version_nodot(major, minor));
  py_range.push_back(fmt::format("py{}", major));
  for (std::int64_t m = static_cast<std::int64_t>(minor) - 1; m >= 0; --m) {
    py_range.push_back("py" + version_nodot(major, static_cast<std::uint32_t>(m)));
  }
  for (const auto& v : py_range)
    emit_all(v, "none");
  if (!compat_interpreter.empty()) out.push_back(Tag{compat_interpreter, "none", "any"});
  for (const auto& v : py_range)
    out.push_back(Tag{v, "none", "any"});
  return out;
}

TagRanker::TagRanker(std::span<const Tag> supported_in_priority_order) {
  index_.reserve(supported_in_priority_order.size());
  for (std::size_t i = 0; i < supported_in_priority_order.size(); ++i) {
    std::string key = supported_in_priority_order[i].to_string();
    max_key_size_ = std::max(max_key_size_, key.size());
    index_.try_emplace(std::move(key), i);  // a duplicate keeps its first priority
  }
}

std::optional<std::size_t> TagRanker::rank(const Tag& tag) const {
  const std::size_t size = tag.interpreter.size() + tag.abi.size() + tag.platform.size() + 2;
  if (size > max_key_size_) return std::nullopt;
  // Build "interp-abi-plat" in a stack buffer and look it up by string_view (heterogeneous
  // lookup): ranking thousands of wheels allocates nothing.
  std::array<char, 256> small{};
  std::string large;
  char* buf = small.data();
  if (size > small.size()) {
    large.resize(size);
    buf = large.data();
  }
  char* p = buf;
  std::memcpy(p, tag.interpreter.data(), tag.interpreter.size());
  p += tag.interpreter.size();
  *p++ = '-';
  std::memcpy(p, tag.abi.data(), tag.abi.size());
  p += tag.abi.size();
  *p++ = '-';
  std::memcpy(p, tag.platform.data(), tag.platform.size());
  auto it = index_.find(std::string_view(buf, size));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> TagRanker::rank(std::span<const Tag> tags) const {
  std::optional<std::size_t> best;
  for (const auto& t : tags) {
    auto r = rank(t);
    if (r && (!best || *r < *best)) {
      best = r;
      if (*best == 0) break;
    }
  }
  return best;
}

}  // namespace gpulock::core

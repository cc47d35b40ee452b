// PEP 440 versions, following pypa/packaging 23.0 (packaging/version.py) where it and the PEP
// text differ. The packaging behaviours followed here (each marked "packaging:" below):
//  - Whitespace around a version is Python's `\s` (Unicode whitespace), not only ASCII.
//  - A separator after a pre/post/dev label with no number is accepted: `1.0a.` is 1.0a0,
//    `1.0.post-` is 1.0.post0 (VERSION_PATTERN allows `[-_\.]?` before an absent number).
//  - Numeric local segments are integers: `1.0+abc.007` normalizes to `1.0+abc.7`.
// Deliberate differences from packaging (documented in version.h):
//  - Numbers above 2^64-1 (epoch, release, pre/post/dev, numeric local segments) are rejected;
//    packaging uses Python's unbounded ints.
//  - Only ASCII letters match case-insensitively. Python's re.IGNORECASE also folds a few
//    non-ASCII letters onto ASCII (U+212A KELVIN SIGN matches `k`, U+017F `ſ` matches `s`,
//    U+0130/U+0131 match `i`), so packaging accepts e.g. "1.0+\u212a" as 1.0+k; gpulock rejects.
#include "gpulock/core/version.h"

#include <algorithm>

#include <fmt/format.h>

#include "text_util.h"
#include "version_internal.h"

namespace gpulock::core {

using detail::is_alnum;
using detail::is_digit;

// The member initializers already make "0": release {0}, nothing significant.
Version::Version() = default;

void Version::set_release(std::span<const std::uint64_t> release) {
  static constexpr std::uint64_t kZero[1] = {0};
  if (release.empty()) release = kZero;  // "0"
  release_size_ = static_cast<std::uint32_t>(release.size());
  if (release.size() <= kInlineRelease) {
    release_heap_.clear();
    std::fill(std::begin(release_inline_), std::end(release_inline_), 0);
    std::copy(release.begin(), release.end(), release_inline_);
  } else {
    release_heap_.assign(release.begin(), release.end());
  }
  std::size_t sig = release.size();
  while (sig > 0 && release[sig - 1] == 0)
    --sig;
  release_significant_ = static_cast<std::uint32_t>(sig);
}

Version Version::from_release(std::span<const std::uint64_t> release) {
  Version v;
  v.set_release(release);
  return v;
}

std::uint64_t Version::release_at(std::size_t i) const noexcept {
  return i < release_size_ ? release_data()[i] : 0;
}

Version Version::public_version() const {
  Version v = *this;
  v.local_.clear();
  return v;
}

Version Version::base_version() const {
  Version v;
  v.epoch_ = epoch_;
  v.set_release(release());
  return v;
}

namespace {

void append_local(std::string& out, std::span<const Version::LocalSegment> local) {
  bool first = true;
  for (const auto& seg : local) {
    if (!first) out.push_back('.');
    first = false;
    if (const auto* n = std::get_if<std::uint64_t>(&seg)) {
      detail::append_u64(out, *n);
    } else {
      out += std::get<std::string>(seg);
    }
  }
}

}  // namespace

std::string Version::local_string() const {
  std::string out;
  append_local(out, local_);
  return out;
}

std::string Version::to_string() const {
  std::string out;
  out.reserve(16);
  if (epoch_ != 0) {
    detail::append_u64(out, epoch_);
    out.push_back('!');
  }
  const std::uint64_t* r = release_data();
  for (std::uint32_t i = 0; i < release_size_; ++i) {
    if (i != 0) out.push_back('.');
    detail::append_u64(out, r[i]);
  }
  if (pre_) {
    switch (pre_->kind) {
      case Pre::Kind::Alpha:
        out.push_back('a');
        break;
      case Pre::Kind::Beta:
        out.push_back('b');
        break;
      case Pre::Kind::Rc:
        out += "rc";
        break;
    }
    detail::append_u64(out, pre_->number);
  }
  if (post_) {
    out += ".post";
    detail::append_u64(out, *post_);
  }
  if (dev_) {
    out += ".dev";
    detail::append_u64(out, *dev_);
  }
  if (!local_.empty()) {
    out.push_back('+');
    append_local(out, local_);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Ordering: packaging's _cmpkey. Release with trailing zeros dropped; pre = -inf for a bare dev
// release (1.0.dev0 < 1.0a0), +inf when absent; post = -inf when absent; dev = +inf when
// absent; local = -inf when absent, else segments where a number sorts above any string.

namespace {

template <class T>
int cmp3(const T& a, const T& b) noexcept {
  return a < b ? -1 : (b < a ? 1 : 0);
}

struct Rank {
  std::uint8_t rank;
  std::uint64_t number;
  friend bool operator<(const Rank& x, const Rank& y) noexcept {
    return x.rank != y.rank ? x.rank < y.rank : x.number < y.number;
  }
};

Rank pre_rank(const Version& v) noexcept {
  if (!v.pre() && !v.post() && v.dev()) return {0, 0};
  if (!v.pre()) return {4, 0};
  return {static_cast<std::uint8_t>(1 + static_cast<std::uint8_t>(v.pre()->kind)), v.pre()->number};
}
Rank post_rank(const Version& v) noexcept {
  return v.post() ? Rank{1, *v.post()} : Rank{0, 0};
}
Rank dev_rank(const Version& v) noexcept {
  return v.dev() ? Rank{0, *v.dev()} : Rank{1, 0};
}

int compare_local(std::span<const Version::LocalSegment> a,
                  std::span<const Version::LocalSegment> b) noexcept {
  if (a.empty() || b.empty()) return cmp3(!a.empty(), !b.empty());
  std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto* an = std::get_if<std::uint64_t>(&a[i]);
    const auto* bn = std::get_if<std::uint64_t>(&b[i]);
    int c = 0;
    if (an && bn) {
      c = cmp3(*an, *bn);
    } else if (an || bn) {
      c = an ? 1 : -1;  // a number sorts above an alphanumeric segment
    } else {
      c = std::get<std::string>(a[i]).compare(std::get<std::string>(b[i]));
      c = c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (c != 0) return c;
  }
  return cmp3(a.size(), b.size());
}

}  // namespace

int VersionAccess::compare(const Version& a, const Version& b, bool ignore_local_a) noexcept {
  if (int c = cmp3(a.epoch_, b.epoch_)) return c;
  const std::uint64_t* ra = a.release_data();
  const std::uint64_t* rb = b.release_data();
  std::uint32_t n = std::min(a.release_significant_, b.release_significant_);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (ra[i] != rb[i]) return ra[i] < rb[i] ? -1 : 1;
  }
  if (int c = cmp3(a.release_significant_, b.release_significant_)) return c;
  if (int c = cmp3(pre_rank(a), pre_rank(b))) return c;
  if (int c = cmp3(post_rank(a), post_rank(b))) return c;
  if (int c = cmp3(dev_rank(a), dev_rank(b))) return c;
  if (ignore_local_a) return b.local_.empty() ? 0 : -1;
  return compare_local(a.local_, b.local_);
}

bool VersionAccess::base_equal(const Version& a, const Version& b) noexcept {
  if (a.epoch_ != b.epoch_ || a.release_significant_ != b.release_significant_) return false;
  return std::equal(a.release_data(), a.release_data() + a.release_significant_, b.release_data());
}

std::strong_ordering operator<=>(const Version& a, const Version& b) noexcept {
  int c = VersionAccess::compare(a, b);
  return c < 0 ? std::strong_ordering::less
               : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

bool operator==(const Version& a, const Version& b) noexcept {
  return a.epoch_ == b.epoch_ && a.release_significant_ == b.release_significant_ &&
         a.pre_ == b.pre_ && a.post_ == b.post_ && a.dev_ == b.dev_ &&
         std::equal(a.release_data(), a.release_data() + a.release_significant_,
                    b.release_data()) &&
         compare_local(a.local_, b.local_) == 0;
}

std::size_t Version::hash() const noexcept {
  // Only what takes part in ==: the significant release, not its trailing zeros.
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::uint64_t x) noexcept {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  mix(epoch_);
  const std::uint64_t* r = release_data();
  for (std::uint32_t i = 0; i < release_significant_; ++i)
    mix(r[i]);
  mix(release_significant_);
  mix(pre_ ? (static_cast<std::uint64_t>(pre_->kind) + 1) : 0);
  mix(pre_ ? pre_->number : 0);
  mix(post_ ? *post_ + 1 : 0);
  mix(post_ ? 1 : 0);
  mix(dev_ ? *dev_ + 1 : 0);
  mix(dev_ ? 1 : 0);
  for (const auto& seg : local_) {
    if (const auto* n = std::get_if<std::uint64_t>(&seg)) {
      mix(*n);
      mix(1);
    } else {
      mix(std::hash<std::string>{}(std::get<std::string>(seg)));
      mix(2);
    }
  }
  return static_cast<std::size_t>(h);
}

// ---------------------------------------------------------------------------------------------
// Parsing.

namespace detail {
namespace {

bool is_sep(char c) noexcept {
  return c == '-' || c == '_' || c == '.';
}

struct Scanner {
  std::string_view s;
  std::size_t i;
  VersionScan result;

  [[nodiscard]] bool at_end() const noexcept { return i >= s.size(); }
  [[nodiscard]] char peek(std::size_t k = 0) const noexcept {
    return i + k < s.size() ? s[i + k] : '\0';
  }

  void fail(std::size_t pos, std::string what) {
    result.ok = false;
    result.error_pos = pos;
    result.error = std::move(what);
  }

  // Digits at i (at least one required by the caller's check); false on overflow.
  bool number(std::uint64_t& out) {
    std::size_t start = i;
    while (!at_end() && is_digit(s[i]))
      ++i;
    auto v = parse_u64(s.substr(start, i - start));
    if (!v) {
      fail(start, fmt::format("number {} is larger than 2^64-1",
                              quote_for_message(s.substr(start, i - start), 30)));
      return false;
    }
    out = *v;
    return true;
  }

  // Optional digits (after a label): implicit 0.
  bool optional_number(std::uint64_t& out) {
    out = 0;
    if (at_end() || !is_digit(s[i])) return true;
    return number(out);
  }
};

// Pre-release label at position p (case-insensitive), longest spelling first.
std::size_t pre_label(std::string_view s, std::size_t p, Version::Pre::Kind& kind) noexcept {
  struct Spelling {
    std::string_view text;
    Version::Pre::Kind kind;
  };
  static constexpr Spelling kSpellings[] = {
      {"alpha", Version::Pre::Kind::Alpha}, {"beta", Version::Pre::Kind::Beta},
      {"preview", Version::Pre::Kind::Rc},  {"pre", Version::Pre::Kind::Rc},
      {"rc", Version::Pre::Kind::Rc},       {"a", Version::Pre::Kind::Alpha},
      {"b", Version::Pre::Kind::Beta},      {"c", Version::Pre::Kind::Rc},
  };
  for (const auto& sp : kSpellings) {
    if (starts_with_nocase(s, p, sp.text)) {
      kind = sp.kind;
      return sp.text.size();
    }
  }
  return 0;
}

std::size_t post_label(std::string_view s, std::size_t p) noexcept {
  for (std::string_view w :
       {std::string_view("post"), std::string_view("rev"), std::string_view("r")}) {
    if (starts_with_nocase(s, p, w)) return w.size();
  }
  return 0;
}

// The local label's segments at sc.i, just past the '+': [a-z0-9]+ ([-_.][a-z0-9]+)*. False
// (sc.result holds the error) when a numeric segment is larger than 2^64-1.
bool scan_local_segments(Scanner& sc, std::string_view text, Version& out) {
  auto& local = VersionAccess::local(out);
  while (true) {
    std::size_t start = sc.i;
    bool all_digits = true;
    while (!sc.at_end() && is_alnum(text[sc.i])) {
      all_digits = all_digits && is_digit(text[sc.i]);
      ++sc.i;
    }
    std::string_view seg = text.substr(start, sc.i - start);
    if (all_digits) {
      auto v = parse_u64(seg);
      if (!v) {
        sc.fail(start, fmt::format("local version segment {} is larger than 2^64-1",
                                   quote_for_message(seg, 30)));
        return false;
      }
      local.emplace_back(*v);
    } else {
      std::string lower(seg);
      for (char& c : lower)
        c = to_lower(c);
      local.emplace_back(std::move(lower));
    }
    if (is_sep(sc.peek()) && is_alnum(sc.peek(1))) {
      ++sc.i;
    } else {
      break;
    }
  }
  return true;
}

}  // namespace

VersionScan scan_version(std::string_view text, std::size_t pos, const VersionScanOptions& options,
                         Version& out) {
  Scanner sc{text, pos, {}};
  if (sc.peek() == 'v' || sc.peek() == 'V') ++sc.i;

  // Epoch and release.
  std::uint64_t inline_buf[8];
  std::vector<std::uint64_t> heap;
  std::size_t count = 0;
  auto push = [&](std::uint64_t x) {
    if (count < std::size(inline_buf)) {
      inline_buf[count] = x;
    } else {
      if (heap.empty()) heap.assign(inline_buf, inline_buf + count);
      heap.push_back(x);
    }
    ++count;
  };

  if (!is_digit(sc.peek())) {
    sc.fail(sc.i,
            sc.at_end() ? "expected a release number, found the end" : "expected a release number");
    return sc.result;
  }
  std::uint64_t n = 0;
  if (!sc.number(n)) return sc.result;
  if (sc.peek() == '!' && is_digit(sc.peek(1))) {
    VersionAccess::set_epoch(out, n);
    ++sc.i;
    if (!sc.number(n)) return sc.result;
  }
  push(n);
  while (sc.peek() == '.' && is_digit(sc.peek(1))) {
    ++sc.i;
    if (!sc.number(n)) return sc.result;
    push(n);
  }
  if (count < options.min_release) {
    sc.fail(sc.i, "'~=' needs a version with at least two release numbers");
    return sc.result;
  }
  VersionAccess::set_release(out, heap.empty() ? std::span<const std::uint64_t>(inline_buf, count)
                                               : std::span<const std::uint64_t>(heap));

  if (options.allow_wildcard && sc.peek() == '.' && sc.peek(1) == '*') {
    sc.i += 2;
    sc.result.ok = true;
    sc.result.wildcard = true;
    sc.result.end = sc.i;
    return sc.result;
  }

  // Pre-release: [-_.]? (a|b|c|rc|alpha|beta|pre|preview) [-_.]? N?
  {
    std::size_t p = sc.i;
    if (is_sep(sc.peek())) ++p;
    Version::Pre::Kind kind{};
    if (std::size_t len = pre_label(text, p, kind)) {
      sc.i = p + len;
      if (is_sep(sc.peek())) ++sc.i;  // packaging: a separator with no number after it is fine
      std::uint64_t num = 0;
      if (!sc.optional_number(num)) return sc.result;
      VersionAccess::set_pre(out, Version::Pre{kind, num});
    }
  }
  // Post-release: -N | [-_.]? (post|rev|r) [-_.]? N?
  if (sc.peek() == '-' && is_digit(sc.peek(1))) {
    ++sc.i;
    std::uint64_t num = 0;
    if (!sc.number(num)) return sc.result;
    VersionAccess::set_post(out, num);  // implicit post release: 1.0-1 is 1.0.post1
  } else {
    std::size_t p = sc.i;
    if (is_sep(sc.peek())) ++p;
    if (std::size_t len = post_label(text, p)) {
      sc.i = p + len;
      if (is_sep(sc.peek())) ++sc.i;
      std::uint64_t num = 0;
      if (!sc.optional_number(num)) return sc.result;
      VersionAccess::set_post(out, num);
    }
  }
  // Development release: [-_.]? dev [-_.]? N?
  {
    std::size_t p = sc.i;
    if (is_sep(sc.peek())) ++p;
    if (starts_with_nocase(text, p, "dev")) {
      sc.i = p + 3;
      if (is_sep(sc.peek())) ++sc.i;
      std::uint64_t num = 0;
      if (!sc.optional_number(num)) return sc.result;
      VersionAccess::set_dev(out, num);
    }
  }
  // Local label: + [a-z0-9]+ ([-_.][a-z0-9]+)*
  if (options.allow_local && sc.peek() == '+' && is_alnum(sc.peek(1))) {
    ++sc.i;
    if (!scan_local_segments(sc, text, out)) return sc.result;
  }
  sc.result.ok = true;
  sc.result.end = sc.i;
  return sc.result;
}

}  // namespace detail

Result<Version> Version::parse(std::string_view text) {
  if (text.empty()) return fail(ErrorCode::InvalidVersion, "empty version", 1);
  std::size_t start = detail::skip_py_space(text, 0);
  Version v;
  detail::VersionScan scan = detail::scan_version(text, start, {}, v);
  if (!scan.ok) {
    return fail(ErrorCode::InvalidVersion,
                fmt::format("invalid version {}: {}", quote_for_message(text), scan.error),
                scan.error_pos + 1);
  }
  std::size_t end = detail::skip_py_space(text, scan.end);
  if (end == scan.end && end < text.size() && text[end] == '+') {
    return fail(ErrorCode::InvalidVersion,
                fmt::format("invalid version {}: expected a local version label after '+'",
                            quote_for_message(text)),
                end + 2);
  }
  if (end != text.size()) {
    return fail(ErrorCode::InvalidVersion,
                fmt::format("invalid version {}: unexpected {}", quote_for_message(text),
                            quote_for_message(text.substr(end, 1))),
                end + 1);
  }
  return v;
}

}  // namespace gpulock::core

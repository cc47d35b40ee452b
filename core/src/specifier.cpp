// PEP 440 version specifiers with pypa/packaging 23.0 semantics (packaging/specifiers.py).
//
// packaging behaviours followed where the PEP text says otherwise or says nothing:
//  - Parsing is packaging's regex: whitespace (Python's \s) is allowed between the operator and
//    the version; `===` takes any run of characters other than whitespace, ';' and ')', even an
//    empty one ("===" is a valid specifier).
//  - `str(Specifier)` keeps the operand as written (only trimmed): `>= 1.0.0` -> ">=1.0.0",
//    `==V1.0` -> "==V1.0"; SpecifierSet sorts the clause strings.
//  - Prefix matching (`==X.*`, and the `==` half of `~=`) compares packaging's token lists:
//    with an epoch, the first token is "E!N" and is not a release number, so `==0.*` matches
//    `1!1.0` and `==1!1.0.*` does not match `1!1.0` (only `1!1.0.x`). See prefix_match().
//  - `~=V` takes its prefix from the operand text the way packaging does: split on '.', stop at
//    the first item starting with dev/a/b/rc/post (case-sensitive), drop the last item. So
//    `~=1.4.5.c1`, `~=1.4.5.pre1`, `~=1.4.5.rev1` and `~=1.4.5.RC1` use the prefix 1.4.5.*
//    (not 1.4.*); `~=1.4.5c1` uses 1.4.5.* too (the "c" is split off but not a suffix).
//  - `>V` excludes local versions of V's base release even when V is a pre-release:
//    `>1.0a1` does not match `1.0+local` (packaging compares base versions).
//  - `===` compares the candidate's normalized string with the operand, case-insensitively
//    (`===1.0` matches `v1.0` but not `1.0.0`).
//  - The empty SpecifierSet admits no pre-releases by default (contains()).
// Deliberate differences:
//  - `===X` with X not a version and no explicit pre-release policy: packaging 23.0 raises
//    InvalidVersion (Specifier.prereleases parses X); gpulock treats X as naming no pre-release.
//  - SpecifierSet.filter() with no policy: packaging 23.0 never falls back to pre-releases for a
//    non-empty set (it passes prereleases=False down); gpulock does what PEP 440 and
//    specifier.h describe: pre-releases are returned when nothing else matches.
//  - Numbers above 2^64-1 are rejected (see version.cpp).
#include "gpulock/core/specifier.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "specifier_internal.h"
#include "text_util.h"
#include "version_internal.h"

namespace gpulock::core {

std::string_view operator_string(Operator op) noexcept {
  switch (op) {
    case Operator::Equal:
      return "==";
    case Operator::NotEqual:
      return "!=";
    case Operator::LessEqual:
      return "<=";
    case Operator::GreaterEqual:
      return ">=";
    case Operator::Less:
      return "<";
    case Operator::Greater:
      return ">";
    case Operator::Compatible:
      return "~=";
    case Operator::ArbitraryEqual:
      return "===";
  }
  return "==";
}

namespace {

struct OpMatch {
  Operator op;
  std::size_t len;
};

std::optional<OpMatch> match_operator(std::string_view s, std::size_t i) noexcept {
  auto at = [&](std::size_t k) { return i + k < s.size() ? s[i + k] : '\0'; };
  if (at(0) == '=' && at(1) == '=' && at(2) == '=') return OpMatch{Operator::ArbitraryEqual, 3};
  char a = at(0);
  if (at(1) == '=') {
    switch (a) {
      case '=':
        return OpMatch{Operator::Equal, 2};
      case '!':
        return OpMatch{Operator::NotEqual, 2};
      case '<':
        return OpMatch{Operator::LessEqual, 2};
      case '>':
        return OpMatch{Operator::GreaterEqual, 2};
      case '~':
        return OpMatch{Operator::Compatible, 2};
      default:
        break;
    }
  }
  if (a == '<') return OpMatch{Operator::Less, 1};
  if (a == '>') return OpMatch{Operator::Greater, 1};
  return std::nullopt;
}

struct SpecScan {
  bool ok = false;
  std::size_t end = 0;
  std::size_t error_pos = 0;
  std::string error;
  Operator op = Operator::Equal;
  std::size_t operand_begin = 0;
  Version version;
  bool wildcard = false;
  bool operand_is_version = true;
};

bool is_arbitrary_char(std::string_view s, std::size_t i) noexcept {
  return s[i] != ';' && s[i] != ')' && detail::py_space_at(s, i) == 0;
}

// Operator, \s*, operand at s[i] (no leading whitespace), greedy, unanchored.
SpecScan scan_specifier(std::string_view s, std::size_t i) {
  SpecScan r;
  auto op = match_operator(s, i);
  if (!op) {
    r.error_pos = i;
    r.error = "expected an operator (==, !=, <=, >=, <, >, ~=, ===)";
    return r;
  }
  r.op = op->op;
  std::size_t j = detail::skip_py_space(s, i + op->len);
  r.operand_begin = j;
  if (r.op == Operator::ArbitraryEqual) {
    std::size_t e = j;
    while (e < s.size() && is_arbitrary_char(s, e))
      ++e;
    r.ok = true;
    r.end = e;
    auto parsed = Version::parse(s.substr(j, e - j));
    r.operand_is_version = parsed.has_value();
    if (parsed) r.version = std::move(*parsed);
    return r;
  }
  detail::VersionScanOptions options;
  options.allow_local = r.op == Operator::Equal || r.op == Operator::NotEqual;
  options.allow_wildcard = options.allow_local;
  options.min_release = r.op == Operator::Compatible ? 2 : 1;
  detail::VersionScan scan = detail::scan_version(s, j, options, r.version);
  if (!scan.ok) {
    r.error_pos = scan.error_pos;
    r.error = scan.error;
    if (j >= s.size()) {
      r.error = fmt::format("expected a version after '{}'", operator_string(r.op));
    }
    return r;
  }
  r.ok = true;
  r.end = scan.end;
  r.wildcard = scan.wildcard;
  return r;
}

// packaging's _version_split + takewhile(_is_not_suffix) + [:-1] on a `~=` operand, joined by
// '.': the text of the prefix that `~=` turns into `==prefix.*`.
std::string compatible_prefix_text(std::string_view operand) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = operand.find('.', start);
    std::string_view item =
        operand.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    // ^([0-9]+)((?:a|b|c|rc)[0-9]+)$ splits "5rc1" into "5", "rc1".
    std::size_t d = 0;
    while (d < item.size() && detail::is_digit(item[d]))
      ++d;
    bool split = false;
    if (d > 0 && d < item.size()) {
      std::size_t l = d;
      if (item.substr(l, 2) == "rc") {
        l += 2;
      } else if (item[l] == 'a' || item[l] == 'b' || item[l] == 'c') {
        l += 1;
      } else {
        l = item.size() + 1;
      }
      if (l < item.size()) {
        std::size_t k = l;
        while (k < item.size() && detail::is_digit(item[k]))
          ++k;
        split = k == item.size();
      }
    }
    if (split) {
      items.push_back(item.substr(0, d));
      items.push_back(item.substr(d));
    } else {
      items.push_back(item);
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  std::size_t keep = 0;
  for (std::string_view item : items) {
    bool suffix = false;
    for (std::string_view p : {"dev", "a", "b", "rc", "post"}) {
      if (item.substr(0, p.size()) == p) suffix = true;
    }
    if (suffix) break;
    ++keep;
  }
  if (keep > 0) --keep;
  std::string out;
  for (std::size_t k = 0; k < keep; ++k) {
    if (k) out.push_back('.');
    out += items[k];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// packaging's prefix match (Specifier._compare_equal with a trailing ".*"):
//   split(canonicalize_version(candidate.public))       -- release trailing ".0"s stripped
//   vs split(canonicalize_version(prefix, strip=False)),
// where split() cuts at '.' and splits "5rc1" into "5","rc1"; the candidate's leading all-digit
// items are padded with "0" items up to the prefix's count of leading all-digit items, then cut
// to the prefix's length and compared. An epoch makes the first item "E!N", which is not all
// digits. Items are modelled as tokens instead of strings.

struct Token {
  enum Kind : std::uint8_t { Num, EpochNum, EpochNumPre, Pre, Post, Dev } kind = Num;
  std::uint64_t a = 0;  // the number; the epoch for EpochNum*
  std::uint64_t b = 0;  // EpochNum*: the release number
  std::uint64_t c = 0;  // EpochNumPre: the pre-release number
  std::uint8_t pre_kind = 0;
  friend bool operator==(const Token&, const Token&) = default;
};

// Writes at most `max` tokens of `v` (release cut to `rel_len` components, `pad` zero tokens
// after the leading all-digit items) and returns how many were written.
std::size_t write_tokens(const Version& v, std::size_t rel_len, std::size_t pad, Token* out,
                         std::size_t max) {
  std::size_t n = 0;
  auto put = [&](const Token& t) {
    if (n < max) out[n++] = t;
  };
  auto rel = v.release();
  const auto& pre = v.pre();
  bool merged = false;
  if (v.epoch() == 0) {
    for (std::size_t i = 0; i < rel_len && n < max; ++i)
      put({Token::Num, rel[i], 0, 0, 0});
    for (std::size_t i = 0; i < pad && n < max; ++i)
      put({Token::Num, 0, 0, 0, 0});
  } else {
    // "E!N" is not all digits: the leading all-digit part is empty, so the padding comes first.
    for (std::size_t i = 0; i < pad && n < max; ++i)
      put({Token::Num, 0, 0, 0, 0});
    if (rel_len == 1 && pre) {
      merged = true;  // "E!Na1" does not match ^([0-9]+)((?:a|b|c|rc)[0-9]+)$: one item
      put({Token::EpochNumPre, v.epoch(), rel[0], pre->number,
           static_cast<std::uint8_t>(pre->kind)});
    } else {
      put({Token::EpochNum, v.epoch(), rel[0], 0, 0});
    }
    for (std::size_t i = 1; i < rel_len && n < max; ++i)
      put({Token::Num, rel[i], 0, 0, 0});
  }
  if (pre && !merged) put({Token::Pre, pre->number, 0, 0, static_cast<std::uint8_t>(pre->kind)});
  if (v.post()) put({Token::Post, *v.post(), 0, 0, 0});
  if (v.dev()) put({Token::Dev, *v.dev(), 0, 0, 0});
  return n;
}

}  // namespace

struct SpecifierAccess {
  // `describe` = false skips building the message (for callers that only test validity).
  static Result<Specifier> parse_part(std::string_view text, std::size_t begin, std::size_t stop,
                                      bool describe = true);

  static bool prefix_match(const Version& candidate, const Version& prefix) {
    // Prefix side: release not stripped; its leading all-digit items are its release numbers
    // unless it has an epoch.
    std::size_t m = prefix.release().size();
    std::size_t spec_digits = prefix.epoch() == 0 ? m : 0;
    std::size_t spec_len =
        m + (prefix.pre() ? 1 : 0) + (prefix.post() ? 1 : 0) + (prefix.dev() ? 1 : 0);
    if (prefix.epoch() != 0 && m == 1 && prefix.pre()) --spec_len;  // merged "E!Na1"
    std::array<Token, 12> sbuf_small{};
    std::array<Token, 12> cbuf_small{};
    std::vector<Token> sbuf_big, cbuf_big;
    Token* sbuf = sbuf_small.data();
    Token* cbuf = cbuf_small.data();
    if (spec_len > sbuf_small.size()) {
      sbuf_big.resize(spec_len);
      cbuf_big.resize(spec_len);
      sbuf = sbuf_big.data();
      cbuf = cbuf_big.data();
    }
    std::size_t ns = write_tokens(prefix, m, 0, sbuf, spec_len);
    // Candidate side: the public version, release stripped of trailing zeros (one kept).
    std::size_t l = std::max<std::size_t>(1, VersionAccess::significant(candidate));
    std::size_t cand_digits = candidate.epoch() == 0 ? l : 0;
    std::size_t pad = spec_digits > cand_digits ? spec_digits - cand_digits : 0;
    std::size_t nc = write_tokens(candidate, l, pad, cbuf, spec_len);
    return nc == ns && std::equal(cbuf, cbuf + nc, sbuf);
  }

  static bool matches(const Specifier& s, const Version& v) {
    const Version& spec = s.version_;
    switch (s.op_) {
      case Operator::Equal:
      case Operator::NotEqual: {
        bool eq;
        if (s.wildcard_) {
          eq = prefix_match(v, s.prefix_);
        } else {
          // Without a local label in the specifier, the candidate's label is ignored.
          eq = VersionAccess::compare(v, spec, !spec.has_local()) == 0;
        }
        return s.op_ == Operator::Equal ? eq : !eq;
      }
      case Operator::LessEqual:
        return VersionAccess::compare(v, spec, true) <= 0;
      case Operator::GreaterEqual:
        return VersionAccess::compare(v, spec, true) >= 0;
      case Operator::Less: {
        if (!(VersionAccess::compare(v, spec) < 0)) return false;
        // <3.1 does not match 3.1.dev0 (unless the specifier is itself a pre-release).
        if (!spec.is_prerelease() && v.is_prerelease() && VersionAccess::base_equal(v, spec)) {
          return false;
        }
        return true;
      }
      case Operator::Greater: {
        if (!(VersionAccess::compare(v, spec) > 0)) return false;
        if (!spec.is_postrelease() && v.is_postrelease() && VersionAccess::base_equal(v, spec)) {
          return false;
        }
        if (v.has_local() && VersionAccess::base_equal(v, spec)) return false;
        return true;
      }
      case Operator::Compatible:
        return VersionAccess::compare(v, spec, true) >= 0 && prefix_match(v, s.prefix_);
      case Operator::ArbitraryEqual: {
        // str(prospective).lower() == str(spec).lower(); the normalized form is lowercase
        // ASCII. Python's lower() maps U+212A KELVIN SIGN to 'k', the only non-ASCII
        // character whose lowercase is ASCII.
        std::string cand = v.to_string();
        const std::string& op = s.operand_;
        std::size_t i = 0, k = 0;
        while (i < op.size() && k < cand.size()) {
          if (op.compare(i, 3, "\xe2\x84\xaa") == 0) {
            if (cand[k] != 'k') return false;
            i += 3;
          } else {
            if (detail::to_lower(op[i]) != cand[k]) return false;
            ++i;
          }
          ++k;
        }
        return i == op.size() && k == cand.size();
      }
    }
    return false;
  }
};

Result<Specifier> SpecifierAccess::parse_part(std::string_view text, std::size_t begin,
                                              std::size_t stop, bool describe) {
  // `text` is the whole input (quoted in messages, columns relative to it); the specifier is
  // text[begin, stop), surrounding whitespace allowed.
  std::string_view part = text.substr(0, stop);
  std::size_t start = detail::skip_py_space(part, begin);
  SpecScan scan = scan_specifier(part, start);
  auto error = [&](std::size_t pos, const std::string& what) {
    if (!describe) return fail(ErrorCode::InvalidSpecifier, std::string(), pos + 1);
    return fail(ErrorCode::InvalidSpecifier,
                fmt::format("invalid version specifier {}: {}", quote_for_message(text), what),
                pos + 1);
  };
  if (!scan.ok) return error(scan.error_pos, scan.error);
  std::size_t end = detail::skip_py_space(part, scan.end);
  if (end != part.size()) {
    std::string_view op = operator_string(scan.op);
    char c = part[scan.end];
    bool ordered = scan.op != Operator::Equal && scan.op != Operator::NotEqual;
    if (end == scan.end && c == '+' && ordered && scan.op != Operator::ArbitraryEqual) {
      return error(end, fmt::format("a local version label is not allowed with '{}'", op));
    }
    if (end == scan.end && c == '.' && end + 1 < part.size() && part[end + 1] == '*') {
      if (ordered) return error(end, fmt::format("a '.*' wildcard is not allowed with '{}'", op));
      return error(end, "'.*' must directly follow the release numbers");
    }
    return error(end, fmt::format("unexpected {}", quote_for_message(part.substr(end, 1))));
  }
  Specifier s;
  s.op_ = scan.op;
  s.version_ = std::move(scan.version);
  s.wildcard_ = scan.wildcard;
  s.operand_is_version_ = scan.operand_is_version;
  s.operand_ = std::string(part.substr(scan.operand_begin, scan.end - scan.operand_begin));
  if (s.wildcard_) {
    s.prefix_ = s.version_;
  } else if (s.op_ == Operator::Compatible) {
    auto prefix = Version::parse(compatible_prefix_text(s.operand_));
    if (!prefix) {  // cannot happen for an operand the grammar accepted
      return error(scan.operand_begin, "cannot derive the prefix of the '~=' operand");
    }
    s.prefix_ = std::move(*prefix);
  }
  return s;
}

Result<Specifier> Specifier::parse(std::string_view text) {
  return SpecifierAccess::parse_part(text, 0, text.size());
}

bool Specifier::names_prerelease() const noexcept {
  switch (op_) {
    case Operator::Equal:
    case Operator::GreaterEqual:
    case Operator::LessEqual:
    case Operator::Compatible:
    case Operator::ArbitraryEqual:
      return !wildcard_ && operand_is_version_ && version_.is_prerelease();
    default:
      return false;
  }
}

bool Specifier::contains(const Version& v, std::optional<bool> prereleases) const {
  bool allow = prereleases.has_value() ? *prereleases : names_prerelease();
  if (v.is_prerelease() && !allow) return false;
  return SpecifierAccess::matches(*this, v);
}

std::string Specifier::to_string() const {
  std::string out(operator_string(op_));
  out += operand_;
  return out;
}

bool operator==(const Specifier& a, const Specifier& b) noexcept {
  // packaging's _canonical_spec: (operator, canonicalize_version(operand, strip_trailing_zero=
  // operator != "~=")); canonicalize_version returns text that is not a version unchanged.
  if (a.op_ != b.op_) return false;
  if (a.wildcard_ || b.wildcard_) return a.wildcard_ && b.wildcard_ && a.operand_ == b.operand_;
  if (a.operand_is_version_ != b.operand_is_version_) return false;
  if (!a.operand_is_version_) return a.operand_ == b.operand_;
  if (a.op_ == Operator::Compatible) {
    return a.version_ == b.version_ && a.version_.release().size() == b.version_.release().size();
  }
  return a.version_ == b.version_;
}

namespace detail {

std::optional<Specifier> try_parse_specifier(std::string_view text) {
  auto r = SpecifierAccess::parse_part(text, 0, text.size(), false);
  if (!r) return std::nullopt;
  return std::move(*r);
}

std::size_t match_specifier_token(std::string_view s, std::size_t pos) {
  SpecScan scan = scan_specifier(s, pos);
  return scan.ok ? scan.end : std::string_view::npos;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------

namespace {

void add_unique(std::vector<Specifier>& specs, Specifier s) {
  for (const auto& existing : specs) {
    if (existing == s) return;  // a set keeps the first of equal elements
  }
  specs.push_back(std::move(s));
}

}  // namespace

SpecifierSet::SpecifierSet(std::vector<Specifier> specs) {
  for (auto& s : specs)
    add_unique(specs_, std::move(s));
}

Result<SpecifierSet> SpecifierSet::parse(std::string_view text) {
  SpecifierSet set;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::size_t stop = comma == std::string_view::npos ? text.size() : comma;
    std::size_t b = detail::skip_py_space(text, start);
    if (b > stop) b = stop;
    std::size_t e = detail::rstrip_py_space(text, b, stop);
    if (e > b) {
      auto spec = SpecifierAccess::parse_part(text, b, e);
      if (!spec) return std::unexpected(std::move(spec.error()));
      add_unique(set.specs_, std::move(*spec));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return set;
}

bool SpecifierSet::names_prerelease() const noexcept {
  return std::any_of(specs_.begin(), specs_.end(),
                     [](const Specifier& s) { return s.names_prerelease(); });
}

bool SpecifierSet::contains(const Version& v, std::optional<bool> prereleases) const {
  // packaging: with no policy, an empty set has prereleases=None, which rejects pre-releases.
  bool allow = prereleases.has_value() ? *prereleases : (!specs_.empty() && names_prerelease());
  if (!allow && v.is_prerelease()) return false;
  for (const auto& s : specs_) {
    if (!s.contains(v, allow)) return false;
  }
  return true;
}

std::vector<Version> SpecifierSet::filter(std::span<const Version> versions,
                                          std::optional<bool> prereleases) const {
  std::vector<Version> out;
  for (const auto& v : versions) {
    if (contains(v, prereleases)) out.push_back(v);
  }
  if (out.empty() && !prereleases.has_value()) {
    // PEP 440: pre-releases are accepted when they are the only versions that match.
    for (const auto& v : versions) {
      if (contains(v, true)) out.push_back(v);
    }
  }
  return out;
}

SpecifierSet SpecifierSet::operator&(const SpecifierSet& other) const {
  SpecifierSet out = *this;
  for (const auto& s : other.specs_)
    add_unique(out.specs_, s);
  return out;
}

std::string SpecifierSet::to_string() const {
  std::vector<std::string> parts;
  parts.reserve(specs_.size());
  for (const auto& s : specs_)
    parts.push_back(s.to_string());
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out.push_back(',');
    out += parts[i];
  }
  return out;
}

bool operator==(const SpecifierSet& a, const SpecifierSet& b) noexcept {
  if (a.specs_.size() != b.specs_.size()) return false;
  for (const auto& s : a.specs_) {
    if (std::find(b.specs_.begin(), b.specs_.end(), s) == b.specs_.end()) return false;
  }
  return true;
}

}  // namespace gpulock::core

// PEP 440 version specifiers with pypa/packaging 26.3 semantics (packaging/specifiers.py and
// _ranges.py, as vendored in pip 26.3).
//
// packaging behaviours followed where the PEP text says otherwise or says nothing:
//  - Parsing is packaging's regex: whitespace (Python's \s) is allowed between the operator and
//    the version; `===` takes any run of characters other than whitespace, ';' and ')', even an
//    empty one ("===" is a valid specifier).
//  - `str(Specifier)` keeps the operand as written (only trimmed): `>= 1.0.0` -> ">=1.0.0",
//    `==V1.0` -> "==V1.0"; SpecifierSet sorts the clause strings.
//  - Every clause is a range of versions (packaging 26.3's _ranges.standard_ranges):
//      `==X.*`  [E!X.dev0, E!X'.dev0) where X' is X with its last release number + 1, so the
//               epoch takes part: `==2!1.0.*` matches `2!1.0.0`, `==0.*` does not match `2!0.1`;
//      `~=V`    [V, E!P'.dev0) where P is V's release without its last number;
//      `>V`     above V, excluding V+local and V's post-releases unless V is itself a post- or
//               dev-release (`>1.0a1` matches `1.0a2+local`, `>2.5.0rc1` matches 2.5.0+cu124);
//      `<V`     below V.dev0 when V is not a pre-release, else below V (`<1.0.post1` matches
//               `1.0rc1`; `<1.0` does not match `1.0rc1`);
//      `<=V`, `==V`, `!=V` take V's local versions along unless V has a local label.
//  - `===` compares text case-insensitively: a Version's normalized form (contains), or the
//    text as written (contains_text); `===1.0` and `===1.0.0` are two clauses, not duplicates.
//  - A clause names pre-releases (Specifier.prereleases) when its operand is a pre-release and
//    the operator is not `!=` and it is not a wildcard; the empty SpecifierSet admits no
//    pre-releases by default (contains()).
// Deliberate differences:
//  - `===X` with X not a version and no explicit pre-release policy: gpulock treats X as naming
//    no pre-release (packaging answers None, i.e. PEP 440's default).
//  - contains(v) with no policy rejects a pre-release that no clause names (packaging 26's
//    contains() admits it: "a single version has no alternatives"); filter() with no policy
//    returns pre-releases when nothing else matches, as packaging does.
//  - Numbers above 2^64-1 are rejected (see version.cpp).
#include "gpulock/core/specifier.h"

#include <algorithm>
#include <array>
#include <limits>

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

// E!R.dev0 for a version with epoch E and release R.
Version release_dev0(const Version& v, std::span<const std::uint64_t> release) {
  Version out = Version::from_release(release);
  VersionAccess::set_epoch(out, v.epoch());
  VersionAccess::set_dev(out, 0);
  return out;
}

// E!R'.dev0 with R' = R with its last number incremented; false when that number is 2^64-1.
bool next_release_dev0(const Version& v, std::span<const std::uint64_t> release, Version& out) {
  std::vector<std::uint64_t> r(release.begin(), release.end());
  if (r.back() == std::numeric_limits<std::uint64_t>::max()) return false;
  ++r.back();
  out = release_dev0(v, r);
  return true;
}

}  // namespace

struct SpecifierAccess {
  // `describe` = false skips building the message (for callers that only test validity).
  static Result<Specifier> parse_part(std::string_view text, std::size_t begin, std::size_t stop,
                                      bool describe = true);

  static bool below_upper(const Specifier& s, const Version& v) {
    return !s.has_upper_ || VersionAccess::compare(v, s.upper_) < 0;
  }

  // `===`: str(item).lower() == operand.lower(). Python's lower() maps U+212A KELVIN SIGN to
  // 'k', the only non-ASCII character whose lowercase is ASCII.
  static bool arbitrary_match(const Specifier& s, std::string_view cand) {
    const std::string& op = s.operand_;
    std::size_t i = 0, k = 0;
    while (i < op.size() && k < cand.size()) {
      if (op.compare(i, 3, "\xe2\x84\xaa") == 0) {
        if (detail::to_lower(cand[k]) != 'k') return false;
        i += 3;
        ++k;
      } else if (cand.compare(k, 3, "\xe2\x84\xaa") == 0) {
        if (detail::to_lower(op[i]) != 'k') return false;
        ++i;
        k += 3;
      } else {
        if (detail::to_lower(op[i]) != detail::to_lower(cand[k])) return false;
        ++i;
        ++k;
      }
    }
    return i == op.size() && k == cand.size();
  }

  static bool matches(const Specifier& s, const Version& v) {
    const Version& spec = s.version_;
    switch (s.op_) {
      case Operator::Equal:
      case Operator::NotEqual: {
        bool eq;
        if (s.wildcard_) {
          eq = VersionAccess::compare(v, s.lower_) >= 0 && below_upper(s, v);
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
      case Operator::Less:
        return below_upper(s, v);
      case Operator::Greater: {
        // Above V's local versions; for a final or pre-release V, also above V's post-releases
        // (the versions of V's "family": same epoch, release and pre-release part).
        if (VersionAccess::compare(v, spec, true) <= 0) return false;
        return spec.post() || spec.dev() || !VersionAccess::base_equal(v, spec) ||
               v.pre() != spec.pre();
      }
      case Operator::Compatible:
        return VersionAccess::compare(v, spec, true) >= 0 && below_upper(s, v);
      case Operator::ArbitraryEqual:
        return arbitrary_match(s, v.to_string());
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
  auto release = s.version_.release();
  if (s.wildcard_) {
    s.lower_ = release_dev0(s.version_, release);
    s.has_upper_ = next_release_dev0(s.version_, release, s.upper_);
  } else if (s.op_ == Operator::Compatible) {
    s.has_upper_ = next_release_dev0(s.version_, release.first(release.size() - 1), s.upper_);
  } else if (s.op_ == Operator::Less) {
    s.upper_ = s.version_;
    if (!s.version_.is_prerelease()) VersionAccess::set_dev(s.upper_, 0);
  }
  return s;
}

Result<Specifier> Specifier::parse(std::string_view text) {
  return SpecifierAccess::parse_part(text, 0, text.size());
}

bool Specifier::names_prerelease() const noexcept {
  switch (op_) {
    case Operator::NotEqual:
      return false;
    default:
      return !wildcard_ && operand_is_version_ && version_.is_prerelease();
  }
}

bool Specifier::contains(const Version& v, std::optional<bool> prereleases) const {
  bool allow = prereleases.has_value() ? *prereleases : names_prerelease();
  if (v.is_prerelease() && !allow) return false;
  return SpecifierAccess::matches(*this, v);
}

bool Specifier::contains_text(std::string_view text, std::optional<bool> prereleases) const {
  auto v = Version::parse(text);
  bool allow = prereleases.has_value() ? *prereleases : names_prerelease();
  if (v && v->is_prerelease() && !allow) return false;
  if (op_ == Operator::ArbitraryEqual) return SpecifierAccess::arbitrary_match(*this, text);
  return v && SpecifierAccess::matches(*this, *v);
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
  if (a.op_ == Operator::ArbitraryEqual) return a.operand_ == b.operand_;
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
  for (auto& existing : specs) {
    if (existing == s) {
      // packaging 26.3 sorts the clauses by their text before dropping duplicates, so of
      // equal clauses the one whose text sorts first stays (`>1.0.0,>1.0` is `>1.0`).
      if (s.to_string() < existing.to_string()) existing = std::move(s);
      return;
    }
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

bool SpecifierSet::contains_text(std::string_view text, std::optional<bool> prereleases) const {
  bool allow = prereleases.has_value() ? *prereleases : (!specs_.empty() && names_prerelease());
  auto v = Version::parse(text);
  if (!allow && v && v->is_prerelease()) return false;
  for (const auto& s : specs_) {
    if (!s.contains_text(text, allow)) return false;
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

std::string spaced_specifier(std::string_view spec) {
  std::string out;
  std::size_t i = 0;
  while (i < spec.size()) {
    std::size_t j = i;
    while (j < spec.size() && std::string_view("<>=!~").find(spec[j]) != std::string_view::npos)
      ++j;
    std::size_t end = spec.find(',', j);
    std::string_view op = spec.substr(i, j - i);
    std::string_view operand =
        spec.substr(j, end == std::string_view::npos ? std::string_view::npos : end - j);
    if (!out.empty()) out += ", ";
    out += op.empty() ? std::string(operand) : fmt::format("{} {}", op, operand);
    if (end == std::string_view::npos) break;
    i = end + 1;
    while (i < spec.size() && spec[i] == ' ')
      ++i;
  }
  return out;
}

}  // namespace gpulock::core

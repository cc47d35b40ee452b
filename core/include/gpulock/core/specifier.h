#pragma once
/// @file
/// PEP 440 version specifiers (canonical spec: packaging.python.org, "Version specifiers",
/// §Version specifiers), with packaging 26.3 semantics where the PEP is silent or differs.
///
/// Local versions: `==2.5.1` matches `2.5.1+cu124`; `==2.5.1+cu124` matches only that label;
/// `>2.5.1` excludes `2.5.1+cu124` and post-releases of 2.5.1 but `>2.5.1rc1` admits both;
/// `<=2.5.1` includes `2.5.1+cu124`; `<V` excludes pre-releases of V unless V is one, and
/// `<V.postN` admits V's pre-releases. Wildcards keep the epoch: `==2!1.*` matches `2!1.0`.
///
/// Pre-releases: `contains(v)` and `filter(vs)` take an explicit policy. With no policy
/// (std::nullopt) pre-releases are admitted only if some specifier in the set names one
/// (`>=2.0b1`), and, for filter(), also when nothing else matches (PEP 440; packaging 23.0
/// does this only for an empty set, see specifier.cpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/version.h"

namespace gpulock::core {

enum class Operator : std::uint8_t {
  Equal,           ///< ==
  NotEqual,        ///< !=
  LessEqual,       ///< <=
  GreaterEqual,    ///< >=
  Less,            ///< <
  Greater,         ///< >
  Compatible,      ///< ~=
  ArbitraryEqual,  ///< ===
};

/// "==", "!=", ...
[[nodiscard]] std::string_view operator_string(Operator op) noexcept;

/// One clause, e.g. `>=2.5`, `==2.5.*`, `~=1.4.5a4`, `===foobar`.
class Specifier {
 public:
  /// Errors: InvalidSpecifier with the column of the problem: unknown operator, invalid
  /// version, a wildcard on an operator other than ==/!=, a local label on an ordered
  /// operator or in a wildcard, `~=` with a single release segment, `.*` after a dev/local.
  [[nodiscard]] static Result<Specifier> parse(std::string_view text);

  [[nodiscard]] Operator op() const noexcept { return op_; }
  /// The version operand (for `===`, the parsed version if the text parses, else "0").
  [[nodiscard]] const Version& version() const noexcept { return version_; }
  /// True for `==X.*` / `!=X.*`.
  [[nodiscard]] bool wildcard() const noexcept { return wildcard_; }
  /// The operand exactly as written, whitespace trimmed (used by `===`).
  [[nodiscard]] const std::string& operand() const noexcept { return operand_; }

  /// True when the operand names a pre-release and the operator is not `!=` and the clause is
  /// not a wildcard: `>=2.0b1`, `<2.0b1`, `>2.0b1`, `~=2.0b1`, `==2.0b1`, `===2.0b1`
  /// (packaging 26.3's Specifier.prereleases: such a clause opts into pre-releases for every
  /// operator).
  [[nodiscard]] bool names_prerelease() const noexcept;

  /// Does `v` match? `prereleases`: nullopt = names_prerelease(), true = admit, false = reject.
  /// `===` compares `v`'s normalized text (packaging with a Version object).
  [[nodiscard]] bool contains(const Version& v,
                              std::optional<bool> prereleases = std::nullopt) const;
  /// As contains(), for a version given as text: `===` compares the text as written
  /// (case-insensitively, `===1.01` matches "1.01" but not "1.1"); other operators parse it and
  /// never match text that is not a version (packaging 26.3 with a str).
  [[nodiscard]] bool contains_text(std::string_view text,
                                   std::optional<bool> prereleases = std::nullopt) const;

  /// Operator and operand, normalized spacing: ">=2.5", "==2.5.*".
  [[nodiscard]] std::string to_string() const;

  /// packaging's Specifier.__eq__: same operator and same canonical operand (versions compare
  /// as versions, `==1.0` equals `==1.0.0`; wildcards and every `===` operand as text, so
  /// `===1.0` and `===1.0.0` differ).
  friend bool operator==(const Specifier& a, const Specifier& b) noexcept;

 private:
  friend struct SpecifierAccess;

  Operator op_ = Operator::GreaterEqual;
  Version version_;
  bool wildcard_ = false;
  bool operand_is_version_ = true;  // false for a `===` operand that is not a PEP 440 version
  std::string operand_;
  // The bounds of packaging 26.3's range for this clause (see specifier.cpp): `==X.*`/`!=X.*`
  // match [lower_, upper_), `~=V` matches [V, upper_), `<V` matches below upper_. No upper
  // bound when has_upper_ is false (a release number of 2^64-1 has no successor).
  Version lower_;
  Version upper_;
  bool has_upper_ = true;
};

/// A comma-separated conjunction of specifiers; empty matches every final release.
class SpecifierSet {
 public:
  SpecifierSet() = default;
  /// The clauses, duplicates (by Specifier ==) dropped.
  explicit SpecifierSet(std::vector<Specifier> specs);

  /// Comma-separated clauses, each trimmed of whitespace; empty clauses are skipped and
  /// duplicates (by Specifier ==) dropped, keeping the first, as packaging's set does.
  /// "" is valid (the empty set). Errors: InvalidSpecifier, column relative to `text`.
  [[nodiscard]] static Result<SpecifierSet> parse(std::string_view text);

  [[nodiscard]] bool empty() const noexcept { return specs_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
  [[nodiscard]] std::span<const Specifier> specifiers() const noexcept { return specs_; }
  [[nodiscard]] auto begin() const noexcept { return specs_.begin(); }
  [[nodiscard]] auto end() const noexcept { return specs_.end(); }

  /// True if any clause names a pre-release (packaging's SpecifierSet.prereleases).
  [[nodiscard]] bool names_prerelease() const noexcept;

  /// Every clause matches `v`. `prereleases`: nullopt = admit pre-releases only if
  /// names_prerelease(); true = admit; false = reject.
  [[nodiscard]] bool contains(const Version& v,
                              std::optional<bool> prereleases = std::nullopt) const;
  /// As contains(), for a version given as text (see Specifier::contains_text).
  [[nodiscard]] bool contains_text(std::string_view text,
                                   std::optional<bool> prereleases = std::nullopt) const;

  /// The matching versions, in input order. With nullopt: as contains(), but when that
  /// leaves nothing and pre-releases would match, returns those (PEP 440: pre-releases are
  /// accepted when they are the only versions that satisfy the specifier).
  [[nodiscard]] std::vector<Version> filter(std::span<const Version> versions,
                                            std::optional<bool> prereleases = std::nullopt) const;

  /// Intersection (concatenation of clauses).
  [[nodiscard]] SpecifierSet operator&(const SpecifierSet& other) const;

  /// Clauses joined by ",", sorted by their string as packaging does: "<3,>=2.5".
  [[nodiscard]] std::string to_string() const;

  /// Same clauses in any order (packaging compares the frozensets).
  friend bool operator==(const SpecifierSet& a, const SpecifierSet& b) noexcept;

 private:
  std::vector<Specifier> specs_;
};

/// A specifier's text spaced for prose: ">=3.12,<4" -> ">= 3.12, < 4" (the explanation's
/// "needs Python >= 3.12").
[[nodiscard]] std::string spaced_specifier(std::string_view spec);

}  // namespace gpulock::core

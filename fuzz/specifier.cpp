// PEP 440 specifier sets (core/specifier.h). The first line is a specifier set, every further
// line a version. Properties: the set and each clause print to text that parses back to an
// equal value with the same text; for each version, the set contains it exactly when every
// clause does, filter() agrees with contains(), and no clause both matches and excludes it:
// `==X` and `!=X` (wildcards too) disagree on every version, and `<X`/`>=X`, `>X`/`<=X` never
// both match one.
#include "gpulock/core/specifier.h"

#include <vector>

#include <fmt/format.h>

#include "fuzz_check.h"

using gpulock::core::Operator;
using gpulock::core::Specifier;
using gpulock::core::SpecifierSet;
using gpulock::core::Version;

namespace {

// The operator whose clause, with the same operand, covers the other side of the version line.
std::optional<Operator> opposite(Operator op) {
  switch (op) {
    case Operator::Equal:
      return Operator::NotEqual;
    case Operator::NotEqual:
      return Operator::Equal;
    case Operator::Less:
      return Operator::GreaterEqual;
    case Operator::GreaterEqual:
      return Operator::Less;
    case Operator::Greater:
      return Operator::LessEqual;
    case Operator::LessEqual:
      return Operator::Greater;
    default:
      return std::nullopt;
  }
}

void check_against(const Specifier& spec, const Version& v) {
  auto op = opposite(spec.op());
  if (!op) return;
  std::string text = spec.to_string();
  std::string operand = text.substr(gpulock::core::operator_string(spec.op()).size());
  auto other = Specifier::parse(fmt::format("{}{}", gpulock::core::operator_string(*op), operand));
  FUZZ_CHECK(other.has_value(), fmt::format("'{}' parses, its opposite does not", text));
  bool a = spec.contains(v, true);
  bool b = other->contains(v, true);
  std::string what =
      fmt::format("'{}' {} and '{}' {} version '{}'", text, a ? "matches" : "excludes",
                  other->to_string(), b ? "matches" : "excludes", v.to_string());
  FUZZ_CHECK(!(a && b), what);
  if (spec.op() == Operator::Equal || spec.op() == Operator::NotEqual) FUZZ_CHECK(a || b, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = gpulock::fuzz::as_text(data, size);
  std::size_t nl = text.find('\n');
  auto set = SpecifierSet::parse(text.substr(0, nl));
  if (!set) return 0;
  std::string printed = set->to_string();
  auto again = SpecifierSet::parse(printed);
  FUZZ_CHECK(again.has_value(),
             fmt::format("'{}' prints as '{}', which does not parse", text.substr(0, nl), printed));
  FUZZ_CHECK(*again == *set,
             fmt::format("'{}' -> '{}' -> '{}'", text.substr(0, nl), printed, again->to_string()));
  FUZZ_CHECK(again->to_string() == printed,
             fmt::format("'{}' -> '{}' -> '{}'", text.substr(0, nl), printed, again->to_string()));
  for (const Specifier& spec : *set) {
    auto one = Specifier::parse(spec.to_string());
    FUZZ_CHECK(one.has_value() && *one == spec, fmt::format("clause '{}'", spec.to_string()));
  }
  if (nl == std::string_view::npos) return 0;
  std::vector<Version> versions;
  std::string_view rest = text.substr(nl + 1);
  while (!rest.empty() && versions.size() < 16) {
    std::size_t end = rest.find('\n');
    if (auto v = Version::parse(rest.substr(0, end))) versions.push_back(*v);
    if (end == std::string_view::npos) break;
    rest = rest.substr(end + 1);
  }
  std::vector<Version> expected;
  for (const Version& v : versions) {
    bool all = true;
    for (const Specifier& spec : *set) {
      all = all && spec.contains(v, true);
      check_against(spec, v);
    }
    bool in = set->contains(v, true);
    FUZZ_CHECK(in == all, fmt::format("'{}' {} '{}' but its clauses say {}", printed,
                                      in ? "contains" : "excludes", v.to_string(), all));
    if (in) expected.push_back(v);
    FUZZ_CHECK(set->contains(v, false) == (in && !v.is_prerelease()),
               fmt::format("'{}' with pre-releases refused, '{}'", printed, v.to_string()));
  }
  auto filtered = set->filter(versions, true);
  FUZZ_CHECK(filtered.size() == expected.size(), fmt::format("filter('{}') size", printed));
  for (std::size_t i = 0; i < filtered.size(); ++i) {
    FUZZ_CHECK(filtered[i] == expected[i], fmt::format("filter('{}') item {}", printed, i));
  }
  return 0;
}

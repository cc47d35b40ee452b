// PEP 440 version specifiers: the PEP's examples, the local-label rules of issue 2, the
// pre-release policy, packaging 26.3's ranges that Specifier follows, and negative cases.
#include "gpulock/core/specifier.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace gpulock::core;

namespace {

Version v(std::string_view text) {
  auto r = Version::parse(text);
  INFO("parsing version " << text);
  REQUIRE(r.has_value());
  return *r;
}

SpecifierSet set(std::string_view text) {
  auto r = SpecifierSet::parse(text);
  INFO("parsing specifier set " << text);
  if (!r) INFO(r.error().to_string());
  REQUIRE(r.has_value());
  return *r;
}

bool in(std::string_view spec, std::string_view version, std::optional<bool> pre = std::nullopt) {
  return set(spec).contains(v(version), pre);
}

std::size_t spec_error_column(std::string_view text) {
  auto r = Specifier::parse(text);
  if (r) return 0;
  CHECK(r.error().code == ErrorCode::InvalidSpecifier);
  return r.error().column;
}

std::size_t set_error_column(std::string_view text) {
  auto r = SpecifierSet::parse(text);
  if (r) return 0;
  CHECK(r.error().code == ErrorCode::InvalidSpecifier);
  return r.error().column;
}

std::vector<std::string> strings(const std::vector<Version>& vs) {
  std::vector<std::string> out;
  for (const auto& x : vs)
    out.push_back(x.to_string());
  return out;
}

}  // namespace

TEST_CASE("Specifier parses every operator", "[core][specifier]") {
  struct Case {
    const char* text;
    Operator op;
    const char* str;
    bool wildcard;
  };
  const Case cases[] = {
      {"==2.5", Operator::Equal, "==2.5", false},
      {"!=2.5", Operator::NotEqual, "!=2.5", false},
      {"<=2.5", Operator::LessEqual, "<=2.5", false},
      {">=2.5", Operator::GreaterEqual, ">=2.5", false},
      {"<2.5", Operator::Less, "<2.5", false},
      {">2.5", Operator::Greater, ">2.5", false},
      {"~=2.5", Operator::Compatible, "~=2.5", false},
      {"===foobar", Operator::ArbitraryEqual, "===foobar", false},
      {"==2.5.*", Operator::Equal, "==2.5.*", true},
      {"!=2.*", Operator::NotEqual, "!=2.*", true},
      {"  >=  1.0.0  ", Operator::GreaterEqual, ">=1.0.0", false},  // operand kept as written
      {"==V1.0", Operator::Equal, "==V1.0", false},
      {"==1.0+CU124", Operator::Equal, "==1.0+CU124", false},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto s = Specifier::parse(c.text);
    REQUIRE(s.has_value());
    CHECK(s->op() == c.op);
    CHECK(s->to_string() == c.str);
    CHECK(s->wildcard() == c.wildcard);
    CHECK(operator_string(s->op()) ==
          std::string_view(c.str).substr(0, operator_string(c.op).size()));
  }
  CHECK(Specifier::parse("==2.5.1+cu124")->version().to_string() == "2.5.1+cu124");
  CHECK(Specifier::parse("===foobar")->operand() == "foobar");
  CHECK(Specifier::parse("===")->operand().empty());  // packaging accepts an empty === operand
}

TEST_CASE("PEP 440 compatible release examples", "[core][specifier]") {
  // ~=2.2 is >=2.2,==2.*
  CHECK(in("~=2.2", "2.2"));
  CHECK(in("~=2.2", "2.9.1"));
  CHECK_FALSE(in("~=2.2", "3.0"));
  CHECK_FALSE(in("~=2.2", "2.1"));
  // ~=1.4.5 is >=1.4.5,==1.4.*
  CHECK(in("~=1.4.5", "1.4.5"));
  CHECK(in("~=1.4.5", "1.4.9"));
  CHECK_FALSE(in("~=1.4.5", "1.5.0"));
  // ~=2.2.post3 is >=2.2.post3,==2.*
  CHECK(in("~=2.2.post3", "2.2.post3"));
  CHECK(in("~=2.2.post3", "2.9"));
  CHECK_FALSE(in("~=2.2.post3", "2.2.post2"));
  CHECK_FALSE(in("~=2.2.post3", "3.0"));
  // ~=1.4.5a4 is >=1.4.5a4,==1.4.*
  CHECK(in("~=1.4.5a4", "1.4.5a4"));
  CHECK(in("~=1.4.5a4", "1.4.8"));
  CHECK_FALSE(in("~=1.4.5a4", "1.5"));
  // ~=2.2.0 is >=2.2.0,==2.2.*
  CHECK(in("~=2.2.0", "2.2.7"));
  CHECK_FALSE(in("~=2.2.0", "2.3"));
  // ~=1.4.5.0 is >=1.4.5.0,==1.4.5.*
  CHECK(in("~=1.4.5.0", "1.4.5.9"));
  CHECK_FALSE(in("~=1.4.5.0", "1.4.6"));
}

TEST_CASE("PEP 440 version matching examples", "[core][specifier]") {
  // "version 1.1.post1": ==1.1 no, ==1.1.post1 yes, ==1.1.* yes
  CHECK_FALSE(in("==1.1", "1.1.post1"));
  CHECK(in("==1.1.post1", "1.1.post1"));
  CHECK(in("==1.1.*", "1.1.post1"));
  // Zero padding: ==1.1 matches 1.1.0 and ==1.1.0 matches 1.1
  CHECK(in("==1.1", "1.1.0"));
  CHECK(in("==1.1.0", "1.1"));
  // Prefix matching
  CHECK(in("==1.1.*", "1.1"));
  CHECK(in("==1.1.*", "1.1.5"));
  CHECK_FALSE(in("==1.1.*", "1.10"));
  CHECK(in("==1.*", "1.0a1", true));
  CHECK_FALSE(in("==1.*", "1.0a1"));  // wildcards never name a pre-release
  // Version exclusion
  CHECK_FALSE(in("!=1.1", "1.1.0"));
  CHECK(in("!=1.1", "1.1.post1"));
  CHECK_FALSE(in("!=1.1.*", "1.1.post1"));
  CHECK(in("!=1.1.*", "1.2"));
  // Inclusive ordered comparison ignores local labels
  CHECK(in("<=2.0", "2.0"));
  CHECK(in(">=2.0", "2.0+local"));
  // Exclusive ordered comparison
  CHECK(in(">1.7", "1.7.1"));
  CHECK_FALSE(in(">1.7", "1.7.0.post1"));
  CHECK(in(">1.7.post2", "1.7.1"));
  CHECK(in(">1.7.post2", "1.7.0.post3"));
  CHECK_FALSE(in(">1.7.post2", "1.7.0"));
  CHECK_FALSE(in("<3.1", "3.1.dev0", true));
  CHECK(in("<3.1", "3.0.dev0", true));
  CHECK(in("<3.1.dev1", "3.1.dev0", true));
  // Arbitrary equality compares the normalized text, case-insensitively
  CHECK(in("===1.0", "1.0"));
  CHECK_FALSE(in("===1.0", "1.0+downstream1"));
  CHECK_FALSE(in("===1.0", "1.0.0"));
  CHECK(in("===1.0RC1", "1.0rc1", true));
  // The PEP's compound example parses (and, since ~=0.9 means ==0.*, matches nothing >= 1.0)
  SpecifierSet pep = set("~= 0.9, >= 1.0, != 1.3.4.*, < 2.0");
  CHECK(pep.size() == 4);
  CHECK(pep.to_string() == "!=1.3.4.*,<2.0,>=1.0,~=0.9");
  CHECK_FALSE(pep.contains(v("0.9")));
  CHECK_FALSE(pep.contains(v("1.0")));
  SpecifierSet compound = set(">= 1.0, != 1.3.4.*, < 2.0");
  CHECK_FALSE(compound.contains(v("0.9")));
  CHECK(compound.contains(v("1.0")));
  CHECK(compound.contains(v("1.3.3")));
  CHECK_FALSE(compound.contains(v("1.3.4.1")));
  CHECK(compound.contains(v("1.9.9")));
  CHECK_FALSE(compound.contains(v("2.0")));
}

TEST_CASE("Local version labels (issue 2)", "[core][specifier]") {
  CHECK(in("==2.5.1", "2.5.1+cu124"));
  CHECK(in("==2.5.1", "2.5.1+cpu"));
  CHECK(in("==2.5.1+cu124", "2.5.1+cu124"));
  CHECK(in("==2.5.1+cu124", "2.5.1.0+CU124"));
  CHECK_FALSE(in("==2.5.1+cu124", "2.5.1+cu121"));
  CHECK_FALSE(in("==2.5.1+cu124", "2.5.1"));
  CHECK_FALSE(in("==2.5.1+cu124", "2.5.1+cu124.1"));
  CHECK(in("!=2.5.1+cu124", "2.5.1+cu121"));
  CHECK_FALSE(in("!=2.5.1", "2.5.1+rocm6.2"));
  CHECK_FALSE(in(">2.5.1", "2.5.1+cu124"));
  CHECK_FALSE(in(">2.5.1", "2.5.1.post1"));
  CHECK(in(">2.5.1", "2.5.2+cu124"));
  CHECK(in(">2.5.1.post1", "2.5.1.post2"));
  CHECK(in("<=2.5.1", "2.5.1+cu124"));
  CHECK(in(">=2.5.1", "2.5.1+cu124"));
  CHECK_FALSE(in("<2.5.1", "2.5.1+cu124"));
  CHECK(in("==2.5.*", "2.5.1+cu124"));
  CHECK(in("~=2.5.0", "2.5.1+cu124"));
  // packaging 26.3: >V excludes V's own family (V+local, V.postN), not its base release
  CHECK(in(">1.0a1", "1.0+local", true));
  CHECK_FALSE(in(">1.0a1", "1.0a1+local", true));
  CHECK(in(">1.0a1", "1.0", true));
}

TEST_CASE("<V excludes pre-releases of V unless V is one", "[core][specifier]") {
  CHECK_FALSE(in("<2.5.1", "2.5.1rc1", true));
  CHECK_FALSE(in("<2.5.1", "2.5.1.dev3", true));
  CHECK(in("<2.5.1", "2.5.0rc1", true));
  CHECK(in("<2.5.1rc2", "2.5.1rc1", true));
  CHECK(in("<2.5.1rc2", "2.5.1rc1"));  // <V names V's pre-release (packaging 26.3)
  CHECK(in("<2.5.1rc2", "2.5.1a1", true));
  CHECK_FALSE(in("<2.5.1rc2", "2.5.1rc2"));
}

TEST_CASE("Pre-release policy", "[core][specifier]") {
  // Default: admitted only when a clause names a pre-release (==, >=, <=, ~=, ===).
  CHECK_FALSE(in(">=1.0", "2.0a1"));
  CHECK(in(">=1.0", "2.0a1", true));
  CHECK_FALSE(in(">=1.0", "2.0a1", false));
  CHECK(in(">=2.0b1", "2.0b2"));
  CHECK(in(">=2.0b1", "2.1.dev1"));
  CHECK(in(">=1.0,>=2.0b1", "2.0b2"));
  CHECK_FALSE(in(">=2.0b1", "2.0b2", false));
  CHECK(set("==2.0rc1").names_prerelease());
  CHECK(set("<=2.0.dev1").names_prerelease());
  CHECK(set("~=2.0a1").names_prerelease());
  CHECK(set("===2.0a1").names_prerelease());
  CHECK(set("<2.0a1").names_prerelease());
  CHECK_FALSE(set("!=2.0a1").names_prerelease());
  CHECK(set(">2.0a1").names_prerelease());
  CHECK_FALSE(set("==2.*").names_prerelease());
  CHECK_FALSE(set("===foo").names_prerelease());
  CHECK_FALSE(set("").names_prerelease());
  // The empty set matches every final release, and pre-releases only on request.
  CHECK(in("", "1.0"));
  CHECK(in("", "1.0.post1+local"));
  CHECK_FALSE(in("", "1.0a1"));
  CHECK(in("", "1.0a1", true));
  // Specifier::contains
  auto ge = Specifier::parse(">=1.0");
  REQUIRE(ge);
  CHECK_FALSE(ge->contains(v("1.5a1")));
  CHECK(ge->contains(v("1.5a1"), true));
  CHECK(ge->contains(v("1.5")));
}

TEST_CASE("filter applies the policy and falls back to pre-releases", "[core][specifier]") {
  std::vector<Version> vs = {v("1.2"), v("1.3"), v("1.5a1")};
  CHECK(strings(set(">=1.2.3").filter(vs)) == std::vector<std::string>{"1.3"});
  CHECK(strings(set(">=1.2.3").filter(vs, true)) == std::vector<std::string>{"1.3", "1.5a1"});
  CHECK(strings(set(">=1.2.3").filter(vs, false)) == std::vector<std::string>{"1.3"});
  std::vector<Version> only_pre = {v("1.2"), v("1.5a1"), v("1.6b1")};
  // Nothing final matches: the pre-releases that match are returned (PEP 440).
  CHECK(strings(set(">=1.2.3").filter(only_pre)) == std::vector<std::string>{"1.5a1", "1.6b1"});
  CHECK(set(">=1.2.3").filter(only_pre, false).empty());
  CHECK(strings(set("").filter(std::vector<Version>{v("1.3"), v("1.5a1")})) ==
        std::vector<std::string>{"1.3"});
  CHECK(strings(set("").filter(std::vector<Version>{v("1.5a1")})) ==
        std::vector<std::string>{"1.5a1"});
  CHECK(set(">=3").filter(vs).empty());
}

TEST_CASE("SpecifierSet text, equality and intersection", "[core][specifier]") {
  CHECK(set(">=1.0.0,!=1.0.1").to_string() == "!=1.0.1,>=1.0.0");
  CHECK(set(" >= 2.5 , < 3 ").to_string() == "<3,>=2.5");
  CHECK(set("").to_string().empty());
  CHECK(set("").empty());
  CHECK(set(" , ,").empty());
  CHECK(set(">=1,,<2").size() == 2);
  // Duplicates by packaging's equality are dropped, the first one kept.
  SpecifierSet dup = set("==1.0.0,==1.0,== 1");
  CHECK(dup.size() == 1);
  CHECK(dup.to_string() == "==1");              // of equal clauses, the one whose text sorts first
  CHECK(set("~=1.0,~=1.0.0").size() == 2);      // ~= keeps trailing zeros
  CHECK(set("==1.0.*,==1.0.0.*").size() == 2);  // wildcards compare as text
  CHECK(set("===1.0,===1.0.0").size() == 2);    // === compares text as written
  CHECK(*Specifier::parse("==1.2.3") == *Specifier::parse("== 1.2.3.0"));
  CHECK_FALSE(*Specifier::parse("==1.2.3") == *Specifier::parse("~=1.2.3"));
  CHECK_FALSE(*Specifier::parse("==1.2.3") == *Specifier::parse("==1.2.4"));
  CHECK(set(">=1,<2") == set("<2.0, >=1.0"));
  CHECK_FALSE(set(">=1,<2") == set(">=1"));
  SpecifierSet both = set(">=1.0.0,!=1.0.1") & set("<=2.0.0,!=2.0.1,>=1.0");
  CHECK(both.to_string() == "!=1.0.1,!=2.0.1,<=2.0.0,>=1.0");  // sorted, then de-duplicated
  CHECK(both.contains(v("1.5")));
  CHECK_FALSE(both.contains(v("2.0.1")));
  std::vector<Specifier> clauses = {*Specifier::parse(">=1"), *Specifier::parse(">=1.0")};
  CHECK(SpecifierSet(clauses).size() == 1);
}

TEST_CASE("packaging 26.3 ranges for wildcards and ~=", "[core][specifier]") {
  // Wildcards keep the epoch: ==0.* does not match 1!1.0, ==1!1.0.* matches 1!1.0.
  CHECK_FALSE(in("==0.*", "1!1.0"));
  CHECK(in("==1!1.0.*", "1!1.0"));
  CHECK(in("==1!1.0.*", "1!1.0.1"));
  // ~=V is [V, next prefix.dev0) on V's release, whatever V's suffix is spelled like.
  CHECK(in("~=1.4.5.c1", "1.4.6"));
  CHECK(in("~=1.4.5.c1", "1.4.5.1"));
  CHECK(in("~=1.4.5c1", "1.4.5.1"));
  CHECK(in("~=1.4.5c1", "1.4.6"));
  CHECK_FALSE(in("~=1.4.5c1", "1.5.0"));
  CHECK(in("~=1.4.5rc1", "1.4.6"));
  CHECK(in("~=1.4.5-1", "1.4.6"));
  // === compares normalized text
  CHECK(in("===1.0", "v1.0"));
}

TEST_CASE("Invalid specifiers report the column", "[core][specifier]") {
  CHECK(spec_error_column("") == 1);
  CHECK(spec_error_column("1.0") == 1);
  CHECK(spec_error_column("=>1.0") == 1);
  CHECK(spec_error_column("=1.0") == 1);
  CHECK(spec_error_column(">=") == 3);
  CHECK(spec_error_column(">=1.0+local") == 6);
  CHECK(spec_error_column(">=1.0.*") == 6);
  CHECK(spec_error_column("~=1") == 4);
  CHECK(spec_error_column("~=1.0+abc") == 6);
  CHECK(spec_error_column("==1.0a1.*") == 8);
  CHECK(spec_error_column("==1.0+abc.*") == 10);
  CHECK(spec_error_column(">= 1.0 x") == 8);
  CHECK(spec_error_column("===a b") == 6);
  CHECK(spec_error_column("===a;") == 5);
  CHECK(spec_error_column("==1.0,") == 6);
  CHECK(spec_error_column(">=99999999999999999999") == 3);
  CHECK(set_error_column(">=1.0, <2.0+x") == 12);
  CHECK(set_error_column(">=1.0,  foo") == 9);
  CHECK(set_error_column(">=1.0,<2,~=3") == 13);
  CHECK(set_error_column(">=1.0, <2.0") == 0);
  auto err = SpecifierSet::parse(">=1.0, <2.0+x");
  REQUIRE_FALSE(err);
  CHECK(err.error().message.find("'>=1.0, <2.0+x'") != std::string::npos);
  CHECK(err.error().message.find("local") != std::string::npos);
}

// The PEP 440/508/685 rules where packaging 26.3 (pip 26's vendored copy) corrected packaging
// 23.0 and gpulock had copied the old behaviour (issue 20). Each table row is packaging 26.3's
// answer; every table failed on the code before the fix.
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/core/environment.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"

using namespace gpulock::core;

namespace {

Version ver(std::string_view text) {
  auto r = Version::parse(text);
  INFO("parsing version " << text);
  REQUIRE(r.has_value());
  return *r;
}

SpecifierSet specs(std::string_view text) {
  auto r = SpecifierSet::parse(text);
  INFO("parsing specifier set " << text);
  REQUIRE(r.has_value());
  return *r;
}

Marker marker(std::string_view text) {
  auto r = Marker::parse(text);
  INFO("parsing marker " << text);
  if (!r) INFO(r.error().to_string());
  REQUIRE(r.has_value());
  return *r;
}

struct Row {
  std::string_view spec;
  std::string_view version;
  bool matches;  // with pre-releases admitted (prereleases=True)
};

void check_rows(const std::vector<Row>& rows) {
  for (const auto& row : rows) {
    INFO(row.version << " in " << row.spec);
    CHECK(specs(row.spec).contains(ver(row.version), true) == row.matches);
  }
}

}  // namespace

TEST_CASE(">V and <V exclude V's own family, not its base release", "[core][packaging26]") {
  check_rows({
      {">1.0a1", "1.0a2+local", true},
      {">1.0a1", "1.0a1+local", false},
      {">1.0a1", "1.0a1.post1", false},
      {">1.0a1", "1.0", true},
      {">2.5.0rc1", "2.5.0+cu124", true},
      {">2.5.0rc1", "2.5.0.post1", true},
      {">2.5.0rc1", "2.5.0", true},
      {">2.5.0", "2.5.0+cu124", false},
      {">2.5.0", "2.5.0.post1", false},
      {">2.5.0", "2.5.1+cu124", true},
      {">1.0.post1", "1.0.post1+local", false},
      {">1.0.post1", "1.0.post2", true},
      {">1.0.dev1", "1.0.dev1+local", false},
      {">1.0.dev1", "1.0.dev2", true},
      {">1.0.dev1", "1.0a1", true},
      {"<1.0.post1", "1.0rc1", true},
      {"<1.0.post1", "1.0", true},
      {"<1.0.post1", "1.0+local", true},
      {"<1.0.post1", "1.0.post1.dev0", false},
      {"<1.0", "1.0rc1", false},
      {"<1.0", "1.0.dev0", false},
      {"<1.0", "0.9", true},
      {"<1.0rc2", "1.0rc1", true},
      {"<1.0rc2", "1.0rc1+local", true},
      {"<1.2.3.post1", "1.2.3a1", true},
  });
}

TEST_CASE("Wildcards and ~= keep the epoch", "[core][packaging26]") {
  check_rows({
      {"==2!1.0.*", "2!1.0.0", true},
      {"==2!1.0.*", "2!1.0", true},
      {"==2!1.0.*", "2!1.0.5+local", true},
      {"==2!1.0.*", "1.0.0", false},
      {"==0.*", "2!0.1", false},
      {"==0.*", "0.1", true},
      {"!=0.*", "2!0.1", true},
      {"!=2!1.*", "2!1.5", false},
      {"~=2!1.4", "2!1.5", true},
      {"~=2!1.4", "1.5", false},
      {"~=1.4.5c1", "1.4.9", true},
      {"==1.0.*", "1.0a1", true},
      {"==1.0.*", "1.1.dev0", false},
  });
}

TEST_CASE("=== compares the text as written and is never de-duplicated", "[core][packaging26]") {
  auto one = Specifier::parse("===1.1");
  REQUIRE(one.has_value());
  CHECK_FALSE(one->contains_text("1.01", true));
  CHECK(one->contains_text("1.1", true));
  CHECK(one->contains(ver("1.01"), true));  // a Version object compares by its normalized text
  auto zero_one = Specifier::parse("===1.01");
  REQUIRE(zero_one.has_value());
  CHECK(zero_one->contains_text("1.01", true));
  CHECK_FALSE(zero_one->contains_text("1.1", true));
  CHECK(zero_one->contains_text("1.01", std::nullopt));
  auto word = Specifier::parse("===LoLWaT");
  REQUIRE(word.has_value());
  CHECK(word->contains_text("lolwat", true));

  auto pair = specs("===1.0,===1.0.0");
  CHECK(pair.size() == 2);
  CHECK_FALSE(pair.contains(ver("1.0"), true));
  CHECK_FALSE(pair.contains_text("1.0", true));
  CHECK_FALSE(pair.contains_text("1.0.0", true));
  CHECK(specs("===1.0,===1.0").size() == 1);
  CHECK(specs(">=1.0,>=1.0.0").size() == 1);
}

TEST_CASE("A specifier naming a pre-release admits pre-releases for every operator",
          "[core][packaging26]") {
  struct Case {
    std::string_view spec;
    bool names;
  };
  for (const auto& c : std::vector<Case>{{"<0.2.0a2", true},
                                         {">0.5a1", true},
                                         {">=0.5a1", true},
                                         {"<=1.0rc1", true},
                                         {"~=1.0b1", true},
                                         {"==1.0a1", true},
                                         {"===1.0a1", true},
                                         {"!=1.0a1", false},
                                         {"==1.0.*", false},
                                         {"<1.0", false},
                                         {">1.0.dev0", true}}) {
    INFO(c.spec);
    CHECK(specs(c.spec).names_prerelease() == c.names);
  }
  CHECK(specs("<1.1.0a2").contains(ver("1.1.0a1")));
  CHECK(specs(">0.5a1").contains(ver("2.0.0a1")));
  CHECK_FALSE(specs(">0.5").contains(ver("2.0.0a1")));
}

TEST_CASE("extra is compared as a normalized string (PEP 685)", "[core][packaging26]") {
  auto env = Environment::linux_cpython("3.11", "x86_64", "3.11.4");
  struct Case {
    std::string_view marker;
    std::string_view extra;
    bool result;
  };
  for (const auto& c : std::vector<Case>{
           {R"(extra != "v2")", "", true},
           {R"(extra == "v2")", "", false},
           {R"(extra == "v2")", "2", false},
           {R"(extra == "v2")", "V2", true},
           {R"(extra == "1.0")", "1", false},
           {R"(extra == "1.0")", "1-0", true},
           {R"(extra == "Foo_Bar")", "foo.bar", true},
           {R"(extra > "a")", "b", false},
           {R"(extra >= "gpu")", "GPU", true},
           {R"("Foo.Bar" == extra)", "foo-bar", true},
           {R"(os_name == "nt" or extra == "Test_X")", "test-x", true},
       }) {
    INFO(c.marker << " with extra '" << c.extra << "'");
    auto r = marker(c.marker).evaluate(env, c.extra);
    REQUIRE(r.has_value());
    CHECK(*r == c.result);
  }
  // Every comparison with extra is normalized, not only the first one.
  CHECK(marker(R"(os_name == "nt" or extra == "Test_X")").to_string() ==
        R"(os_name == "nt" or extra == "test-x")");
}

TEST_CASE("Markers round-trip values holding a quote", "[core][packaging26]") {
  std::string_view text = R"('a" == os_name or python_version >= "0" or "b' == os_name)";
  auto m = marker(text);
  auto env = Environment::linux_cpython("3.11", "x86_64", "3.11.4");
  auto before = m.evaluate(env, "");
  REQUIRE(before.has_value());
  CHECK_FALSE(*before);
  std::string printed = m.to_string();
  CHECK(printed == R"('a" == os_name or python_version >= "0" or "b' == os_name)");
  auto again = marker(printed);
  CHECK(again.to_string() == printed);
  auto after = again.evaluate(env, "");
  REQUIRE(after.has_value());
  CHECK(*after == *before);
}

TEST_CASE("String comparisons follow packaging 26.3's operator table", "[core][packaging26]") {
  auto env = Environment::linux_cpython("3.11", "x86_64", "3.11.4");
  struct Case {
    std::string_view marker;
    bool result;
  };
  for (const auto& c : std::vector<Case>{{R"(os_name < "q")", false},
                                         {R"(os_name > "a")", false},
                                         {R"(os_name >= "posix")", true},
                                         {R"(os_name <= "posix")", true},
                                         {R"(os_name == "posix")", true},
                                         {R"(platform_machine == "x86_64.0")", false},
                                         {R"(python_version > "3.8")", true},
                                         {R"(python_version == "3.*")", true}}) {
    INFO(c.marker);
    auto r = marker(c.marker).evaluate(env, "");
    REQUIRE(r.has_value());
    CHECK(*r == c.result);
  }
}

TEST_CASE("An untagged source build's python_full_version (3.11.1+)", "[core][packaging26]") {
  auto env = Environment::linux_cpython("3.11", "x86_64", "3.11.1+");
  CHECK(pep440_python_full_version("3.11.1+") == "3.11.1+local");
  CHECK(pep440_python_full_version("3.11.1") == "3.11.1");
  struct Case {
    std::string_view marker;
    bool result;
  };
  for (const auto& c : std::vector<Case>{{R"(python_full_version >= "3.11.1")", true},
                                         {R"(python_full_version == "3.11.1")", true},
                                         {R"(python_full_version > "3.11.1")", false},
                                         {R"(python_full_version < "3.11.2")", true},
                                         {R"("3.12" > python_full_version)", false}}) {
    INFO(c.marker);
    auto r = marker(c.marker).evaluate(env, "");
    REQUIRE(r.has_value());
    CHECK(*r == c.result);
  }
}

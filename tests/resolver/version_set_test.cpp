// VersionSet rendering over known versions, Term text, parse_dependency.

#include "support.h"

using namespace resolver_test;
using gpulock::core::ErrorCode;
using gpulock::core::Version;

namespace {

// A package whose candidates are `vs` in this (preference) order.
std::shared_ptr<const PackageInfo> package(const std::vector<std::string>& vs) {
  auto p = std::make_shared<PackageInfo>();
  p->name = "foo";
  auto versions = std::make_shared<std::vector<Version>>();
  for (const auto& v : vs)
    versions->push_back(*Version::parse(v));
  auto asc = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < versions->size(); ++i)
    asc->push_back(i);
  std::sort(asc->begin(), asc->end(),
            [&](std::uint32_t a, std::uint32_t b) { return (*versions)[a] < (*versions)[b]; });
  p->versions = versions;
  p->ascending = asc;
  return p;
}

std::string render(const std::shared_ptr<const PackageInfo>& p, std::uint64_t bits) {
  return VersionSet(p, {bits}).to_string();
}

}  // namespace

TEST_CASE("version sets render as runs of known versions", "[resolver][version-set]") {
  // Preference order newest first: bit 0 = 2.7, bit 1 = 2.6, bit 2 = 2.5.1, bit 3 = 2.5.
  auto p = package({"2.7", "2.6", "2.5.1", "2.5"});
  CHECK(render(p, 0b1111) == "");
  CHECK(render(p, 0) == "(none)");
  CHECK(render(p, 0b0010) == "==2.6");
  CHECK(render(p, 0b0011) == ">=2.6");
  CHECK(render(p, 0b1100) == "<2.6");
  CHECK(render(p, 0b0110) == ">=2.5.1,<2.7");
  CHECK(render(p, 0b0101) == "==2.5.1 | ==2.7");
  CHECK(render(p, 0b1001) == "==2.5 | ==2.7");
  CHECK(render(p, 0b1101) == "<2.6 | ==2.7");
  VersionSet s(p, {0b0110});
  CHECK(s.count() == 2);
  CHECK_FALSE(s.full());
  CHECK(s.indices() == std::vector<std::size_t>{1, 2});
  REQUIRE(s.versions().size() == 2);
  CHECK(s.versions()[0].to_string() == "2.5.1");
}

TEST_CASE("version sets are index intervals, whichever way they are built",
          "[resolver][version-set]") {
  auto p = package({"2.7", "2.6", "2.5.1", "2.5"});
  VersionSet from_bits(p, {0b1101});
  CHECK(from_bits.bounds() == std::vector<std::uint32_t>{0, 1, 2, 4});
  VersionSet from_bounds = VersionSet::from_bounds(p, {0, 1, 2, 4});
  CHECK(from_bounds == from_bits);
  CHECK(from_bounds.to_string() == "<2.6 | ==2.7");
  CHECK(from_bounds.count() == 3);
  CHECK(from_bounds.contains(0));
  CHECK_FALSE(from_bounds.contains(1));
  CHECK(from_bounds.contains(3));
  CHECK_FALSE(from_bounds.contains(4));
  CHECK(from_bounds.indices() == std::vector<std::size_t>{0, 2, 3});
  CHECK(VersionSet::from_bounds(p, {0, 4}).full());
  CHECK(VersionSet::from_bounds(p, {}).empty());
  CHECK(VersionSet::from_bounds(p, {}).to_string() == "(none)");
}

TEST_CASE("local versions and pre-releases render in PEP 440 order", "[resolver][version-set]") {
  auto p = package({"2.5.1+cu124", "2.5.1", "2.5.1rc1", "2.4"});
  // Ascending: 2.4, 2.5.1rc1, 2.5.1, 2.5.1+cu124.
  CHECK(render(p, 0b0001) == "==2.5.1+cu124");
  CHECK(render(p, 0b0011) == ">=2.5.1");
  CHECK(render(p, 0b1100) == "<2.5.1");
  CHECK(render(p, 0b0110) == ">=2.5.1rc1,<2.5.1+cu124");
}

TEST_CASE("term text keeps the requirement it came from", "[resolver][version-set]") {
  auto p = package({"2.0", "1.0"});
  Term t;
  t.versions = VersionSet(p, {0b01});
  CHECK(t.to_string() == "foo==2.0");
  t.specifier = ">=1.5";
  CHECK(t.to_string() == "foo>=1.5");
  t.specifier = "";
  CHECK(t.to_string() == "foo");
}

TEST_CASE("parse_dependency", "[resolver][in-memory]") {
  auto d = parse_dependency("Foo_Bar[Opt,extra2]>=1.0,<2");
  REQUIRE(d);
  CHECK(d->name == "foo-bar");
  CHECK(d->extras == std::vector<std::string>{"opt", "extra2"});
  CHECK(d->to_string() == "foo-bar[opt,extra2]>=1.0,<2");
  auto v = parse_dependency("__python>=3.12");
  REQUIRE(v);
  CHECK(v->name == "__python");
  CHECK(specifier_text(v->specifier) == ">=3.12");
  CHECK_FALSE(parse_dependency(">=1"));
  auto bad = parse_dependency("foo>=1.0bad");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::InvalidSpecifier);
}

TEST_CASE("a requirement on a missing virtual version reads as the requirement alone",
          "[resolver][virtual]") {
  InMemoryProvider p;
  add(p, "__python", "3.11");
  p.set_virtual_label("__python", "Python", "");
  CHECK(explanation_of(p, request({"__python>=3.12"})) ==
        "Because you require Python >= 3.12, version solving failed.");
}

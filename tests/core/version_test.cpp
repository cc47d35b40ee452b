// PEP 440 versions: every normalization example and ordering table of the PEP ("Version
// specifiers" on packaging.python.org), packaging's own ordering list, and negative cases.
#include "gpulock/core/version.h"

#include <algorithm>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <catch2/catch.hpp>

using namespace gpulock::core;

namespace {

Version v(std::string_view text) {
  auto r = Version::parse(text);
  INFO("parsing " << text);
  REQUIRE(r.has_value());
  return *r;
}

std::string norm(std::string_view text) {
  return v(text).to_string();
}

// The 1-based column of the error, or 0 if the text parsed.
std::size_t error_column(std::string_view text) {
  auto r = Version::parse(text);
  if (r) return 0;
  CHECK(r.error().code == ErrorCode::InvalidVersion);
  CHECK_FALSE(r.error().message.empty());
  return r.error().column;
}

}  // namespace

TEST_CASE("PEP 440 normalization examples", "[core][version]") {
  // Case sensitivity
  CHECK(norm("1.1RC1") == "1.1rc1");
  CHECK(norm("1.0A1") == "1.0a1");
  CHECK(norm("1.0.POST1.DEV2") == "1.0.post1.dev2");
  CHECK(norm("1.0+UBUNTU") == "1.0+ubuntu");
  // Integer normalization
  CHECK(norm("00") == "0");
  CHECK(norm("09000") == "9000");
  CHECK(norm("1.0+foo0100") == "1.0+foo0100");
  CHECK(norm("1.0+0100") == "1.0+100");
  CHECK(norm("1.01.001") == "1.1.1");
  // Pre-release separators and spelling
  CHECK(norm("1.1.a1") == "1.1a1");
  CHECK(norm("1.1-a1") == "1.1a1");
  CHECK(norm("1.1_a1") == "1.1a1");
  CHECK(norm("1.0a.1") == "1.0a1");
  CHECK(norm("1.0a-1") == "1.0a1");
  CHECK(norm("1.1alpha1") == "1.1a1");
  CHECK(norm("1.1beta2") == "1.1b2");
  CHECK(norm("1.1c3") == "1.1rc3");
  CHECK(norm("1.1pre3") == "1.1rc3");
  CHECK(norm("1.1preview3") == "1.1rc3");
  CHECK(norm("1.1-PREVIEW-3") == "1.1rc3");
  // Implicit pre-release number
  CHECK(norm("1.2a") == "1.2a0");
  CHECK(norm("1.2.rc") == "1.2rc0");
  // Post-release separators and spelling
  CHECK(norm("1.2-post2") == "1.2.post2");
  CHECK(norm("1.2post2") == "1.2.post2");
  CHECK(norm("1.2.post.2") == "1.2.post2");
  CHECK(norm("1.2_post_2") == "1.2.post2");
  CHECK(norm("1.0-r4") == "1.0.post4");
  CHECK(norm("1.0-rev4") == "1.0.post4");
  CHECK(norm("1.0r4") == "1.0.post4");
  // Implicit post-release number, implicit post release
  CHECK(norm("1.2.post") == "1.2.post0");
  CHECK(norm("1.0-1") == "1.0.post1");
  CHECK(norm("1.0a1-1") == "1.0a1.post1");
  // Development release separators, implicit number
  CHECK(norm("1.2-dev2") == "1.2.dev2");
  CHECK(norm("1.2dev2") == "1.2.dev2");
  CHECK(norm("1.2.dev") == "1.2.dev0");
  CHECK(norm("1.2_DEV_") == "1.2.dev0");
  // Local version segments
  CHECK(norm("1.0+ubuntu-1") == "1.0+ubuntu.1");
  CHECK(norm("1.0+ubuntu_1") == "1.0+ubuntu.1");
  CHECK(norm("2.5.1+cu124") == "2.5.1+cu124");
  CHECK(norm("2.5.1+rocm6.2") == "2.5.1+rocm6.2");
  // Preceding v, surrounding whitespace
  CHECK(norm("v1.0") == "1.0");
  CHECK(norm("V1.0") == "1.0");
  CHECK(norm(" 1.0\n") == "1.0");
  CHECK(norm("\t1.0 \r\n") == "1.0");
  CHECK(norm("\xc2\xa0"
             "1.0\xe2\x80\x83") == "1.0");  // U+00A0 and U+2003 are Python whitespace
  // Epochs
  CHECK(norm("1!1.0") == "1!1.0");
  CHECK(norm("0!1.0") == "1.0");
  CHECK(norm("v2!1.0rc1.post2.dev3+local.7") == "2!1.0rc1.post2.dev3+local.7");
  // packaging: a separator after a label with no number is accepted
  CHECK(norm("1.0a.") == "1.0a0");
  CHECK(norm("1.0.post-") == "1.0.post0");
  CHECK(norm("1.0a..dev") == "1.0a0.dev0");
}

TEST_CASE("Version accessors", "[core][version]") {
  Version x = v("1!2.5.1rc1.post2.dev3+cu124.7");
  CHECK(x.epoch() == 1);
  CHECK(std::vector<std::uint64_t>(x.release().begin(), x.release().end()) ==
        std::vector<std::uint64_t>{2, 5, 1});
  REQUIRE(x.pre().has_value());
  CHECK(x.pre()->kind == Version::Pre::Kind::Rc);
  CHECK(x.pre()->number == 1);
  CHECK(x.post() == std::optional<std::uint64_t>(2));
  CHECK(x.dev() == std::optional<std::uint64_t>(3));
  REQUIRE(x.local().size() == 2);
  CHECK(std::get<std::string>(x.local()[0]) == "cu124");
  CHECK(std::get<std::uint64_t>(x.local()[1]) == 7);
  CHECK(x.local_string() == "cu124.7");
  CHECK(x.public_version().to_string() == "1!2.5.1rc1.post2.dev3");
  CHECK(x.base_version().to_string() == "1!2.5.1");
  CHECK(x.release_at(0) == 2);
  CHECK(x.release_at(2) == 1);
  CHECK(x.release_at(3) == 0);
  CHECK(x.has_local());
  CHECK(x.is_prerelease());
  CHECK(x.is_postrelease());
  CHECK(x.is_devrelease());

  CHECK(v("1.0a1").is_prerelease());
  CHECK(v("1.0.dev1").is_prerelease());
  CHECK(v("1.0.post1.dev1").is_prerelease());
  CHECK_FALSE(v("1.0").is_prerelease());
  CHECK_FALSE(v("1.0.post1").is_prerelease());
  CHECK_FALSE(v("1.0+local").is_prerelease());

  CHECK(Version().to_string() == "0");
  const std::uint64_t rel[] = {2, 5, 1};
  CHECK(Version::from_release(rel).to_string() == "2.5.1");
  CHECK(Version::from_release(rel) == v("2.5.1"));
  // Long releases spill out of the inline buffer and still behave.
  Version longv = v("1.2.3.4.5.6.7.8.9.10.11.12");
  CHECK(longv.to_string() == "1.2.3.4.5.6.7.8.9.10.11.12");
  CHECK(longv.release().size() == 12);
  Version copy = longv;
  CHECK(copy == longv);
  CHECK(copy.release_at(11) == 12);
  CHECK(v("1.2.3.4.5.0.0.0.0") == v("1.2.3.4.5"));
}

TEST_CASE("PEP 440 ordering table", "[core][version]") {
  // The "summary of permitted suffixes and relative ordering" example, in order.
  const std::vector<std::string> ordered = {
      "1.dev0",
      "1.0.dev456",
      "1.0a1",
      "1.0a2.dev456",
      "1.0a12.dev456",
      "1.0a12",
      "1.0b1.dev456",
      "1.0b2",
      "1.0b2.post345.dev456",
      "1.0b2.post345",
      "1.0rc1.dev456",
      "1.0rc1",
      "1.0",
      "1.0+abc.5",
      "1.0+abc.7",
      "1.0+5",
      "1.0.post456.dev34",
      "1.0.post456",
      "1.0.15",
      "1.1.dev1",
  };
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    INFO(ordered[i] << " < " << ordered[i + 1]);
    CHECK(v(ordered[i]) < v(ordered[i + 1]));
    CHECK(v(ordered[i + 1]) > v(ordered[i]));
    CHECK(v(ordered[i]) != v(ordered[i + 1]));
  }
}

TEST_CASE("packaging's ordering list sorts back into place", "[core][version]") {
  // From pypa/packaging tests/test_version.py (VERSIONS), with and without an epoch.
  const std::vector<std::string> base = {
      "1.0.dev456",
      "1.0a1",
      "1.0a2.dev456",
      "1.0a12.dev456",
      "1.0a12",
      "1.0b1.dev456",
      "1.0b2",
      "1.0b2.post345.dev456",
      "1.0b2.post345",
      "1.0b2-346",
      "1.0c1.dev456",
      "1.0c1",
      "1.0rc2",
      "1.0c3",
      "1.0",
      "1.0.post456.dev34",
      "1.0.post456",
      "1.1.dev1",
      "1.2+123abc",
      "1.2+123abc456",
      "1.2+abc",
      "1.2+abc123",
      "1.2+abc123def",
      "1.2+1234.abc",
      "1.2+123456",
      "1.2.r32+123456",
      "1.2.rev33+123456",
  };
  std::vector<std::string> all = base;
  for (const auto& s : base)
    all.push_back("1!" + s);
  std::vector<Version> expected;
  for (const auto& s : all)
    expected.push_back(v(s));
  std::vector<Version> shuffled = expected;
  std::mt19937 rng(440);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::vector<Version> sorted = shuffled;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(sorted.size() == expected.size());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      INFO("position " << i);
      CHECK(sorted[i].to_string() == expected[i].to_string());
    }
  }
}

TEST_CASE("Version equality ignores trailing zeros and spelling, hash agrees", "[core][version]") {
  const std::vector<std::pair<std::string, std::string>> equal = {
      {"1.0", "1.0.0"},
      {"1", "1.0.0.0"},
      {"1.0a1", "1.0.0alpha1"},
      {"1.0-1", "1.0.post1"},
      {"1.0+abc.1", "1.0+ABC-01"},
      {"0!1.0", "v1"},
      {"1.0.dev0", "1.0-dev"},
      {"1.0c1", "1.0rc1"},
      {"2.5.1+cu124", "2.5.1.0+CU124"},
  };
  for (const auto& [a, b] : equal) {
    INFO(a << " == " << b);
    CHECK(v(a) == v(b));
    CHECK((v(a) <=> v(b)) == std::strong_ordering::equal);
    CHECK(v(a).hash() == v(b).hash());
  }
  std::unordered_set<Version, VersionHash> set;
  set.insert(v("1.0"));
  set.insert(v("1.0.0"));
  set.insert(v("1.0+local"));
  CHECK(set.size() == 2);
  // Local labels: numbers above strings, longer above its prefix.
  CHECK(v("1.0") < v("1.0+a"));
  CHECK(v("1.0+a") < v("1.0+0"));
  CHECK(v("1.0+cu124") < v("1.0+cu124.1"));
  CHECK(v("1.0+cu92") > v("1.0+cu130"));  // strings compare lexically (DESIGN.md: never infer CUDA)
  CHECK(v("1.0+rocm6.2") < v("1.0+rocm6.10"));
  CHECK(v("1.0.post1") > v("1.0+zzz"));
  CHECK(v("2!0.1") > v("1!99"));
}

TEST_CASE("Invalid versions report the column of the offending character", "[core][version]") {
  CHECK(error_column("") == 1);
  CHECK(error_column("   ") == 4);
  CHECK(error_column("foo") == 1);
  CHECK(error_column("1.0x") == 4);
  CHECK(error_column("1.0+") == 5);
  CHECK(error_column("1.0+abc.") == 8);
  CHECK(error_column("1.0+abc def") == 9);
  CHECK(error_column("1.0 abc") == 5);
  CHECK(error_column("1!") == 2);
  CHECK(error_column("1.0-") == 4);
  CHECK(error_column("1.0a1a1") == 6);
  CHECK(error_column("1.0.*") == 4);
  CHECK(error_column("1.0.post1.post2") == 10);
  CHECK(error_column("1.0.dev1.a1") == 9);
  CHECK(error_column("1.0+abc!") == 8);
  CHECK(error_column("v") == 2);
  CHECK(error_column("1..0") == 2);
  CHECK(error_column("1.0prev") == 7);
  CHECK(error_column("a1.0") == 1);
  // Numbers above 2^64-1 (packaging allows big ints; gpulock rejects, see version.h).
  CHECK(error_column("18446744073709551615") == 0);
  CHECK(error_column("18446744073709551616") == 1);
  CHECK(error_column("1.0.post99999999999999999999") == 9);
  CHECK(error_column("1!99999999999999999999.0") == 3);
  CHECK(error_column("1.0+99999999999999999999") == 5);
  CHECK(error_column("1.0+abc99999999999999999999") == 0);  // alphanumeric: a string
  // Non-ASCII letters that Python's IGNORECASE would fold (KELVIN SIGN) are rejected.
  CHECK(error_column("1.0+\xe2\x84\xaa") == 5);
}

TEST_CASE("Version round-trips through its normalized form", "[core][version]") {
  std::mt19937_64 rng(20240508);
  auto pick = [&](std::initializer_list<const char*> xs) {
    return std::string(*(xs.begin() + static_cast<std::ptrdiff_t>(rng() % xs.size())));
  };
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    if (rng() % 5 == 0) s += std::to_string(rng() % 3) + "!";
    std::size_t parts = 1 + rng() % 6;
    for (std::size_t k = 0; k < parts; ++k) {
      if (k) s += ".";
      s += std::to_string(rng() % 30);
    }
    if (rng() % 3 == 0)
      s += pick({"a", "-alpha", ".b", "rc", "_c", "pre", "preview"}) + std::to_string(rng() % 5);
    if (rng() % 3 == 0) s += pick({".post", "-", "_rev", "r"}) + std::to_string(1 + rng() % 5);
    if (rng() % 3 == 0) s += pick({".dev", "-dev", "dev"}) + std::to_string(rng() % 5);
    if (rng() % 3 == 0) s += pick({"+cu124", "+cpu", "+rocm6.2", "+ubuntu-1", "+Abc.007"});
    Version a = v(s);
    Version b = v(a.to_string());
    INFO(s << " -> " << a.to_string());
    CHECK(a == b);
    CHECK(a.to_string() == b.to_string());
    CHECK(a.hash() == b.hash());
  }
}

TEST_CASE("PEP 440 version scheme examples sort as the PEP lists them", "[core][version]") {
  const std::vector<std::vector<std::string>> sequences = {
      // Final releases, serial and date-based schemes
      {"0.1", "0.2", "0.3", "1.0", "1.1"},
      {"1.1.0", "1.1.1", "1.1.2", "1.2.0"},
      {"0.9", "1.0a1", "1.0a2", "1.0b1", "1.0rc1", "1.0"},
      {"2012.4", "2012.7", "2012.10", "2013.1", "2013.6"},
      // Pre-releases: a < b < rc < final; dev releases before everything of their release
      {"1.0.dev1", "1.0a1", "1.0b1", "1.0rc1", "1.0"},
      // Post-releases and their dev releases
      {"1.0", "1.0.post1.dev1", "1.0.post1", "1.0.post2", "1.0.1"},
      // Epochs: a change of scheme sorts after everything of the older scheme
      {"1.0", "1.1", "2.0", "2013.10", "2014.04", "1!1.0", "1!1.1", "1!2.0"},
      // Release comparison pads with zeros
      {"1.0", "1.0.1", "1.1"},
  };
  for (const auto& seq : sequences) {
    for (std::size_t i = 0; i + 1 < seq.size(); ++i) {
      INFO(seq[i] << " < " << seq[i + 1]);
      CHECK(v(seq[i]) < v(seq[i + 1]));
    }
  }
  CHECK(v("1.0") == v("1.0.0"));
  CHECK(v("2014.04").to_string() == "2014.4");
}

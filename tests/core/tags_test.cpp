#include "gpulock/core/tags.h"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "python_reference.h"

using namespace gpulock::core;

namespace {

std::vector<std::string> strings(const std::vector<Tag>& tags) {
  std::vector<std::string> out;
  out.reserve(tags.size());
  for (const auto& t : tags)
    out.push_back(t.to_string());
  return out;
}

TagTarget target_for(std::string_view python, std::string_view platform) {
  auto t = TagTarget::from_platform_tag(python, platform);
  REQUIRE(t.has_value());
  return *t;
}

std::size_t index_of(const std::vector<std::string>& v, std::string_view s) {
  auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? v.size() : static_cast<std::size_t>(it - v.begin());
}

// The reference lists of pypa/packaging (tests/core/tags_reference.py): one block of tags
// per spec line, each block ended by "==".
std::vector<std::vector<std::string>> packaging_tags(const std::vector<std::string>& specs) {
  std::vector<std::vector<std::string>> blocks(1);
  for (auto& line : gpulock::test::run_python_reference("tags_reference.py", specs)) {
    if (line == "==") {
      blocks.emplace_back();
    } else {
      blocks.back().push_back(std::move(line));
    }
  }
  blocks.pop_back();  // the empty block after the last "=="
  return blocks;
}

}  // namespace

TEST_CASE("cp311 on manylinux_2_28_x86_64: the first tags in pip's order", "[core][tags]") {
  const auto tags = strings(supported_tags(target_for("3.11", "manylinux_2_28_x86_64")));
  // From packaging.tags.cpython_tags((3, 11), ["cp311"], <platforms of glibc 2.28>).
  const std::vector<std::string> first = {
      "cp311-cp311-manylinux_2_28_x86_64", "cp311-cp311-manylinux_2_27_x86_64",
      "cp311-cp311-manylinux_2_26_x86_64", "cp311-cp311-manylinux_2_25_x86_64",
      "cp311-cp311-manylinux_2_24_x86_64", "cp311-cp311-manylinux_2_23_x86_64",
      "cp311-cp311-manylinux_2_22_x86_64", "cp311-cp311-manylinux_2_21_x86_64",
      "cp311-cp311-manylinux_2_20_x86_64", "cp311-cp311-manylinux_2_19_x86_64",
      "cp311-cp311-manylinux_2_18_x86_64", "cp311-cp311-manylinux_2_17_x86_64",
      "cp311-cp311-manylinux2014_x86_64",  "cp311-cp311-manylinux_2_16_x86_64",
      "cp311-cp311-manylinux_2_15_x86_64", "cp311-cp311-manylinux_2_14_x86_64",
      "cp311-cp311-manylinux_2_13_x86_64", "cp311-cp311-manylinux_2_12_x86_64",
      "cp311-cp311-manylinux2010_x86_64",  "cp311-cp311-manylinux_2_11_x86_64",
      "cp311-cp311-manylinux_2_10_x86_64", "cp311-cp311-manylinux_2_9_x86_64",
      "cp311-cp311-manylinux_2_8_x86_64",  "cp311-cp311-manylinux_2_7_x86_64",
      "cp311-cp311-manylinux_2_6_x86_64",  "cp311-cp311-manylinux_2_5_x86_64",
      "cp311-cp311-manylinux1_x86_64",     "cp311-cp311-linux_x86_64",
      "cp311-abi3-manylinux_2_28_x86_64",  "cp311-abi3-manylinux_2_27_x86_64",
  };
  REQUIRE(tags.size() == 714);
  CHECK(std::vector<std::string>(tags.begin(), tags.begin() + 30) == first);
  // 28 platforms; blocks of 28: cp311, abi3, none, cp310..cp32 abi3 (9), py311, py3, py310..py30.
  CHECK(tags[56] == "cp311-none-manylinux_2_28_x86_64");
  CHECK(tags[84] == "cp310-abi3-manylinux_2_28_x86_64");
  CHECK(tags[84 + 8 * 28] == "cp32-abi3-manylinux_2_28_x86_64");
  CHECK(tags[84 + 9 * 28] == "py311-none-manylinux_2_28_x86_64");
  CHECK(tags[84 + 10 * 28] == "py3-none-manylinux_2_28_x86_64");
  CHECK(tags[700] == "cp311-none-any");
  CHECK(tags[701] == "py311-none-any");
  CHECK(tags[702] == "py3-none-any");
  CHECK(tags[713] == "py30-none-any");
}

TEST_CASE("cp313t: free-threaded ABI, abi3t instead of abi3", "[core][tags]") {
  const auto tags = strings(supported_tags(target_for("3.13t", "manylinux_2_28_x86_64")));
  REQUIRE(tags.size() == 828);
  CHECK(tags[0] == "cp313-cp313t-manylinux_2_28_x86_64");
  CHECK(tags[1] == "cp313-cp313t-manylinux_2_27_x86_64");
  CHECK(tags[27] == "cp313-cp313t-linux_x86_64");
  CHECK(tags[28] == "cp313-abi3t-manylinux_2_28_x86_64");
  CHECK(tags[56] == "cp313-none-manylinux_2_28_x86_64");
  CHECK(tags[84] == "cp312-abi3t-manylinux_2_28_x86_64");
  CHECK(tags[812] == "cp313-none-any");
  CHECK(tags[813] == "py313-none-any");
  // abi3 extensions do not load on a free-threaded interpreter, nor do cp313 (GIL) ones.
  for (const auto& t : tags) {
    CHECK(t.find("-abi3-") == std::string::npos);
    CHECK(t.find("-cp313-") == std::string::npos);
  }
}

TEST_CASE("supported_tags equals packaging's list for many targets", "[core][tags][differential]") {
  struct Case {
    std::string spec;  // for tags_reference.py
    TagTarget target;
  };
  std::vector<Case> cases;
  auto linux_target = [](std::uint32_t minor, bool ft, std::string arch,
                         std::optional<std::pair<std::uint32_t, std::uint32_t>> glibc,
                         std::optional<std::pair<std::uint32_t, std::uint32_t>> musl) {
    TagTarget t;
    t.python_minor = minor;
    t.free_threaded = ft;
    t.os = Os::Linux;
    t.arch = std::move(arch);
    t.glibc = glibc;
    t.musl = musl;
    return t;
  };
  auto pair_text = [](const std::optional<std::pair<std::uint32_t, std::uint32_t>>& p) {
    return p ? std::to_string(p->first) + "." + std::to_string(p->second) : std::string("-");
  };
  auto add = [&](TagTarget t) {
    std::string os = t.os == Os::Linux ? "linux" : t.os == Os::MacOs ? "macos" : "windows";
    std::string spec = t.implementation + " " + std::to_string(t.python_major) + " " +
                       std::to_string(t.python_minor) + " " + (t.free_threaded ? "1" : "0") + " " +
                       os + " " + t.arch + " " + (t.os == Os::Linux ? pair_text(t.glibc) : "-") +
                       " " + (t.os == Os::Linux ? pair_text(t.musl) : "-") + " " +
                       (t.os == Os::MacOs ? pair_text(t.macos) : "-");
    cases.push_back({spec, std::move(t)});
  };
  using P = std::pair<std::uint32_t, std::uint32_t>;
  for (std::uint32_t minor : {0u, 1u, 2u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u}) {
    add(linux_target(minor, false, "x86_64", P{2, 28}, std::nullopt));
  }
  add(linux_target(13, true, "x86_64", P{2, 28}, std::nullopt));
  add(linux_target(14, true, "aarch64", P{2, 39}, std::nullopt));
  add(linux_target(12, false, "x86_64", P{2, 17}, std::nullopt));
  add(linux_target(12, false, "x86_64", P{2, 5}, std::nullopt));
  add(linux_target(12, false, "x86_64", P{2, 4}, std::nullopt));
  add(linux_target(12, false, "x86_64", P{2, 39}, std::nullopt));
  add(linux_target(12, false, "x86_64", P{3, 1}, std::nullopt));
  add(linux_target(12, false, "aarch64", P{2, 28}, std::nullopt));
  add(linux_target(11, false, "aarch64", P{2, 17}, std::nullopt));
  add(linux_target(11, false, "aarch64", P{2, 16}, std::nullopt));
  add(linux_target(12, false, "i686", P{2, 12}, std::nullopt));
  add(linux_target(12, false, "armv7l", P{2, 31}, std::nullopt));
  add(linux_target(12, false, "ppc64le", P{2, 31}, std::nullopt));
  add(linux_target(12, false, "s390x", P{2, 34}, std::nullopt));
  add(linux_target(12, false, "riscv64", P{2, 39}, std::nullopt));
  add(linux_target(12, false, "sparc64", P{2, 28}, std::nullopt));
  add(linux_target(12, false, "x86_64", std::nullopt, P{1, 2}));
  add(linux_target(12, false, "aarch64", P{2, 28}, P{1, 1}));
  add(linux_target(12, false, "x86_64", std::nullopt, std::nullopt));
  {
    TagTarget pypy = linux_target(10, false, "x86_64", P{2, 28}, std::nullopt);
    pypy.implementation = "pp";
    add(pypy);
  }
  for (auto [arch, version] : std::vector<std::pair<std::string, P>>{{"arm64", {14, 0}},
                                                                     {"arm64", {15, 2}},
                                                                     {"arm64", {11, 0}},
                                                                     {"x86_64", {14, 0}},
                                                                     {"x86_64", {10, 15}},
                                                                     {"x86_64", {10, 9}},
                                                                     {"arm64", {10, 16}},
                                                                     {"universal2", {12, 0}},
                                                                     {"i386", {10, 6}},
                                                                     {"ppc64", {10, 5}},
                                                                     {"ppc", {10, 6}},
                                                                     {"intel", {10, 8}}}) {
    TagTarget t;
    t.python_minor = 12;
    t.os = Os::MacOs;
    t.arch = arch;
    t.macos = version;
    t.glibc.reset();
    add(t);
  }
  for (std::string arch : {"amd64", "arm64", "x86"}) {
    TagTarget t;
    t.python_minor = 12;
    t.os = Os::Windows;
    t.arch = arch;
    t.glibc.reset();
    add(t);
  }

  std::vector<std::string> specs;
  for (const auto& c : cases)
    specs.push_back(c.spec);
  const auto expected = packaging_tags(specs);
  REQUIRE(expected.size() == cases.size());
  std::size_t compared = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("target: " << cases[i].spec);
    const auto ours = strings(supported_tags(cases[i].target));
    REQUIRE(!expected[i].empty());
    CHECK(ours.size() == expected[i].size());
    const std::size_t n = std::min(ours.size(), expected[i].size());
    std::size_t first_diff = n;
    for (std::size_t k = 0; k < n; ++k) {
      if (ours[k] != expected[i][k]) {
        first_diff = k;
        break;
      }
    }
    INFO("first difference at index " << first_diff << ": "
                                      << (first_diff < n ? ours[first_diff] : "") << " vs "
                                      << (first_diff < n ? expected[i][first_diff] : ""));
    CHECK(first_diff == n);
    compared += n;
  }
  WARN("compared " << compared << " tags of " << cases.size() << " targets with packaging");
}

TEST_CASE("platform_tags: legacy manylinux aliases follow their equivalent, linux last",
          "[core][tags]") {
  const auto plats = platform_tags(target_for("3.12", "manylinux_2_28_x86_64"));
  REQUIRE(plats.size() == 28);
  CHECK(plats.front() == "manylinux_2_28_x86_64");
  CHECK(plats.back() == "linux_x86_64");
  CHECK(index_of(plats, "manylinux2014_x86_64") == index_of(plats, "manylinux_2_17_x86_64") + 1);
  CHECK(index_of(plats, "manylinux2010_x86_64") == index_of(plats, "manylinux_2_12_x86_64") + 1);
  CHECK(index_of(plats, "manylinux1_x86_64") == index_of(plats, "manylinux_2_5_x86_64") + 1);

  // aarch64 manylinux starts at glibc 2.17 (manylinux2014); no manylinux1/2010 there.
  const auto arm = platform_tags(target_for("3.12", "manylinux_2_28_aarch64"));
  CHECK(arm.size() == 12 + 1 + 1);
  CHECK(index_of(arm, "manylinux2014_aarch64") < arm.size());
  CHECK(index_of(arm, "manylinux2010_aarch64") == arm.size());
  CHECK(arm[arm.size() - 2] == "manylinux2014_aarch64");

  // A legacy tag as the target means its glibc.
  const auto legacy = platform_tags(target_for("3.12", "manylinux2014_x86_64"));
  CHECK(legacy.front() == "manylinux_2_17_x86_64");
  CHECK(legacy[1] == "manylinux2014_x86_64");
  CHECK(platform_tags(target_for("3.12", "manylinux1_x86_64")).size() == 3);

  // linux_<arch> means no manylinux at all.
  CHECK(platform_tags(target_for("3.12", "linux_x86_64")) ==
        std::vector<std::string>{"linux_x86_64"});

  // musllinux: X_Y down to X_0, then linux.
  CHECK(platform_tags(target_for("3.12", "musllinux_1_2_x86_64")) ==
        std::vector<std::string>{"musllinux_1_2_x86_64", "musllinux_1_1_x86_64",
                                 "musllinux_1_0_x86_64", "linux_x86_64"});

  CHECK(platform_tags(target_for("3.12", "win_amd64")) == std::vector<std::string>{"win_amd64"});
  CHECK(platform_tags(target_for("3.12", "win32")) == std::vector<std::string>{"win32"});
  CHECK(platform_tags(target_for("3.12", "win_arm64")) == std::vector<std::string>{"win_arm64"});

  const auto mac = platform_tags(target_for("3.12", "macosx_14_0_arm64"));
  CHECK(mac[0] == "macosx_14_0_arm64");
  CHECK(mac[1] == "macosx_14_0_universal2");
  CHECK(mac[2] == "macosx_13_0_arm64");
  CHECK(index_of(mac, "macosx_10_9_universal2") < mac.size());
  CHECK(index_of(mac, "macosx_10_9_x86_64") == mac.size());
}

TEST_CASE("TagTarget::from_platform_tag", "[core][tags]") {
  auto t = target_for("3.11", "manylinux_2_28_x86_64");
  CHECK(t.python_major == 3);
  CHECK(t.python_minor == 11);
  CHECK_FALSE(t.free_threaded);
  CHECK(t.os == Os::Linux);
  CHECK(t.arch == "x86_64");
  REQUIRE(t.glibc.has_value());
  CHECK(*t.glibc == std::pair{2u, 28u});
  CHECK_FALSE(t.musl.has_value());
  CHECK(t.interpreter_tag() == "cp311");
  CHECK(t.abi_tag() == "cp311");

  CHECK(*target_for("3.12", "manylinux2014_aarch64").glibc == std::pair{2u, 17u});
  CHECK(*target_for("3.12", "manylinux2010_x86_64").glibc == std::pair{2u, 12u});
  CHECK(*target_for("3.12", "manylinux1_i686").glibc == std::pair{2u, 5u});
  CHECK_FALSE(target_for("3.12", "linux_x86_64").glibc.has_value());
  auto musl = target_for("3.12", "musllinux_1_2_aarch64");
  CHECK_FALSE(musl.glibc.has_value());
  CHECK(*musl.musl == std::pair{1u, 2u});
  CHECK(musl.arch == "aarch64");
  auto mac = target_for("3.12", "macosx_11_0_arm64");
  CHECK(mac.os == Os::MacOs);
  CHECK(mac.macos == std::pair{11u, 0u});
  CHECK(mac.arch == "arm64");
  CHECK(target_for("3.12", "win_amd64").arch == "amd64");
  CHECK(target_for("3.12", "win32").arch == "x86");
  CHECK(target_for("3.12", "win_arm64").os == Os::Windows);

  // Python version spellings: 3.11, 3.11.4, 311, 3.13t, 313t.
  CHECK(target_for("3.11.4", "linux_x86_64").python_minor == 11);
  CHECK(target_for("311", "linux_x86_64").python_minor == 11);
  CHECK(target_for("3.13t", "linux_x86_64").free_threaded);
  CHECK(target_for("313t", "linux_x86_64").abi_tag() == "cp313t");
  CHECK(target_for("3.7", "linux_x86_64").abi_tag() == "cp37m");
  CHECK(target_for("3.12", "MANYLINUX_2_28_X86_64").arch == "x86_64");
}

TEST_CASE("TagTarget::from_platform_tag rejects bad input with a message", "[core][tags]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"3.11", ""},
      {"3.11", "manylinux_2_x86_64"},
      {"3.11", "manylinux_2_28_"},
      {"3.11", "manylinux_2_28_sparc64"},
      {"3.11", "manylinux2014_"},
      {"3.11", "musllinux_1_x86_64"},
      {"3.11", "macosx_9_0_x86_64"},
      {"3.11", "macosx_arm64"},
      {"3.11", "win_sparc"},
      {"3.11", "any"},
      {"3.11", "linux_"},
      {"3.11", "manylinux-2-28-x86_64"},
      {"3.11", std::string("linux_x86\0_64", 13)},
      {"3.11", "manylinux_99999999999_28_x86_64"},
      {"3.11", std::string(10'000'000, 'a')},
      {"3.11", "linux_\xff\xfe"},
      {"", "linux_x86_64"},
      {"3", "linux_x86_64"},
      {"2.7", "linux_x86_64"},
      {"3.x", "linux_x86_64"},
      {"3.12t", "linux_x86_64"},
      {"3.11.", "linux_x86_64"},
      {"3.11.4.5", "linux_x86_64"},
      {"3.100", "linux_x86_64"},
      {"t", "linux_x86_64"},
      {"3..11", "linux_x86_64"},
      {"99999999999.1", "linux_x86_64"},
  };
  for (const auto& [py, plat] : bad) {
    INFO("python " << py << " platform " << plat.substr(0, 40));
    auto r = TagTarget::from_platform_tag(py, plat);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::InvalidTag);
    CHECK(r.error().message.size() < 300);
    CHECK_FALSE(r.error().hints.empty());
  }
}

TEST_CASE("parse_tag_set expands compressed tag sets in order", "[core][tags]") {
  auto one = parse_tag_set("py3-none-any");
  REQUIRE(one.has_value());
  REQUIRE(one->size() == 1);
  CHECK((*one)[0] == Tag{"py3", "none", "any"});

  auto two = parse_tag_set("py2.py3-none-any");
  REQUIRE(two.has_value());
  CHECK(strings(*two) == std::vector<std::string>{"py2-none-any", "py3-none-any"});

  auto plats = parse_tag_set("cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64");
  REQUIRE(plats.has_value());
  CHECK(strings(*plats) == std::vector<std::string>{"cp312-cp312-manylinux_2_17_x86_64",
                                                    "cp312-cp312-manylinux2014_x86_64"});

  auto cross = parse_tag_set("CP38.cp39-abi3.none-Win_AMD64.any.any");
  REQUIRE(cross.has_value());
  CHECK(strings(*cross) == std::vector<std::string>{"cp38-abi3-win_amd64", "cp38-abi3-any",
                                                    "cp38-none-win_amd64", "cp38-none-any",
                                                    "cp39-abi3-win_amd64", "cp39-abi3-any",
                                                    "cp39-none-win_amd64", "cp39-none-any"});
}

TEST_CASE("parse_tag_set errors carry the column", "[core][tags]") {
  struct Bad {
    std::string text;
    std::size_t column;
  };
  const std::vector<Bad> bad = {
      {"", 1},
      {"py3", 4},
      {"py3-none", 9},
      {"py3-none-any-x", 13},
      {"-none-any", 1},
      {"py3--any", 5},
      {"py3-none-", 10},
      {"py2..py3-none-any", 5},
      {"py3.-none-any", 5},
      {"py3-none-an y", 12},
      {std::string("py3-no\0ne-any", 13), 7},
      {"py3-none-any\xff", 13},
  };
  for (const auto& b : bad) {
    INFO("tag set " << b.text);
    auto r = parse_tag_set(b.text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::InvalidTag);
    CHECK(r.error().column == b.column);
  }
}

TEST_CASE("parse_tag_set bounds the cross product and survives huge input", "[core][tags]") {
  // 20 x 20 x 20 = 8000 > kMaxExpandedTags.
  std::string part = "a0";
  for (int i = 1; i < 20; ++i)
    part += ".a" + std::to_string(i);
  auto r = parse_tag_set(part + "-" + part + "-" + part);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("more than") != std::string::npos);

  auto ok = parse_tag_set(part + "-" + part + "-any");
  REQUIRE(ok.has_value());
  CHECK(ok->size() == 400);

  std::string huge(10'000'000, 'x');
  auto big = parse_tag_set(huge);
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().message.size() < 300);

  std::string dots = "py3-none-";
  for (int i = 0; i < 1'000'000; ++i)
    dots += "a.";
  dots += "a";
  auto many = parse_tag_set(dots);
  REQUIRE_FALSE(many.has_value());
  CHECK(many.error().code == ErrorCode::InvalidTag);

  auto dup = parse_tag_set("py3.py3-none-any.any");
  REQUIRE(dup.has_value());
  CHECK(dup->size() == 1);
}

TEST_CASE("TagRanker picks the best wheel: lowest index of any of its tags", "[core][tags]") {
  const auto supported = supported_tags(target_for("3.11", "manylinux_2_28_x86_64"));
  const TagRanker ranker(supported);
  CHECK(ranker.size() == supported.size());

  auto rank_of = [&](std::string_view tag_set) {
    auto tags = parse_tag_set(tag_set);
    REQUIRE(tags.has_value());
    return ranker.rank(*tags);
  };
  // Every supported tag ranks at its own index.
  for (std::size_t i = 0; i < supported.size(); ++i) {
    REQUIRE(ranker.rank(supported[i]) == std::optional<std::size_t>(i));
  }
  CHECK(rank_of("cp311-cp311-manylinux_2_28_x86_64") == std::optional<std::size_t>(0));
  // A compressed set ranks by its best member.
  CHECK(rank_of("cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64") ==
        std::optional<std::size_t>(11));
  CHECK(rank_of("cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64") ==
        std::optional<std::size_t>(11));
  CHECK(rank_of("py3-none-any") == std::optional<std::size_t>(702));
  // Unsupported: a newer glibc, another Python, another platform, abi3 of a newer Python.
  CHECK_FALSE(rank_of("cp311-cp311-manylinux_2_34_x86_64").has_value());
  CHECK_FALSE(rank_of("cp312-cp312-manylinux_2_28_x86_64").has_value());
  CHECK_FALSE(rank_of("cp311-cp311-win_amd64").has_value());
  CHECK_FALSE(rank_of("cp312-abi3-manylinux_2_28_x86_64").has_value());
  CHECK_FALSE(ranker.rank(std::span<const Tag>{}).has_value());
  // A very long tag cannot match and does not break the lookup.
  CHECK_FALSE(ranker.rank(Tag{std::string(100'000, 'c'), "none", "any"}).has_value());

  // Best wheel of one torch version: the manylinux cp311 build beats a pure-Python fallback,
  // the cp312 build is unusable.
  const std::vector<std::string> wheels = {"py3-none-any", "cp312-cp312-manylinux_2_28_x86_64",
                                           "cp311-cp311-manylinux_2_28_x86_64",
                                           "cp311-abi3-manylinux_2_17_x86_64"};
  std::optional<std::size_t> best_rank;
  std::string best;
  for (const auto& w : wheels) {
    auto r = rank_of(w);
    if (r && (!best_rank || *r < *best_rank)) {
      best_rank = r;
      best = w;
    }
  }
  CHECK(best == "cp311-cp311-manylinux_2_28_x86_64");

  // Duplicates in the supported list keep their first priority.
  const std::vector<Tag> dup = {Tag{"py3", "none", "any"}, Tag{"py3", "none", "any"},
                                Tag{"py2", "none", "any"}};
  const TagRanker r2(dup);
  CHECK(r2.size() == 2);
  CHECK(r2.rank(Tag{"py3", "none", "any"}) == std::optional<std::size_t>(0));
  CHECK(r2.rank(Tag{"py2", "none", "any"}) == std::optional<std::size_t>(2));
}

TEST_CASE("a target with an older glibc rejects manylinux_2_28 wheels", "[core][tags]") {
  const TagRanker old(supported_tags(target_for("3.10", "manylinux_2_17_x86_64")));
  auto tags = parse_tag_set("cp310-cp310-manylinux_2_28_x86_64");
  REQUIRE(tags.has_value());
  CHECK_FALSE(old.rank(*tags).has_value());
  auto legacy = parse_tag_set("cp310-cp310-manylinux1_x86_64");
  REQUIRE(legacy.has_value());
  CHECK(old.rank(*legacy).has_value());
}

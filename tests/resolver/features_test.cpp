// Resolver features beyond plain PubGrub: extras, virtual packages, pre-releases,
// yanked versions, unavailable candidates, constraints, errors, cancellation, hooks, report data.

#include "support.h"

using namespace resolver_test;
using gpulock::core::Error;
using gpulock::core::ErrorCode;

TEST_CASE("extras are proxies pinned to the base version", "[resolver][extras]") {
  InMemoryProvider p;
  add(p, "torch", "2.1.0", {"filelock"});
  add(p, "torch", "2.0.0", {"filelock"});
  add(p, "filelock", "3.0");
  add(p, "numpy", "1.26");
  REQUIRE(p.add_extra("torch", "2.0.0", "opt", {"numpy>=1.20"}));
  REQUIRE(p.add_extra("torch", "2.1.0", "opt", {"numpy>=2"}));  // no numpy>=2 exists

  SECTION("the extra's dependencies come along") {
    auto out = solve_ok(p, request({"torch[opt]"}));
    REQUIRE(std::holds_alternative<Solution>(out));
    const auto& s = std::get<Solution>(out);
    CHECK(versions(s) == std::map<std::string, std::string>{
                             {"filelock", "3.0"}, {"numpy", "1.26"}, {"torch", "2.0.0"}});
    const ChosenPackage* torch = s.find("torch");
    REQUIRE(torch != nullptr);
    CHECK(torch->extras == std::vector<std::string>{"opt"});
    REQUIRE(torch->required_by.size() == 1);
    CHECK(torch->required_by[0].package.empty());
    CHECK(torch->required_by[0].requirement == "torch[opt]");
  }
  SECTION("without the extra the newest torch is fine") {
    CHECK(solution_of(p, request({"torch"})) ==
          std::map<std::string, std::string>{{"filelock", "3.0"}, {"torch", "2.1.0"}});
  }
  SECTION("base and proxy cannot disagree") {
    CHECK(explanation_of(p, request({"torch[opt]", "torch>=2.1"})) ==
          "Because torch[opt]==2.1.0 depends on numpy>=2 and there is no version of numpy>=2, "
          "torch[opt]==2.1.0 cannot be used.\n"
          "And because torch[opt]==2.0.0 depends on torch==2.0.0, torch[opt] requires "
          "torch==2.0.0.\n"
          "And because you require both torch[opt] and torch>=2.1, version solving failed.");
  }
}

TEST_CASE("Requires-Python through the virtual package __python", "[resolver][virtual]") {
  InMemoryProvider p;
  add(p, "__python", "3.11");
  add(p, "a", "1", {"b>=2"});
  add(p, "b", "1");
  add(p, "b", "2", {"__python>=3.12"});
  add(p, "b", "2.1", {"__python>=3.12"});
  add(p, "c", "1", {"__python>=3.8"});

  SECTION("a compatible version is chosen and __python appears as virtual") {
    auto out = solve_ok(p, request({"b", "c"}));
    REQUIRE(std::holds_alternative<Solution>(out));
    const auto& s = std::get<Solution>(out);
    CHECK(versions(s) ==
          std::map<std::string, std::string>{{"__python", "3.11"}, {"b", "1"}, {"c", "1"}});
    REQUIRE(s.find("__python") != nullptr);
    CHECK(s.find("__python")->is_virtual);
    CHECK_FALSE(s.find("b")->is_virtual);
  }
  SECTION("the explanation names the Python requirement (fact left out)") {
    p.set_virtual_label("__python", "Python", "");
    CHECK(explanation_of(p, request({"a"})) ==
          "Because a depends on b>=2 and b>=2 needs Python >= 3.12, a cannot be used.\n"
          "And because you require a, version solving failed.");
  }
  SECTION("the explanation names the target Python") {
    p.set_virtual_label("__python", "Python", "the target Python is 3.11");
    CHECK(explanation_of(p, request({"a"})) ==
          "Because b>=2 needs Python >= 3.12 and the target Python is 3.11, b>=2 cannot be "
          "used.\n"
          "And because you require a and a depends on b>=2, version solving failed.");
  }
  SECTION("default wording") {
    CHECK(explanation_of(p, request({"a"})) ==
          "Because b>=2 needs __python>=3.12 and there is no version of __python>=3.12, b>=2 "
          "cannot be used.\n"
          "And because you require a and a depends on b>=2, version solving failed.");
  }
}

TEST_CASE("__cuda_variant keeps the torch family on one CUDA variant", "[resolver][virtual][gpu]") {
  InMemoryProvider p;
  add(p, "__cuda_variant", "12.4");
  add(p, "__cuda_variant", "12.1");
  add(p, "__cuda_variant", "11.8");
  add(p, "torch", "2.5.1+cu124", {"__cuda_variant==12.4"});
  add(p, "torch", "2.5.1+cu121", {"__cuda_variant==12.1"});
  add(p, "torch", "2.5.1+cu118", {"__cuda_variant==11.8"});
  add(p, "torchvision", "0.20.1+cu121", {"torch==2.5.1", "__cuda_variant==12.1"});
  add(p, "torchvision", "0.20.1+cu118", {"torch==2.5.1", "__cuda_variant==11.8"});
  // Preference as the GPU policy orders them: highest variant first.
  REQUIRE(p.prefer("torch", {"2.5.1+cu124", "2.5.1+cu121", "2.5.1+cu118"}));
  REQUIRE(p.prefer("__cuda_variant", {"12.4", "12.1", "11.8"}));
  REQUIRE(p.prefer("torchvision", {"0.20.1+cu121", "0.20.1+cu118"}));

  SECTION("the highest variant both have") {
    CHECK(solution_of(p, request({"torch", "torchvision"})) ==
          std::map<std::string, std::string>{{"__cuda_variant", "12.1"},
                                             {"torch", "2.5.1+cu121"},
                                             {"torchvision", "0.20.1+cu121"}});
  }
  SECTION("mixed variants are an explained conflict") {
    CHECK(explanation_of(p, request({"torch==2.5.1+cu121", "torchvision==0.20.1+cu118"})) ==
          "Because torch==2.5.1+cu121 needs __cuda_variant==12.1 and torchvision==0.20.1+cu118 "
          "needs __cuda_variant==11.8, torch==2.5.1+cu121 and torchvision==0.20.1+cu118 are "
          "incompatible.\n"
          "And because you require both torch==2.5.1+cu121 and torchvision==0.20.1+cu118, "
          "version solving failed.");
  }
}

TEST_CASE("pre-release policy", "[resolver][prerelease]") {
  InMemoryProvider p;
  add(p, "foo", "1.0");
  add(p, "foo", "2.0rc1");
  add(p, "bar", "1.0", {"foo>=2.0rc1"});

  SECTION("if-necessary prefers a final release") {
    CHECK(solution_of(p, request({"foo"})) == std::map<std::string, std::string>{{"foo", "1.0"}});
  }
  SECTION("if-necessary takes a pre-release when no final release remains") {
    CHECK(solution_of(p, request({"foo>=1.5"})) ==
          std::map<std::string, std::string>{{"foo", "2.0rc1"}});
  }
  SECTION("a requirement naming a pre-release allows pre-releases") {
    add(p, "foo", "1.5");
    CHECK(solution_of(p, request({"foo>=1.0rc1"})) ==
          std::map<std::string, std::string>{{"foo", "2.0rc1"}});
    CHECK(solution_of(p, request({"bar"})) ==
          std::map<std::string, std::string>{{"bar", "1.0"}, {"foo", "2.0rc1"}});
  }
  SECTION("allow (--pre) takes the best by preference") {
    SolveOptions o;
    o.prerelease = PrereleasePolicy::Allow;
    CHECK(solution_of(p, request({"foo"}), o) ==
          std::map<std::string, std::string>{{"foo", "2.0rc1"}});
  }
  SECTION("per-package overrides: options, then the provider") {
    SolveOptions o;
    o.prerelease_overrides["foo"] = PrereleasePolicy::Allow;
    CHECK(solution_of(p, request({"foo"}), o) ==
          std::map<std::string, std::string>{{"foo", "2.0rc1"}});
    p.set_prerelease_policy("foo", PrereleasePolicy::IfNecessary);
    CHECK(solution_of(p, request({"foo"}), o) ==
          std::map<std::string, std::string>{{"foo", "1.0"}});
  }
  SECTION("if-necessary falls back to a pre-release when the final release fails") {
    add(p, "foo", "2.0", {"missing>=1"});
    add(p, "foo", "2.1rc1");
    CHECK(solution_of(p, request({"foo>=2.0"})) ==
          std::map<std::string, std::string>{{"foo", "2.1rc1"}});
  }
  SECTION("disallow never picks one, and says why") {
    SolveOptions o;
    o.prerelease = PrereleasePolicy::Disallow;
    CHECK(explanation_of(p, request({"foo>=1.5"}), o) ==
          "Because you require foo>=1.5 and foo==2.0rc1 is a pre-release and pre-releases are "
          "disallowed, version solving failed.\n"
          "hint: pre-releases of foo would satisfy the requirements (2.0rc1), but pre-releases "
          "are disallowed (try --prerelease allow)");
    CHECK(solution_of(p, request({"foo"}), o) ==
          std::map<std::string, std::string>{{"foo", "1.0"}});
  }
}

TEST_CASE("yanked versions are used only when pinned (PEP 592)", "[resolver][yanked]") {
  InMemoryProvider p;
  add(p, "foo", "1.0");
  add(p, "foo", "2.0");
  add(p, "bar", "1.0", {"foo==2.0"});
  REQUIRE(p.set_yanked("foo", "2.0"));

  CHECK(solution_of(p, request({"foo"})) == std::map<std::string, std::string>{{"foo", "1.0"}});
  CHECK(solution_of(p, request({"foo==2.0"})) ==
        std::map<std::string, std::string>{{"foo", "2.0"}});
  CHECK(solution_of(p, request({"foo===2.0"})) ==
        std::map<std::string, std::string>{{"foo", "2.0"}});
  CHECK(solution_of(p, request({"bar"})) ==
        std::map<std::string, std::string>{{"bar", "1.0"}, {"foo", "2.0"}});
  CHECK(explanation_of(p, request({"foo>=1.5"})) ==
        "Because you require foo>=1.5 and foo==2.0 is yanked, version solving failed.\n"
        "hint: yanked versions of foo (2.0) are used only when a requirement pins them exactly "
        "with ==");
}

TEST_CASE("unavailable candidates and dependencies", "[resolver][unavailable]") {
  InMemoryProvider p;
  add(p, "foo", "1.0");
  add(p, "foo", "2.0");
  add(p, "foo", "2.1");
  REQUIRE(p.set_unavailable(
      "foo", "2.1",
      {UnavailableKind::NoCompatibleWheel, "has no wheel for cp312-manylinux_2_28_x86_64", {}}));
  REQUIRE(p.set_unavailable(
      "foo", "2.0",
      {UnavailableKind::NoCompatibleWheel, "has no wheel for cp312-manylinux_2_28_x86_64", {}}));
  p.add_hint("foo", "foo 2.1 has wheels for macosx_11_0_arm64 only");

  CHECK(solution_of(p, request({"foo"})) == std::map<std::string, std::string>{{"foo", "1.0"}});
  CHECK(explanation_of(p, request({"foo>=2"})) ==
        "Because you require foo>=2 and foo>=2.0 has no wheel for cp312-manylinux_2_28_x86_64, "
        "version solving failed.\n"
        "hint: foo 2.1 has wheels for macosx_11_0_arm64 only");

  SECTION("dependencies that cannot be read") {
    add(p, "bar", "1.0");
    add(p, "bar", "2.0");
    REQUIRE(p.set_dependencies_unavailable("bar", "2.0", {UnavailableKind::MetadataError, "", {}}));
    CHECK(solution_of(p, request({"bar"})) == std::map<std::string, std::string>{{"bar", "1.0"}});
    CHECK(explanation_of(p, request({"bar==2.0"})) ==
          "Because you require bar==2.0 and bar==2.0 has unreadable metadata, version solving "
          "failed.");
  }
  SECTION("only an sdist") {
    add(p, "baz", "1.0");
    REQUIRE(p.set_unavailable("baz", "1.0", {UnavailableKind::OnlySdist, "", {}}));
    CHECK(explanation_of(p, request({"baz"})) ==
          "Because you require baz and baz has only a source distribution (building from source "
          "is not supported), version solving failed.");
  }
  SECTION("a package that does not exist") {
    CHECK(explanation_of(p, request({"nothere>=1"})) ==
          "Because you require nothere>=1 and there are no versions of nothere, version solving "
          "failed.");
  }
}

TEST_CASE("constraints limit versions without requiring packages", "[resolver][constraints]") {
  InMemoryProvider p;
  add(p, "foo", "1.0");
  add(p, "foo", "2.0");
  add(p, "bar", "1.0", {"foo"});
  add(p, "bar", "2.0", {"foo>=2"});

  CHECK(solution_of(p, request({"bar"}, {"foo<2"})) ==
        std::map<std::string, std::string>{{"bar", "1.0"}, {"foo", "1.0"}});
  // An unused constraint costs no provider call: only foo's candidates are asked.
  std::size_t before = p.candidate_calls();
  CHECK(solution_of(p, request({"foo"}, {"unused>=1"})) ==
        std::map<std::string, std::string>{{"foo", "2.0"}});
  CHECK(p.candidate_calls() == before + 1);
  CHECK(explanation_of(p, request({"foo>=2"}, {"foo<2"})) ==
        "Because you require foo>=2 and your constraints allow only foo<2, version solving "
        "failed.");
}

TEST_CASE("provider errors propagate", "[resolver][errors]") {
  InMemoryProvider p;
  add(p, "foo", "1.0", {"bar"});
  add(p, "bar", "1.0");

  SECTION("candidates") {
    Error e;
    e.code = ErrorCode::Network;
    e.message = "connection refused";
    e.where = "https://pypi.example/simple/bar/";
    p.fail_candidates("bar", e);
    auto out = solve(p, request({"foo"}));
    REQUIRE_FALSE(out.has_value());
    CHECK(out.error().code == ErrorCode::Network);
    CHECK(out.error().where == "https://pypi.example/simple/bar/");
    REQUIRE(out.error().context.size() == 1);
    CHECK(out.error().context[0] == "while listing the versions of bar");
  }
  SECTION("dependencies") {
    Error e;
    e.code = ErrorCode::Http;
    e.message = "HTTP 503";
    p.fail_dependencies("foo", e);
    auto out = solve(p, request({"foo"}));
    REQUIRE_FALSE(out.has_value());
    CHECK(out.error().code == ErrorCode::Http);
    REQUIRE(out.error().context.size() == 1);
    CHECK(out.error().context[0] == "while reading the dependencies of foo 1.0");
  }
}

TEST_CASE("cancellation stops the solve", "[resolver][errors]") {
  InMemoryProvider p;
  add(p, "foo", "1.0", {"bar"});
  add(p, "bar", "1.0", {"baz"});
  add(p, "baz", "1.0");
  p.cancel_after(2);
  auto out = solve(p, request({"foo"}));
  REQUIRE_FALSE(out.has_value());
  CHECK(out.error().code == ErrorCode::Cancelled);
  // Checked once per step: candidates(foo), dependencies(foo), candidates(bar), then stop
  // (a full solve makes 6 calls).
  CHECK(p.calls() == 3);
}

TEST_CASE("the prefetch hook runs before the dependencies' candidates are asked",
          "[resolver][hooks]") {
  InMemoryProvider p;
  add(p, "foo", "1.0", {"bar", "baz[x]"});
  add(p, "bar", "1.0");
  add(p, "baz", "1.0");
  auto out = solve_ok(p, request({"foo"}));
  REQUIRE(std::holds_alternative<Solution>(out));
  CHECK(p.chosen_log() == std::vector<std::string>{"root 0: foo", "foo 1.0: bar, baz",
                                                   "bar 1.0:", "baz 1.0:", "baz 1.0:"});
}

TEST_CASE("why each package was chosen, and counters", "[resolver][report-data]") {
  InMemoryProvider p;
  add(p, "app", "1.0", {"lib>=1", "util"});
  add(p, "lib", "1.0", {"util<2"});
  add(p, "util", "1.0");
  add(p, "util", "2.0");
  auto out = solve_ok(p, request({"app"}));
  REQUIRE(std::holds_alternative<Solution>(out));
  const auto& s = std::get<Solution>(out);
  CHECK(versions(s) ==
        std::map<std::string, std::string>{{"app", "1.0"}, {"lib", "1.0"}, {"util", "1.0"}});
  const ChosenPackage* util = s.find("util");
  REQUIRE(util != nullptr);
  REQUIRE(util->required_by.size() == 2);
  CHECK(util->required_by[0].package == "app");
  CHECK(util->required_by[0].version->to_string() == "1.0");
  CHECK(util->required_by[0].requirement == "util");
  CHECK(util->required_by[1].package == "lib");
  CHECK(util->required_by[1].requirement == "util<2");
  CHECK(util->candidate_index == 1);  // preference order is newest first: 2.0, 1.0
  CHECK(s.find("app")->decision_level == 2);
  CHECK(s.find("app")->decision_order == 0);
  CHECK(s.stats.decisions == 4);
  CHECK(s.stats.candidate_requests == 3);
  CHECK(s.stats.dependency_requests == 3);
  CHECK(s.stats.packages == 3);
}

TEST_CASE("preferences: candidate order wins among allowed versions", "[resolver][preferences]") {
  InMemoryProvider p;
  add(p, "foo", "1.0");
  add(p, "foo", "1.1");
  add(p, "foo", "2.0");
  add(p, "bar", "1.0", {"foo>=1.1"});
  REQUIRE(p.prefer("foo", {"1.0"}));
  // The lock pin 1.0 is kept when allowed...
  CHECK(solution_of(p, request({"foo"})) == std::map<std::string, std::string>{{"foo", "1.0"}});
  // ...and otherwise the next in preference order (newest) is taken.
  CHECK(solution_of(p, request({"bar"})) ==
        std::map<std::string, std::string>{{"bar", "1.0"}, {"foo", "2.0"}});
}

TEST_CASE("priority: direct, then singletons, then the provider's hint, then first seen",
          "[resolver][priority]") {
  InMemoryProvider p;
  add(p, "a", "1.0", {"c==1.0", "d", "e"});
  add(p, "b", "1.0");
  add(p, "c", "1.0");
  add(p, "c", "2.0");
  add(p, "d", "1.0");
  add(p, "d", "2.0");
  add(p, "e", "1.0");
  add(p, "e", "2.0");
  p.set_priority("e", 5);
  auto out = solve_ok(p, request({"a", "b"}));
  REQUIRE(std::holds_alternative<Solution>(out));
  const auto& s = std::get<Solution>(out);
  CHECK(s.find("a")->decision_order == 0);
  CHECK(s.find("b")->decision_order == 1);
  CHECK(s.find("c")->decision_order == 2);  // singleton ==1.0
  CHECK(s.find("e")->decision_order == 3);  // hint 5 beats first-seen d
  CHECK(s.find("d")->decision_order == 4);
}

TEST_CASE("cycles and self-dependencies", "[resolver]") {
  InMemoryProvider p;
  add(p, "a", "1.0", {"b"});
  add(p, "b", "1.0", {"a"});
  add(p, "c", "1.0", {"c"});
  add(p, "d", "2.0", {"d<2"});
  add(p, "d", "1.0");
  CHECK(solution_of(p, request({"a", "c"})) ==
        std::map<std::string, std::string>{{"a", "1.0"}, {"b", "1.0"}, {"c", "1.0"}});
  CHECK(solution_of(p, request({"d"})) == std::map<std::string, std::string>{{"d", "1.0"}});
}

TEST_CASE("an empty request has an empty solution", "[resolver]") {
  InMemoryProvider p;
  auto out = solve_ok(p, SolveRequest{});
  REQUIRE(std::holds_alternative<Solution>(out));
  CHECK(std::get<Solution>(out).packages.empty());
}

TEST_CASE("dependencies no candidate satisfies merge only when written alike",
          "[resolver][virtual][gpu]") {
  // On a CUDA 12.4 driver none of these runtimes can be used, each for its own CUDA: one merged
  // fact would put one version's requirement on all of them.
  InMemoryProvider p;
  add(p, "__cuda", "12.4");
  add(p, "rt", "12.6.77", {"__cuda>=12.6"});
  add(p, "rt", "12.8.57", {"__cuda>=12.8"});
  add(p, "rt", "12.8.90", {"__cuda>=12.8"});
  add(p, "rt", "12.9.79", {"__cuda>=12.9"});
  add(p, "rt", "12.4.127", {"__cuda>=12.4"});
  CHECK(explanation_of(p, request({"rt>=12.5"})) ==
        "Because rt==12.6.77 needs __cuda>=12.6 and there is no version of __cuda>=12.6, "
        "rt==12.6.77 cannot be "
        "used.\n"
        "Because rt>=12.8.57,<12.9.79 needs __cuda>=12.8 and there is no version of __cuda>=12.8, "
        "rt>=12.8.57,<12.9.79 cannot be used.\n"
        "Thus, rt>=12.6.77,<12.9.79 cannot be used.\n"
        "Because rt==12.9.79 needs __cuda>=12.9 and there is no version of __cuda>=12.9, "
        "rt==12.9.79 cannot be "
        "used.\n"
        "Thus, rt>=12.6.77 cannot be used.\n"
        "And because you require rt>=12.5, version solving failed.");
  CHECK(solution_of(p, request({"rt"})) ==
        std::map<std::string, std::string>{{"__cuda", "12.4"}, {"rt", "12.4.127"}});
}

// Issue 44 item 3: a provider's conflict rule ({A at v, B outside C}) is avoided when another
// version can be chosen, explained with its reason when none can, and never requires B.
TEST_CASE("conflict rules are avoided, explained, and require nothing", "[resolver][conflicts]") {
  InMemoryProvider p;
  const std::string why = "its libcusparse.so.12 links __nvJitLinkComplete_12_4";
  add(p, "cusparse", "12.3.1", {"nvjitlink"});
  add(p, "cusparse", "12.1.0", {"nvjitlink"});
  REQUIRE(p.add_conflict("cusparse", "12.3.1", "nvjitlink>=12.4", why));
  REQUIRE(p.add_conflict("cusparse", "12.1.0", "nvjitlink>=12.1", "links 12.1"));
  add(p, "nvjitlink", "12.4.127");
  add(p, "nvjitlink", "12.1.105");
  add(p, "app", "2.0", {"cusparse", "nvjitlink==12.1.105"});
  add(p, "lone", "1.0");
  REQUIRE(p.add_conflict("lone", "1.0", "absent<1", "never used"));

  SECTION("without a pin, the newest of each") {
    CHECK(solution_of(p, request({"cusparse"})) ==
          std::map<std::string, std::string>{{"cusparse", "12.3.1"}, {"nvjitlink", "12.4.127"}});
  }
  SECTION("an older nvJitLink pinned elsewhere: the older cuSPARSE is chosen") {
    CHECK(solution_of(p, request({"app", "cusparse"})) ==
          std::map<std::string, std::string>{
              {"app", "2.0"}, {"cusparse", "12.1.0"}, {"nvjitlink", "12.1.105"}});
  }
  SECTION("when none can be chosen, the rule and its reason are the explanation") {
    std::string text = explanation_of(p, request({"app", "cusparse>=12.3"}));
    INFO(text);
    CHECK(text.find("cusparse==12.3.1 cannot be used with nvjitlink==12.1.105 (" + why + ")") !=
          std::string::npos);
  }
  SECTION("the other package of a rule is not required") {
    CHECK(solution_of(p, request({"lone"})) == std::map<std::string, std::string>{{"lone", "1.0"}});
  }
}

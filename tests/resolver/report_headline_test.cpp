// Issue 16 item 10: a failed resolution leads with one sentence naming the deciding fact
// (Report::headline), and a long proof is trimmed to the path that leads to it
// (Report::brief), the whole proof staying in Report::lines for --explain.

#include <fstream>

#include "support.h"

using namespace resolver_test;

namespace {

Report report_of(InMemoryProvider& p, const SolveRequest& r) {
  auto out = solve_ok(p, r);
  REQUIRE(std::holds_alternative<NoSolution>(out));
  return report(std::get<NoSolution>(out), p);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

void dump(const Report& r) {
  if (const char* f = std::getenv("GPULOCK_REPORT_DUMP")) {
    std::ofstream(f, std::ios::app) << "H: " << r.headline << "\n" << joined(r.brief) << "----\n";
  }
}

}  // namespace

TEST_CASE("headline: two requirements need the same package in sets that do not meet",
          "[resolver][report]") {
  // pub's linear example: foo needs baz 3 through bar, you require baz 1.
  InMemoryProvider p;
  add(p, "foo", "1.0.0", {"bar>=2.0.0,<3.0.0"});
  add(p, "bar", "2.0.0", {"baz>=3.0.0,<4.0.0"});
  add(p, "baz", "1.0.0");
  add(p, "baz", "3.0.0");
  auto r = report_of(p, request({"foo>=1.0.0,<2.0.0", "baz>=1.0.0,<2.0.0"}));
  dump(r);
  CHECK(
      r.headline ==
      "foo>=1.0.0,<2.0.0 needs baz>=3.0.0,<4.0.0 (through bar), and you require baz>=1.0.0,<2.0.0");
  CHECK(r.brief == r.lines);  // two lines: nothing to trim
}

TEST_CASE("headline: two requirements that pin different versions of a third",
          "[resolver][report]") {
  InMemoryProvider p;
  add(p, "audio", "2.7.1", {"torch==2.7.1"});
  add(p, "vision", "0.19.0", {"torch==2.4.0"});
  add(p, "torch", "2.7.1");
  add(p, "torch", "2.4.0");
  auto r = report_of(p, request({"audio==2.7.1", "vision==0.19.0"}));
  dump(r);
  CHECK(r.headline == "audio==2.7.1 needs torch==2.7.1, and vision==0.19.0 needs torch==2.4.0");
}

TEST_CASE("headline: the blocking fact nearest to the requirements", "[resolver][report]") {
  SECTION("a version that does not exist, two steps away") {
    InMemoryProvider p;
    add(p, "app", "1.0", {"lib>=1.0"});
    add(p, "lib", "1.0", {"core>=5"});
    add(p, "core", "1.0");
    auto r = report_of(p, request({"app"}));
    dump(r);
    CHECK(r.headline == "there is no version of core>=5, and app needs core");
  }
  SECTION("a required package that cannot be used is named as it is") {
    InMemoryProvider p;
    add(p, "app", "1.0", {"lib"});
    add(p, "lib", "1.0");
    REQUIRE(p.set_unavailable("app", "1.0", {UnavailableKind::Yanked, "", {}}));
    auto r = report_of(p, request({"app"}));
    dump(r);
    CHECK(r.headline == "app is yanked");
  }
  SECTION("the same reason for other candidates is counted, not repeated") {
    InMemoryProvider p;
    add(p, "app", "3.0");
    add(p, "app", "2.0");
    add(p, "app", "1.0");
    // Each build its own message (as GPU facts are: "its CUDA 12.6 build carries ..."), so the
    // solver keeps one fact per version.
    for (const char* v : {"3.0", "2.0", "1.0"}) {
      std::string message = std::string("has no kernels for sm_120 (build ") + v + ")";
      REQUIRE(p.set_unavailable("app", v, {UnavailableKind::GpuArchMissing, message, {}}));
    }
    auto r = report_of(p, request({"app"}));
    dump(r);
    CHECK(r.headline ==
          "app==3.0 has no kernels for sm_120 (build 3.0) (and the same for 2 more candidates of "
          "app)");
  }
}

TEST_CASE("a long proof is trimmed to the path to its deciding fact, and --explain keeps it whole",
          "[resolver][report]") {
  // Three versions of foo fail each for its own reason; the last one tried fails because a
  // version of z does not exist. The full proof explains all three (pub's branching report).
  InMemoryProvider p;
  add(p, "foo", "1.0.0", {"a>=1.0.0,<2.0.0", "b>=1.0.0,<2.0.0"});
  add(p, "foo", "1.1.0", {"x>=1.0.0,<2.0.0", "y>=1.0.0,<2.0.0"});
  add(p, "foo", "1.2.0", {"m>=1.0.0,<2.0.0", "n>=1.0.0,<2.0.0"});
  add(p, "a", "1.0.0", {"b>=2.0.0,<3.0.0"});
  add(p, "b", "1.0.0");
  add(p, "b", "2.0.0");
  add(p, "x", "1.0.0", {"y>=2.0.0,<3.0.0"});
  add(p, "y", "1.0.0");
  add(p, "y", "2.0.0");
  add(p, "m", "1.0.0", {"n>=2.0.0,<3.0.0"});
  add(p, "n", "1.0.0");
  add(p, "n", "2.0.0");
  auto r = report_of(p, request({"foo>=1.0.0,<2.0.0"}));
  dump(r);
  std::size_t full = 0;
  for (const auto& l : r.lines)
    full += l.empty() ? 0 : 1;
  CHECK(full > kBriefMaxLines);
  // The headline names b (foo 1.0.0's conflict); the brief proof derives that one and states
  // the other two versions' failures, each proved in two lines of the full proof.
  CHECK(r.headline ==
        "foo>=1.0.0,<2.0.0 needs both b>=1.0.0,<2.0.0 and b>=2.0.0,<3.0.0 (through a)");
  CHECK(joined(r.brief) ==
        "Because foo==1.0.0 depends on a>=1.0.0,<2.0.0 and a depends on b>=2.0.0,<3.0.0, "
        "foo==1.0.0 requires "
        "b>=2.0.0,<3.0.0.\n"
        "And because foo==1.0.0 depends on b>=1.0.0,<2.0.0 and foo==1.1.0 cannot be used (*), "
        "foo<1.2.0 cannot be "
        "used.\n"
        "And because you require foo>=1.0.0,<2.0.0 and foo==1.2.0 cannot be used (*), version "
        "solving failed.\n"
        "(*) follows from 6 more lines of the proof; --explain prints them.\n");
  // The full proof still proves both.
  CHECK(joined(r.lines).find("foo==1.1.0 depends on x>=1.0.0,<2.0.0") != std::string::npos);
  CHECK(joined(r.lines).find("foo==1.2.0 depends on m>=1.0.0,<2.0.0") != std::string::npos);
  CHECK(joined(r.lines).find("(*)") == std::string::npos);
}

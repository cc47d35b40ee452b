// The candidate catalog (Catalog over a PageSource, through its IndexProvider) with the real GPU
// policy, resolved by resolver::solve over pages built in memory (fake_page_source.h): source
// priority, --index-for, --exclude-newer, yanked files, the torch variant under a driver's
// ceiling, and the exact explanation of failed resolves (issue 21).

#include <algorithm>
#include <map>
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "gpulock/catalog/after_solve.h"
#include "gpulock/catalog/index_provider.h"
#include "gpulock/resolver/report.h"
#include "gpulock/resolver/resolver.h"

#include "fake_page_source.h"

using namespace gpulock;
using app_test::FakePageSource;
using app_test::WheelFacts;

namespace {

constexpr std::string_view kPypi = "https://pypi.test/simple/";
constexpr std::string_view kExtra = "https://extra.test/simple/";
constexpr std::string_view kPrivate = "https://private.test/simple/";
constexpr std::string_view kTorch = "https://torch.test/whl/";
constexpr std::string_view kPlatform = "cp312-cp312-manylinux_2_28_x86_64";

// A wheel's file name (the project name with '_' for '-', as wheels spell it).
std::string wheel(std::string_view name, std::string_view version,
                  std::string_view tags = "py3-none-any") {
  std::string dist(name);
  std::replace(dist.begin(), dist.end(), '-', '_');
  return fmt::format("{}-{}-{}.whl", dist, version, tags);
}

catalog::ProviderConfig config() {
  return app_test::one_index_config(kPypi);
}

gpu::GpuContext gpu_context(std::string_view driver, std::string_view ceiling,
                            std::vector<std::string_view> archs) {
  gpu::GpuContext g;
  g.driver = *gpu::DriverVersion::parse(driver);
  g.ceiling = *gpu::CudaVersion::parse(ceiling);
  for (auto a : archs)
    g.archs.push_back(*gpu::ComputeCapability::parse(a));
  return g;
}

resolver::SolveRequest request(std::initializer_list<std::string_view> reqs) {
  resolver::SolveRequest r;
  for (auto text : reqs) {
    auto d = resolver::parse_dependency(text);
    REQUIRE(d.has_value());
    r.requirements.push_back(*d);
  }
  return r;
}

resolver::Outcome solve(catalog::IndexProvider& provider,
                        std::initializer_list<std::string_view> reqs) {
  auto out = resolver::solve(provider, request(reqs));
  if (!out) FAIL("solve failed: " << out.error().to_string());
  return std::move(*out);
}

// name -> version of a solution (virtual packages included).
std::map<std::string, std::string> solution_of(catalog::IndexProvider& provider,
                                               std::initializer_list<std::string_view> reqs) {
  auto out = solve(provider, reqs);
  if (auto* ns = std::get_if<resolver::NoSolution>(&out))
    FAIL("no solution:\n" << resolver::report(*ns, provider).to_string());
  std::map<std::string, std::string> got;
  for (const auto& p : std::get<resolver::Solution>(out).packages)
    got[p.name] = p.version.to_string();
  return got;
}

// The explanation of a failed solve, rendered as the resolve workflow does: hint pages first.
// Rendering reads nothing from `pages`.
std::string explanation_of(catalog::IndexProvider& provider, FakePageSource& pages,
                           std::initializer_list<std::string_view> reqs) {
  auto out = solve(provider, reqs);
  auto* ns = std::get_if<resolver::NoSolution>(&out);
  if (ns == nullptr) FAIL("expected no solution");
  catalog::fetch_hint_pages(provider.catalog(), ns->tree);
  auto before = std::make_pair(pages.page_fetches, pages.metadata_fetches);
  std::string text = resolver::report(*ns, provider).to_string();
  CHECK(std::make_pair(pages.page_fetches, pages.metadata_fetches) == before);
  return text;
}

using Versions = std::map<std::string, std::string>;

}  // namespace

TEST_CASE(
    "catalog: first-index takes a name from the first source that has it, unsafe-best-match merges",
    "[app][catalog]") {
  FakePageSource pages;
  pages.add_wheel(kPypi, wheel("foo", "1.0"));
  pages.add_wheel(kExtra, wheel("foo", "2.0"));
  pages.add_wheel(kExtra, wheel("bar", "1.0"));
  auto c = config();
  c.general.push_back(app_test::source(kExtra, "extra"));

  SECTION("first-index") {
    catalog::Catalog provider_catalog(pages, c);
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    CHECK(solution_of(provider, {"foo", "bar"}) == Versions{{"bar", "1.0"}, {"foo", "1.0"}});
    CHECK(explanation_of(provider, pages, {"foo>=2"}) ==
          "Because you require foo>=2 and there is no version of foo>=2, version solving failed.\n"
          "hint: foo was also found on https://extra.test/simple/, but under first-index only "
          "https://pypi.test/simple/ is used for it (protection against dependency confusion); to "
          "take foo from "
          "https://extra.test/simple/: `gpulock lock -r requirements.txt --index "
          "other=https://extra.test/simple/ "
          "--index-for foo=other` (or, trusting every index equally, `--index-strategy "
          "unsafe-best-match` instead "
          "of those two flags)");
    // bar: pypi has no page, the extra index does.
    // The failed solve reads foo's pages again from memory; its hint fetched the skipped source.
    CHECK(pages.fetched == std::vector<std::string>{
                               "https://pypi.test/simple/foo/", "https://pypi.test/simple/bar/",
                               "https://extra.test/simple/bar/", "https://extra.test/simple/foo/"});
  }
  SECTION("unsafe-best-match") {
    c.strategy = catalog::IndexStrategy::UnsafeBestMatch;
    catalog::Catalog provider_catalog(pages, c);
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    CHECK(solution_of(provider, {"foo"}) == Versions{{"foo", "2.0"}});
    auto sel = catalog::selection(provider.catalog(), "foo", 0);
    REQUIRE(sel.source != nullptr);
    CHECK(sel.source->source.url == kExtra);
  }
}

TEST_CASE("catalog: an index-for pin takes a name from one source only", "[app][catalog]") {
  FakePageSource pages;
  pages.add_wheel(kPypi, wheel("acme-tools", "9.0"));
  pages.add_wheel(kPrivate, wheel("acme-tools", "1.2"));
  pages.add_wheel(kPypi, wheel("other", "1.0"));
  auto c = config();
  c.pinned.emplace_back("acme-*", app_test::source(kPrivate, "pinned", "private"));
  catalog::Catalog provider_catalog(pages, c);
  catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
  CHECK(solution_of(provider, {"acme-tools", "other"}) ==
        Versions{{"acme-tools", "1.2"}, {"other", "1.0"}});
  auto sources = catalog::sources_for(provider.catalog(), "acme-tools");
  REQUIRE(sources.size() == 1);
  CHECK(sources[0]->source.url == kPrivate);
  CHECK(explanation_of(provider, pages, {"acme-tools>=9"}) ==
        "Because you require acme-tools>=9 and there is no version of acme-tools>=9, version "
        "solving failed.");
}

TEST_CASE("catalog: exclude-newer and yanked files", "[app][catalog]") {
  FakePageSource pages;
  pages.add_wheel(kPypi, wheel("foo", "1.0"), WheelFacts{.upload_time = "2024-01-10T00:00:00Z"});
  pages.add_wheel(kPypi, wheel("foo", "1.1"),
                  WheelFacts{.upload_time = "2024-02-10T00:00:00Z", .yanked = true});
  pages.add_wheel(kPypi, wheel("foo", "2.0"), WheelFacts{.upload_time = "2024-07-01T00:00:00Z"});
  auto c = config();
  c.exclude_newer = index::parse_timestamp("2024-06-01T00:00:00Z");
  catalog::Catalog provider_catalog(pages, c);
  catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
  CHECK(solution_of(provider, {"foo"}) == Versions{{"foo", "1.0"}});
  auto skipped = catalog::skipped_before(provider.catalog(), "foo", 2);
  REQUIRE(skipped.size() == 2);
  CHECK(skipped[0].version.to_string() == "2.0");
  CHECK(skipped[0].kind == "excluded-newer");
  CHECK(skipped[0].reason == "was published after the --exclude-newer cutoff");
  CHECK(skipped[1].version.to_string() == "1.1");
  CHECK(skipped[1].kind == "yanked");
  CHECK(skipped[1].reason == "is yanked (used only when pinned with ==)");
  // A yanked version is used when pinned with == (PEP 592).
  CHECK(solution_of(provider, {"foo==1.1"}) == Versions{{"foo", "1.1"}});
  CHECK(explanation_of(provider, pages, {"foo>=2"}) ==
        "Because you require foo>=2 and foo==2.0 was published after the --exclude-newer cutoff, "
        "version solving "
        "failed.");
}

TEST_CASE("catalog: the torch variant under a driver's ceiling", "[app][catalog][gpu]") {
  FakePageSource pages;
  for (std::string_view variant : {"cu130", "cu126", "cu124"}) {
    std::string base = fmt::format("{}{}/", kTorch, variant);
    pages.add_wheel(base, wheel("torch", fmt::format("2.9.0+{}", variant), kPlatform),
                    WheelFacts{.requires_dist = {"filelock"}});
    pages.add_wheel(base, wheel("torchvision", fmt::format("0.24.0+{}", variant), kPlatform),
                    WheelFacts{.requires_dist = {"torch==2.9.0"}});
    pages.set_listing(base, {"torch", "torchvision", "filelock"});
  }
  pages.add_wheel(fmt::format("{}cu126/", kTorch), wheel("filelock", "3.13.1"));
  pages.add_wheel(kPypi, wheel("filelock", "3.20.0"));
  auto c = config();
  c.gpu = gpu_context("560.35.03", "12.6", {"8.6"});
  for (std::string_view variant : {"cu130", "cu126", "cu124"})
    c.torch.push_back(app_test::torch_variant(kTorch, variant));
  c.torch_requested = true;

  SECTION(
      "--torch-backend auto: the variant above the ceiling is a candidate that cannot be used") {
    c.torch[0].above_ceiling = true;
    catalog::Catalog provider_catalog(pages, c);
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    CHECK(solution_of(provider, {"torch", "torchvision"}) ==
          Versions{{"__cuda", "12.6"},
                   {"__cuda_major", "12"},
                   {"__cuda_variant", "12.6"},
                   {"filelock", "3.13.1"},
                   {"torch", "2.9.0+cu126"},
                   {"torchvision", "0.24.0+cu126"}});
    auto skipped = catalog::skipped_before(provider.catalog(), "torch", 1);
    REQUIRE(skipped.size() == 1);
    CHECK(skipped[0].kind == "cuda-too-new");
    CHECK(skipped[0].reason == "needs CUDA 13.0 and your driver 560.35.03 supports CUDA <= 12.6");
    CHECK(catalog::cuda_too_new_hint(provider.catalog(), "torch") ==
          "torch's CUDA 13.0 builds need a driver >= 580.65.06 (run `gpulock probe --machine` to "
          "see yours)");
    // filelock is served by the torch source, so first-index takes it from there (issue 17).
    CHECK(catalog::recorded_role(
              catalog::selection(provider.catalog(), "filelock", 0).source->type) == "torch");
  }
  SECTION("a build the solver sees above the ceiling is explained with the driver") {
    catalog::Catalog provider_catalog(pages, c);
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    CHECK(solution_of(provider, {"torch"}).at("torch") == "2.9.0+cu126");
    CHECK(explanation_of(provider, pages, {"torch==2.9.0+cu130"}) ==
          "Because torch==2.9.0 (CUDA 13.0 build) needs CUDA >= 13.0 and your driver 560.35.03 "
          "supports CUDA <= "
          "12.6, torch==2.9.0 cannot be used.\n"
          "And because you require torch==2.9.0+cu130, version solving failed.\n"
          "hint: a newer CUDA build needs a driver >= 570.26 (run `gpulock probe --machine` to see "
          "yours)");
    CHECK(catalog::cuda_hinted(provider.catalog()));
  }
  SECTION("mixed variants are a conflict in the policy's words") {
    catalog::Catalog provider_catalog(pages, c);
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    CHECK(explanation_of(provider, pages, {"torch==2.9.0+cu126", "torchvision==0.24.0+cu124"}) ==
          "Because torch==2.9.0 is a CUDA 12.6 build and torchvision==0.24.0 is a CUDA 12.4 build, "
          "torch==2.9.0 and torchvision==0.24.0 are incompatible.\n"
          "And because you require both torch==2.9.0+cu126 and torchvision==0.24.0+cu124, version "
          "solving failed.");
  }
  SECTION("--driver none: CUDA builds need a GPU") {
    c.gpu = gpu::GpuContext{};
    c.gpu.no_gpu = true;
    catalog::Catalog provider_catalog(pages, c);
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    CHECK(explanation_of(provider, pages, {"torch"}) ==
          "Because torch needs CUDA and --driver none means no GPU, torch cannot be used.\n"
          "And because you require torch, version solving failed.\n"
          "hint: CUDA builds need a GPU: to lock for a GPU machine, add --driver VERSION with the "
          "version `gpulock "
          "probe --machine` prints there");
  }
}

TEST_CASE("catalog: a torch build without kernels for the GPU", "[app][catalog][gpu]") {
  FakePageSource pages;
  std::string base = fmt::format("{}cu128/", kTorch);
  pages.add_wheel(base, wheel("torch", "2.8.0+cu128", kPlatform));
  pages.set_listing(base, {"torch"});
  auto c = config();
  c.gpu = gpu_context("570.86.15", "12.8", {"6.1"});
  c.torch.push_back(app_test::torch_variant(kTorch, "cu128"));
  c.torch_requested = true;
  catalog::Catalog provider_catalog(pages, c);
  catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
  CHECK(explanation_of(provider, pages, {"torch"}) ==
        "Because you require torch and torch==2.8.0 has no kernels for your GPU's sm_61 (its CUDA "
        "12.8 build "
        "carries sm_75, sm_80, sm_86, sm_90, sm_100, sm_120), version solving failed.\n"
        "hint: torch 2.8 has kernels for your GPU's sm_61 only in variant cu126");
  CHECK(catalog::arch_fix_backends(provider.catalog()) == std::vector<std::string>{"cu126"});
}

TEST_CASE("catalog: cuDNN 9.11 on a Volta GPU", "[app][catalog][gpu]") {
  FakePageSource pages;
  pages.add_wheel(kPypi, wheel("nvidia-cudnn-cu12", "9.10.2.21", "py3-none-manylinux_2_27_x86_64"));
  pages.add_wheel(kPypi, wheel("nvidia-cudnn-cu12", "9.11.0.98", "py3-none-manylinux_2_27_x86_64"));
  auto c = config();
  c.gpu = gpu_context("570.86.15", "12.8", {"7.0"});
  catalog::Catalog provider_catalog(pages, c);
  catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
  CHECK(solution_of(provider, {"nvidia-cudnn-cu12"}) ==
        Versions{{"__cuda", "12.8"}, {"__cuda_major", "12"}, {"nvidia-cudnn-cu12", "9.10.2.21"}});
  CHECK(explanation_of(provider, pages, {"nvidia-cudnn-cu12>=9.11"}) ==
        "Because you require nvidia-cudnn-cu12>=9.11 and nvidia-cudnn-cu12==9.11.0.98 needs sm_75 "
        "or newer and "
        "your GPU is sm_70, version solving failed.");
}

TEST_CASE("catalog: a named cause for a newer version is confirmed by a second solve",
          "[app][catalog][issue43]") {
  // Issue 43: "why not the newer torch" blamed sympy (which the older torch pins) when the newer
  // torch had no torchaudio build. torch 2.8.0 needs sympy>=1.14, torch 2.7.1 pins sympy
  // 1.13.1, and torchaudio exists for torch 2.7.1 only.
  FakePageSource pages;
  pages.add_wheel(kPypi, wheel("torch", "2.8.0"), WheelFacts{.requires_dist = {"sympy>=1.14"}});
  pages.add_wheel(kPypi, wheel("torch", "2.7.1"), WheelFacts{.requires_dist = {"sympy==1.13.1"}});
  pages.add_wheel(kPypi, wheel("torchaudio", "2.7.1"),
                  WheelFacts{.requires_dist = {"torch==2.7.1"}});
  pages.add_wheel(kPypi, wheel("sympy", "1.13.1"));
  pages.add_wheel(kPypi, wheel("sympy", "1.14.0"));
  const auto newer = *core::Version::parse("2.8.0");

  SECTION("the missing torchaudio build, not sympy, kept torch 2.8.0 out") {
    catalog::Catalog provider_catalog(pages, config());
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    auto out = solve(provider, {"torch", "torchaudio"});
    const auto* solution = std::get_if<resolver::Solution>(&out);
    REQUIRE(solution != nullptr);
    const auto* torch = solution->find("torch");
    REQUIRE(torch != nullptr);
    CHECK(torch->version.to_string() == "2.7.1");
    auto skipped =
        catalog::skipped_before(provider.catalog(), "torch", torch->candidate_index, solution);
    REQUIRE(skipped.size() == 1);
    // The first solve's guess names sympy ...
    CHECK(skipped[0].reason == "needs sympy>=1.14, and sympy 1.13.1 was chosen");
    CHECK(skipped[0].blocker == "sympy");
    // ... and the confirming solve refutes it: with torch==2.8.0, torchaudio fails, sympy is
    // not in the proof.
    CHECK_FALSE(catalog::confirm_blocker(provider, request({"torch", "torchaudio"}), {}, "torch",
                                         newer, "sympy"));
    CHECK(catalog::confirm_blocker(provider, request({"torch", "torchaudio"}), {}, "torch", newer,
                                   "torchaudio"));
  }
  SECTION("a requirement on sympy that does keep it out is confirmed") {
    catalog::Catalog provider_catalog(pages, config());
    catalog::IndexProvider provider(provider_catalog, app_test::hint_writer());
    auto out = solve(provider, {"torch", "sympy<1.14"});
    const auto* solution = std::get_if<resolver::Solution>(&out);
    REQUIRE(solution != nullptr);
    const auto* torch = solution->find("torch");
    REQUIRE(torch != nullptr);
    auto skipped =
        catalog::skipped_before(provider.catalog(), "torch", torch->candidate_index, solution);
    REQUIRE(skipped.size() == 1);
    CHECK(skipped[0].blocker == "sympy");
    CHECK(catalog::confirm_blocker(provider, request({"torch", "sympy<1.14"}), {}, "torch", newer,
                                   "sympy"));
  }
}

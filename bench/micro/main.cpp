// gpulock micro-benchmarks (issue 10), on Google Benchmark:
//   parse/json, parse/html      PEP 691 / PEP 503 project pages (bytes/s), synthetic 5 MB pages
//                               or real ones (--json-page FILE, --html-page FILE)
//   version/parse, version/compare, specifier/contains, marker/parse, marker/evaluate (items/s)
//   resolve/packages/P/V        the solver on a synthetic registry: P packages (a binary tree of
//                               dependencies), V versions each; every newest version fits
//   resolve/backtrack/V         the solver walking down V versions of one package to the only
//                               one that fits
//   resolve/in_memory/P/V       resolve/packages through resolver::InMemoryProvider
//   resolve/hard/chain/D/V      a deep conflict chain: p0..p{D-1} pinned version to version,
//                               the last one's pin fails, for every version of p0 but the oldest
//   resolve/hard/boto/V         boto3/botocore-style: V co-versioned pairs, only old pairs fit
//   resolve/hard/torch/A        a torch family (torch, torchvision, torchaudio, nvidia-*) over A
//                               minor releases; the user's nvidia-cudnn pin sends the solver
//                               back through torch's releases
// Own flags (before Google Benchmark's): --smoke (tiny sizes, for ctest), --page-mb N (size of
// the synthetic pages, default 5), --json-page FILE, --html-page FILE.
// bench/run turns the JSON output (--benchmark_format=json) into tables.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "gpulock/core/environment.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"
#include "gpulock/index/parse.h"
#include "gpulock/resolver/in_memory_provider.h"
#include "gpulock/resolver/solver.h"

#include "pages.h"

namespace gb = ::benchmark;
using namespace gpulock;  // NOLINT(google-build-using-namespace): a benchmark main

namespace {

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "gpulock_microbench: %s\n", message.c_str());
  std::exit(2);
}

// Total work over all iterations, for SetBytesProcessed / SetItemsProcessed.
std::int64_t per_iteration(const gb::State& state, std::size_t amount) {
  return state.iterations() * static_cast<std::int64_t>(amount);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// --- pages -----------------------------------------------------------------------------------

// One page parse per iteration; `parse` returns a core::Result<ProjectPage>.
template <typename Parse>
void bm_parse_page(gb::State& state, const std::string& page, Parse parse) {
  std::size_t files = 0;
  for (auto _ : state) {
    auto r = parse();
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    files = r->files.size();
    gb::DoNotOptimize(r);
  }
  state.SetBytesProcessed(per_iteration(state, page.size()));
  state.counters["files"] = static_cast<double>(files);
  state.counters["page_bytes"] = static_cast<double>(page.size());
}

void bm_parse_json(gb::State& state, const std::string* page, std::string url) {
  bm_parse_page(state, *page, [&] { return index::parse_json_page(*page, url); });
}

void bm_parse_html(gb::State& state, const std::string* page, std::string url) {
  bm_parse_page(state, *page, [&] { return index::parse_html_page(*page, url); });
}

// --- PEP 440 / 508 ---------------------------------------------------------------------------

// Version strings as they appear on torch/nvidia/PyPI pages.
std::vector<std::string> version_corpus() {
  std::vector<std::string> out;
  const char* locals[] = {"", "+cu118", "+cu124", "+cu126", "+cu128", "+cpu", ""};
  for (int i = 0; i < 1000; ++i) {
    switch (i % 8) {
      case 0:
        out.push_back(fmt::format("2.{}.{}{}", i % 14, i % 3, locals[i % 7]));
        break;
      case 1:
        out.push_back(fmt::format("1.{}.{}", 20 + i % 7, i % 5));
        break;
      case 2:
        out.push_back(fmt::format("2.15.0.dev2026{:02}{:02}+cu126", 1 + i % 12, 1 + i % 28));
        break;
      case 3:
        out.push_back(fmt::format("12.{}.{}.{}", i % 9, 100 + i % 80, i % 3));
        break;
      case 4:
        out.push_back(fmt::format("9.{}.0.{}", 1 + i % 10, 70 + i % 30));
        break;
      case 5:
        out.push_back(fmt::format("2024.{}.{}", 1 + i % 12, i % 3));
        break;
      case 6:
        out.push_back(fmt::format("3.{}.0rc{}", i % 5, 1 + i % 3));
        break;
      default:
        out.push_back(fmt::format("0.{}.{}.post{}", 10 + i % 20, i % 4, i % 2));
        break;
    }
  }
  return out;
}

void bm_version_parse(gb::State& state) {
  auto corpus = version_corpus();
  for (auto _ : state) {
    for (const auto& s : corpus) {
      auto v = core::Version::parse(s);
      gb::DoNotOptimize(v);
    }
  }
  state.SetItemsProcessed(per_iteration(state, corpus.size()));
}

std::vector<core::Version> parsed_corpus() {
  std::vector<core::Version> out;
  for (const auto& s : version_corpus()) {
    auto v = core::Version::parse(s);
    if (!v) die("bad corpus version " + s);
    out.push_back(std::move(*v));
  }
  return out;
}

void bm_version_compare(gb::State& state) {
  auto versions = parsed_corpus();
  std::size_t less = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i + 1 < versions.size(); ++i) {
      if (versions[i] < versions[i + 1]) ++less;
    }
    gb::DoNotOptimize(less);
  }
  state.SetItemsProcessed(per_iteration(state, versions.size() - 1));
}

void bm_specifier_contains(gb::State& state) {
  auto versions = parsed_corpus();
  auto spec = core::SpecifierSet::parse(">=2.4,!=2.5.0,<2.13");
  if (!spec) die(spec.error().message);
  std::size_t hits = 0;
  for (auto _ : state) {
    for (const auto& v : versions) {
      if (spec->contains(v)) ++hits;
    }
    gb::DoNotOptimize(hits);
  }
  state.SetItemsProcessed(per_iteration(state, versions.size()));
}

// Markers from torch, torchvision and nvidia METADATA.
const std::vector<std::string>& marker_corpus() {
  static const std::vector<std::string> corpus = {
      R"(platform_system == "Linux" and platform_machine == "x86_64")",
      R"(python_version < "3.13")",
      R"(extra == "opt-einsum")",
      R"(platform_system == "Linux" and platform_machine == "x86_64" and python_version < "3.13")",
      R"(sys_platform == "win32")",
      R"(python_version >= "3.12")",
      R"(platform_machine != "aarch64" or python_full_version >= "3.10.1")",
      R"(implementation_name == "cpython" and (os_name == "posix" or extra == "test"))",
      R"(platform_system == "Linux")",
      R"(python_version >= "3.9")",
  };
  return corpus;
}

void bm_marker_parse(gb::State& state) {
  const auto& corpus = marker_corpus();
  for (auto _ : state) {
    for (const auto& s : corpus) {
      auto m = core::Marker::parse(s);
      gb::DoNotOptimize(m);
    }
  }
  state.SetItemsProcessed(per_iteration(state, corpus.size()));
}

void bm_marker_evaluate(gb::State& state) {
  std::vector<core::Marker> markers;
  for (const auto& s : marker_corpus()) {
    auto m = core::Marker::parse(s);
    if (!m) die(m.error().message);
    markers.push_back(std::move(*m));
  }
  auto env = core::Environment::linux_cpython("3.11", "x86_64");
  std::size_t hits = 0;
  for (auto _ : state) {
    for (const auto& m : markers) {
      if (m.matches(env)) ++hits;
    }
    gb::DoNotOptimize(hits);
  }
  state.SetItemsProcessed(per_iteration(state, markers.size()));
}

// --- resolver --------------------------------------------------------------------------------

/// A registry held as the solver wants it: candidates newest first, dependencies per candidate.
/// No work per call beyond copying, so the numbers are the solver's.
class SyntheticProvider final : public resolver::Provider {
 public:
  struct Package {
    std::vector<resolver::Candidate> candidates;                  // newest first
    std::vector<std::vector<resolver::Dependency>> dependencies;  // per candidate
  };

  std::map<std::string, Package, std::less<>> packages;
  std::size_t versions = 0;

  core::Result<resolver::PackageCandidates> candidates(std::string_view package) override {
    resolver::PackageCandidates out;
    if (auto it = packages.find(package); it != packages.end()) {
      out.candidates = it->second.candidates;
    }
    return out;
  }
  core::Result<resolver::Dependencies> dependencies(std::string_view package, std::size_t index,
                                                    const core::Version&,
                                                    std::string_view) override {
    resolver::Dependencies out;
    out.dependencies = packages.find(package)->second.dependencies.at(index);
    return out;
  }
};

resolver::Dependency dep(const std::string& name, const std::string& spec) {
  resolver::Dependency d;
  d.name = name;
  auto s = core::SpecifierSet::parse(spec);
  if (!s) die(s.error().message);
  d.specifier = std::move(*s);
  return d;
}

core::Version version(std::size_t k) {
  auto v = core::Version::parse(fmt::format("1.{}", k));
  if (!v) die(v.error().message);
  return *v;
}

/// P packages p0..p{P-1}; p_i depends on p_{2i+1} and p_{2i+2} (when they exist) with a lower
/// bound at half its own version; V versions 1.1 .. 1.V each. The root requires p0.
std::unique_ptr<SyntheticProvider> tree_registry(std::size_t packages, std::size_t versions) {
  auto p = std::make_unique<SyntheticProvider>();
  for (std::size_t i = 0; i < packages; ++i) {
    SyntheticProvider::Package pkg;
    for (std::size_t k = versions; k >= 1; --k) {
      resolver::Candidate c;
      c.version = version(k);
      pkg.candidates.push_back(std::move(c));
      std::vector<resolver::Dependency> deps;
      for (std::size_t child : {2 * i + 1, 2 * i + 2}) {
        if (child < packages) {
          deps.push_back(dep(fmt::format("p{}", child), fmt::format(">=1.{}", (k + 1) / 2)));
        }
      }
      pkg.dependencies.push_back(std::move(deps));
    }
    p->packages.emplace(fmt::format("p{}", i), std::move(pkg));
  }
  p->versions = packages * versions;
  return p;
}

/// The root requires a and b; a 1.k depends on c==1.k, b depends on c==1.1: the solver tries
/// a 1.V, 1.V-1, ... down to 1.1.
std::unique_ptr<SyntheticProvider> backtrack_registry(std::size_t versions) {
  auto p = std::make_unique<SyntheticProvider>();
  SyntheticProvider::Package a, b, c;
  for (std::size_t k = versions; k >= 1; --k) {
    resolver::Candidate ca;
    ca.version = version(k);
    a.candidates.push_back(ca);
    a.dependencies.push_back({dep("c", fmt::format("==1.{}", k))});
    c.candidates.push_back(ca);
    c.dependencies.emplace_back();
  }
  resolver::Candidate cb;
  cb.version = version(1);
  b.candidates.push_back(cb);
  b.dependencies.push_back({dep("c", "==1.1")});
  p->packages.emplace("a", std::move(a));
  p->packages.emplace("b", std::move(b));
  p->packages.emplace("c", std::move(c));
  p->versions = 2 * versions + 1;
  return p;
}

void report_solve(gb::State& state, const resolver::Outcome& outcome, std::size_t versions) {
  const auto* solution = std::get_if<resolver::Solution>(&outcome);
  if (solution == nullptr) {
    state.SkipWithError("no solution");
    return;
  }
  state.counters["chosen"] = static_cast<double>(solution->packages.size());
  state.counters["decisions"] = static_cast<double>(solution->stats.decisions);
  state.counters["conflicts"] = static_cast<double>(solution->stats.conflicts);
  state.counters["versions"] = static_cast<double>(versions);
}

// Solves `request` once per benchmark iteration; the last outcome, or nullopt after reporting
// an error (the benchmark is then skipped).
std::optional<resolver::Outcome> solve_each_iteration(gb::State& state,
                                                      resolver::Provider& provider,
                                                      const resolver::SolveRequest& request) {
  std::optional<resolver::Outcome> last;
  for (auto _ : state) {
    auto r = resolver::solve(provider, request);
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return std::nullopt;
    }
    last = std::move(*r);
  }
  return last;
}

void bm_resolve_tree(gb::State& state) {
  auto packages = static_cast<std::size_t>(state.range(0));
  auto versions = static_cast<std::size_t>(state.range(1));
  auto provider = tree_registry(packages, versions);
  resolver::SolveRequest request;
  request.requirements.push_back(dep("p0", ""));
  auto last = solve_each_iteration(state, *provider, request);
  if (!last) return;
  report_solve(state, *last, provider->versions);
  if (std::get<resolver::Solution>(*last).packages.size() != packages) {
    state.SkipWithError("wrong number of packages chosen");
  }
}

void bm_resolve_backtrack(gb::State& state) {
  auto versions = static_cast<std::size_t>(state.range(0));
  auto provider = backtrack_registry(versions);
  resolver::SolveRequest request;
  request.requirements.push_back(dep("a", ""));
  request.requirements.push_back(dep("b", ""));
  auto last = solve_each_iteration(state, *provider, request);
  if (!last) return;
  report_solve(state, *last, provider->versions);
  const auto* a = std::get<resolver::Solution>(*last).find("a");
  if (a == nullptr || a->version != version(1)) state.SkipWithError("expected a 1.1");
}

void bm_resolve_in_memory(gb::State& state) {
  auto packages = static_cast<std::size_t>(state.range(0));
  auto versions = static_cast<std::size_t>(state.range(1));
  resolver::InMemoryProvider provider;
  for (std::size_t i = 0; i < packages; ++i) {
    for (std::size_t k = 1; k <= versions; ++k) {
      std::vector<std::string> deps;
      for (std::size_t child : {2 * i + 1, 2 * i + 2}) {
        if (child < packages) deps.push_back(fmt::format("p{}>=1.{}", child, (k + 1) / 2));
      }
      auto s = provider.add(fmt::format("p{}", i), fmt::format("1.{}", k), deps);
      if (!s) die(s.error().message);
    }
  }
  resolver::SolveRequest request;
  request.requirements.push_back(dep("p0", ""));
  auto last = solve_each_iteration(state, provider, request);
  if (!last) return;
  report_solve(state, *last, packages * versions);
}

// Solves once per iteration through an InMemoryProvider; skips with an error unless the
// solution picks `expect_version` for `expect_name`.
void solve_in_memory(gb::State& state, resolver::InMemoryProvider& provider,
                     const std::vector<std::string>& requirements, std::size_t versions,
                     const std::string& expect_name, const std::string& expect_version) {
  resolver::SolveRequest request;
  for (const auto& r : requirements) {
    auto d = resolver::parse_dependency(r);
    if (!d) die(d.error().message);
    request.requirements.push_back(std::move(*d));
  }
  auto last = solve_each_iteration(state, provider, request);
  if (!last) return;
  report_solve(state, *last, versions);
  const auto* solution = std::get_if<resolver::Solution>(&*last);
  if (solution == nullptr) return;
  const auto* chosen = solution->find(expect_name);
  if (chosen == nullptr || chosen->version.to_string() != expect_version) {
    state.SkipWithError(("expected " + expect_name + " " + expect_version).c_str());
  }
}

void add_or_die(resolver::InMemoryProvider& provider, const std::string& name,
                const std::string& version, const std::vector<std::string>& deps) {
  auto s = provider.add(name, version, deps);
  if (!s) die(s.error().message);
}

/// A deep conflict chain: the root requires p0; p_i 1.k depends on p_{i+1}==1.k (i < D-1), and
/// p0 1.k also on z; z's only version needs p_{D-1}==1.1. Every p0 1.k with k > 1 fails only at
/// the end of a D-long chain of pins, so each is refuted by D resolution steps.
void bm_hard_chain(gb::State& state) {
  auto depth = static_cast<std::size_t>(state.range(0));
  auto versions = static_cast<std::size_t>(state.range(1));
  resolver::InMemoryProvider provider;
  for (std::size_t i = 0; i < depth; ++i) {
    for (std::size_t k = 1; k <= versions; ++k) {
      std::vector<std::string> deps;
      if (i + 1 < depth) deps.push_back(fmt::format("p{}==1.{}", i + 1, k));
      if (i == 0) deps.emplace_back("z");
      add_or_die(provider, fmt::format("p{}", i), fmt::format("1.{}", k), deps);
    }
  }
  add_or_die(provider, "z", "1.0", {fmt::format("p{}==1.1", depth - 1)});
  solve_in_memory(state, provider, {"p0"}, depth * versions + 1, "p0", "1.1");
}

/// boto3/botocore: boto3 1.k depends on botocore>=1.k,<1.(k+1) (and s3transfer); botocore 1.k
/// depends on urllib3>=2 from 1.(V/10+1) on, and the user requires urllib3<2: the solver walks
/// both packages down to the newest pair that still takes urllib3 1.x.
void bm_hard_boto(gb::State& state) {
  auto versions = static_cast<std::size_t>(state.range(0));
  std::size_t fits = versions / 10;
  resolver::InMemoryProvider provider;
  for (std::size_t k = 1; k <= versions; ++k) {
    add_or_die(provider, "boto3", fmt::format("1.{}", k),
               {fmt::format("botocore>=1.{},<1.{}", k, k + 1),
                fmt::format("s3transfer>=0.{}", k / 100), "jmespath>=0.7.1,<2"});
    std::vector<std::string> core_deps = {"jmespath>=0.7.1,<2", "python-dateutil>=2.1,<3"};
    core_deps.emplace_back(k > fits ? "urllib3>=2,<3" : "urllib3>=1.25.4,<2");
    add_or_die(provider, "botocore", fmt::format("1.{}", k), core_deps);
  }
  for (std::size_t k = 0; k <= versions / 100; ++k)
    add_or_die(provider, "s3transfer", fmt::format("0.{}", k), {"botocore>=1.1,<2"});
  for (const char* v : {"0.9.0", "0.10.0", "1.0.0", "1.0.1"})
    add_or_die(provider, "jmespath", v, {});
  for (const char* v : {"2.8.2", "2.9.0"})
    add_or_die(provider, "python-dateutil", v, {});
  for (const char* v : {"1.25.4", "1.26.18", "1.26.20", "2.0.0", "2.2.3", "2.5.0"})
    add_or_die(provider, "urllib3", v, {});
  solve_in_memory(state, provider, {"boto3", "urllib3<2"}, 2 * versions, "boto3",
                  fmt::format("1.{}", fits));
}

/// A torch family over A minor releases (2.a.0 .. 2.a.2): torch pins nvidia-cudnn-cu12,
/// nvidia-cublas-cu12, nvidia-nccl-cu12 and triton per minor; torchvision 0.(15+a).b and
/// torchaudio 2.a.b pin their torch. Only torch 2.0.x and 2.1.x pin cuDNN 8.9.2.26, which the
/// user pins: the solver goes back through every newer torch release.
void bm_hard_torch(gb::State& state) {
  auto minors = static_cast<std::size_t>(state.range(0));
  resolver::InMemoryProvider provider;
  for (std::size_t a = 0; a < minors; ++a) {
    std::string cudnn = a < 2 ? "8.9.2.26" : fmt::format("9.{}.0.{}", a, 50 + a);
    add_or_die(provider, "nvidia-cudnn-cu12", cudnn, {"nvidia-cublas-cu12"});
    add_or_die(provider, "nvidia-cublas-cu12", fmt::format("12.{}.3.1", a), {});
    add_or_die(provider, "nvidia-nccl-cu12", fmt::format("2.{}.3", 18 + a), {});
    add_or_die(provider, "triton", fmt::format("{}.{}.0", 2 + a / 4, a), {"filelock"});
    for (std::size_t b = 0; b < 3; ++b) {
      std::string torch = fmt::format("2.{}.{}", a, b);
      add_or_die(provider, "torch", torch,
                 {"filelock", "typing-extensions>=4.8.0", "sympy", "networkx", "jinja2", "fsspec",
                  fmt::format("nvidia-cudnn-cu12=={}", cudnn),
                  fmt::format("nvidia-cublas-cu12==12.{}.3.1", a),
                  fmt::format("nvidia-nccl-cu12==2.{}.3", 18 + a),
                  fmt::format("triton=={}.{}.0", 2 + a / 4, a)});
      add_or_die(provider, "torchvision", fmt::format("0.{}.{}", 15 + a, b),
                 {"numpy", fmt::format("torch=={}", torch), "pillow>=5.3.0,!=8.3.*"});
      add_or_die(provider, "torchaudio", torch, {fmt::format("torch=={}", torch)});
    }
  }
  for (const char* p : {"filelock", "sympy", "networkx", "jinja2", "fsspec", "numpy", "pillow",
                        "typing-extensions"}) {
    for (const char* v : {"4.8.0", "4.12.2", "5.3.0", "10.4.0"})
      add_or_die(provider, p, v, {});
  }
  solve_in_memory(state, provider,
                  {"torch", "torchvision", "torchaudio", "nvidia-cudnn-cu12==8.9.2.26"}, 9 * minors,
                  "torch", "2.1.2");
}

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  double page_mb = 5.0;
  std::string json_page_path, html_page_path;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> std::string {
      if (a.size() > flag.size() && a.starts_with(flag) && a[flag.size()] == '=') {
        return std::string(a.substr(flag.size() + 1));
      }
      if (a == flag && i + 1 < argc) return argv[++i];
      die(fmt::format("{} needs a value", flag));
    };
    if (a == "--smoke") {
      smoke = true;
    } else if (a.starts_with("--page-mb")) {
      page_mb = std::atof(value("--page-mb").c_str());
    } else if (a.starts_with("--json-page")) {
      json_page_path = value("--json-page");
    } else if (a.starts_with("--html-page")) {
      html_page_path = value("--html-page");
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (smoke) page_mb = 0.05;
  auto bytes = static_cast<std::size_t>(page_mb * 1024 * 1024);

  // Pages live until exit: the benchmarks hold pointers to them.
  static std::string json_page = bench::synthetic_json_page(bytes);
  static std::string html_page = bench::synthetic_html_page(bytes);
  const std::string pypi_url = "https://pypi.org/simple/numpy/";
  gb::RegisterBenchmark("parse/json/synthetic", bm_parse_json, &json_page, pypi_url);
  gb::RegisterBenchmark("parse/html/synthetic", bm_parse_html, &html_page, pypi_url);
  static std::string real_json, real_html;
  if (!json_page_path.empty()) {
    real_json = read_file(json_page_path);
    gb::RegisterBenchmark("parse/json/file", bm_parse_json, &real_json,
                          std::string("http://127.0.0.1/simple/project/"));
  }
  if (!html_page_path.empty()) {
    real_html = read_file(html_page_path);
    gb::RegisterBenchmark("parse/html/file", bm_parse_html, &real_html,
                          std::string("http://127.0.0.1/whl/cu124/torch/"));
  }

  gb::RegisterBenchmark("version/parse", bm_version_parse);
  gb::RegisterBenchmark("version/compare", bm_version_compare);
  gb::RegisterBenchmark("specifier/contains", bm_specifier_contains);
  gb::RegisterBenchmark("marker/parse", bm_marker_parse);
  gb::RegisterBenchmark("marker/evaluate", bm_marker_evaluate);

  std::vector<std::int64_t> package_counts = {10, 100, 1000, 5000};
  std::vector<std::int64_t> version_counts = {10, 100, 1000, 10000};
  if (smoke) {
    package_counts = {10};
    version_counts = {10};
  }
  auto* tree = gb::RegisterBenchmark("resolve/packages", bm_resolve_tree);
  for (auto p : package_counts)
    tree->Args({p, 10});
  for (auto v : version_counts) {
    if (v != 10) tree->Args({10, v});
  }
  if (!smoke) {
    tree->Args({1000, 100});
    tree->Args({100, 1000});
  }
  tree->ArgNames({"P", "V"})->Unit(gb::kMillisecond);
  auto* walk = gb::RegisterBenchmark("resolve/backtrack", bm_resolve_backtrack);
  for (auto v : version_counts)
    walk->Arg(v);
  if (!smoke) {
    walk->Arg(3000);
    walk->Arg(30000);
  }
  walk->ArgNames({"V"})->Unit(gb::kMillisecond);
  auto* mem = gb::RegisterBenchmark("resolve/in_memory", bm_resolve_in_memory);
  mem->Args({smoke ? 10 : 100, smoke ? 10 : 100})->ArgNames({"P", "V"})->Unit(gb::kMillisecond);
  auto* chain = gb::RegisterBenchmark("resolve/hard/chain", bm_hard_chain);
  chain->Args({smoke ? 5 : 50, smoke ? 5 : 100})->ArgNames({"D", "V"})->Unit(gb::kMillisecond);
  if (!smoke) chain->Args({200, 200});
  auto* boto = gb::RegisterBenchmark("resolve/hard/boto", bm_hard_boto);
  boto->Arg(smoke ? 20 : 2000)->ArgName("V")->Unit(gb::kMillisecond);
  auto* torch = gb::RegisterBenchmark("resolve/hard/torch", bm_hard_torch);
  torch->Arg(smoke ? 3 : 12)->ArgName("A")->Unit(gb::kMillisecond);
  if (!smoke) torch->Arg(100);

  int gb_argc = static_cast<int>(rest.size());
  gb::Initialize(&gb_argc, rest.data());
  if (gb::ReportUnrecognizedArguments(gb_argc, rest.data())) return 2;
  gb::RunSpecifiedBenchmarks();
  gb::Shutdown();
  return 0;
}

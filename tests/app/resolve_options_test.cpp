// Resolve's option values as types (issue 21: parse once, into types): each flag has one parser,
// used by the CLI, by resolve and by check reading a lock's record, and one spelling.
#include "gpulock/app/resolve_options.h"

#include <catch2/catch.hpp>

#include "gpulock/app/resolve.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/index/index_spec.h"
#include "gpulock/resolver/provider.h"

using gpulock::app::NightlyDate;
using gpulock::app::TorchBackend;
using gpulock::core::ErrorCode;

TEST_CASE("torch-backend values: auto, cpu and cuXYZ only", "[app][options]") {
  for (const char* ok : {"auto", "cpu", "cu118", "cu124", "cu130", "cu132"}) {
    INFO(ok);
    auto b = TorchBackend::parse(ok);
    REQUIRE(b.has_value());
    CHECK(b->to_string() == ok);
  }
  auto cu124 = TorchBackend::parse("cu124");
  REQUIRE(cu124.has_value());
  CHECK(cu124->kind() == TorchBackend::Kind::Cuda);
  CHECK(cu124->cuda_version() == gpulock::gpu::CudaVersion{12, 4});
  CHECK(TorchBackend::parse("cu92").has_value() ==
        false);  // two digits: not a variant PyTorch names
  for (const char* bad :
       {"", "cu!", "cu", "cu1", "cuda124", "CU124", "cu12a", "rocm6.2", "cu1240000", "cpu "}) {
    INFO(bad);
    auto b = TorchBackend::parse(bad);
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error().code == ErrorCode::Usage);
  }
  // 'cu!' was parsed as a version label and the failed parse dereferenced (undefined behaviour,
  // issue 21): a ResolveRequest can no longer hold such a value at all.
  CHECK(TorchBackend::parse("cu!").error().message ==
        "invalid --torch-backend 'cu!': expected auto, cpu or cuXYZ (e.g. cu124)");
}

TEST_CASE("nightly values: a build date or latest, one type for every place a date is",
          "[app][options]") {
  auto d = NightlyDate::parse("2026-06-01");
  REQUIRE(d.has_value());
  CHECK(d->to_string() == "2026-06-01");
  CHECK(d->build_tag() == "20260601");
  CHECK(NightlyDate::from_build_tag("20260601") == *d);
  auto latest = NightlyDate::parse("latest");
  REQUIRE(latest.has_value());
  CHECK(latest->is_latest());
  CHECK(latest->to_string() == "latest");
  CHECK(latest->build_tag().empty());
  for (const char* bad :
       {"", "2026-13-01", "2026-06-00", "2026-6-1", "20260601", "Latest", "--driver"}) {
    INFO(bad);
    CHECK_FALSE(NightlyDate::parse(bad).has_value());
  }
  CHECK(NightlyDate::parse("--driver").error().message ==
        "invalid --nightly '--driver': expected a build date YYYY-MM-DD (UTC) or latest");
  for (const char* tag : {"2026060", "202606011", "20261301", "19990101", "2026o601"}) {
    INFO(tag);
    CHECK_FALSE(NightlyDate::from_build_tag(tag).has_value());
  }
}

TEST_CASE("the enumerated flags parse to their enums and back", "[app][options]") {
  using gpulock::app::IndexStrategy;
  using gpulock::gpu::CudaCompat;
  using gpulock::resolver::PrereleasePolicy;
  CHECK(*gpulock::app::parse_index_strategy("unsafe-best-match") == IndexStrategy::UnsafeBestMatch);
  CHECK(gpulock::app::index_strategy_name(IndexStrategy::FirstIndex) == "first-index");
  CHECK(gpulock::app::parse_index_strategy("best").error().message ==
        "invalid --index-strategy 'best': expected first-index or unsafe-best-match");
  CHECK(*gpulock::gpu::parse_cuda_compat("minor") == gpulock::gpu::CudaCompat::Minor);
  CHECK(gpulock::gpu::cuda_compat_name(gpulock::gpu::CudaCompat::Strict) == "strict");
  CHECK(gpulock::gpu::parse_cuda_compat("loose").error().message ==
        "invalid --cuda-compat 'loose': expected strict or minor");
  CHECK(*gpulock::resolver::parse_prerelease_policy("disallow") == PrereleasePolicy::Disallow);
  CHECK(gpulock::resolver::prerelease_policy_name(PrereleasePolicy::IfNecessary) == "if-necessary");
  CHECK(gpulock::resolver::parse_prerelease_policy("yes").error().message ==
        "invalid --prerelease 'yes': expected if-necessary, allow or disallow");
}

TEST_CASE("driver values: auto, none or a version", "[app][options]") {
  using gpulock::gpu::DriverSpec;
  CHECK(gpulock::gpu::DriverSpec::parse("auto")->is_auto());
  CHECK(gpulock::gpu::DriverSpec::parse("")->is_auto());
  CHECK(gpulock::gpu::DriverSpec::parse("none")->is_none());
  auto v = gpulock::gpu::DriverSpec::parse(" 550.54.14 ");
  REQUIRE(v.has_value());
  CHECK(v->kind() == gpulock::gpu::DriverSpec::Kind::Version);
  CHECK(v->to_string() == "550.54.14");
  auto bad = gpulock::gpu::DriverSpec::parse("abc");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::Usage);
  CHECK(
      bad.error().message.starts_with("invalid value for --driver: invalid driver version 'abc'"));
  CHECK(bad.error().hints ==
        std::vector<std::string>{"give a driver version like 550.54.14, or 'none' for no GPU"});
}

TEST_CASE("index values: NAME=URL and --index-for GLOB=NAME", "[app][options]") {
  using gpulock::index::IndexPin;
  using gpulock::index::NamedIndex;
  auto ix = NamedIndex::parse("internal=https://pkgs.example/simple/?a=b");
  REQUIRE(ix.has_value());
  CHECK(ix->name == "internal");
  CHECK(ix->url == "https://pkgs.example/simple/?a=b");
  // The glob is normalized as names are, so `Markup_Safe*` matches `markup-safe` (issue 21).
  auto pin = IndexPin::parse("Markup_Safe*=internal");
  REQUIRE(pin.has_value());
  CHECK(pin->glob == "markup-safe*");
  CHECK(pin->to_string() == "markup-safe*=internal");
  for (const char* bad : {"internal", "=https://x/", "internal="}) {
    INFO(bad);
    CHECK(NamedIndex::parse(bad).error().message ==
          "invalid --index '" + std::string(bad) + "': expected NAME=URL");
    CHECK(IndexPin::parse(bad).error().message ==
          "invalid --index-for '" + std::string(bad) + "': expected GLOB=NAME");
  }
}

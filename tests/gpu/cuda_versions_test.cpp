// Driver, CUDA and compute-capability versions, and NVIDIA's driver -> CUDA table.
#include "gpulock/gpu/cuda_versions.h"

#include <catch2/catch.hpp>

using namespace gpulock::gpu;

namespace {

DriverVersion driver(std::string_view text) {
  auto v = DriverVersion::parse(text);
  REQUIRE(v);
  return *v;
}

std::string ceiling(std::string_view text) {
  auto c = cuda_ceiling_for_driver(driver(text));
  return c ? c->to_string() : "none";
}

std::string min_driver(CudaVersion cuda, CudaCompat compat) {
  auto d = min_driver_for_cuda(cuda, compat);
  return d ? d->to_string() : "none";
}

}  // namespace

TEST_CASE("driver versions parse, keep their text and compare numerically", "[probe][versions]") {
  CHECK(driver("535.54.03").to_string() == "535.54.03");
  CHECK(driver("535.54.03").parts() == std::vector<std::uint32_t>{535, 54, 3});
  CHECK(driver("550.54.14") < driver("550.54.15"));
  CHECK(driver("550.100") > driver("550.54.15"));
  CHECK(driver("580") == driver("580.0.0"));
  CHECK(driver("570.26").branch() == 570);
  for (std::string_view bad :
       {"", "abc", "550.", ".550", "550..1", "550.54.14-1", "1.2.3.4.5", "55 0"}) {
    INFO(bad);
    auto v = DriverVersion::parse(bad);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == gpulock::core::ErrorCode::InvalidInput);
  }
}

TEST_CASE("CUDA versions parse and decode the driver API encoding", "[probe][versions]") {
  CHECK(CudaVersion::parse("12.4")->to_string() == "12.4");
  CHECK(CudaVersion::parse("13")->to_string() == "13.0");
  CHECK(CudaVersion::parse("12.4.127")->to_string() == "12.4");
  CHECK_FALSE(CudaVersion::parse("12.x"));
  CHECK_FALSE(CudaVersion::parse("cu124"));
  CHECK_FALSE(CudaVersion::parse("12.10"));
  CHECK(CudaVersion::from_driver_api(12040)->to_string() == "12.4");
  CHECK(CudaVersion::from_driver_api(13000)->to_string() == "13.0");
  CHECK(CudaVersion::from_driver_api(11080)->to_string() == "11.8");
  CHECK_FALSE(CudaVersion::from_driver_api(0));
  CHECK_FALSE(CudaVersion::from_driver_api(999));
  CHECK_FALSE(CudaVersion::from_driver_api(100000));
  CHECK(CudaVersion{12, 8} > CudaVersion{12, 4});
  CHECK(CudaVersion{13, 0} > CudaVersion{12, 9});  // never the order of "cu130" vs "cu92"
}

TEST_CASE("compute capabilities parse from sm_XY and X.Y", "[probe][versions]") {
  CHECK(ComputeCapability::parse("sm_86")->dotted() == "8.6");
  CHECK(ComputeCapability::parse("sm_120")->dotted() == "12.0");
  CHECK(ComputeCapability::parse("sm_90")->to_string() == "sm_90");
  CHECK(ComputeCapability::parse("6.1")->to_string() == "sm_61");
  CHECK(ComputeCapability::parse("12.0")->to_string() == "sm_120");
  for (std::string_view bad :
       {"", "sm_", "sm_9", "sm_1234", "sm_9a", "90", "x.y", "8.10", "compute_90"}) {
    INFO(bad);
    CHECK_FALSE(ComputeCapability::parse(bad));
  }
}

TEST_CASE("a driver maps to the newest CUDA whose GA minimum it meets", "[probe][table]") {
  CHECK(ceiling("550.54.14") == "12.4");  // the examples
  CHECK(ceiling("570.26") == "12.8");
  CHECK(ceiling("580.65.06") == "13.0");
  CHECK(ceiling("550.54.13") == "12.3");  // one below 12.4 GA
  CHECK(ceiling("535.54.03") == "12.2");
  CHECK(ceiling("535.183.01") == "12.2");
  CHECK(ceiling("560.35.03") == "12.6");
  CHECK(ceiling("565.57.01") == "12.6");  // no 565 toolkit
  CHECK(ceiling("575.51.03") == "12.9");
  CHECK(ceiling("580") == "13.0");    // a bare branch: R580's drivers run CUDA 13.0 (issue 16)
  CHECK(ceiling("580.0") == "12.9");  // a version below 580.65.06
  CHECK(ceiling("550") == "12.4");    // not 12.3, as "550.0" < 550.54.14 would give
  CHECK(ceiling("590.44.01") == "13.1");
  CHECK(ceiling("595.45.04") == "13.2");
  CHECK(ceiling("999.1") == "13.2");
  CHECK(ceiling("525.60.13") == "12.0");
  CHECK(ceiling("520.61.05") == "11.8");
  CHECK(ceiling("470.82.01") == "11.4");  // R470 (11.1-11.6 rows from the data file)
  CHECK(ceiling("460.32.03") == "11.2");
  CHECK(ceiling("450.36.06") == "11.0");
  CHECK(ceiling("440.33") == "none");
}

TEST_CASE("the table is ordered and every row parses", "[probe][table]") {
  auto table = cuda_driver_table();
  REQUIRE(table.size() >= 15);
  for (std::size_t i = 0; i < table.size(); ++i) {
    INFO(table[i].release);
    auto d = DriverVersion::parse(table[i].min_driver);
    REQUIRE(d);
    if (i > 0) {
      CHECK(table[i].cuda > table[i - 1].cuda);
      CHECK(*d > *DriverVersion::parse(table[i - 1].min_driver));
    }
    // A row's own minimum driver gives exactly its CUDA.
    CHECK(cuda_ceiling_for_driver(*d) == table[i].cuda);
  }
  CHECK_FALSE(cuda_driver_table_source().empty());
}

TEST_CASE("minimum drivers, strict and under minor-version compatibility", "[probe][table]") {
  CHECK(min_driver({12, 4}, CudaCompat::Strict) == "550.54.14");
  CHECK(min_driver({12, 8}, CudaCompat::Strict) == "570.26");
  CHECK(min_driver({13, 0}, CudaCompat::Strict) == "580.65.06");
  CHECK(min_driver({12, 7}, CudaCompat::Strict) == "570.26");  // no 12.7: the next 12.x
  CHECK(min_driver({12, 8}, CudaCompat::Minor) == "525.60.13");
  CHECK(min_driver({12, 0}, CudaCompat::Minor) == "525.60.13");
  CHECK(min_driver({13, 2}, CudaCompat::Minor) == "580");
  CHECK(min_driver({11, 8}, CudaCompat::Minor) == "450.80.02");
  CHECK(min_driver({11, 0}, CudaCompat::Minor) == "450.36.06");
  CHECK(min_driver({10, 2}, CudaCompat::Strict) == "none");
  CHECK(min_driver({14, 0}, CudaCompat::Strict) == "none");
  CHECK(minor_compat_floor(12)->to_string() == "525.60.13");
  CHECK(minor_compat_floor(13)->to_string() == "580");
  CHECK_FALSE(minor_compat_floor(10));
}

TEST_CASE("a ceiling allows a CUDA build strictly or by major", "[probe][table]") {
  CHECK(ceiling_allows({12, 4}, {12, 4}, CudaCompat::Strict));
  CHECK(ceiling_allows({12, 4}, {12, 1}, CudaCompat::Strict));
  CHECK_FALSE(ceiling_allows({12, 4}, {12, 6}, CudaCompat::Strict));
  CHECK(ceiling_allows({12, 4}, {12, 8}, CudaCompat::Minor));
  CHECK_FALSE(ceiling_allows({12, 9}, {13, 0}, CudaCompat::Minor));
  CHECK(ceiling_allows({13, 0}, {12, 9}, CudaCompat::Strict));
}

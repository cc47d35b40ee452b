#pragma once
// Values for app's unit tests, parsed from text (a parse failure fails the test).
#include <string_view>

#include <catch2/catch.hpp>

#include "gpulock/gpu/gpu_policy.h"

namespace app_test {

inline gpulock::core::Version v(std::string_view text) {
  auto r = gpulock::core::Version::parse(text);
  REQUIRE(r.has_value());
  return *r;
}

inline gpulock::gpu::CudaVersion cuda(std::string_view text) {
  auto r = gpulock::gpu::CudaVersion::parse(text);
  REQUIRE(r.has_value());
  return *r;
}

inline gpulock::gpu::ComputeCapability cc(std::string_view text) {
  auto r = gpulock::gpu::ComputeCapability::parse(text);
  REQUIRE(r.has_value());
  return *r;
}

}  // namespace app_test

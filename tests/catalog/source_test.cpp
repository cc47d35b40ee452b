// catalog::Source (issue 43 item 2): the one pair that writes a source's role to the lock and
// reads it back gives the strings gpulock has always written.

#include "gpulock/catalog/source.h"

#include <catch2/catch.hpp>

using namespace gpulock;
using catalog::Role;
using catalog::Source;

TEST_CASE("a source's recorded role round-trips", "[catalog]") {
  for (std::string_view role : {"pinned", "torch", "default", "extra", "find-links", "direct"}) {
    auto source = catalog::read_recorded_role(role);
    REQUIRE(source.has_value());
    CHECK(catalog::recorded_role(*source) == role);
  }
  CHECK_FALSE(catalog::read_recorded_role("mirror").has_value());
}

TEST_CASE("each kind and role is written as the lock has it", "[catalog]") {
  CHECK(catalog::recorded_role({catalog::Simple{}, Role::Pinned}) == "pinned");
  CHECK(catalog::recorded_role({catalog::Simple{}, Role::Default}) == "default");
  CHECK(catalog::recorded_role({catalog::Simple{}, Role::Extra}) == "extra");
  CHECK(catalog::recorded_role({catalog::FindLinks{}, Role::Extra}) == "find-links");
  CHECK(catalog::recorded_role({catalog::Direct{"ab12"}, Role::Pinned}) == "direct");
  Source cu130{catalog::Variant{gpu::CudaVersion{13, 0}, false}, Role::Family};
  CHECK(catalog::recorded_role(cu130) == "torch");
  CHECK(cu130.is<catalog::Variant>());
  CHECK_FALSE(cu130.is<catalog::Simple>());
}

// Environment variables (gpulock/sys/env.h): empty counts as unset, an unusable value is a
// Usage error naming the variable.
#include "gpulock/sys/env.h"

#include <map>
#include <string>

#include <catch2/catch.hpp>

using namespace gpulock::sys;
using gpulock::core::ErrorCode;

namespace {

std::map<std::string, std::string> g_env;

const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

}  // namespace

TEST_CASE("env_value: unset and empty are the same", "[sys][env]") {
  g_env = {{"A", "1"}, {"EMPTY", ""}};
  CHECK(env_value("A", fake_getenv) == std::optional<std::string_view>("1"));
  CHECK_FALSE(env_value("EMPTY", fake_getenv));
  CHECK_FALSE(env_value("UNSET", fake_getenv));
}

TEST_CASE("env_integer: a bounded whole number, or an error naming the variable", "[sys][env]") {
  g_env = {{"N", "250"}, {"BIG", "600001"}, {"WORD", "soon"}, {"NEG", "-1"}, {"SPACE", "5 "}};
  auto n = env_integer("N", 1, 600000, "milliseconds, 1-600000", fake_getenv);
  REQUIRE(n);
  CHECK(*n == std::optional<std::int64_t>(250));
  auto unset = env_integer("UNSET", 1, 600000, "milliseconds, 1-600000", fake_getenv);
  REQUIRE(unset);
  CHECK_FALSE(unset->has_value());
  for (const char* name : {"BIG", "WORD", "NEG", "SPACE"}) {
    auto bad = env_integer(name, 1, 600000, "milliseconds, 1-600000", fake_getenv);
    INFO(name);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::Usage);
    CHECK(bad.error().message.starts_with(std::string("invalid value for ") + name + ": '"));
    CHECK(bad.error().message.ends_with("(expected milliseconds, 1-600000)"));
  }
  CHECK(invalid_env("X", "y", "a number").message ==
        "invalid value for X: 'y' (expected a number)");
}

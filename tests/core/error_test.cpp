// core/error.h: make_error is the one way to build an Error; fail and fail_at wrap it.
#include "gpulock/core/error.h"

#include <catch2/catch.hpp>

using namespace gpulock::core;

TEST_CASE("make_error sets what it is given and nothing else", "[core][error]") {
  Error e =
      make_error(ErrorCode::Io, "cannot read it", "a.txt", 3, 7).with_hint("check the permissions");
  CHECK(e.code == ErrorCode::Io);
  CHECK(e.message == "cannot read it");
  CHECK(e.where == "a.txt");
  CHECK(e.line == 3);
  CHECK(e.column == 7);
  CHECK(e.context.empty());
  CHECK(e.hints == std::vector<std::string>{"check the permissions"});
  CHECK(e.to_string() == "a.txt:3:7: cannot read it");

  Error plain = make_error(ErrorCode::Usage, "bad flag");
  CHECK(plain.where.empty());
  CHECK(plain.line == 0);
  CHECK(plain.column == 0);
  CHECK(plain.hints.empty());
}

TEST_CASE("fail and fail_at are make_error for a return", "[core][error]") {
  auto f = fail(ErrorCode::InvalidVersion, "invalid version", 4);
  CHECK(f.error().code == ErrorCode::InvalidVersion);
  CHECK(f.error().column == 4);
  CHECK(f.error().where.empty());
  auto at = fail_at(ErrorCode::InvalidLockfile, "bad key", "pylock.toml", 9);
  CHECK(at.error().where == "pylock.toml");
  CHECK(at.error().line == 9);
  CHECK(at.error().to_string() == "pylock.toml:9: bad key");
}

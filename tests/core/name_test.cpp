#include "gpulock/core/name.h"

#include <catch2/catch.hpp>

#include "gpulock/core/error.h"

using namespace gpulock::core;

TEST_CASE("PEP 503 normalization collapses separator runs and lowercases", "[core][name]") {
  CHECK(normalize_name("Foo") == "foo");
  CHECK(normalize_name("typing_extensions") == "typing-extensions");
  CHECK(normalize_name("zope.interface") == "zope-interface");
  CHECK(normalize_name("A__b-._C") == "a-b-c");
  CHECK(normalize_name("nvidia-cudnn-cu12") == "nvidia-cudnn-cu12");
}

TEST_CASE("PEP 508 name validity", "[core][name]") {
  CHECK(is_valid_name("torch"));
  CHECK(is_valid_name("a"));
  CHECK(is_valid_name("A1.b_c-d"));
  CHECK_FALSE(is_valid_name(""));
  CHECK_FALSE(is_valid_name("-torch"));
  CHECK_FALSE(is_valid_name("torch-"));
  CHECK_FALSE(is_valid_name("tor ch"));
  CHECK_FALSE(is_valid_name(std::string_view("to\0rch", 6)));
}

TEST_CASE("parse_name reports the column of the first bad character", "[core][name]") {
  auto r = parse_name("tor!ch");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::InvalidName);
  CHECK(r.error().column == 4);
  auto empty = parse_name("");
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().column == 1);
  auto ok = parse_name("Typing_Extensions");
  REQUIRE(ok.has_value());
  CHECK(*ok == "typing-extensions");
}

TEST_CASE("error messages quote input safely", "[core][error]") {
  CHECK(quote_for_message("abc") == "'abc'");
  CHECK(quote_for_message(std::string_view("a\0b", 3)) == "'a\\x00b'");
  CHECK(quote_for_message(std::string(1000, 'x'), 4) == "'xxxx...'");
  Error e;
  e.message = "bad";
  e.where = "req.txt";
  e.line = 3;
  e.column = 7;
  CHECK(e.to_string() == "req.txt:3:7: bad");
  Error f;
  f.message = "bad";
  f.column = 2;
  CHECK(f.to_string() == "column 2: bad");
  CHECK(f.located("x.txt", 4, 10).to_string() == "x.txt:4:12: bad");
}

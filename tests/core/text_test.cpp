// core/text.h: the ASCII helpers that index, probe, resolver and app share.
#include "gpulock/core/text.h"

#include <catch2/catch.hpp>

using namespace gpulock::core;

TEST_CASE("iequals folds ASCII letters only") {
  CHECK(iequals("Content-Type", "content-type"));
  CHECK(iequals("TEXT/HTML", "text/html"));
  CHECK(iequals("", ""));
  CHECK_FALSE(iequals("name", "names"));
  CHECK_FALSE(iequals("Name", "Nane"));
  // Not a case pair: '@' is 'A' - 1 and '`' is 'a' - 1; bytes above ASCII compare exactly.
  CHECK_FALSE(iequals("@", "`"));
  CHECK_FALSE(iequals("\xC3\x89", "\xC3\xA9"));
  CHECK(ascii_lower('Z') == 'z');
  CHECK(ascii_lower('[') == '[');
}

TEST_CASE("trim drops the given bytes at both ends, ASCII whitespace by default") {
  CHECK(trim("  a b \t\r\n") == "a b");
  CHECK(trim("\v\fx\f") == "x");
  CHECK(trim(" \t ").empty());
  CHECK(trim("").empty());
  CHECK(trim("x") == "x");
  CHECK(trim(" \nx\n ", " \t") == "\nx\n");
  CHECK(trim_left("  x  ") == "x  ");
  CHECK(trim_right("  x  ") == "  x");
  CHECK(trim_right("x\r\n", "\r") == "x\r\n");
}

TEST_CASE("trim_slash drops every trailing slash and nothing else") {
  CHECK(trim_slash("https://h/simple/") == "https://h/simple");
  CHECK(trim_slash("https://h/simple//") == "https://h/simple");
  CHECK(trim_slash("/a/b") == "/a/b");
  CHECK(trim_slash("/").empty());
  CHECK(trim_slash("").empty());
}

// core/text.h: the ASCII helpers that index, probe, resolver and app share.
#include "gpulock/core/text.h"

#include <string>
#include <vector>

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

TEST_CASE("append_utf8 and utf8_sequence round-trip every boundary code point") {
  for (std::uint32_t cp :
       {0x0u, 0x41u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFDu, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    std::string s;
    append_utf8(s, cp);
    std::uint32_t back = 0;
    INFO(cp);
    CHECK(utf8_sequence(s, 0, back) == s.size());
    CHECK(back == cp);
  }
  std::string e_acute;
  append_utf8(e_acute, 0xE9);
  CHECK(e_acute == "\xC3\xA9");
  std::uint32_t cp = 0;
  CHECK(utf8_sequence("\xC0\x80", 0, cp) == 0);          // overlong NUL
  CHECK(utf8_sequence("\xED\xA0\x80", 0, cp) == 0);      // a surrogate
  CHECK(utf8_sequence("\xF4\x90\x80\x80", 0, cp) == 0);  // past U+10FFFF
  CHECK(utf8_sequence("\xE2\x82", 0, cp) == 0);          // truncated
  CHECK(utf8_sequence("\x80", 0, cp) == 0);              // a stray continuation byte
  CHECK(utf8_sequence("a\xE2\x82\xAC", 1, cp) == 3);
  CHECK(cp == 0x20AC);
}

TEST_CASE("words splits on runs of spaces and tabs") {
  using V = std::vector<std::string_view>;
  CHECK(words("sublibrary 9  graph\tcudnn") == V{"sublibrary", "9", "graph", "cudnn"});
  CHECK(words("  \t lead and trail \t ") == V{"lead", "and", "trail"});
  CHECK(words("").empty());
  CHECK(words(" \t ").empty());
  CHECK(words("one") == V{"one"});
}

TEST_CASE("table_rows skips blank and comment lines and keeps line numbers") {
  auto rows = table_rows("# header\n\nsource K  where it is # note\n  \t\nrow 1\n# end");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].line == 3);
  CHECK(rows[0].text == "source K  where it is ");
  CHECK(rows[0].words == std::vector<std::string_view>{"source", "K", "where", "it", "is"});
  CHECK(rows[1].line == 5);
  CHECK(rows[1].words == std::vector<std::string_view>{"row", "1"});
  CHECK(table_rows("").empty());
}

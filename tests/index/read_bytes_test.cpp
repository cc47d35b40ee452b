// A huge page's body released as it is parsed (issue 46 item 4: under 2 bytes of RSS per page
// byte): detail::ReadBytes, and the parsers' releasing entry points against the plain ones.
#include <cstddef>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/parse.h"

#include "page_builder.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// PEP 691 JSON of `n` wheels (one file object per line), about 330 bytes each; with a `size` of
// the wrong type at file `bad` (none when bad >= n).
std::string json_page(std::size_t n, std::size_t bad) {
  std::string out = "{\"meta\":{\"api-version\":\"1.1\"},\"name\":\"big\",\"files\":[\n";
  for (std::size_t i = 0; i < n; ++i) {
    out += fmt::format(
        "{}{{\"filename\":\"big-1.{}.0-py3-none-any.whl\",\"url\":\"https://files.example.org/"
        "packages/ab/cd/{:060x}/big-1.{}.0-py3-none-any.whl\",\"hashes\":{{\"sha256\":\"{:064x}\""
        "}},\"requires-python\":\">=3.9\",\"core-metadata\":true,\"size\":{},\"upload-time\":"
        "\"2024-01-01T00:00:00.000000Z\",\"yanked\":false}}\n",
        i ? "," : "", i, i, i, i + 1, i == bad ? "\"x\"" : std::to_string(1000 + i));
  }
  out += "]}\n";
  return out;
}

// PEP 503 HTML of `n` wheels, one anchor per line.
std::string html_page(std::size_t n) {
  std::string out = "<!DOCTYPE html>\n<html><body>\n";
  for (std::size_t i = 0; i < n; ++i) {
    out += fmt::format(
        "<a href=\"https://files.example.org/packages/ab/cd/{:060x}/big-1.{}.0-py3-none-any.whl"
        "#sha256={:064x}\" data-requires-python=\"&gt;=3.9\" data-core-metadata=\"true\">"
        "big-1.{}.0-py3-none-any.whl</a><br/>\n",
        i, i, i + 1, i);
  }
  out += "</body></html>\n";
  return out;
}

void require_same(const ProjectPage& a, const ProjectPage& b) {
  REQUIRE(a.files.size() == b.files.size());
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    const DistFile& x = a.files[i];
    const DistFile& y = b.files[i];
    REQUIRE(x.filename() == y.filename());
    REQUIRE(x.url() == y.url());
    REQUIRE(x.requires_python() == y.requires_python());
    REQUIRE(x.sha256() == y.sha256());
    REQUIRE(x.size() == y.size());
    REQUIRE(x.core_metadata() == y.core_metadata());
  }
  REQUIRE(a.warnings == b.warnings);
}

}  // namespace

TEST_CASE("ReadBytes releases whole blocks of what was passed and keeps the line count",
          "[index][pages]") {
  // 20 MiB of 64-byte lines: line k starts at offset 64 * (k - 1).
  std::string text(20 * kMiB, 'x');
  for (std::size_t i = 63; i < text.size(); i += 64)
    text[i] = '\n';
  detail::ReadBytes read(text, true);
  read.passed(kMiB);  // under the first block: nothing yet
  CHECK(read.released_to() == 0);
  read.passed(11 * kMiB + 100);
  // Whole 2 MiB blocks inside the text and before the offset were released.
  CHECK(read.released_to() >= 8 * kMiB);
  CHECK(read.released_to() <= 11 * kMiB + 100);
  const std::size_t gone = read.released_to() - 1;
  CHECK(text[gone] == '\0');  // the system's zeros now
  CHECK(text[11 * kMiB + 200] == 'x');
  CHECK(read.line_of(0) == 1);
  CHECK(read.line_of(gone) == 0);  // released: unknown
  // Lines at and after the passed offset, and between the last block and it, are exact.
  const std::size_t at = 11 * kMiB + 64 * 3 + 5;
  CHECK(read.line_of(at) == at / 64 + 1);
  const std::size_t between = read.released_to() + 70;
  CHECK(read.line_of(between) == between / 64 + 1);
  CHECK(read.line_of(text.size()) == text.size() / 64 + 1);

  // Off, or a text under 8 MiB: nothing is released.
  std::string small(6 * kMiB, 'y');
  detail::ReadBytes keep(small, true);
  keep.passed(small.size());
  CHECK(keep.released_to() == 0);
  detail::ReadBytes off(text, false);
  off.passed(text.size());
  CHECK(off.released_to() == 0);
}

TEST_CASE("a huge JSON page parsed while its body is released gives the same page",
          "[index][pages]") {
  const std::string page = json_page(40'000, 40'000);  // ~14 MB
  REQUIRE(page.size() > 12 * kMiB);
  auto plain = parse_json_page(page, "https://example.org/simple/big/");
  REQUIRE(plain);
  std::string body = page;
  auto released = detail::parse_json_page_releasing(body, "https://example.org/simple/big/", {});
  REQUIRE(released);
  REQUIRE(plain->files.size() == 40'000);
  require_same(*plain, *released);
  // The body's memory went back as it was read: its first blocks read as zeros now.
  CHECK(body[4 * kMiB] == '\0');
  CHECK(body.size() == page.size());

  // An error near the end is reported at the same line either way (the released lines were
  // counted before they went).
  const std::string broken = json_page(40'000, 39'990);
  auto plain_error = parse_json_page(broken, "https://example.org/simple/big/");
  std::string broken_body = broken;
  auto released_error =
      detail::parse_json_page_releasing(broken_body, "https://example.org/simple/big/", {});
  REQUIRE_FALSE(plain_error);
  REQUIRE_FALSE(released_error);
  CHECK(plain_error.error().line == 39'992);  // the files start on line 2
  CHECK(released_error.error().line == plain_error.error().line);
  CHECK(released_error.error().message == plain_error.error().message);
}

TEST_CASE("a huge HTML page parsed while its body is released gives the same page",
          "[index][pages]") {
  std::string page = html_page(45'000);
  REQUIRE(page.size() > 12 * kMiB);
  auto plain = parse_html_page(page, "https://example.org/simple/big/");
  REQUIRE(plain);
  std::string body = page;
  auto released = detail::parse_html_page_releasing(body, "https://example.org/simple/big/", {});
  REQUIRE(released);
  REQUIRE(plain->files.size() == 45'000);
  require_same(*plain, *released);
  CHECK(body[4 * kMiB] == '\0');

  // A tag left open at the end: the same line either way.
  page += "<a href='x.whl\n";
  auto plain_error = parse_html_page(page, "https://example.org/simple/big/");
  std::string broken_body = page;
  auto released_error =
      detail::parse_html_page_releasing(broken_body, "https://example.org/simple/big/", {});
  REQUIRE_FALSE(plain_error);
  REQUIRE_FALSE(released_error);
  CHECK(plain_error.error().line == 45'004);
  CHECK(released_error.error().line == plain_error.error().line);
}

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

constexpr std::string_view kUrl = "https://example.org/simple/big/";

// `page` parsed as it is (`plain`) and from a body released as it is read (`releasing`): the
// same files, and the body's first blocks went back to the system (they read as zeros now).
template <class Plain, class Releasing>
void check_same_parse(const std::string& page, std::size_t files, Plain plain,
                      Releasing releasing) {
  auto kept = plain(page, kUrl);
  REQUIRE(kept);
  std::string body = page;
  auto released = releasing(body, kUrl, PageFilter{});
  REQUIRE(released);
  REQUIRE(kept->files.size() == files);
  require_same(*kept, *released);
  CHECK(body[4 * kMiB] == '\0');
  CHECK(body.size() == page.size());
}

// An error near the end of `page`: reported at `line` either way (the released lines were
// counted before they went).
template <class Plain, class Releasing>
void check_same_error(const std::string& page, std::size_t line, Plain plain, Releasing releasing) {
  auto kept = plain(page, kUrl);
  std::string body = page;
  auto released = releasing(body, kUrl, PageFilter{});
  REQUIRE_FALSE(kept);
  REQUIRE_FALSE(released);
  CHECK(kept.error().line == line);
  CHECK(released.error().line == line);
  CHECK(released.error().message == kept.error().message);
}

const auto kPlainHtml = [](std::string_view page, std::string_view url) {
  return parse_html_page(page, url);
};

TEST_CASE("a huge HTML page parsed while its body is released gives the same page",
          "[index][pages]") {
  std::string page = html_page(45'000);
  REQUIRE(page.size() > 12 * kMiB);
  check_same_parse(page, 45'000, kPlainHtml, detail::parse_html_page_releasing);
  // A tag left open at the end.
  check_same_error(page + "<a href='x.whl\n", 45'004, kPlainHtml,
                   detail::parse_html_page_releasing);
}

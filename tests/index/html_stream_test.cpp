// The PEP 503 HTML page read as a stream (issue 46 item 4): any chunking of a page gives what
// parse_html_page gives for it whole (files, warnings with their lines, the error and its
// line), and the stream holds only the unfinished token at the end of what it was fed.
#include "html_stream.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/parse.h"

#include "page_builder.h"
#include "page_compare.h"
#include "page_stream.h"

using namespace gpulock;
using namespace gpulock::index;
using namespace std::string_literals;

using index_test::check_same;

namespace {

struct Page {
  std::string name;
  std::string html;
  std::string url = "http://127.0.0.1:1/simple/x/";
  PageFilter filter{"x", false};
};

// The pages of parse_test.cpp's HTML cases, and pages with every construct the tokenizer knows
// placed where a chunk boundary can fall inside it.
std::vector<Page> valid_pages() {
  std::vector<Page> pages;
  pages.push_back(
      {"pytorch",
       "<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Links for torch</h1>\n"
       "    <a href=\"/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl#sha256=ABCDEF\" "
       "data-dist-info-metadata=\"sha256=1234\" data-core-metadata=\"sha256=5678\" "
       "data-upload-time=\"2024-10-29T17:05:02Z\">torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl"
       "</a><br/>\n"
       "    <a href=\"/whl/nightly/cu126/"
       "torch-2.7.0.dev20250116%2Bcu126-cp311-cp311-manylinux_2_28_x86_64.whl\">"
       "torch-2.7.0.dev20250116+cu126-cp311-cp311-manylinux_2_28_x86_64.whl</a><br/>\n"
       "  </body>\n</html>\n<!--TIMESTAMP 1730221502-->\n",
       "https://download.pytorch.org/whl/cu124/torch/",
       {"torch", false}});
  pages.push_back(
      {"attributes",
       "<html><head><meta name=\"pypi:repository-version\" content=\"1.1\">"
       "<title>x</title></head><body>\n"
       "<a href='../../packages/x-1.0-py3-none-any.whl#sha256=00ff' "
       "data-requires-python='&gt;=3.8,&lt;4' "
       "data-yanked='bad &amp; broken &#x41;&#66;' data-core-metadata>x-1.0-py3-none-any.whl</a>\n"
       "<A HREF=x-2.0.tar.gz DATA-DIST-INFO-METADATA=true>x-2.0.tar.gz</A>\n"
       "<a href=\"https://cdn.example.com/x-3.0-py3-none-any.whl\" data-core-metadata=\"false\" "
       "data-size=\"42\" data-yanked>x-3.0</a>\n"
       "<a>no href</a>\n"
       "<script>var s = '<a href=\"evil-9.9.tar.gz\">';</script>\n"
       "<a href=\"x-4.0.zip\">x-4.0.zip</a>\n"
       "</body></html>"});
  pages.push_back({"uppercase script",
                   "<html><body>\n"
                   "<SCRIPT>var s = '<a href=\"evil-9.9.tar.gz\">';</SCRIPT>\n"
                   "<Style>a { color: red }</STYLE>\n"
                   "<a href=\"x-4.0.zip\">x-4.0.zip</a>\n"
                   "</body></html>"});
  pages.push_back({"find-links",
                   "<a href=\"a-1.0-py3-none-any.whl\">a</a><a href=\"b-2.0.tar.gz\">b</a>"
                   "<a href=\"README.txt\">readme</a><a href=\"../\">up</a>",
                   "http://h/links/",
                   {"", true}});
  pages.push_back(
      {"everything",
       "<?xml version=\"1.0\"?>\n<!DOCTYPE html>\n<!-- a comment -- with <a href=\"no-1.0.tar.gz\">"
       " inside <!- and - - -->\n<html lang=en>\n<head>\n"
       "<META NAME=\"pypi:repository-version\" CONTENT=\" 1.7 \"/>\n"
       "<base href=\"https://files.example.org/pkgs/x/\">\n"
       "<style>a { color: red } </sty </stylex </STYLE>\n"
       "<script type=text/javascript>if (a < b && c </ d) { x = '</scrip'; }</script >\n"
       "</head>\n<body>\n"
       "<h1>Links &amp; more < not a tag</h1>\n"
       "<a href=x-1.0-py3-none-any.whl#sha256=" +
           std::string(64, 'A') +
           " data-requires-python=\"&gt;=3.9\"\n   data-size = 1234 data-upload-time="
           "\"2024-01-02T03:04:05.5Z\">x-1.0-py3-none-any.whl</a><br/>\n"
           "<a href=\"x-1.1.tar.gz#md5=0123\" data-upload-time=\"yesterday\" "
           "data-core-metadata=\"sha256:nothex\">x-1.1.tar.gz</a>\n"
           "<a href=\"x-1.2.tar.gz\" data-upload-time=\"never\" data-core-metadata=\"bogus\" "
           "data-yanked=\"&quot;broken&quot;&#10;\">x</a>\n"
           "<a href=\"x-1.3-py3-none-any.whl\" data-dist-info-metadata=\"sha256=abcd\" "
           "data-core-metadata=\"sha256=EF01\" data-yanked='' >x-1.3</a>\n"
           "<a name=top>anchor without href</a><a href>empty href</a>\n"
           "<a href=\"y-1.0.tar.gz\">another project</a>\n"
           "<a href=\"not-a-distribution.txt\">text</a>\n"
           "<a href='x-2.0.tar.gz'/><A\tHREF = \"x-3.0.tar.gz\" data-yanked>x-3.0</A\n>"
           "<!---->\n<p>text<br/></p><a href=/abs/x-4.0-py3-none-any.whl>"
           "x-4.0-py3-none-any.whl"});  // the last anchor's text ends with the page
  pages.push_back({"trailing '<'", "<html><body>text <"});
  pages.push_back({"trailing '<' and space", "<html><body>a < b <"});
  pages.push_back({"trailing anchor", "<a href=x-1.0.tar.gz>x-1.0.tar.gz"});
  pages.push_back({"trailing bare tag", "<html><a href=x-1.0.tar.gz>"});
  pages.push_back({"comment only", "<!-- only a comment -->"});
  pages.push_back({"minor version", "<meta name=\"pypi:repository-version\" content=\"1.7\">"});
  pages.push_back({"empty", ""});
  pages.push_back({"whitespace", " \n\t\r\n "});
  pages.push_back({"slash attribute",
                   "<a href=x-1.0.tar.gz/ data-yanked=/>x</a><a/ href=\"x"
                   "-2.0.tar.gz\"/>y</a><a href=x-3.0.tar.gz / >"});
  return pages;
}

// Pages that fail (the error's line is the test).
std::vector<Page> invalid_pages() {
  std::vector<Page> pages;
  pages.push_back(
      {"major 2", "<html>\n<meta name=\"pypi:repository-version\" content=\"2.0\">\n</html>"});
  pages.push_back({"bad version",
                   "<html>\n\n<a href=x-1.0.tar.gz>x</a>\n"
                   "<meta name='pypi:repository-version' content='one'>\n<a href=x-2.0.tar.gz>"});
  pages.push_back({"unterminated value", "<html>\n<body>\n<a href=\"x-1.0.tar.gz>x</a>\n"});
  pages.push_back({"unterminated single-quoted value", "<html>\n<a\nhref='x-1.0.tar.gz>x</a>\n"});
  pages.push_back({"open tag", "<html>\n<a href=x-1.0.tar.gz"});
  pages.push_back({"open tag after a name", "<html>\n<a href"});
  pages.push_back({"open tag after '='", "<html>\n<a href = "});
  pages.push_back({"open tag name", "<html>\n\n<a"});
  pages.push_back({"open tag after '/'", "<html>\n<br/"});
  pages.push_back({"comment", "<html>\n\n<!-- never closed -- ->"});
  pages.push_back({"comment '<!-->'", "<html>\n<!-->"});
  pages.push_back({"doctype", "<html>\n<!DOCTYPE html"});
  pages.push_back({"'<!-'", "<html>\n<!-"});
  pages.push_back({"end tag", "<html>\n</html"});
  pages.push_back({"script", "<html>\n<body>\n<script>\nvar x = '</scrip';\n</SCRIP"});
  pages.push_back({"style", "<html>\n<STYLE>a { }\n</styl>"});
  pages.push_back({"not a page", "this is not a page\n"});
  pages.push_back({"binary", "PK\x03\x04\0\0"s});
  pages.push_back({"NUL after a bad version",
                   "<html>\n<meta name=\"pypi:repository-version\" content=\"2.0\">\n"
                   "<a href=x-1.0.tar.gz>x</a>\n<p>\0</p>\n<!-- open"s});
  pages.push_back({"NUL after an unterminated comment", "<html>\n<!-- open\n\n\0 x"s});
  pages.push_back({"NUL in a tag", "<html>\n<a href='x\n\0'>"s});
  return pages;
}

// `page` fed in the pieces `sizes` gives, the rest in one piece.
core::Result<ProjectPage> parse_pieces(const Page& page, const std::vector<std::size_t>& sizes) {
  auto stream = detail::html_page_stream(page.url, page.filter);
  std::string_view rest = page.html;
  for (std::size_t size : sizes) {
    size = std::min(size, rest.size());
    // A copy that dies after the feed: the stream may not keep a view of what it was given.
    std::string piece(rest.substr(0, size));
    stream->feed(piece);
    piece.assign(piece.size(), '#');
    rest.remove_prefix(size);
  }
  std::string piece(rest);
  stream->feed(piece);
  piece.assign(piece.size(), '#');
  return stream->finish();
}

std::vector<std::size_t> fixed_chunks(std::size_t total, std::size_t size) {
  return std::vector<std::size_t>(total / size + 1, size);
}

// Random pieces (empty ones included) of `total` bytes.
std::vector<std::size_t> random_chunks(std::size_t total, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> small(0, 12);
  std::uniform_int_distribution<std::size_t> large(0, 300);
  std::vector<std::size_t> sizes;
  std::size_t sum = 0;
  while (sum < total) {
    std::size_t n = (rng() % 3 == 0) ? large(rng) : small(rng);
    sizes.push_back(n);
    sum += n;
  }
  return sizes;
}

// Every chunk size from 1 to 64 and random chunkings of `page`, against the page read whole.
void check_chunkings(const Page& page) {
  const auto whole = parse_html_page(page.html, page.url, page.filter);
  INFO("page: " << page.name);
  check_same(parse_pieces(page, {}), whole);
  for (std::size_t size = 1; size <= 64; ++size) {
    INFO("chunks of " << size);
    check_same(parse_pieces(page, fixed_chunks(page.html.size(), size)), whole);
  }
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    INFO("random chunks, seed " << seed);
    check_same(parse_pieces(page, random_chunks(page.html.size(), seed)), whole);
  }
  // Cut at every offset once: two pieces.
  for (std::size_t cut = 0; cut <= page.html.size(); ++cut) {
    INFO("cut at " << cut);
    check_same(parse_pieces(page, {cut}), whole);
  }
}

// PEP 503 HTML of `n` wheels, one anchor per line.
std::string html_page(std::size_t n) {
  std::string out = "<!DOCTYPE html>\n<html><body>\n";
  for (std::size_t i = 0; i < n; ++i) {
    out += fmt::format(
        "<a href=\"https://files.example.org/packages/ab/cd/{:060x}/big-1.{}.0-py3-none-any.whl"
        "#sha256={:064x}\" data-requires-python=\"&gt;=3.9\" data-core-metadata=\"true\"{}>"
        "big-1.{}.0-py3-none-any.whl</a><br/>\n",
        i, i, i + 1, i % 7 == 3 ? " data-yanked" : "", i);
    if (i == 12'345) out += "<a href=\"big-2.0.tar.gz\" data-upload-time=\"later\">x</a>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace

TEST_CASE("HTML stream: valid pages give the same page in any chunking", "[html][stream]") {
  for (const Page& page : valid_pages())
    check_chunkings(page);
}

TEST_CASE("HTML stream: the reference pages are what the tests expect", "[html][stream]") {
  // The whole-page reading the chunked ones are compared with, on the pages that exercise
  // the most: the comparisons above would pass on a parser that read nothing.
  auto pages = valid_pages();
  const Page& everything = pages[4];
  REQUIRE(everything.name == "everything");
  auto page = parse_html_page(everything.html, everything.url, everything.filter);
  REQUIRE(page);
  CHECK(page->api_version == "1.7");
  REQUIRE(page->files.size() == 7);
  CHECK(page->files[0].url() == "https://files.example.org/pkgs/x/x-1.0-py3-none-any.whl");
  CHECK(page->files[0].size() == std::optional<std::uint64_t>(1234));
  CHECK(page->files[0].sha256() == std::string(64, 'a'));
  CHECK(page->files[2].yanked_reason() == "\"broken\"\\x0a");
  CHECK(page->files[3].core_metadata_sha256() == "ef01");
  CHECK(page->files[4].filename() == "x-2.0.tar.gz");
  CHECK(page->files[5].yanked());
  CHECK(page->files[6].url() == "https://files.example.org/abs/x-4.0-py3-none-any.whl");
  const std::vector<std::string> warnings = {
      "repository API version 1.7 is newer than 1.4; reading it as 1.4 (PEP 629)",
      "line 15: ignoring invalid data-upload-time 'yesterday'",
      "line 15: ignoring unreadable data-core-metadata value 'sha256:nothex'",
      "ignored 2 links without href",
  };
  REQUIRE(page->warnings.size() >= warnings.size());
  CHECK(std::vector<std::string>(page->warnings.begin(), page->warnings.begin() + 4) == warnings);
  CHECK(page->warnings.size() == 6);  // another project's file, an unreadable filename
}

TEST_CASE("HTML stream: errors are the same, at the same line, in any chunking", "[html][stream]") {
  for (const Page& page : invalid_pages())
    check_chunkings(page);
  // The lines the comparisons hold the stream to.
  const auto line_of = [](std::string_view name) {
    for (const Page& page : invalid_pages()) {
      if (page.name == name) {
        auto parsed = parse_html_page(page.html, page.url, page.filter);
        REQUIRE_FALSE(parsed);
        return std::pair(parsed.error().line, parsed.error().message);
      }
    }
    FAIL("no page " << name);
    return std::pair(std::size_t{0}, std::string());
  };
  CHECK(line_of("major 2").first == 2);
  CHECK(line_of("bad version") ==
        std::pair(std::size_t{4}, std::string("invalid HTML project page: invalid "
                                              "pypi:repository-version 'one'")));
  CHECK(line_of("unterminated value").first == 3);
  CHECK(line_of("unterminated single-quoted value").first == 3);
  CHECK(line_of("open tag") ==
        std::pair(std::size_t{2}, std::string("invalid HTML project page: unterminated tag (the "
                                              "page ends inside it)")));
  CHECK(line_of("open tag name").first == 3);
  CHECK(line_of("comment") ==
        std::pair(std::size_t{3},
                  std::string("invalid HTML project page: unterminated comment '<!--'")));
  CHECK(line_of("'<!-'") ==
        std::pair(std::size_t{2}, std::string("invalid HTML project page: unterminated tag")));
  CHECK(line_of("script") ==
        std::pair(std::size_t{3},
                  std::string("invalid HTML project page: unterminated <script> element")));
  CHECK(line_of("style").second == "invalid HTML project page: unterminated <STYLE> element");
  CHECK(line_of("not a page") ==
        std::pair(std::size_t{1},
                  std::string("invalid HTML project page: not an HTML page (no tags)")));
  CHECK(line_of("NUL after a bad version") ==
        std::pair(std::size_t{4},
                  std::string("invalid HTML project page: binary data, not an HTML page")));
  CHECK(line_of("NUL after an unterminated comment").first == 4);
  CHECK(line_of("NUL in a tag").first == 3);
}

TEST_CASE("HTML stream: a big page in 16 KiB chunks holds only its unfinished token",
          "[html][stream]") {
  const std::string html = html_page(20'000);
  REQUIRE(html.size() > 6'000'000);
  const auto whole = parse_html_page(html, "https://example.org/simple/big/", {"big", false});
  REQUIRE(whole);
  REQUIRE(whole->files.size() == 20'001);
  REQUIRE(whole->warnings.size() == 1);
  CHECK(whole->warnings[0] == "line 12349: ignoring invalid data-upload-time 'later'");

  constexpr std::size_t kChunk = 16 * 1024;
  auto stream = detail::html_page_stream("https://example.org/simple/big/", {"big", false});
  std::size_t most_unread = 0;
  std::size_t most_capacity = 0;
  for (std::size_t at = 0; at < html.size(); at += kChunk) {
    stream->feed(std::string_view(html).substr(at, kChunk));
    const detail::HeldBytes held = detail::html_stream_held(*stream);
    most_unread = std::max(most_unread, held.unread);
    most_capacity = std::max(most_capacity, held.capacity);
  }
  // An anchor and its text are under 400 bytes; the buffer holds one chunk and a token.
  CHECK(most_unread > 0);
  CHECK(most_unread < 400);
  CHECK(most_capacity <= 2 * kChunk + 1024);
  check_same(stream->finish(), whole);
}

TEST_CASE("HTML stream: a long token fed in small pieces is held until it ends, then dropped",
          "[html][stream]") {
  // A 1 MiB <script> and a 1 MiB comment fed 1 KiB at a time: the stream holds each whole
  // until its end arrives (no step acts on an unfinished token), and nothing of it after.
  std::string html = "<html>\n<script>\n";
  for (int i = 0; i < 16 * 1024; ++i)
    html += "if (a < b) x = '</scrip'; -- -\n";
  html += "</script>\n<!--";
  for (int i = 0; i < 16 * 1024; ++i)
    html += "<a href=x-1.0.tar.gz>- -> --\n";
  html += "-->\n<a href=x-1.0.tar.gz data-upload-time=bad>x</a>\n</html>\n";
  const Page page{"long tokens", html};
  const auto whole = parse_html_page(page.html, page.url, page.filter);
  REQUIRE(whole);
  REQUIRE(whole->files.size() == 1);
  REQUIRE(whole->warnings.size() == 1);
  CHECK(whole->warnings[0] == "line 32773: ignoring invalid data-upload-time 'bad'");

  auto stream = detail::html_page_stream(page.url, page.filter);
  std::size_t most_unread = 0;
  for (std::size_t at = 0; at < html.size(); at += 1024) {
    stream->feed(std::string_view(html).substr(at, 1024));
    most_unread = std::max(most_unread, detail::html_stream_held(*stream).unread);
  }
  CHECK(most_unread > 400'000);
  CHECK(detail::html_stream_held(*stream).unread < 100);
  check_same(stream->finish(), whole);
}

TEST_CASE("HTML stream: a medium page one byte at a time", "[html][stream]") {
  const Page page{"medium", html_page(300), "https://example.org/simple/big/", {"big", false}};
  const auto whole = parse_html_page(page.html, page.url, page.filter);
  REQUIRE(whole);
  CHECK(whole->files.size() == 300);
  check_same(parse_pieces(page, fixed_chunks(page.html.size(), 1)), whole);
  check_same(parse_pieces(page, random_chunks(page.html.size(), 99)), whole);
}

namespace {

std::string bench_page() {
  const char* path = std::getenv("GPULOCK_HTML_BENCH");
  REQUIRE(path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The best of 7 runs of `parse`, printed.
template <class Parse>
void bench(const char* what, std::size_t bytes, Parse parse) {
  double best = 1e9;
  std::size_t files = 0;
  for (int i = 0; i < 7; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto parsed = parse();
    auto t1 = std::chrono::steady_clock::now();
    REQUIRE(parsed);
    files = parsed->files.size();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::printf("%s: %zu bytes, %zu files, best of 7: %.1f ms\n", what, bytes, files, best);
}

}  // namespace

// By hand: GPULOCK_HTML_BENCH=page.html index_tests "[.bench]"
TEST_CASE("bench: a big HTML page parsed whole", "[.bench]") {
  const std::string html = bench_page();
  bench("whole", html.size(), [&] {
    return parse_html_page(html, "https://pypi.org/simple/bg/", {"bg", false});
  });
}

TEST_CASE("bench: a big HTML page fed in 16 KiB chunks", "[.bench]") {
  const std::string html = bench_page();
  bench("16 KiB chunks", html.size(), [&] {
    auto stream = detail::html_page_stream("https://pypi.org/simple/bg/", {"bg", false});
    for (std::size_t at = 0; at < html.size(); at += 16 * 1024)
      stream->feed(std::string_view(html).substr(at, 16 * 1024));
    return stream->finish();
  });
}

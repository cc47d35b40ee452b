// A PEP 691 page read as its bytes arrive (issue 46 item 4): detail::JsonSplitter, and the
// stream against the page read in one piece, for every chunking.
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/parse.h"

#include "json_splitter.h"
#include "page_stream.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

constexpr std::string_view kUrl = "https://example.org/simple/demo/";

// Everything a page read gives, as text: files with every field, warnings, versions; or the
// error with its line.
std::string describe(const core::Result<ProjectPage>& r) {
  if (!r) return fmt::format("error: {} (line {})", r.error().message, r.error().line);
  std::string out = fmt::format("name {} api {} found {}\n", r->name, r->api_version, r->found);
  for (const DistFile& f : r->files) {
    out +=
        fmt::format("{} {} rp={} yanked={} reason={} size={} cm={} time={}", f.filename(), f.url(),
                    f.requires_python(), f.yanked(), f.yanked_reason(), f.size() ? *f.size() : 0,
                    f.core_metadata(), f.upload_time() ? *f.upload_time() : -1);
    for (const Hash& h : f.hashes())
      out += fmt::format(" {}={}", h.algorithm, h.hex);
    for (const Hash& h : f.core_metadata_hashes())
      out += fmt::format(" cm:{}={}", h.algorithm, h.hex);
    out += '\n';
  }
  for (const std::string& w : r->warnings)
    out += "warning: " + w + "\n";
  for (const std::string& v : r->versions)
    out += "version: " + v + "\n";
  return out;
}

std::string read_in_chunks(std::string_view page, const std::vector<std::size_t>& sizes,
                           const PageFilter& filter) {
  auto stream = detail::json_page_stream(kUrl, filter);
  std::size_t at = 0;
  for (std::size_t i = 0; at < page.size(); ++i) {
    std::size_t n = std::min(sizes[i % sizes.size()], page.size() - at);
    stream->feed(page.substr(at, n));
    at += n;
  }
  return describe(stream->finish());
}

// Every chunk size from 1 to 64, and random chunkings: all read as the page in one piece.
void check_every_chunking(std::string_view page, const PageFilter& filter = {"demo", false}) {
  const std::string whole = describe(parse_json_page(page, kUrl, filter));
  for (std::size_t n = 1; n <= 64; ++n) {
    INFO("chunks of " << n);
    REQUIRE(read_in_chunks(page, {n}, filter) == whole);
  }
  std::mt19937 rng(46);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::size_t> sizes(17);
    for (auto& s : sizes)
      s = 1 + rng() % 97;
    INFO("round " << round);
    REQUIRE(read_in_chunks(page, sizes, filter) == whole);
  }
}

// Pretty-printed, with what a stream must carry across chunks: escapes (\" and \\ right before
// a closing quote), nested unknown values, a second "files" key, keys after the files.
const std::string kPretty = R"({
  "meta": {"api-version": "1.1", "_last-serial": 123},
  "name": "demo",
  "files": [
    {
      "filename": "demo-1.0-py3-none-any.whl",
      "url": "https://example.org/packages/demo-1.0-py3-none-any.whl#sha256=00",
      "hashes": {"sha256": "C33360CFC2EDD976C2633B3B66C769BDCBBF0E0B6550606D188431C81E7DD1FC"},
      "requires-python": ">=3.9",
      "core-metadata": {"sha256": "2222"},
      "yanked": "a \"quoted\" reason \\",
      "size": 821025792,
      "upload-time": "2025-06-04T17:34:58.747Z",
      "unknown-future-key": {"nested": [1, 2, {"x": "y]}"}], "s": "\\\\"}
    },
    {
      "filename": "demo-1.0.tar.gz",
      "url": "../../packages/demo-1.0.tar.gz",
      "hashes": {},
      "requires-python": null,
      "upload-time": "not a time"
    } ,
    {"filename": "other-1.0.tar.gz", "url": "/o/other-1.0.tar.gz", "hashes": {}}
  ],
  "versions": ["1.0", "0.9"],
  "files": [{"filename": "demo-0.9.tar.gz", "url": "/p/demo-0.9.tar.gz", "hashes": {}}]
}
)";

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

}  // namespace

TEST_CASE("a JSON page read in any chunking reads as in one piece", "[index][pages][stream]") {
  const std::string whole = describe(parse_json_page(kPretty, kUrl, {"demo", false}));
  // The page as written (by hand): three files of demo kept, one of another project dropped.
  CHECK(whole.find("demo-1.0-py3-none-any.whl https://example.org/packages/demo-1.0-py3-none-"
                   "any.whl rp=>=3.9 yanked=true reason=a \"quoted\" reason \\") !=
        std::string::npos);
  CHECK(whole.find("demo-0.9.tar.gz https://example.org/p/demo-0.9.tar.gz") != std::string::npos);
  CHECK(whole.find("warning: files[1].upload-time: ignoring invalid upload-time 'not a time'") !=
        std::string::npos);
  check_every_chunking(kPretty);
  check_every_chunking(kPretty, {});
}

TEST_CASE("a JSON page's errors are the same, on the same line, in any chunking",
          "[index][pages][stream]") {
  struct Case {
    std::string page;
    std::string message;
    std::size_t line;
  };
  const std::vector<Case> cases = {
      // A value of the wrong type in the second file, on line 3.
      {"{\"files\": [\n{\"filename\": \"a.whl\", \"url\": \"/a.whl\"},\n{\"size\": \"x\"}]}",
       "invalid PEP 691 page: files[1].size: expected a non-negative integer", 3},
      // A file without a URL: at the token after the object (the ']' on line 4).
      {"{\"files\": [\n{\"filename\": \"demo-1.0.tar.gz\"\n}\n]}",
       "invalid PEP 691 page: files[0]: missing 'url'", 4},
      // An unsupported API version after the files: the files' outcome comes first only
      // where it comes first in the page.
      {"{\"files\": [{\"filename\": \"demo-1.0.tar.gz\", \"url\": \"/d\"}],\n"
       "\"meta\": {\"api-version\": \"2.0\"}}",
       "invalid PEP 691 page: meta.api-version: unsupported repository API version 2.0 "
       "(gpulock reads 1.x, PEP 629)",
       2},
      {"{\"meta\": {\"api-version\": \"2.0\"},\n\"files\": [{\"size\": \"x\"}]}",
       "invalid PEP 691 page: meta.api-version: unsupported repository API version 2.0 "
       "(gpulock reads 1.x, PEP 629)",
       1},
      // A page cut inside a file object, and inside a string.
      {"{\"files\": [\n{\"filename\": \"a.whl\",\n",
       "invalid PEP 691 page: not valid JSON (JSON document ended early in the middle of an "
       "object or array.)",
       1},
      {"{\"files\": [\n{\"filename\": \"a.wh",
       "invalid PEP 691 page: not valid JSON (A string "
       "is opened, but never closed.)",
       2},
      // A control character in a string of the last file: the whole page is refused first.
      {"{\"files\": [{\"size\": \"x\"}, {\"filename\": \"a\tb\"}]}",
       "invalid PEP 691 page: not valid JSON (Within strings, some characters must be escaped, "
       "we found unescaped characters)",
       0},
      {"[1, 2]", "invalid PEP 691 page: not a JSON object", 1},
      // Nothing split (the key is not "files" as written), a tab in a string: the bytes up to
      // the root's end are the page's, whatever the chunks (fuzz/corpus/json_page/crash-root-
      // closed-squeezed: spaces were once squeezed there, so the tab read as a space whole).
      {"{\"fil\\u0065s\": [{\"filename\": \"a\tb\"}]}",
       "invalid PEP 691 page: not valid JSON (Within strings, some characters must be escaped, "
       "we found unescaped characters)",
       0},
      {"{\"files\": [1]}", "invalid PEP 691 page: files[0]: expected an object", 1},
      {"{\"files\": [,]}", "invalid PEP 691 page: files[0]: expected an object", 1},
  };
  for (const Case& c : cases) {
    INFO(c.page);
    auto whole = parse_json_page(c.page, kUrl, {"demo", false});
    REQUIRE_FALSE(whole);
    if (!c.message.empty()) {
      CHECK(whole.error().message == c.message);
      CHECK(whole.error().line == c.line);
    }
    check_every_chunking(c.page);
  }
}

TEST_CASE("the JSON splitter keeps a skeleton with the page's lines, and little else",
          "[index][pages][stream]") {
  struct Collect final : detail::JsonSplitter::Sink {
    std::vector<std::string> elements;
    void element(const detail::JsonSplitter::Element& e) override {
      CHECK(e.readable >= e.text.size() + detail::JsonSplitter::kPadding);
      CHECK(e.index == elements.size() % 2);
      elements.emplace_back(e.text);
    }
  } sink;
  detail::JsonSplitter splitter;
  const std::string page =
      "{\"name\": \"x\", \"fil\\u0065s\": [{}], \"files\": [ {\"a\": \"}\\\"\"},\n"
      " [1,\n2] ], \"files\": [\"s\", 3]}";
  for (char c : page)
    splitter.feed(std::string_view(&c, 1), sink);
  splitter.finish();
  // An escaped key is not split: simdjson's key comparison reads keys as written too.
  CHECK(splitter.skeleton() ==
        "{\"name\": \"x\", \"fil\\u0065s\": [{}], \"files\": [ 0,\n 0\n], \"files\": [0, 0]}");
  CHECK(splitter.arrays() == std::vector<std::size_t>{2, 2});
  CHECK(sink.elements == std::vector<std::string>{"{\"a\": \"}\\\"\"}", "[1,\n2]", "\"s\"", "3"});

  // 20,000 files in 16 KiB chunks: what is held stays near one chunk.
  std::string big = "{\"meta\": {\"api-version\": \"1.1\"}, \"files\": [";
  for (int i = 0; i < 20'000; ++i) {
    big += fmt::format("{}{{\"filename\": \"demo-1.{}.tar.gz\", \"url\": \"/p/demo-1.{}.tar.gz\"}}",
                       i ? ", " : "", i, i);
  }
  big += "]}";
  struct Count final : detail::JsonSplitter::Sink {
    std::size_t n = 0;
    void element(const detail::JsonSplitter::Element&) override { ++n; }
  } count;
  detail::JsonSplitter stream;
  std::size_t most = 0;
  for (std::size_t at = 0; at < big.size(); at += 16384) {
    stream.feed(std::string_view(big).substr(at, 16384), count);
    most = std::max(most, stream.held());
  }
  stream.finish();
  CHECK(count.n == 20'000);
  CHECK(most < 200);
  CHECK(stream.skeleton().size() < 60'100);
}

TEST_CASE("a huge JSON page read in 64 KiB chunks is the page read whole",
          "[index][pages][stream]") {
  const std::string page = json_page(40'000, 40'000);  // ~14 MB
  const std::string whole = describe(parse_json_page(page, kUrl, {}));
  REQUIRE(whole.find("big-1.39999.0-py3-none-any.whl") != std::string::npos);
  REQUIRE(read_in_chunks(page, {65536}, {}) == whole);
  // A value of the wrong type in file 39,990 (the files start on line 2).
  auto bad = parse_json_page(json_page(40'000, 39'990), kUrl, {});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().line == 39'992);
  CHECK(bad.error().message ==
        "invalid PEP 691 page: files[39990].size: expected a non-negative "
        "integer");
  CHECK(read_in_chunks(json_page(40'000, 39'990), {65536}, {}) == describe(bad));
}

TEST_CASE("what a JSON page's stream cannot split is kept only up to 64 MiB",
          "[index][pages][stream]") {
  // A gzip bomb's zeros: not an object, so never split; refused past 64 MiB, holding no more.
  const std::string chunk(std::size_t{1} << 20, '\0');
  auto zeros = detail::json_page_stream(kUrl, {});
  for (int i = 0; i < 65; ++i)
    zeros->feed(chunk);
  auto refused = zeros->finish();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "invalid PEP 691 page: not valid JSON at line 1 (over 64 MiB follow that were not read)");
  // Under the limit the page is read as a whole page would be.
  auto fewer = detail::json_page_stream(kUrl, {});
  fewer->feed(chunk);
  CHECK(describe(fewer->finish()) == describe(parse_json_page(chunk, kUrl, {})));
  // After the root object, spaces cost nothing (a page padded with 80 MiB of them is read);
  // anything else past 64 MiB is refused, at the line where the object ends.
  const std::string page = "{\"files\": [{\"filename\": \"demo-1.0.tar.gz\", \"url\": \"/d\"}]}\n";
  auto padded = detail::json_page_stream(kUrl, {"demo", false});
  padded->feed(page);
  const std::string spaces(std::size_t{1} << 20, ' ');
  for (int i = 0; i < 80; ++i)
    padded->feed(spaces);
  auto read = padded->finish();
  REQUIRE(read);
  CHECK(read->files.size() == 1);
  auto trailing = detail::json_page_stream(kUrl, {"demo", false});
  trailing->feed(page);
  const std::string x(std::size_t{1} << 20, 'x');
  for (int i = 0; i < 65; ++i)
    trailing->feed(x);
  auto after = trailing->finish();
  REQUIRE_FALSE(after);
  CHECK(after.error().message ==
        "invalid PEP 691 page: over 64 MiB follow the JSON object, which ends on line 1");
}

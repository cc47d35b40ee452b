// PEP 691 JSON and PEP 503 HTML project pages, parsed without a server.
#include "gpulock/index/parse.h"

#include <cctype>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "page_builder.h"

using namespace gpulock;
using namespace gpulock::index;

namespace {

const char* kJsonPage = R"({
  "meta": {"api-version": "1.1", "_last-serial": 123},
  "name": "torch",
  "files": [
    {
      "filename": "torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl",
      "url": "https://files.pythonhosted.org/packages/56/7e/torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl",
      "hashes": {"sha256": "C33360CFC2EDD976C2633B3B66C769BDCBBF0E0B6550606D188431C81E7DD1FC"},
      "requires-python": ">=3.9.0",
      "dist-info-metadata": {"sha256": "1111"},
      "core-metadata": {"sha256": "2222"},
      "gpg-sig": false,
      "yanked": false,
      "size": 821025792,
      "upload-time": "2025-06-04T17:34:58.747Z",
      "provenance": null,
      "unknown-future-key": {"nested": [1, 2, {"x": "y"}]}
    },
    {
      "filename": "torch-2.7.0.tar.gz",
      "url": "../../packages/torch-2.7.0.tar.gz#md5=abc",
      "hashes": {},
      "requires-python": null,
      "core-metadata": false,
      "yanked": "broken build",
      "size": 10
    },
    {
      "filename": "torch-2.6.0-cp312-cp312-linux_x86_64.whl",
      "url": "/packages/torch-2.6.0-cp312-cp312-linux_x86_64.whl",
      "hashes": {"sha256": "aa", "blake2b_256": "bb"},
      "data-dist-info-metadata": true,
      "yanked": true,
      "upload-time": null
    },
    {
      "filename": "torch-1.0.egg",
      "url": "https://example.com/torch-1.0.egg",
      "hashes": {}
    },
    {
      "filename": "numpy-1.0.tar.gz",
      "url": "https://example.com/numpy-1.0.tar.gz",
      "hashes": {}
    }
  ],
  "versions": ["2.6.0", "2.7.0", "2.7.1"]
})";

}  // namespace

TEST_CASE("PEP 691 JSON page with every field", "[parse][json]") {
  PageFilter filter;
  filter.project = "torch";
  auto page = parse_json_page(kJsonPage, "https://pypi.org/simple/torch/", filter);
  REQUIRE(page);
  CHECK(page->found);
  CHECK(page->name == "torch");
  CHECK(page->api_version == "1.1");
  CHECK(page->versions == std::vector<std::string>{"2.6.0", "2.7.0", "2.7.1"});
  REQUIRE(page->files.size() == 3);

  const DistFile& w = page->files[0];
  CHECK(w.filename() == "torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(w.url() ==
        "https://files.pythonhosted.org/packages/56/7e/"
        "torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(w.sha256() == "c33360cfc2edd976c2633b3b66c769bdcbbf0e0b6550606d188431c81e7dd1fc");
  CHECK(w.requires_python() == ">=3.9.0");
  CHECK(w.core_metadata());
  CHECK(w.core_metadata_sha256() == "2222");  // PEP 714: core-metadata wins over the alias
  CHECK_FALSE(w.yanked());
  CHECK(w.size() == std::optional<std::uint64_t>(821025792));
  CHECK(w.upload_time() == std::optional<std::int64_t>(1749058498747000));
  REQUIRE(w.wheel());
  CHECK(w.wheel()->name == "torch");
  CHECK(w.version().to_string() == "2.7.1");

  const DistFile& s = page->files[1];
  CHECK(s.url() == "https://pypi.org/packages/torch-2.7.0.tar.gz");  // resolved, fragment dropped
  CHECK(s.hashes().empty());
  CHECK(s.requires_python().empty());
  CHECK_FALSE(s.core_metadata());
  CHECK(s.yanked());
  CHECK(s.yanked_reason() == "broken build");
  REQUIRE(s.sdist());
  CHECK_FALSE(s.wheel());
  CHECK(s.version().to_string() == "2.7.0");

  const DistFile& y = page->files[2];
  CHECK(y.url() == "https://pypi.org/packages/torch-2.6.0-cp312-cp312-linux_x86_64.whl");
  CHECK(y.hashes().size() == 2);
  CHECK(y.hash("blake2b_256") == "bb");
  CHECK(y.core_metadata());
  CHECK(y.core_metadata_hashes().empty());
  CHECK(y.yanked());
  CHECK(y.yanked_reason().empty());
  CHECK_FALSE(y.upload_time());
  CHECK_FALSE(y.size());

  // The egg and the other project's file are dropped, each with a warning.
  REQUIRE(page->warnings.size() == 2);
  CHECK(page->warnings[0].find("torch-1.0.egg") != std::string::npos);
  CHECK(page->warnings[1].find("numpy-1.0.tar.gz") != std::string::npos);
}

TEST_CASE("PEP 691 JSON: a key given twice counts as its last value", "[parse][json]") {
  // Found by fuzz/cache_page: a reason, then `false`, left a file not yanked with a reason (which
  // the cache then dropped, so the page read back from it differed).
  auto page = parse_json_page(
      R"({"meta": {"api-version": "1.1"}, "name": "demo", "files": [
        {"filename": "demo-1.0.tar.gz", "url": "demo-1.0.tar.gz", "hashes": {},
         "yanked": "broken", "yanked": false},
        {"filename": "demo-1.1.tar.gz", "url": "demo-1.1.tar.gz", "hashes": {},
         "yanked": "broken", "yanked": true},
        {"filename": "demo-1.2.tar.gz", "url": "demo-1.2.tar.gz", "hashes": {},
         "yanked": false, "yanked": "broken"}]})",
      "https://pypi.org/simple/demo/");
  REQUIRE(page);
  REQUIRE(page->files.size() == 3);
  CHECK_FALSE(page->files[0].yanked());
  CHECK(page->files[0].yanked_reason().empty());
  CHECK(page->files[1].yanked());
  CHECK(page->files[1].yanked_reason().empty());
  CHECK(page->files[2].yanked());
  CHECK(page->files[2].yanked_reason() == "broken");
}

TEST_CASE("PEP 691 JSON api-version rules", "[parse][json]") {
  auto newer_minor =
      parse_json_page(R"({"meta":{"api-version":"1.9"},"name":"x","files":[]})", "http://h/x/");
  REQUIRE(newer_minor);
  CHECK(newer_minor->api_version == "1.9");
  REQUIRE(newer_minor->warnings.size() == 1);
  CHECK(newer_minor->warnings[0].find("newer than 1.4") != std::string::npos);

  auto major2 =
      parse_json_page(R"({"meta":{"api-version":"2.0"},"name":"x","files":[]})", "http://h/x/");
  REQUIRE_FALSE(major2);
  CHECK(major2.error().code == core::ErrorCode::IndexFormat);
  CHECK(major2.error().message.find("unsupported repository API version 2.0") != std::string::npos);
  CHECK(major2.error().where == "http://h/x/");

  auto no_meta = parse_json_page(R"({"name":"x","files":[]})", "http://h/x/");
  REQUIRE(no_meta);
  CHECK(no_meta->api_version == "1.0");
  CHECK(no_meta->files.empty());
}

TEST_CASE("PEP 691 JSON errors name the field path and line", "[parse][json]") {
  auto bad_size = parse_json_page(
      "{\"files\": [\n{\"filename\": \"x-1.0.tar.gz\", \"url\": \"x-1.0.tar.gz\", \"hashes\": "
      "{}},\n"
      "{\"filename\": \"x-1.1.tar.gz\",\n \"size\": \"big\"}]}",
      "https://user:pw@h/simple/x/");
  REQUIRE_FALSE(bad_size);
  CHECK(bad_size.error().code == core::ErrorCode::IndexFormat);
  CHECK(bad_size.error().message ==
        "invalid PEP 691 page: files[1].size: expected a non-negative integer");
  CHECK(bad_size.error().where == "https://user:****@h/simple/x/");
  CHECK(bad_size.error().line == 4);

  auto bad_hash = parse_json_page(
      R"({"files":[{"filename":"x-1.0.tar.gz","hashes":{"sha256":5}}]})", "http://h/x/");
  REQUIRE_FALSE(bad_hash);
  CHECK(bad_hash.error().message ==
        "invalid PEP 691 page: files[0].hashes.sha256: expected a string");
  // Found by fuzz/json_page: a digest that is not hex was kept (the HTML parser drops it).
  auto not_hex = parse_json_page(
      R"({"files":[{"filename":"x-1.0.tar.gz","hashes":{"sha256":"ab]]cd"}}]})", "http://h/x/");
  REQUIRE_FALSE(not_hex);
  CHECK(not_hex.error().message ==
        "invalid PEP 691 page: files[0].hashes.sha256: expected a hexadecimal digest");
  auto metadata_not_hex = parse_json_page(
      R"({"files":[{"filename":"x-1.0.tar.gz","core-metadata":{"sha256":"zz"}}]})", "http://h/x/");
  REQUIRE_FALSE(metadata_not_hex);
  auto bad_name = parse_json_page(
      R"({"files":[{"filename":"x-1.0.tar.gz","hashes":{"s(a256":"abcd"}}]})", "http://h/x/");
  REQUIRE_FALSE(bad_name);
  CHECK(bad_name.error().message ==
        "invalid PEP 691 page: files[0].hashes.s(a256: expected a hash name of letters, digits, "
        "'-' and '_'");

  auto truncated =
      parse_json_page(R"({"files":[{"filename":"x-1.0.tar.gz","url":"u"},)", "http://h/x/");
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().message.find("invalid PEP 691 page") == 0);

  auto not_json = parse_json_page("<html>", "http://h/x/");
  REQUIRE_FALSE(not_json);
  CHECK(not_json.error().message == "invalid PEP 691 page: not a JSON object");

  auto missing_url = parse_json_page(R"({"files":[{"filename":"x-1.0.tar.gz"}]})", "http://h/x/");
  REQUIRE_FALSE(missing_url);
  CHECK(missing_url.error().message == "invalid PEP 691 page: files[0]: missing 'url'");

  auto wrong_type = parse_json_page(R"({"files":{}})", "http://h/x/");
  REQUIRE_FALSE(wrong_type);
  CHECK(wrong_type.error().message == "invalid PEP 691 page: files: expected an array");
}

TEST_CASE("PEP 503 HTML page in PyTorch's style", "[parse][html]") {
  const char* html =
      "<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Links for torch</h1>\n"
      "    <a href=\"/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl#sha256=ABCDEF\" "
      "data-dist-info-metadata=\"sha256=1234\" data-core-metadata=\"sha256=5678\" "
      "data-upload-time=\"2024-10-29T17:05:02Z\">torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl</"
      "a><br/>\n"
      "    <a "
      "href=\"/whl/nightly/cu126/"
      "torch-2.7.0.dev20250116%2Bcu126-cp311-cp311-manylinux_2_28_x86_64.whl\">"
      "torch-2.7.0.dev20250116+cu126-cp311-cp311-manylinux_2_28_x86_64.whl</a><br/>\n"
      "  </body>\n</html>\n<!--TIMESTAMP 1730221502-->\n";
  auto page =
      parse_html_page(html, "https://download.pytorch.org/whl/cu124/torch/", {"torch", false});
  REQUIRE(page);
  CHECK(page->api_version == "1.0");
  REQUIRE(page->files.size() == 2);
  const DistFile& a = page->files[0];
  CHECK(a.filename() == "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl");
  CHECK(a.url() ==
        "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl");
  CHECK(a.sha256() == "abcdef");
  CHECK(a.core_metadata());
  CHECK(a.core_metadata_sha256() == "5678");
  CHECK(a.upload_time() == parse_timestamp("2024-10-29T17:05:02Z"));
  CHECK(a.version().to_string() == "2.5.1+cu124");
  const DistFile& n = page->files[1];
  CHECK(n.hashes().empty());  // nightly: no fragment
  CHECK_FALSE(n.core_metadata());
  CHECK(n.version().to_string() == "2.7.0.dev20250116+cu126");
  CHECK(page->warnings.empty());
}

TEST_CASE("PEP 503 HTML attributes, entities and repository version", "[parse][html]") {
  const char* html =
      "<html><head><meta name=\"pypi:repository-version\" content=\"1.1\">"
      "<title>x</title></head><body>\n"
      "<a href='../../packages/x-1.0-py3-none-any.whl#sha256=00ff' "
      "data-requires-python='&gt;=3.8,&lt;4' "
      "data-yanked='bad &amp; broken &#x41;&#66;' data-core-metadata>x-1.0-py3-none-any.whl</a>\n"
      "<A HREF=x-2.0.tar.gz DATA-DIST-INFO-METADATA=true>x-2.0.tar.gz</A>\n"
      "<a href=\"https://cdn.example.com/x-3.0-py3-none-any.whl\" data-core-metadata=\"false\" "
      "data-size=\"42\""
      " data-yanked>x-3.0</a>\n"
      "<a>no href</a>\n"
      "<script>var s = '<a href=\"evil-9.9.tar.gz\">';</script>\n"
      "<a href=\"x-4.0.zip\">x-4.0.zip</a>\n"
      "</body></html>";
  auto page = parse_html_page(html, "http://127.0.0.1:1/simple/x/", {"x", false});
  REQUIRE(page);
  CHECK(page->api_version == "1.1");
  REQUIRE(page->files.size() == 4);
  CHECK(page->files[0].url() == "http://127.0.0.1:1/packages/x-1.0-py3-none-any.whl");
  CHECK(page->files[0].requires_python() == ">=3.8,<4");
  CHECK(page->files[0].yanked());
  CHECK(page->files[0].yanked_reason() == "bad & broken AB");
  CHECK(page->files[0].core_metadata());
  CHECK(page->files[0].core_metadata_hashes().empty());
  CHECK(page->files[1].url() == "http://127.0.0.1:1/simple/x/x-2.0.tar.gz");
  CHECK(page->files[1].core_metadata());
  CHECK_FALSE(page->files[1].yanked());
  CHECK(page->files[2].url() == "https://cdn.example.com/x-3.0-py3-none-any.whl");
  CHECK_FALSE(page->files[2].core_metadata());
  CHECK(page->files[2].size() == std::optional<std::uint64_t>(42));
  CHECK(page->files[2].yanked());
  CHECK(page->files[3].filename() == "x-4.0.zip");
  REQUIRE(page->warnings.size() == 1);
  CHECK(page->warnings[0] == "ignored 1 link without href");
}

TEST_CASE("PEP 503 HTML: an upper-case <SCRIPT> element ends at its </SCRIPT>", "[parse][html]") {
  // Tag names are case-insensitive on both sides; the closing tag used to be compared with
  // only the page's side folded, so an upper-case script never ended.
  const char* html =
      "<html><body>\n"
      "<SCRIPT>var s = '<a href=\"evil-9.9.tar.gz\">';</SCRIPT>\n"
      "<Style>a { color: red }</STYLE>\n"
      "<a href=\"x-4.0.zip\">x-4.0.zip</a>\n"
      "</body></html>";
  auto page = parse_html_page(html, "http://127.0.0.1:1/simple/x/", {"x", false});
  REQUIRE(page);
  REQUIRE(page->files.size() == 1);
  CHECK(page->files[0].filename() == "x-4.0.zip");
}

TEST_CASE("PEP 503 HTML errors carry the line", "[parse][html]") {
  auto major2 =
      parse_html_page("<html>\n<meta name=\"pypi:repository-version\" content=\"2.0\">\n</html>",
                      "http://h/simple/x/");
  REQUIRE_FALSE(major2);
  CHECK(major2.error().code == core::ErrorCode::IndexFormat);
  CHECK(major2.error().line == 2);
  CHECK(major2.error().message.find("unsupported repository API version 2.0") != std::string::npos);

  auto minor =
      parse_html_page("<meta name=\"pypi:repository-version\" content=\"1.7\">", "http://h/x/");
  REQUIRE(minor);
  CHECK(minor->warnings.size() == 1);

  auto unterminated =
      parse_html_page("<html>\n<body>\n<a href=\"x-1.0.tar.gz>x</a>\n", "http://h/x/");
  REQUIRE_FALSE(unterminated);
  CHECK(unterminated.error().line == 3);
  CHECK(unterminated.error().message ==
        "invalid HTML project page: unterminated attribute value for 'href'");

  auto open_tag = parse_html_page("<html>\n<a href=x-1.0.tar.gz", "http://h/x/");
  REQUIRE_FALSE(open_tag);
  CHECK(open_tag.error().line == 2);

  auto comment = parse_html_page("<html>\n\n<!-- never closed", "http://h/x/");
  REQUIRE_FALSE(comment);
  CHECK(comment.error().line == 3);
  CHECK(comment.error().message == "invalid HTML project page: unterminated comment '<!--'");

  auto text = parse_html_page("this is not a page", "http://h/x/");
  REQUIRE_FALSE(text);
  CHECK(text.error().message == "invalid HTML project page: not an HTML page (no tags)");

  auto binary = parse_html_page(std::string_view("PK\x03\x04\0\0", 6), "http://h/x/");
  REQUIRE_FALSE(binary);
  CHECK(binary.error().message.find("binary data") != std::string::npos);

  auto empty = parse_html_page("", "http://h/x/");
  REQUIRE(empty);
  CHECK(empty->files.empty());
}

TEST_CASE("find-links pages keep every distribution, quietly", "[parse][html]") {
  PageFilter filter;
  filter.quiet_drops = true;
  auto page = parse_html_page(
      "<a href=\"a-1.0-py3-none-any.whl\">a</a><a href=\"b-2.0.tar.gz\">b</a>"
      "<a href=\"README.txt\">readme</a><a href=\"../\">up</a>",
      "http://h/links/", filter);
  REQUIRE(page);
  REQUIRE(page->files.size() == 2);
  CHECK(page->files[0].project() == "a");
  CHECK(page->files[1].project() == "b");
  CHECK(page->warnings.empty());
}

TEST_CASE("Content-Type dispatch", "[parse]") {
  CHECK(page_format_for_content_type("application/vnd.pypi.simple.v1+json") == PageFormat::Json);
  CHECK(page_format_for_content_type("Application/Vnd.PyPI.Simple.V1+JSON; charset=utf-8") ==
        PageFormat::Json);
  CHECK(page_format_for_content_type("application/vnd.pypi.simple.v1+html") == PageFormat::Html);
  CHECK(page_format_for_content_type("text/html; charset=utf-8") == PageFormat::Html);
  CHECK(page_format_for_content_type("application/json") == PageFormat::Unknown);
  CHECK(page_format_for_content_type("") == PageFormat::Unknown);
}

TEST_CASE("the per-page wheel filename memo gives exactly core::WheelFilename::parse_with_variant",
          "[parse]") {
  std::vector<std::string> corpus = {
      "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl",
      "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl",
      "torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl",
      "torch-2.7.0.dev20250116+cu126-cp311-cp311-manylinux_2_28_x86_64.whl",
      "numpy-2.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
      "numpy-2.0.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
      "numpy-2.0.0-cp311-cp311-macosx_11_0_arm64.whl",
      "Typing_Extensions-4.12.0-py3-none-any.whl",
      "typing.extensions-4.12.0-py2.py3-none-any.whl",
      "foo-1.0-1build-py3-none-any.whl",  // build tag
      "foo-1.0-x-py3-none-any.whl",       // PEP 825: label 'any' (the Python tag is 'x')
      "foo-1.0-x-py3-none-any-more.whl",  // build tag not starting with a digit
      "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl",  // PEP 825 label
      "foo-1.0-1-py3-none-any-null.whl",                              // build tag and label
      "foo-1.0-py3-none-any-Bad.whl",                                 // label not [0-9a-z_.]
      "foo-1.0-py3-none-any.WHL",                                     // wrong case
      "foo-1.0-py3-none.whl",                                         // too few parts
      "foo-1.0-1-2-py3-none-any.whl",                                 // too many parts
      "foo-not.a.version!-py3-none-any.whl",                          // bad version
      "foo-1.0-py3-none-any.whl",
      "foo-1.0-py3--any.whl",  // empty abi
      "foo-1.0-py3-none-any.whl",
      "foo__bar-1.0-py3-none-any.whl",  // '__' in the name
      "-1.0-py3-none-any.whl",
      "foo-1.0-py3-none-any whl.whl",    // space
      "f\xc3\xa9-1.0-py3-none-any.whl",  // non-ASCII
      "foo-v1.0-py3-none-any.whl",
      "foo-1.0.post1-cp39-abi3-win_amd64.whl",
  };
  detail::WheelNameMemo memo;
  for (int round = 0; round < 2; ++round) {
    for (const auto& name : corpus) {
      INFO(name);
      auto expected = core::WheelFilename::parse_with_variant(name);
      auto got = memo.parse(name);
      REQUIRE(got.has_value() == expected.has_value());
      if (!expected) {
        CHECK(got.error().message == expected.error().message);
        CHECK(got.error().column == expected.error().column);
        continue;
      }
      CHECK(got->name == expected->name);
      CHECK(got->version == expected->version);
      CHECK(got->version.to_string() == expected->version.to_string());
      CHECK(got->build == expected->build);
      CHECK(got->tags == expected->tags);
      CHECK(got->python_tag == expected->python_tag);
      CHECK(got->abi_tag == expected->abi_tag);
      CHECK(got->platform_tag == expected->platform_tag);
    }
  }
}

// Found by fuzz/json_page: assign_lower took its length from resize_and_overwrite's callback
// argument, which libstdc++ 12 sets to the grown capacity, so a 16..30-byte string out of the
// small buffer came back 30 bytes long with bytes from past the source.
TEST_CASE("assign_lower copies exactly the source whatever its length", "[parse]") {
  const std::string source =
      "ABCDEF0123456789abcdefABCDEF0123456789abcdef0123456789ABCDEF0123456789";
  for (std::size_t n = 0; n <= source.size(); ++n) {
    std::string out;
    detail::assign_lower(out, std::string_view(source).substr(0, n));
    std::string expected = source.substr(0, n);
    for (char& c : expected)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    INFO("length " << n);
    CHECK(out == expected);
  }
  auto page = parse_json_page(
      R"({"files":[{"filename":"x-1.0.tar.gz","url":"x-1.0.tar.gz","hashes":{"sha256":"ABCDEF0123456789a"}}]})",
      "http://h/x/");
  REQUIRE(page);
  REQUIRE(page->files.size() == 1);
  CHECK(page->files[0].sha256() == "abcdef0123456789a");
}

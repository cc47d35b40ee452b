#include "gpulock/index/url.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/index/page.h"

using namespace gpulock::index;

TEST_CASE("resolve_url follows RFC 3986 section 5.4 examples", "[url]") {
  const std::string base = "http://a/b/c/d;p?q";
  // Normal examples (RFC 3986 §5.4.1).
  CHECK(resolve_url(base, "g:h") == "g:h");
  CHECK(resolve_url(base, "g") == "http://a/b/c/g");
  CHECK(resolve_url(base, "./g") == "http://a/b/c/g");
  CHECK(resolve_url(base, "g/") == "http://a/b/c/g/");
  CHECK(resolve_url(base, "/g") == "http://a/g");
  CHECK(resolve_url(base, "//g") == "http://g");
  CHECK(resolve_url(base, "?y") == "http://a/b/c/d;p?y");
  CHECK(resolve_url(base, "g?y") == "http://a/b/c/g?y");
  CHECK(resolve_url(base, "#s") == "http://a/b/c/d;p?q#s");
  CHECK(resolve_url(base, "g#s") == "http://a/b/c/g#s");
  CHECK(resolve_url(base, "g?y#s") == "http://a/b/c/g?y#s");
  CHECK(resolve_url(base, ";x") == "http://a/b/c/;x");
  CHECK(resolve_url(base, "") == "http://a/b/c/d;p?q");
  CHECK(resolve_url(base, ".") == "http://a/b/c/");
  CHECK(resolve_url(base, "./") == "http://a/b/c/");
  CHECK(resolve_url(base, "..") == "http://a/b/");
  CHECK(resolve_url(base, "../") == "http://a/b/");
  CHECK(resolve_url(base, "../g") == "http://a/b/g");
  CHECK(resolve_url(base, "../..") == "http://a/");
  CHECK(resolve_url(base, "../../g") == "http://a/g");
  // Abnormal examples (§5.4.2).
  CHECK(resolve_url(base, "../../../g") == "http://a/g");
  CHECK(resolve_url(base, "../../../../g") == "http://a/g");
  CHECK(resolve_url(base, "/./g") == "http://a/g");
  CHECK(resolve_url(base, "/../g") == "http://a/g");
  CHECK(resolve_url(base, "g.") == "http://a/b/c/g.");
  CHECK(resolve_url(base, ".g") == "http://a/b/c/.g");
  CHECK(resolve_url(base, "g..") == "http://a/b/c/g..");
  CHECK(resolve_url(base, "..g") == "http://a/b/c/..g");
  CHECK(resolve_url(base, "./../g") == "http://a/b/g");
  CHECK(resolve_url(base, "./g/.") == "http://a/b/c/g/");
  CHECK(resolve_url(base, "g/./h") == "http://a/b/c/g/h");
  CHECK(resolve_url(base, "g/../h") == "http://a/b/c/h");
  CHECK(resolve_url(base, "g;x=1/./y") == "http://a/b/c/g;x=1/y");
  CHECK(resolve_url(base, "g;x=1/../y") == "http://a/b/c/y");
}

TEST_CASE("resolve_url on index pages", "[url]") {
  // download.pytorch.org: root-relative links with %2B kept as written.
  CHECK(resolve_url("https://download.pytorch.org/whl/cu124/torch/",
                    "/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl#sha256=ab") ==
        "https://download.pytorch.org/whl/cu124/"
        "torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl#sha256=ab");
  // PyPI-like relative links.
  CHECK(resolve_url("http://127.0.0.1:8080/simple/numpy/", "../../packages/numpy-2.0.0.tar.gz") ==
        "http://127.0.0.1:8080/packages/numpy-2.0.0.tar.gz");
  // Credentials of the page URL carry over to relative links on the same host.
  CHECK(resolve_url("https://u:p@host/simple/x/", "x-1.0.tar.gz") ==
        "https://u:p@host/simple/x/x-1.0.tar.gz");
  CHECK(resolve_url("file:///srv/index/simple/x/", "../../files/x-1.0.tar.gz") ==
        "file:///srv/index/files/x-1.0.tar.gz");
}

TEST_CASE("redact_url hides credentials", "[url]") {
  CHECK(redact_url("https://user:secret@example.com/simple/") ==
        "https://user:****@example.com/simple/");
  CHECK(redact_url("https://tokenvalue@example.com/simple/") == "https://****@example.com/simple/");
  CHECK(redact_url("https://example.com/simple/") == "https://example.com/simple/");
  CHECK(redact_url("https://example.com/a@b/") == "https://example.com/a@b/");
  CHECK(redact_text("failed: https://u:pw@h/x and http://t@k/y.") ==
        "failed: https://u:****@h/x and http://****@k/y.");
  CHECK(redact_text("no urls here") == "no urls here");
}

TEST_CASE("url helpers", "[url]") {
  CHECK(url_host("https://User:pw@Download.PyTorch.org:443/whl/") == "download.pytorch.org");
  CHECK(url_host("http://[::1]:8080/x") == "[::1]");
  CHECK(percent_decode("torch-2.5.1%2Bcu124%") == "torch-2.5.1+cu124%");
  CHECK(percent_decode("%zz%41") == "%zzA");
  CHECK(url_basename("https://h/whl/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl#sha256=00") ==
        "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl");
  CHECK(strip_fragment("a/b#c") == "a/b");
  CHECK(is_file_url("FILE:///x"));
  CHECK_FALSE(is_file_url("http://x"));
  CHECK(is_http_url("HTTPS://x"));
  auto path = file_url_to_path("file:///srv/my%20index/x/");
  REQUIRE(path);
  CHECK(*path == "/srv/my index/x/");
  CHECK(file_url_to_path("file://localhost/a").value() == "/a");
  CHECK_FALSE(file_url_to_path("file://otherhost/a"));
  CHECK(path_to_file_url("/srv/my index/") == "file:///srv/my%20index/");
  CHECK(url_from_user_input("https://pypi.org/simple") == "https://pypi.org/simple");
  CHECK(url_from_user_input("/tmp/x") == "file:///tmp/x");
}

TEST_CASE("IndexSource builds project URLs", "[url]") {
  auto pypi = IndexSource::simple("https://pypi.org/simple");
  CHECK(pypi.url == "https://pypi.org/simple/");
  CHECK(pypi.project_url("Typing_Extensions") == "https://pypi.org/simple/typing-extensions/");
  CHECK_FALSE(pypi.forbidden_means_missing);
  auto torch = IndexSource::simple("https://download.pytorch.org/whl/cu124");
  CHECK(torch.forbidden_means_missing);
  CHECK(torch.project_url("torch") == "https://download.pytorch.org/whl/cu124/torch/");
  auto local = IndexSource::simple("/srv/index/simple/");
  CHECK(local.url == "file:///srv/index/simple/");
  auto links = IndexSource::find_links("/srv/wheels");
  CHECK(links.kind == SourceKind::FindLinks);
  CHECK(links.project_url("x") == "file:///srv/wheels");
}

TEST_CASE("UrlResolver resolves every reference as resolve_url does", "[url]") {
  // Every reference of up to 6 characters over an alphabet of the characters that matter to
  // resolution (segments, dots, slashes, query, fragment, scheme), and the links real pages
  // hold, against bases with and without authority, dot segments, empty and doubled segments.
  const std::vector<std::string> bases = {
      "http://a/b/c/d;p?q",
      "https://files.example.org/simple/numpy/",
      "https://user:tok@host:8080/simple/numpy/index.html#top",
      "http://a",
      "http://a/",
      "http://a//b//",
      "http://a/b/../c/",
      "http://a/./b/",
      "file:///srv/wheels/",
      "file:/x/y",
      "relative/base/",
      "",
  };
  std::vector<std::string> refs = {
      "../../packages/numpy/numpy-2.3.3-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=ab",
      "/100000/packages/1f/2e/3d/huge-1.0.whl",
      "numpy-1.0.tar.gz",
      "./x/../y",
      "../../../../../x",
      "https://files.example.org/p/x.whl#sha256=00",
      "//other/x",
      "x#a?b:c",
      ".hidden/x",
      "a//b",
  };
  const std::string alphabet = "a./#?:";
  std::vector<std::string> level = {""};
  for (int len = 1; len <= 6; ++len) {
    std::vector<std::string> next;
    for (const auto& r : level) {
      for (char c : alphabet)
        next.push_back(r + c);
    }
    refs.insert(refs.end(), next.begin(), next.end());
    level = std::move(next);
  }
  std::size_t checked = 0;
  for (const auto& base : bases) {
    UrlResolver resolver(base);
    for (const auto& ref : refs) {
      if (resolver.resolve(ref) != resolve_url(base, ref)) {
        FAIL_CHECK("base '" << base << "' ref '" << ref << "': " << resolver.resolve(ref)
                            << " != " << resolve_url(base, ref));
      }
      ++checked;
    }
  }
  CHECK(checked > 12 * 50'000);
  UrlResolver page("https://files.example.org/simple/numpy/");
  CHECK(page.resolve("../../packages/numpy/n-1.0.whl#sha256=ab") ==
        "https://files.example.org/packages/numpy/n-1.0.whl#sha256=ab");
  CHECK(page.resolve("/p/n-1.0.whl") == "https://files.example.org/p/n-1.0.whl");
}

TEST_CASE("timestamps", "[url]") {
  auto t = parse_timestamp("2025-06-04T17:34:58.747Z");
  REQUIRE(t);
  CHECK(*t == 1749058498747000);
  CHECK(format_timestamp(*t) == "2025-06-04T17:34:58.747000Z");
  CHECK(parse_timestamp("2025-06-04T17:34:58Z").value() == 1749058498000000);
  CHECK(parse_timestamp("2025-06-04T17:34:58.123456789Z").value() == 1749058498123456);
  CHECK(parse_timestamp("2025-06-04 19:34:58+02:00").value() == 1749058498000000);
  CHECK(parse_timestamp("2025-06-04T17:34:58").value() == 1749058498000000);
  CHECK(parse_timestamp("1970-01-01T00:00:00Z").value() == 0);
  CHECK(format_timestamp(0) == "1970-01-01T00:00:00Z");
  CHECK(format_timestamp(951782400000000) == "2000-02-29T00:00:00Z");
  CHECK_FALSE(parse_timestamp("2025-13-01T00:00:00Z"));
  CHECK_FALSE(parse_timestamp("2025-06-04"));
  CHECK_FALSE(parse_timestamp("2025-06-04T17:34:58Zjunk"));
  CHECK_FALSE(parse_timestamp(""));
}

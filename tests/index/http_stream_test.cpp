// Huge pages over real HTTP are read as they arrive (issue 46 item 4): a page goes to its stream
// chunk by chunk (gzip-coded by nginx, so of no known length), and reads exactly as the same
// bytes parsed whole; the cache entry it leaves reads back the same.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpulock/index/client.h"
#include "gpulock/index/parse.h"

#include "http_support.h"
#include "page_compare.h"

using namespace gpulock;
using namespace gpulock::index;
using index_test::test_options;
using index_test::unique_agent;

namespace {

constexpr int kFiles = 24'000;  // ~9 MB of JSON, ~8 MB of HTML: many chunks

std::string wheel(int i) {
  return fmt::format("big-1.{}.{}-cp311-cp311-manylinux_2_28_x86_64.whl", i / 100, i % 100);
}
std::string url(int i) {
  return fmt::format("https://files.example.org/packages/{:02x}/{:060x}/{}", i % 256, i, wheel(i));
}

std::string json_page() {
  std::string out = "{\"meta\": {\"api-version\": \"1.1\"}, \"name\": \"big\", \"files\": [\n";
  for (int i = 0; i < kFiles; ++i) {
    out += fmt::format(
        "{}  {{\"filename\": \"{}\", \"url\": \"{}\", \"hashes\": {{\"sha256\": \"{:064x}\"}}, "
        "\"requires-python\": \">=3.9\", \"core-metadata\": {{\"sha256\": \"{:064x}\"}}, "
        "\"size\": {}, \"upload-time\": \"2024-05-0{}T10:00:00.000000Z\", \"yanked\": {}}}\n",
        i ? "," : "", wheel(i), url(i), i + 1, i + 2, 1000 + i, 1 + i % 9,
        i % 1000 == 7 ? "\"a \\\"bad\\\" build\"" : "false");
  }
  return out + "], \"versions\": [\"1.0.0\"]}\n";
}

std::string html_page() {
  std::string out = "<!DOCTYPE html>\n<html><body>\n";
  for (int i = 0; i < kFiles; ++i) {
    out += fmt::format(
        "<a href=\"{}#sha256={:064x}\" data-requires-python=\"&gt;=3.9\" data-core-metadata="
        "\"sha256={:064x}\"{}>{}</a><br/>\n",
        url(i), i + 1, i + 2, i % 1000 == 7 ? " data-yanked=\"a &quot;bad&quot; build\"" : "",
        wheel(i));
  }
  return out + "</body></html>\n";
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("a huge page over HTTP reads as the same bytes parsed whole", "[http][stream]") {
  const std::filesystem::path root = index_test::scratch_dir("stream-root");
  const std::string json = json_page();
  const std::string html = html_page();
  REQUIRE(json.size() > (std::size_t{8} << 20));
  REQUIRE(html.size() > (std::size_t{6} << 20));
  write(root / "simple/big/index.json", json);
  write(root / "whl/html/big/index.html", html);  // /whl/ serves index.html as text/html
  write(root / "manifest.json", "{}\n");          // servers.py serves such trees
  gpulock::test::PrivateServerOptions po;
  po.root = root;
  po.copy = false;
  gpulock::test::PrivateServers priv(po);

  const PageFilter filter{"big", false};
  for (bool is_json : {true, false}) {
    INFO((is_json ? "JSON" : "HTML"));
    const std::string base = is_json ? priv.env().pypi_url() : priv.env().http_url() + "/whl/html/";
    const std::string page_url = base + "big/";
    auto want =
        is_json ? parse_json_page(json, page_url, filter) : parse_html_page(html, page_url, filter);
    REQUIRE(want);
    REQUIRE(want->files.size() == static_cast<std::size_t>(kFiles));
    CHECK(want->files[7].yanked_reason() == "a \"bad\" build");

    const std::string cache = index_test::scratch_dir(is_json ? "stream-json" : "stream-html");
    IndexClient client(test_options(cache, unique_agent("stream")));
    auto got = client.fetch_project(IndexSource::simple(base), "big");
    REQUIRE(got);
    index_test::check_same(**got, want);
    CHECK(client.stats().pages_parsed == 1);

    // The entry it stored reads back as the same page, offline.
    ClientOptions offline = test_options(cache, unique_agent("stream-offline"));
    offline.offline = true;
    IndexClient again(offline);
    auto cached = again.fetch_project(IndexSource::simple(base), "big");
    REQUIRE(cached);
    index_test::check_same(**cached, want);
  }
}

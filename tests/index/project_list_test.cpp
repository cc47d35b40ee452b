// An index root's project list (fetch_project_list / parse_project_list): how gpulock learns
// which names the torch source serves, for first-index over every name (issue 17 item 2).
#include "gpulock/index/project_list.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "gpulock/index/client.h"
#include "gpulock/index/url.h"

#include "index_test_support.h"

using namespace gpulock;
using namespace gpulock::index;
namespace fs = std::filesystem;

TEST_CASE("an HTML index root: each anchor's text is a normalized project name",
          "[index][project-list]") {
  // The shape of download.pytorch.org/whl/cu128/: anchors with <br/>, mixed case, one bad name,
  // an anchor with nested markup (not a name), and an unclosed last anchor.
  auto list = parse_project_list(
      "<!DOCTYPE html>\n<html><body>\n"
      "<a href=\"torch/\">torch</a><br/>\n"
      "<A HREF=\"Jinja2/\"> Jinja2 </A><br/>\n"
      "<a href=\"typing_extensions/\">typing_extensions</a>\n"
      "<a href=\"x/\">not a name!</a>\n"
      "<a href=\"y/\"><b>bold</b></a>\n"
      "<abbr>nvidia-cudnn-cu12</abbr>\n"
      "<a href=\"z/\">zq-never-heard",
      false, "http://x/whl/cu128/");
  REQUIRE(list);
  CHECK(std::vector<std::string>(list->names.begin(), list->names.end()) ==
        std::vector<std::string>{"jinja2", "torch", "typing-extensions", "zq-never-heard"});
  CHECK(list->serves("torch"));
  CHECK_FALSE(list->serves("numpy"));
}

TEST_CASE("a PEP 691 JSON index root", "[index][project-list]") {
  auto list = parse_project_list(
      R"({"meta": {"api-version": "1.1"}, "projects": [{"name": "Foo.Bar"}, {"name": "torch", "_x": 1}]})",
      true, "http://x/simple/");
  REQUIRE(list);
  CHECK(std::vector<std::string>(list->names.begin(), list->names.end()) ==
        std::vector<std::string>{"foo-bar", "torch"});

  for (const char* bad :
       {R"({"projects": 3})", R"({"projects": [{"name": 1}]})", R"([1, 2])", "{", ""}) {
    INFO(bad);
    auto r = parse_project_list(bad, true, "http://x/simple/");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == core::ErrorCode::IndexFormat);
    CHECK(r.error().where == "http://x/simple/");
  }
}

TEST_CASE("fetch_project_list on a file:// root lists its project directories",
          "[index][project-list][client]") {
  fs::path root = index_test::scratch_dir("project-list-root");
  fs::remove_all(root);
  fs::create_directories(root / "torch");
  fs::create_directories(root / "Typing_Extensions");
  fs::create_directories(root / "bad name");
  std::ofstream(root / "index.html") << "<a href=\"torch/\">torch</a>";
  ClientOptions o;
  o.cache_dir = index_test::scratch_dir("project-list-cache");
  IndexClient client(o);
  auto list = client.fetch_project_list(IndexSource::simple(path_to_file_url(root.string())));
  REQUIRE(list);
  REQUIRE(*list != nullptr);
  CHECK(std::vector<std::string>((*list)->names.begin(), (*list)->names.end()) ==
        std::vector<std::string>{"torch", "typing-extensions"});
  // No such directory: no listing (the caller asks per name), not an error.
  auto none =
      client.fetch_project_list(IndexSource::simple(path_to_file_url((root / "missing").string())));
  REQUIRE(none);
  CHECK(*none == nullptr);
}

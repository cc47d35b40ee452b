#include "gpulock/app/requirements_file.h"

#include <map>

#include <catch2/catch.hpp>

using namespace gpulock;
using app::RequirementsFileOptions;
using app::RequirementsInput;

namespace {

// An in-memory file system for requirements files.
RequirementsFileOptions memory_files(std::map<std::string, std::string> files,
                                     std::map<std::string, std::string> env = {}) {
  RequirementsFileOptions options;
  options.reader = [files](const std::string& path) -> core::Result<std::string> {
    auto it = files.find(path);
    if (it == files.end())
      return core::fail_at(core::ErrorCode::Io, "cannot read file: No such file", path);
    return it->second;
  };
  options.env = [env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return options;
}

std::vector<std::string> names(const std::vector<app::RequirementEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries)
    out.push_back(e.requirement.to_string());
  return out;
}

}  // namespace

TEST_CASE("requirements file: comments, continuations, options", "[app][requirements]") {
  RequirementsInput in;
  auto opts = memory_files({{"req.txt",
                             "# a comment\n"
                             "torch>=2.5 \\\n"
                             "  ; platform_system == 'Linux'   # trailing comment\n"
                             "\n"
                             "--index-url https://example.org/simple/\n"
                             "--extra-index-url=https://extra.example.org/simple/\n"
                             "numpy==2.1.0 --hash=sha256:abcd\n"
                             "--pre\n"}});
  auto status = app::read_requirements_file("req.txt", false, in, opts);
  REQUIRE(status.has_value());
  CHECK(names(in.requirements) ==
        std::vector<std::string>{"torch>=2.5; platform_system == \"Linux\"", "numpy==2.1.0"});
  CHECK(in.requirements[0].origin.line == 2);
  CHECK(in.requirements[1].origin.line == 7);
  CHECK(in.requirements[1].hashes == std::vector<std::string>{"sha256:abcd"});
  CHECK(in.index_url == "https://example.org/simple/");
  CHECK(in.extra_index_urls == std::vector<std::string>{"https://extra.example.org/simple/"});
  CHECK(in.pre);
  REQUIRE(in.files.size() == 1);
  CHECK(in.files[0].kind == "requirements");
}

TEST_CASE("requirements file: nested -r and -c relative to the including file",
          "[app][requirements]") {
  RequirementsInput in;
  auto opts = memory_files({{"dir/req.txt", "-r sub/more.txt\n-c constraints.txt\nfilelock\n"},
                            {"dir/sub/more.txt", "jinja2\n"},
                            {"dir/constraints.txt", "markupsafe<3\n"}});
  auto status = app::read_requirements_file("dir/req.txt", false, in, opts);
  REQUIRE(status.has_value());
  CHECK(names(in.requirements) == std::vector<std::string>{"jinja2", "filelock"});
  CHECK(names(in.constraints) == std::vector<std::string>{"markupsafe<3"});
  REQUIRE(in.files.size() == 3);
  CHECK(in.files[1].path == "dir/sub/more.txt");
  CHECK(in.files[2].kind == "constraints");
}

TEST_CASE("requirements file: an include loop is an error naming the chain",
          "[app][requirements]") {
  RequirementsInput in;
  auto opts = memory_files({{"a.txt", "-r b.txt\n"}, {"b.txt", "filelock\n-r a.txt\n"}});
  auto status = app::read_requirements_file("a.txt", false, in, opts);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().code == core::ErrorCode::InvalidInput);
  CHECK(status.error().where == "b.txt");
  CHECK(status.error().line == 2);
  CHECK_THAT(status.error().message,
             Catch::Contains("loop") && Catch::Contains("a.txt") && Catch::Contains("b.txt"));
}

TEST_CASE("requirements file: ${VAR} expansion follows pip", "[app][requirements]") {
  RequirementsInput in;
  auto opts = memory_files({{"r.txt", "torch==${TORCH_VERSION}\n--index-url ${INDEX}/simple/\n"}},
                           {{"TORCH_VERSION", "2.6.0"}, {"INDEX", "http://127.0.0.1:9"}});
  REQUIRE(app::read_requirements_file("r.txt", false, in, opts).has_value());
  CHECK(names(in.requirements) == std::vector<std::string>{"torch==2.6.0"});
  CHECK(in.index_url == "http://127.0.0.1:9/simple/");
}

TEST_CASE("requirements file: errors carry file, line and column", "[app][requirements]") {
  RequirementsInput in;
  auto opts = memory_files({{"r.txt", "filelock\n  torch>=>2\n"}});
  auto status = app::read_requirements_file("r.txt", false, in, opts);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().where == "r.txt");
  CHECK(status.error().line == 2);
  CHECK(status.error().column >= 3);

  RequirementsInput in2;
  auto missing = memory_files({{"r.txt", "-r nope.txt\n"}});
  auto s2 = app::read_requirements_file("r.txt", false, in2, missing);
  REQUIRE_FALSE(s2.has_value());
  CHECK(s2.error().code == core::ErrorCode::Io);
  CHECK(s2.error().where == "nope.txt");
  REQUIRE(s2.error().context.size() == 1);
  CHECK(s2.error().context[0] == "included from r.txt:1");

  RequirementsInput in3;
  auto editable = memory_files({{"r.txt", "-e ./pkg\n"}});
  auto s3 = app::read_requirements_file("r.txt", false, in3, editable);
  REQUIRE_FALSE(s3.has_value());
  CHECK_THAT(s3.error().message, Catch::Contains("editable"));

  RequirementsInput in4;
  auto path = memory_files({{"r.txt", "./dist/pkg-1.0-py3-none-any.whl\n"}});
  auto s4 = app::read_requirements_file("r.txt", false, in4, path);
  REQUIRE_FALSE(s4.has_value());
  CHECK_THAT(s4.error().message, Catch::Contains("local path"));

  RequirementsInput in5;
  auto unknown = memory_files({{"r.txt", "--frobnicate\n"}});
  auto s5 = app::read_requirements_file("r.txt", false, in5, unknown);
  REQUIRE_FALSE(s5.has_value());
  CHECK(s5.error().column == 1);
}

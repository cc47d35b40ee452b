// PEP 508 dependency specifiers: the PEP's test list and examples, the parts, packaging's
// str(Requirement), URL rules, and errors with columns.
#include "gpulock/core/requirement.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace gpulock::core;

namespace {

Requirement req(std::string_view text) {
  auto r = Requirement::parse(text);
  INFO("parsing requirement " << text);
  if (!r) INFO(r.error().to_string());
  REQUIRE(r.has_value());
  return *r;
}

std::size_t requirement_error_column(std::string_view text,
                                     ErrorCode code = ErrorCode::InvalidRequirement) {
  auto r = Requirement::parse(text);
  if (r) return 0;
  INFO(text << ": " << r.error().to_string());
  CHECK(r.error().code == code);
  CHECK(r.error().message.find("invalid requirement") != std::string::npos);
  return r.error().column;
}

}  // namespace

TEST_CASE("PEP 508 test list parses, and prints as packaging does", "[core][requirement]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"A", "A"},
      {"A.B-C_D", "A.B-C_D"},
      {"aa", "aa"},
      {"name", "name"},
      {"name<=1", "name<=1"},
      {"name>=3", "name>=3"},
      {"name>=3,", "name>=3"},
      {"name>=3,<2", "name<2,>=3"},
      {"name@http://foo.com", "name @ http://foo.com"},
      {"name [fred,bar] @ http://foo.com ; python_version=='2.7'",
       "name[bar,fred] @ http://foo.com ; python_version == \"2.7\""},
      {"name[quux, strange];python_version<'2.7' and platform_version=='2'",
       "name[quux,strange]; python_version < \"2.7\" and platform_version == \"2\""},
      {"name; os_name=='a' or os_name=='b'", "name; os_name == \"a\" or os_name == \"b\""},
      {"name; os_name=='a' and os_name=='b' or os_name=='c'",
       "name; os_name == \"a\" and os_name == \"b\" or os_name == \"c\""},
      {"name; os_name=='a' and (os_name=='b' or os_name=='c')",
       "name; os_name == \"a\" and (os_name == \"b\" or os_name == \"c\")"},
      {"name; os_name=='a' or os_name=='b' and os_name=='c'",
       "name; os_name == \"a\" or os_name == \"b\" and os_name == \"c\""},
      {"name; (os_name=='a' or os_name=='b') and os_name=='c'",
       "name; (os_name == \"a\" or os_name == \"b\") and os_name == \"c\""},
      {"requests [security,tests] >= 2.8.1, == 2.8.* ; python_version < \"2.7\"",
       "requests[security,tests]==2.8.*,>=2.8.1; python_version < \"2.7\""},
      {"zope.interface (>3.5.0)", "zope.interface>3.5.0"},
      {"torch==2.5.1+cu124; sys_platform == \"linux\" and extra == \"GPU\"",
       "torch==2.5.1+cu124; sys_platform == \"linux\" and extra == \"gpu\""},
      {"name[]", "name"},
      {"name_", "name_"},  // packaging's IDENTIFIER accepts it
      {"  name  [ a , b ]  ( >= 1 , < 2 )  ;  os_name == 'a'  ",
       "name[a,b]<2,>=1; os_name == \"a\""},
  };
  for (const auto& [text, printed] : cases) {
    INFO(text);
    CHECK(req(text).to_string() == printed);
  }
}

TEST_CASE("Requirement parts", "[core][requirement]") {
  Requirement r = req("Torch_Vision [GPU, test, GPU] (>=0.20, <0.21) ; python_version >= '3.9'");
  CHECK(r.name == "Torch_Vision");
  CHECK(r.normalized_name() == "torch-vision");
  CHECK(r.extras == std::vector<std::string>{"GPU", "test"});
  CHECK(r.specifier.to_string() == "<0.21,>=0.20");
  CHECK(r.url.empty());
  CHECK_FALSE(r.marker.empty());
  CHECK(r.marker.to_string() == "python_version >= \"3.9\"");
  CHECK(r.marker.matches(Environment::linux_cpython("3.11", "x86_64")));
  CHECK_FALSE(r.marker.matches(Environment::linux_cpython("3.8", "x86_64")));

  Requirement u = req(
      "torch @ "
      "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl");
  CHECK(u.url ==
        "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl");
  CHECK(u.specifier.empty());
  CHECK(u.marker.empty());

  // A ';' right after the URL belongs to it (packaging's URL token stops only at whitespace).
  Requirement semi = req("name @ http://x;os_name==\"a\"");
  CHECK(semi.url == "http://x;os_name==\"a\"");
  CHECK(semi.marker.empty());
  Requirement marked = req("name @ http://x ;os_name==\"a\"");
  CHECK(marked.url == "http://x");
  CHECK(marked.marker.to_string() == "os_name == \"a\"");
  CHECK(marked.to_string() == "name @ http://x ; os_name == \"a\"");

  // The PEP's URL example, with a fragment.
  Requirement pip =
      req("pip @ "
          "https://github.com/pypa/pip/archive/"
          "1.3.1.zip#sha1=da9234ee9982d4bbb3c72346a6de940a148ea686");
  CHECK(pip.name == "pip");
  CHECK(pip.url ==
        "https://github.com/pypa/pip/archive/"
        "1.3.1.zip#sha1=da9234ee9982d4bbb3c72346a6de940a148ea686");

  Requirement plain = req("nvidia-cudnn-cu12==9.1.0.70");
  CHECK(plain.specifier.contains(*Version::parse("9.1.0.70")));
  CHECK(plain.extras.empty());
  CHECK(plain.marker.empty());
  // Both quote styles in the marker
  CHECK(req("a; os_name==\"posix\" and sys_platform=='linux'").marker.to_string() ==
        "os_name == \"posix\" and sys_platform == \"linux\"");
}

TEST_CASE("URLs as packaging checks them", "[core][requirement]") {
  CHECK(req("name @ file:///tmp/x.whl").url == "file:///tmp/x.whl");
  CHECK(req("name @ file://host/x.whl").url == "file://host/x.whl");
  CHECK(req("name @ git+https://github.com/pytorch/vision@v0.20.0").url ==
        "git+https://github.com/pytorch/vision@v0.20.0");
  CHECK(req("name @ https://[::1]:8080/x").url == "https://[::1]:8080/x");
  CHECK(req("name @ ssh://git@host:22/x").url == "ssh://git@host:22/x");
  CHECK(requirement_error_column("name @ file:/tmp/x") == 8);  // urlunparse gives file:///tmp/x
  CHECK(requirement_error_column("name @ FILE:///x") == 8);
  CHECK(requirement_error_column("name @ file:///x?") == 8);
  CHECK(requirement_error_column("name @ http:///x") == 8);  // no network location
  CHECK(requirement_error_column("name @ C:\\x\\y.whl") == 8);
  CHECK(requirement_error_column("name @ /tmp/x.whl") == 8);
  CHECK(requirement_error_column("name @ https://[bad]/x") == 8);
  CHECK(requirement_error_column("name @ https://[::1/x") == 8);
  CHECK(requirement_error_column("name @ https://[127.0.0.1]/x") == 8);
}

TEST_CASE("Invalid requirements report the column", "[core][requirement]") {
  CHECK(requirement_error_column("") == 1);
  CHECK(requirement_error_column("   ") == 4);
  CHECK(requirement_error_column("-name") == 1);
  CHECK(requirement_error_column("name-") == 5);
  CHECK(requirement_error_column("name[") == 6);
  CHECK(requirement_error_column("name[a b]") == 8);
  CHECK(requirement_error_column("name[a,]") == 8);
  CHECK(requirement_error_column("name[a") == 7);
  CHECK(requirement_error_column("name>=1.0 foo") == 11);
  CHECK(requirement_error_column("name @") == 7);
  CHECK(requirement_error_column("name (>=1") == 10);
  CHECK(requirement_error_column("name >=1.0; ", ErrorCode::InvalidMarker) == 13);
  CHECK(requirement_error_column("name; os_name=='a' garbage") == 20);
  CHECK(requirement_error_column("name; (os_name=='a'", ErrorCode::InvalidMarker) == 20);
  CHECK(requirement_error_column("name; os_name='a'", ErrorCode::InvalidMarker) == 14);
  CHECK(requirement_error_column("name @ http://x os_name=='a'") == 17);
  // Specifier errors keep their code and point into the requirement.
  CHECK(requirement_error_column("name>=1.0+local", ErrorCode::InvalidSpecifier) == 10);
  CHECK(requirement_error_column("name>=1.0.*", ErrorCode::InvalidSpecifier) == 10);
  CHECK(requirement_error_column("name~=1", ErrorCode::InvalidSpecifier) == 8);
  CHECK(requirement_error_column("name==99999999999999999999", ErrorCode::InvalidSpecifier) == 7);
  CHECK(requirement_error_column("name===a,b", ErrorCode::InvalidSpecifier) == 10);
  CHECK(requirement_error_column("name (>=1.0, <2.0+x)", ErrorCode::InvalidSpecifier) == 18);
}

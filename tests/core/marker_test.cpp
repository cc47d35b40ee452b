// PEP 508 environment markers: grammar, every variable, version vs string comparison as
// packaging 26.3 does it, PEP 751 set variables, printing, and errors with columns.
#include "gpulock/core/marker.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace gpulock::core;

namespace {

Marker m(std::string_view text) {
  auto r = Marker::parse(text);
  INFO("parsing marker " << text);
  if (!r) INFO(r.error().to_string());
  REQUIRE(r.has_value());
  return *r;
}

Environment linux311() {
  return Environment::linux_cpython("3.11", "x86_64", "3.11.4");
}

bool eval(std::string_view text, const Environment& env = linux311(), std::string_view extra = {}) {
  auto r = m(text).evaluate(env, extra);
  INFO("evaluating " << text);
  if (!r) INFO(r.error().to_string());
  REQUIRE(r.has_value());
  return *r;
}

bool eval_fails(std::string_view text, const Environment& env = linux311(),
                std::string_view extra = {}) {
  auto r = m(text).evaluate(env, extra);
  if (r) return false;
  CHECK(r.error().code == ErrorCode::InvalidMarker);
  CHECK_FALSE(r.error().message.empty());
  return true;
}

std::size_t marker_error_column(std::string_view text) {
  auto r = Marker::parse(text);
  if (r) return 0;
  CHECK(r.error().code == ErrorCode::InvalidMarker);
  CHECK(r.error().message.find("invalid marker") != std::string::npos);
  return r.error().column;
}

}  // namespace

TEST_CASE("Environment for a target", "[core][marker]") {
  Environment env = Environment::linux_cpython("3.12", "aarch64");
  CHECK(env.python_version == "3.12");
  CHECK(env.python_full_version == "3.12.0");
  CHECK(env.implementation_version == "3.12.0");
  CHECK(env.platform_machine == "aarch64");
  CHECK(env.sys_platform == "linux");
  CHECK(env.platform_system == "Linux");
  CHECK(env.os_name == "posix");
  CHECK(env.implementation_name == "cpython");
  CHECK(env.platform_python_implementation == "CPython");
  CHECK(Environment::linux_cpython("3.13", "x86_64", "3.13.0rc1").python_full_version ==
        "3.13.0rc1");
  CHECK(env.get("python_version") == std::optional<std::string_view>("3.12"));
  CHECK(env.get("platform_machine") == std::optional<std::string_view>("aarch64"));
  CHECK_FALSE(env.get("extras").has_value());
  CHECK_FALSE(env.get("nonsense").has_value());
}

TEST_CASE("Every marker variable evaluates against the environment", "[core][marker]") {
  Environment env;
  env.implementation_name = "cpython";
  env.implementation_version = "3.11.4";
  env.os_name = "posix";
  env.platform_machine = "x86_64";
  env.platform_python_implementation = "CPython";
  env.platform_release = "6.8.0";
  env.platform_system = "Linux";
  env.platform_version = "#1 SMP";
  env.python_full_version = "3.11.4";
  env.python_version = "3.11";
  env.sys_platform = "linux";
  CHECK(eval("implementation_name == 'cpython'", env));
  CHECK(eval("implementation_version >= '3.11'", env));
  CHECK(eval("os_name == 'posix'", env));
  CHECK(eval("os.name == 'posix'", env));
  CHECK(eval("platform_machine == 'x86_64'", env));
  CHECK(eval("platform.machine == 'x86_64'", env));
  CHECK(eval("platform_python_implementation == 'CPython'", env));
  CHECK(eval("platform.python_implementation == 'CPython'", env));
  CHECK(eval("python_implementation == 'CPython'", env));
  CHECK(eval("platform_release >= '6'", env));
  CHECK(eval("platform_system == 'Linux'", env));
  CHECK(eval("platform_version == '#1 SMP'", env));
  CHECK(eval("platform.version == '#1 SMP'", env));
  CHECK(eval("python_full_version == '3.11.4'", env));
  CHECK(eval("python_version == '3.11'", env));
  CHECK(eval("sys_platform == 'linux'", env));
  CHECK(eval("sys.platform == 'linux'", env));
  CHECK(eval("extra == 'gpu'", env, "gpu"));
  CHECK_FALSE(eval("extra == 'gpu'", env));
  CHECK_FALSE(eval("sys_platform == 'win32'", env));
}

TEST_CASE("PEP 508 marker table sample values", "[core][marker]") {
  // The sample values of the PEP's "Environment markers" table, each compared as written.
  Environment env;
  env.os_name = "posix";
  env.sys_platform = "linux";
  env.platform_machine = "x86_64";
  env.platform_python_implementation = "CPython";
  env.platform_release = "3.14.1-x86_64-linode39";
  env.platform_system = "Linux";
  env.platform_version = "#1 SMP Fri Apr 25 13:07:35 EDT 2014";
  env.python_version = "3.4";
  env.python_full_version = "3.4.0";
  env.implementation_name = "cpython";
  env.implementation_version = "3.4.0";
  CHECK(eval("os_name == \"posix\"", env));
  CHECK(eval("sys_platform == \"linux\"", env));
  CHECK(eval("platform_machine == \"x86_64\"", env));
  CHECK(eval("platform_python_implementation == \"CPython\"", env));
  CHECK(eval("platform_release == \"3.14.1-x86_64-linode39\"", env));  // not a version: strings
  CHECK(eval("platform_system == \"Linux\"", env));
  CHECK(eval("platform_version == \"#1 SMP Fri Apr 25 13:07:35 EDT 2014\"", env));
  CHECK(eval("python_version == \"3.4\"", env));
  CHECK(eval("python_full_version == \"3.4.0\"", env));
  CHECK(eval("implementation_name == \"cpython\"", env));
  CHECK(eval("implementation_version == \"3.4.0\"", env));
  CHECK(eval("extra == \"test\"", env, "test"));
  CHECK(eval("python_version < \"2.7\" or python_full_version >= \"3.4\"", env));
}

TEST_CASE("PEP 508 grammar examples and precedence", "[core][marker]") {
  Environment a = linux311();
  a.os_name = "a";
  Environment c = linux311();
  c.os_name = "c";
  // a and b or c == (a and b) or c
  CHECK(eval("os_name=='a' and os_name=='b' or os_name=='c'", c));
  // a and (b or c)
  CHECK_FALSE(eval("os_name=='a' and (os_name=='b' or os_name=='c')", c));
  // a or b and c == a or (b and c)
  CHECK(eval("os_name=='a' or os_name=='b' and os_name=='c'", a));
  // (a or b) and c
  CHECK_FALSE(eval("(os_name=='a' or os_name=='b') and os_name=='c'", a));
  CHECK(eval("python_version<'2.7' or sys_platform=='b' or os_name=='c'", c));
  CHECK_FALSE(eval("platform_version=='2'", c));  // not a version variable: strings differ
  // Both quote styles, no spaces, literal on either side
  CHECK(eval("python_version>=\"3.9\"and os_name==\"posix\""));
  CHECK(eval("'3.9' <= python_version"));
  CHECK(eval("\"posix\" == os_name"));
  CHECK(eval("python_version >= '3.9' and (platform_machine == 'x86_64' or extra == \"gpu\")"));
  CHECK(eval("  ( ( python_version >= '3' ) )  "));
  CHECK(eval("\tpython_version\t>=\t'3'\t"));
  CHECK(Marker::parse("os_name == 'posix'\n").has_value() == false);  // 26.3's END is \Z
}

TEST_CASE("Version comparison vs string comparison, as packaging 26.3", "[core][marker]") {
  Environment env = Environment::linux_cpython("3.9", "x86_64", "3.9.18");
  // Versions: 3.9 < 3.10 (as strings "3.9" > "3.10")
  CHECK_FALSE(eval("python_version > '3.10'", env));
  CHECK(eval("python_version < '3.10'", env));
  CHECK(eval("python_full_version == '3.9.*'", env));  // Specifier("==3.9.*")
  CHECK(eval("python_version == '3.9.0'", env));       // 3.9 == 3.9.0
  CHECK(eval("python_version ~= '3.1'", env));
  CHECK(eval("python_version === '3.9'", env));
  CHECK_FALSE(eval("python_version === '3.9.0'", env));
  CHECK(eval("python_version < '=3.9'", env));  // "<" + "=3.9" is the specifier <=3.9
  CHECK(eval("python_version != '3.10'", env));
  // Not a specifier or not a version variable: packaging 26.3's string table (`<`/`>` are
  // false, `<=`/`>=` mean equal).
  CHECK_FALSE(eval("platform_machine >= 'x86'", env));
  CHECK(eval("platform_machine >= 'x86_64'", env));
  CHECK_FALSE(eval("platform_machine < 'y'", env));
  CHECK_FALSE(eval("python_version == '3.1*'", env));
  CHECK(eval("python_version != 'abc'", env));
  CHECK_FALSE(eval("python_version < 'abc'", env));
  // in / not in: substring tests
  CHECK(eval("python_version in '3.8 3.9 3.10'", env));
  CHECK(eval("'linux' in sys_platform", env));
  CHECK(eval("'win' not in sys_platform", env));
  CHECK_FALSE(eval("python_version not in '3.9'", env));
  CHECK(eval("'' in os_name", env));
  // ~= and === between non-versions are undefined (packaging raises UndefinedComparison)
  CHECK(eval_fails("os_name ~= 'posix'", env));
  CHECK(eval_fails("python_version ~= '3'", env));  // ~=3 is not a specifier
  // A specifier on the right and a non-version on the left: no match (packaging 26.3).
  Environment odd = env;
  odd.platform_release = "5.15.0-91-generic";
  CHECK_FALSE(eval("platform_release >= '5.0'", odd));
  CHECK_FALSE(eval("platform_release >= '5.0'", linux311()));  // "" is not a version either
  CHECK_FALSE(eval("platform_release >= 'abc'", odd));         // not a specifier: not equal
  // Every comparison is evaluated: an error behind a true 'or' still fails.
  CHECK(eval_fails("os_name == 'posix' or os_name ~= 'x'", env));
  CHECK_FALSE(m("os_name == 'posix' or os_name ~= 'x'").matches(env));
}

TEST_CASE("extra: PEP 685 normalization", "[core][marker]") {
  CHECK(eval("extra == 'GPU_Extra'", linux311(), "gpu-extra"));
  CHECK(eval("extra == 'gpu-extra'", linux311(), "GPU.Extra"));
  CHECK(eval("'Foo__Bar' == extra", linux311(), "foo-bar"));
  CHECK_FALSE(eval("extra == 'gpu'", linux311(), "cpu"));
  CHECK(eval("extra != 'gpu'", linux311()));
  CHECK(eval("'gpu' in extra", linux311(), "gpu-extra"));
  CHECK(m("extra == 'gpu'").mentions_extra());
  CHECK(m("os_name == 'a' or 'gpu' == extra").mentions_extra());
  CHECK_FALSE(m("os_name == 'a'").mentions_extra());
  CHECK_FALSE(Marker().mentions_extra());
  // A version-like extra is normalized ("1.0" -> "1-0") and compared as a string, never as a
  // version (PEP 685, packaging 26.3).
  CHECK(eval("extra == '1.0'", linux311(), "1-0"));
  CHECK_FALSE(eval("extra == '1.0'", linux311(), "1.0.0"));
  CHECK_FALSE(eval("extra == '1.0'", linux311(), ""));
}

TEST_CASE("PEP 751 extras and dependency_groups", "[core][marker]") {
  Environment env = linux311();
  env.extras = {"GPU", "test"};
  env.dependency_groups = {"dev"};
  CHECK(eval("'gpu' in extras", env));
  CHECK(eval("'Test' in extras", env));
  CHECK_FALSE(eval("'docs' in extras", env));
  CHECK(eval("'docs' not in extras", env));
  CHECK(eval("'dev' in dependency_groups and 'gpu' in extras", env));
  CHECK_FALSE(eval("'lint' in dependency_groups", env));
  CHECK(eval_fails("extras == 'gpu'", env));
  CHECK(eval_fails("'gpu' == extras", env));
  CHECK(m("'gpu' in extras").to_string() == "\"gpu\" in extras");
}

TEST_CASE("PEP 825 variant markers", "[core][marker]") {
  // shared/data/gpu-stacks.md §7.6: evaluated with the chosen wheel's label and its properties
  // narrowed to those the machine supports; a wheel without a label has "" and empty sets.
  Environment env = linux311();
  const std::string_view cudnn12 =
      "platform_system == 'Linux' and (variant_label == 'cuda12.6' or variant_label == "
      "'cuda12.8')";
  CHECK_FALSE(eval(cudnn12, env));
  CHECK(eval("variant_label == ''", env));
  CHECK_FALSE(eval("'nvidia' in variant_namespaces", env));
  env.variant_label = "cuda12.8";
  env.variant_properties = {"nvidia :: cuda_version_lower_bound :: 12.0",
                            "nvidia :: sm_arch :: 90_real"};
  env.variant_features = {"nvidia :: cuda_version_lower_bound", "nvidia :: sm_arch"};
  env.variant_namespaces = {"nvidia"};
  CHECK(eval(cudnn12, env));
  CHECK(eval("variant_label != 'null'", env));
  CHECK(eval("'nvidia' in variant_namespaces", env));
  CHECK(eval("'nvidia :: sm_arch' in variant_features", env));
  // Whitespace around `::` is ignored; values are not name-normalized.
  CHECK(eval("'nvidia::sm_arch::90_real' in variant_properties", env));
  CHECK(eval("'nvidia ::cuda_version_lower_bound::  12.0' in variant_properties", env));
  CHECK_FALSE(eval("'nvidia :: sm_arch :: 120_real' in variant_properties", env));
  CHECK(eval("'nvidia :: sm_arch :: 120_real' not in variant_properties", env));
  CHECK_FALSE(eval("'NVIDIA' in variant_namespaces", env));
  CHECK(eval_fails("variant_properties == 'x'", env));
  CHECK(m("'foo::bar::baz' in variant_properties").to_string() ==
        "\"foo::bar::baz\" in variant_properties");
}

TEST_CASE("packaging's variable lookup for literal and variable pairs", "[core][marker]") {
  // A literal on the left: the right side's text names the variable (packaging 23.0).
  CHECK(eval("'posix' == 'os_name'"));
  CHECK(eval_fails("'a' == 'b'"));
  // A variable on the left: the right side's *text* is compared, even if it is a variable.
  Environment env = linux311();
  env.os_name = "sys_platform";
  CHECK(eval("os_name == sys_platform", env));
  CHECK_FALSE(eval("os_name == sys_platform"));
}

TEST_CASE("Quoted strings are Python literals", "[core][marker]") {
  CHECK(eval("os_name == '\\x70osix'"));
  CHECK(eval("os_name == '\\160osix'"));
  CHECK(eval("os_name == '\\u0070osix'"));
  CHECK(eval("os_name == '\\U00000070osix'"));
  CHECK(eval("os_name == 'po\\\nsix'"));  // backslash-newline is a line continuation
  CHECK(m("os_name == 'a\\d'").to_string() == "os_name == \"a\\d\"");    // unknown escape kept
  CHECK(m("os_name == 'a\\\\'").to_string() == "os_name == \"a\\\\\"");  // see below
  CHECK(m("os_name == \"it's\"").to_string() == "os_name == \"it's\"");
  CHECK(m("os_name == 'say \"hi\"'").to_string() == "os_name == 'say \"hi\"'");  // single quotes
  CHECK(m("os_name == '\\u00e9'").to_string() == "os_name == \"\xc3\xa9\"");
  CHECK(m("os_name == '\\777'").to_string() == "os_name == \"\xc7\xbf\"");
}

// Found by fuzz/marker.cpp (fuzz/corpus/marker/crash-*, requirement/crash-marker-value-cr,
// pyproject/crash-marker-value-backslashes): values were printed as they are, so a value with a
// backslash that starts an escape, a line break, a NUL byte or both quote characters printed as
// text that did not parse, or parsed as another value (or another marker).
TEST_CASE("Printed marker values read back as the same value", "[core][marker]") {
  struct Case {
    std::string_view text;
    std::string_view value;    // os_name's value the marker compares with
    std::string_view printed;  // its printed form
  };
  using namespace std::string_view_literals;
  for (const Case& c : std::vector<Case>{
           {R"(os_name == 'a\\')", R"(a\)", R"(os_name == "a\\")"},
           {R"(os_name == 'a\\b')", R"(a\b)", R"(os_name == "a\\b")"},
           {R"(os_name == 'a\d')", R"(a\d)", R"(os_name == "a\d")"},  // kept as packaging prints
           {R"(os_name == 'x\\\\\\,\\\\')", R"(x\\\,\\)", R"(os_name == "x\\\\\,\\\\")"},
           {R"(os_name == 'a\rt')", "a\rt", R"(os_name == "a\rt")"},
           {R"(os_name == 'a\nb')", "a\nb", R"(os_name == "a\nb")"},
           {R"(os_name == 'a\x00b')", "a\0b"sv, R"(os_name == "a\x00b")"},
           {R"(os_name == 'a\\\x00')", "a\\\0"sv, R"(os_name == "a\\\x00")"},
           {R"(os_name == 'say "hi"')", R"(say "hi")", R"(os_name == 'say "hi"')"},
           {R"(os_name == 'it\x27s "x"')", R"(it's "x")", R"(os_name == "it's \x22x\x22")"},
           {R"(os_name == 'x" and extra == "y')", R"(x" and extra == "y)",
            R"(os_name == 'x" and extra == "y')"},
           {R"(os_name == '\x5c"')", R"(\")", R"(os_name == '\\"')"},
       }) {
    INFO(c.text);
    Marker marker = m(c.text);
    std::string printed = marker.to_string();
    CHECK(printed == c.printed);
    Marker again = m(printed);
    CHECK(again.to_string() == printed);
    CHECK_FALSE(again.mentions_extra());
    Environment env = linux311();
    env.os_name = std::string(c.value);
    CHECK(eval(c.text, env));
    CHECK(eval(printed, env));
    env.os_name += "x";
    CHECK_FALSE(eval(printed, env));
  }
}

TEST_CASE("Marker text is packaging's str(Marker)", "[core][marker]") {
  CHECK(m("python_version>='3.9'").to_string() == "python_version >= \"3.9\"");
  CHECK(m("os.name=='posix'").to_string() == "os_name == \"posix\"");
  CHECK(m("python_implementation=='CPython'").to_string() ==
        "platform_python_implementation == \"CPython\"");
  CHECK(m("(os_name=='a')").to_string() == "os_name == \"a\"");
  CHECK(m("((os_name=='a'))").to_string() == "os_name == \"a\"");
  CHECK(m("(os_name=='a') and os_name=='b'").to_string() ==
        "os_name == \"a\" and os_name == \"b\"");
  CHECK(m("(os_name=='a' or os_name=='b') and os_name=='c'").to_string() ==
        "(os_name == \"a\" or os_name == \"b\") and os_name == \"c\"");
  CHECK(m("(os_name=='a' and os_name=='b') and os_name=='c'").to_string() ==
        "(os_name == \"a\" and os_name == \"b\") and os_name == \"c\"");
  CHECK(m("'a' not  in os_name").to_string() == "\"a\" not in os_name");
  // ((a or b)) and c keeps its parentheses (packaging 26.3 fixed this too).
  CHECK(m("((os_name=='a' or os_name=='b')) and os_name=='c'").to_string() ==
        "(os_name == \"a\" or os_name == \"b\") and os_name == \"c\"");
  // Every comparison's extra value is normalized in the text (packaging 26.3).
  CHECK(m("extra == 'Foo_Bar' and extra == 'A_B'").to_string() ==
        "extra == \"foo-bar\" and extra == \"a-b\"");
  CHECK(m("os_name == extra").to_string() == "os_name == extra");
  CHECK(Marker().to_string().empty());
}

TEST_CASE("Empty marker, conjunction and copies", "[core][marker]") {
  Marker empty;
  CHECK(empty.empty());
  CHECK(*empty.evaluate(linux311()));
  CHECK(empty.matches(linux311()));
  Marker a = m("os_name == 'posix' or os_name == 'nt'");
  Marker b = m("python_version >= '3.12'");
  Marker both = Marker::conjunction(a, b);
  CHECK(both.to_string() ==
        "(os_name == \"posix\" or os_name == \"nt\") and python_version >= \"3.12\"");
  CHECK_FALSE(*both.evaluate(linux311()));
  CHECK(*both.evaluate(Environment::linux_cpython("3.12", "x86_64")));
  CHECK(Marker::conjunction(empty, b).to_string() == b.to_string());
  CHECK(Marker::conjunction(a, empty).to_string() == a.to_string());
  Marker nested = Marker::conjunction(both, m("(sys_platform == 'linux')"));
  CHECK(nested.to_string() ==
        "((os_name == \"posix\" or os_name == \"nt\") and python_version >= \"3.12\") and "
        "sys_platform == \"linux\"");
  CHECK(*nested.evaluate(Environment::linux_cpython("3.12", "x86_64")));
  Marker copy = both;
  CHECK(copy.to_string() == both.to_string());
  auto reparsed = Marker::parse(both.to_string());
  REQUIRE(reparsed);
  CHECK(reparsed->to_string() == both.to_string());
}

TEST_CASE("Invalid markers report the column of the offending token", "[core][marker]") {
  CHECK(marker_error_column("") == 1);
  CHECK(marker_error_column("os_name") == 8);
  CHECK(marker_error_column("os_name ==") == 11);
  CHECK(marker_error_column("os_name == 'a") == 12);
  CHECK(marker_error_column("os_name = 'a'") == 9);
  CHECK(marker_error_column("foo == 'a'") == 1);
  CHECK(marker_error_column("python_versions == 'a'") == 1);
  CHECK(marker_error_column("platform.release == 'a'") == 1);  // not a spelling packaging accepts
  CHECK(marker_error_column("(os_name == 'a'") == 16);
  CHECK(marker_error_column("os_name == 'a')") == 15);
  CHECK(marker_error_column("os_name == 'a' garbage") == 16);
  CHECK(marker_error_column("os_name == 'a' and") == 19);
  CHECK(marker_error_column("os_name == 'a' andos_name == 'b'") == 16);
  CHECK(marker_error_column("os_name not 'a'") == 13);
  CHECK(marker_error_column("os_name notin 'a'") == 9);
  CHECK(marker_error_column("os_name == 'a\\'") == 14);
  CHECK(marker_error_column("os_name == '\\N{DIGIT ONE}'") == 13);
  CHECK(marker_error_column("os_name == '\\x4'") == 13);
  CHECK(marker_error_column("os_name == '\\U00110000'") == 13);
  CHECK(marker_error_column(std::string_view("os_name == 'a\0b'", 17)) == 14);
  CHECK(marker_error_column("os_name == 'a\nb'") == 14);
  CHECK(marker_error_column("os_name == 'a'\r\n") == 15);
  CHECK(marker_error_column("os_name == 'posix' and (os_name == 'a' or)") == 42);
  auto r = Marker::parse("(os_name == 'a'");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("column 1") != std::string::npos);  // names the open '('
}

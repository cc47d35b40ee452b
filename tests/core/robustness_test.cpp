// Bad input never crashes the PEP 440/508 parsers: empty strings, 10 MB strings, NUL bytes,
// invalid UTF-8, very deep parentheses in markers, and random token soup. Each input must give
// an error with a column inside the text, or a result that behaves (prints, re-parses,
// evaluates). Also run under ASan+UBSan (label asan).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/core/marker.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"

using namespace gpulock::core;

namespace {

constexpr std::size_t kTenMegabytes = 10'000'000;

template <class T>
bool check_error(const Result<T>& r, std::string_view text) {
  if (r) return false;
  INFO("input of " << text.size() << " bytes");
  CHECK(r.error().column >= 1);
  CHECK(r.error().column <= text.size() + 1);
  CHECK_FALSE(r.error().message.empty());
  CHECK(r.error().message.size() < 600);  // input is quoted with a cap, never in full
  return true;
}

// Every parser on one input; results must behave.
void run_all(std::string_view text) {
  auto v = Version::parse(text);
  if (!check_error(v, text)) {
    auto again = Version::parse(v->to_string());
    REQUIRE(again);
    CHECK(*again == *v);
  }
  auto s = SpecifierSet::parse(text);
  if (!check_error(s, text)) {
    auto again = SpecifierSet::parse(s->to_string());
    REQUIRE(again);
    CHECK(*again == *s);
    (void)s->contains(Version(), true);
  }
  auto m = Marker::parse(text);
  if (!check_error(m, text)) {
    (void)m->to_string();
    (void)m->evaluate(Environment::linux_cpython("3.11", "x86_64"), "gpu");
  }
  auto r = Requirement::parse(text);
  if (!check_error(r, text)) {
    (void)r->to_string();
  }
}

std::string repeat(std::string_view unit, std::size_t times) {
  std::string out;
  out.reserve(unit.size() * times);
  for (std::size_t i = 0; i < times; ++i)
    out += unit;
  return out;
}

}  // namespace

TEST_CASE("Empty input is an error at column 1", "[core][robustness]") {
  CHECK(Version::parse("").error().column == 1);
  CHECK(Specifier::parse("").error().column == 1);
  CHECK(Marker::parse("").error().column == 1);
  CHECK(Requirement::parse("").error().column == 1);
  auto empty_set = SpecifierSet::parse("");
  REQUIRE(empty_set);  // the empty set is valid
  CHECK(empty_set->empty());
}

TEST_CASE("NUL bytes and invalid UTF-8 give errors", "[core][robustness]") {
  using namespace std::string_view_literals;
  const std::string_view inputs[] = {
      "\0"sv,
      "1.0\0"sv,
      "\0"
      "1.0"sv,
      "1.\0"
      "0"sv,
      "\xff\xfe"sv,
      "\xc3"sv,
      "1.0+\xc3\xa9"sv,
      "1.0\xff"sv,
      ">=1.0\0"sv,
      "==\xe2\x82"sv,
      "os_name == 'a\0'"sv,
      "os_name\0== 'a'"sv,
      "name\0>=1"sv,
      "name[\xff]"sv,
      "\xed\xa0\x80"sv,
  };
  for (auto text : inputs) {
    INFO("input bytes: " << text.size());
    CHECK(check_error(Version::parse(text), text));
    CHECK(check_error(Specifier::parse(text), text));
    CHECK(check_error(Marker::parse(text), text));
    CHECK(check_error(Requirement::parse(text), text));
  }
  // Inside a quoted marker value the bytes are data: a result, not a crash.
  auto m = Marker::parse("os_name == '\xff\xfe'");
  REQUIRE(m);
  CHECK_FALSE(*m->evaluate(Environment::linux_cpython("3.11", "x86_64")));
  // The message escapes the bytes.
  auto bad = Version::parse("1.0\xff");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("\\xff") != std::string::npos);
  CHECK(bad.error().column == 4);
}

TEST_CASE("10 MB inputs return promptly", "[core][robustness]") {
  const std::string digits(kTenMegabytes, '1');
  auto v = Version::parse(digits);
  REQUIRE_FALSE(v);
  CHECK(v.error().column == 1);  // above 2^64-1
  CHECK(v.error().message.size() < 600);

  std::string long_release = repeat("1.", kTenMegabytes / 2) + "1";
  auto lr = Version::parse(long_release);
  REQUIRE(lr);
  CHECK(lr->release().size() == kTenMegabytes / 2 + 1);
  CHECK(*lr > *Version::parse("1.1"));

  const std::string spaces(kTenMegabytes, ' ');
  CHECK(Version::parse(spaces).error().column == kTenMegabytes + 1);
  CHECK(SpecifierSet::parse(spaces)->empty());
  CHECK(Marker::parse(spaces).error().column == kTenMegabytes + 1);
  CHECK(Requirement::parse(spaces).error().column == kTenMegabytes + 1);

  auto padded = SpecifierSet::parse(">=1.0" + spaces);
  REQUIRE(padded);
  CHECK(padded->to_string() == ">=1.0");

  const std::string letters(kTenMegabytes, 'a');
  CHECK(Version::parse(letters).error().column == 1);
  CHECK(Marker::parse(letters).error().column == 1);
  auto long_name = Requirement::parse(letters);
  REQUIRE(long_name);  // a 10 MB name is a valid identifier
  CHECK(long_name->name.size() == kTenMegabytes);

  const std::string opens(kTenMegabytes, '(');
  CHECK(Marker::parse(opens).error().column == kTenMegabytes + 1);
  CHECK(Requirement::parse("name;" + opens).error().column == kTenMegabytes + 6);

  auto long_value = Marker::parse("os_name == '" + letters + "'");
  REQUIRE(long_value);
  CHECK_FALSE(*long_value->evaluate(Environment::linux_cpython("3.11", "x86_64")));

  std::string many_clauses = repeat(">=1.0,", 100000);
  auto set = SpecifierSet::parse(many_clauses);
  REQUIRE(set);
  CHECK(set->size() == 1);  // duplicates collapse

  std::string chain = "os_name == 'posix'" + repeat(" and os_name == 'posix'", 50000);
  auto chained = Marker::parse(chain);
  REQUIRE(chained);
  CHECK(*chained->evaluate(Environment::linux_cpython("3.11", "x86_64")));
}

TEST_CASE("10,000 nested parentheses in a marker: no stack overflow", "[core][robustness]") {
  const std::size_t depth = 10000;
  std::string text = std::string(depth, '(') + "os_name == 'posix'" + std::string(depth, ')');
  auto m = Marker::parse(text);
  REQUIRE(m);
  CHECK(*m->evaluate(Environment::linux_cpython("3.11", "x86_64")));
  CHECK(m->to_string() == "os_name == \"posix\"");

  // Every level a real group: (((a and a) and a) and a)...
  std::string groups =
      std::string(depth, '(') + "os_name == 'posix'" + repeat(" and os_name == 'posix')", depth);
  auto g = Marker::parse(groups);
  REQUIRE(g);
  CHECK(*g->evaluate(Environment::linux_cpython("3.11", "x86_64")));
  std::string printed = g->to_string();
  CHECK(std::count(printed.begin(), printed.end(), '(') == static_cast<std::ptrdiff_t>(depth - 1));
  auto reparsed = Marker::parse(printed);
  REQUIRE(reparsed);
  CHECK(reparsed->to_string() == printed);

  // Conjunctions of deep markers, copies, and destruction of all of them.
  Marker both = Marker::conjunction(*m, *g);
  for (int i = 0; i < 20; ++i)
    both = Marker::conjunction(both, *m);
  CHECK(*both.evaluate(Environment::linux_cpython("3.11", "x86_64")));

  // In a requirement too.
  auto r = Requirement::parse("torch>=2; " + text);
  REQUIRE(r);
  CHECK(r->marker.to_string() == "os_name == \"posix\"");

  // Unbalanced: an error, not a crash.
  auto open_only = Marker::parse(std::string(depth, '(') + "os_name == 'posix'");
  REQUIRE_FALSE(open_only);
  CHECK(open_only.error().column == depth + 19);
  auto close_only = Marker::parse("os_name == 'posix'" + std::string(depth, ')'));
  REQUIRE_FALSE(close_only);
  CHECK(close_only.error().column == 19);

  // Far deeper than any stack would allow with recursion.
  const std::size_t deep = 1'000'000;
  std::string deeper = std::string(deep, '(') + "extra == 'gpu'" + std::string(deep, ')');
  auto d = Marker::parse(deeper);
  REQUIRE(d);
  CHECK(*d->evaluate(Environment::linux_cpython("3.11", "x86_64"), "GPU"));
  CHECK(d->mentions_extra());
}

TEST_CASE("Random token soup never crashes", "[core][robustness]") {
  const std::vector<std::string> tokens = {"(",
                                           ")",
                                           " ",
                                           "  ",
                                           "\t",
                                           "\n",
                                           "and",
                                           "or",
                                           "not",
                                           "in",
                                           "'",
                                           "\"",
                                           "==",
                                           "<",
                                           "~=",
                                           "===",
                                           "!=",
                                           ">=",
                                           "python_version",
                                           "extra",
                                           "os.name",
                                           "extras",
                                           "3.8",
                                           "1.0",
                                           "\\",
                                           "\\x4",
                                           "\\u00e9",
                                           "\\N{",
                                           std::string(1, '\0'),
                                           "\xff",
                                           "\xc3",
                                           "@",
                                           ";",
                                           "[",
                                           "]",
                                           ",",
                                           "name",
                                           "http://x",
                                           "file:///x",
                                           "+",
                                           "*",
                                           ".",
                                           "1",
                                           "a",
                                           "!",
                                           "v",
                                           "post",
                                           "dev",
                                           "rc",
                                           "-",
                                           "_",
                                           "+cu124",
                                           "99999999999999999999",
                                           "\xc2\xa0",
                                           "\xe2\x80\x83"};
  std::mt19937 rng(508);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    std::size_t n = rng() % 12;
    for (std::size_t k = 0; k < n; ++k)
      text += tokens[rng() % tokens.size()];
    run_all(text);
  }
}

// An index root's project list (index/project_list.h): which names the torch source serves.
// Byte 0 picks HTML (even) or JSON (odd); the rest is the page. Properties: every name is valid
// and normalized; an HTML root rebuilt from the names (one anchor each) parses to the same set.
#include "gpulock/index/project_list.h"

#include <fmt/format.h>

#include "gpulock/core/name.h"

#include "fuzz_check.h"

using namespace gpulock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json = (data[0] & 1) != 0;
  std::string_view page = fuzz::as_text(data + 1, size - 1);
  auto list = index::parse_project_list(page, json, "http://fuzz/simple/");
  if (!list) {
    FUZZ_CHECK(json, "an HTML root never fails");
    FUZZ_CHECK(list.error().code == core::ErrorCode::IndexFormat &&
                   list.error().where == "http://fuzz/simple/",
               list.error().to_string());
    return 0;
  }
  std::string rebuilt;
  for (const auto& n : list->names) {
    FUZZ_CHECK(core::is_valid_name(n) && core::normalize_name(n) == n, fmt::format("name '{}'", n));
    rebuilt += fmt::format("<a href=\"{}/\">{}</a><br/>\n", n, n);
  }
  auto again = index::parse_project_list(rebuilt, false, "http://fuzz/simple/");
  FUZZ_CHECK(again.has_value() && again->names == list->names, rebuilt);
  return 0;
}

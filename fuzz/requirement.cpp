// PEP 508 requirements (core/requirement.h). Properties: the printed requirement parses back to
// one with the same name, extras, specifier set, URL and marker text, and prints the same.
#include "gpulock/core/requirement.h"

#include <algorithm>

#include <fmt/format.h>

#include "fuzz_check.h"

using gpulock::core::Requirement;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = gpulock::fuzz::as_text(data, size);
  auto req = Requirement::parse(text);
  if (!req) return 0;
  std::string printed = req->to_string();
  auto again = Requirement::parse(printed);
  FUZZ_CHECK(again.has_value(), fmt::format("'{}' prints as '{}', which does not parse: {}", text,
                                            printed, again ? "" : again.error().message));
  std::string detail = fmt::format("'{}' -> '{}' -> '{}'", text, printed, again->to_string());
  FUZZ_CHECK(again->to_string() == printed, detail);
  FUZZ_CHECK(again->name == req->name, detail);
  FUZZ_CHECK(again->normalized_name() == req->normalized_name(), detail);
  FUZZ_CHECK(again->specifier == req->specifier, detail);
  FUZZ_CHECK(again->url == req->url, detail);
  FUZZ_CHECK(again->marker.to_string() == req->marker.to_string(), detail);
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  FUZZ_CHECK(sorted(again->extras) == sorted(req->extras), detail);
  return 0;
}

// pyproject.toml requirements (app/project_file.h read_project_requirements): dependencies,
// optional-dependencies and PEP 735 dependency groups with include-group. The first byte
// selects the extras and groups asked for; the rest is the file. Property: every requirement
// returned prints to text that parses back.
#include <fmt/format.h>

#include "gpulock/app/project_file.h"

#include "fuzz_check.h"

using namespace gpulock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::string> extras, groups;
  if (data[0] & 1) extras.push_back("gpu");
  if (data[0] & 2) extras.push_back("Test_Extra");
  if (data[0] & 4) groups.push_back("dev");
  if (data[0] & 8) groups.push_back("docs");
  auto reqs = app::read_project_requirements(gpulock::fuzz::as_text(data + 1, size - 1),
                                             "pyproject.toml", extras, groups);
  if (!reqs) return 0;
  for (const app::RequirementEntry& e : *reqs) {
    std::string printed = e.requirement.to_string();
    auto again = core::Requirement::parse(printed);
    FUZZ_CHECK(again.has_value(),
               fmt::format("requirement prints as '{}', which does not parse", printed));
  }
  return 0;
}

// pip-style requirements files (app/requirements_file.h parse_requirements_text). The first
// byte selects requirements or constraints; the rest is the file. Nested `-r`/`-c` files read
// the same input again for the first few includes (so include handling and loops are
// exercised), then a fixed one-line file; `${VAR}` expands for a few names. Properties: every
// requirement read prints to text that parses back; constraints land only in `constraints`.
#include "gpulock/app/requirements_file.h"

#include <fmt/format.h>

#include "fuzz_check.h"

using namespace gpulock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  bool constraints = (data[0] & 1) != 0;
  std::string text(gpulock::fuzz::as_text(data + 1, size - 1));
  int reads = 0;
  app::RequirementsFileOptions options;
  options.reader = [&](const std::string& path) -> core::Result<std::string> {
    if (path.find("missing") != std::string::npos) {
      return core::fail_at(core::ErrorCode::Io, "no such file", path);
    }
    return ++reads <= 3 ? text : std::string("demo>=1.0 ; python_version >= '3.8'\n");
  };
  options.env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "TORCH") return "torch==2.5.1";
    if (name == "EMPTY") return "";
    if (name == "URL") return "https://example.org/simple/";
    return std::nullopt;
  };
  app::RequirementsInput into;
  auto status = app::parse_requirements_text(text, "requirements.txt", constraints, into, options);
  if (!status) return 0;
  if (constraints) FUZZ_CHECK(into.requirements.empty(), "a constraints file added requirements");
  for (const auto* list : {&into.requirements, &into.constraints}) {
    for (const app::RequirementEntry& e : *list) {
      std::string printed = e.requirement.to_string();
      auto again = core::Requirement::parse(printed);
      FUZZ_CHECK(again.has_value(),
                 fmt::format("requirement prints as '{}', which does not parse", printed));
    }
  }
  return 0;
}

// The GPU stacks table (gpu/gpu_stacks.h GpuStacks::parse, the format of gpu/data/gpu_stacks.txt)
// and the coupled local labels it names (parse_coupled_label). Byte 0 picks: even, the rest is
// a table; odd, the rest is a version whose local label is read in each of the three forms.
// Properties: every row of a parsed table is found again by its lookup (major_by_name,
// arch_floor, provides_of, shared_dir_of, is_cuda13_name, coupled_of); a label's CUDA, when
// read, has the label's CUDA major. The odd input is also a find-links URL: a page followed to
// torch's build is that build's page (following it again changes nothing).
#include "gpulock/gpu/gpu_stacks.h"

#include <fmt/format.h>

#include "fuzz_check.h"

using namespace gpulock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text = gpulock::fuzz::as_text(data + 1, size - 1);
  if (data[0] & 1) {
    if (auto followed = gpu::gpu_stacks().follow_find_links(text, "2.11.0+cu130")) {
      FUZZ_CHECK(!gpu::gpu_stacks().follow_find_links(*followed, "2.11.0+cu130"),
                 fmt::format("'{}' followed to '{}', which is followed again", text, *followed));
    }
    auto version = core::Version::parse(text);
    if (!version) return 0;
    for (std::string_view form : {"cu{M}torch{X.Y}", "pt{X}{Y}cu{NNN}", "cu{NNN}", "other"}) {
      auto build = gpu::parse_coupled_label(form, *version);
      if (!build) continue;
      if (build->cuda) {
        FUZZ_CHECK(build->cuda->major == build->cuda_major,
                   fmt::format("'{}' as {}: CUDA {} with major {}", text, form,
                               build->cuda->to_string(), build->cuda_major));
      }
    }
    return 0;
  }
  auto table = gpu::GpuStacks::parse(text);
  if (!table) {
    FUZZ_CHECK(!table.error().message.empty(), "an error without a message");
    return 0;
  }
  for (const auto& row : table->need_by_name)
    FUZZ_CHECK(table->major_by_name(row.package).has_value(),
               fmt::format("need-name {} is not found", row.package));
  for (const auto& row : table->arch_floors)
    FUZZ_CHECK(table->arch_floor(row.major).has_value(),
               fmt::format("arch-floor {} is not found", row.major));
  for (const auto& row : table->provides) {
    for (const auto& p : row.packages)
      FUZZ_CHECK(table->provides_of(p) != nullptr, fmt::format("provides {} is not found", p));
  }
  for (const auto& row : table->shared_dirs) {
    for (const auto& p : row.packages)
      FUZZ_CHECK(table->shared_dir_of(p) != nullptr, fmt::format("shared-dir {} is not found", p));
  }
  for (const auto& name : table->cuda13_names)
    FUZZ_CHECK(table->is_cuda13_name(name), fmt::format("cuda13-name {} is not found", name));
  for (const auto& row : table->coupled) {
    for (const auto& p : row.packages)
      FUZZ_CHECK(table->coupled_of(p) != nullptr, fmt::format("coupled {} is not found", p));
  }
  return 0;
}

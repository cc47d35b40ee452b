// Catalog: PEP 825 wheel variants (Draft; shared/data/gpu-stacks.md §7.5, §7.9). A release
// with variant wheels takes the label this machine selects, in PEP 825's order with gpulock's
// policy on top (variant_select.h); its dependencies are then read with the variant markers of
// that label.

#include <fmt/format.h>

#include "gpulock/catalog/variant_select.h"

#include "catalog_impl.h"

namespace gpulock::catalog {

using resolver::UnavailableKind;

auto Catalog::Impl::settle_variant(std::string_view name, VersionEntry& entry) -> core::Status {
  auto& v = *entry.variants;
  if (v.settled) return {};
  v.settled = true;
  const std::string release = fmt::format("{}-{}", name, entry.version.to_string());
  auto unusable = [&](std::string message) -> core::Status {
    v.unavailable = UnavailableReason{UnavailableKind::NoCompatibleWheel, std::move(message), {}};
    entry.file = nullptr;
    return {};
  };
  if (v.metadata_file == nullptr) {
    return unusable(fmt::format(
        "has variant wheels but its index lists no {}-variants.json for them (PEP 825)", release));
  }
  auto text = pages.fetch_variants_json(*v.metadata_file);
  if (!text) {
    auto code = text.error().code;
    if (code == core::ErrorCode::HashMismatch || code == core::ErrorCode::Offline ||
        code == core::ErrorCode::Network || code == core::ErrorCode::Timeout ||
        code == core::ErrorCode::Cancelled || code == core::ErrorCode::Auth) {
      return std::unexpected(text.error());
    }
    return unusable(fmt::format("has unusable variant metadata ({})", text.error().message));
  }
  auto parsed = index::parse_variants_json(*text, v.metadata_file->filename());
  if (!parsed) {
    return unusable(fmt::format("has unusable variant metadata ({})", parsed.error().message));
  }
  v.metadata = std::make_shared<const index::VariantsJson>(std::move(*parsed));
  std::vector<std::string> labels;
  for (const auto& [label, file] : v.by_label)
    labels.push_back(label);
  const gpu::GpuContext& machine = gpu.machine();
  const bool gpu_asked = !machine.no_gpu;
  auto chosen = select_variant(*v.metadata, labels, machine, VariantPolicy::Gpulock, gpu_asked);
  if (!chosen.chosen.empty()) {
    v.label = chosen.chosen;
    v.properties = std::move(chosen.properties);
    entry.file = v.by_label.at(v.label).first;
    entry.yanked = entry.file->yanked();
    return {};
  }
  if (v.plain != nullptr && !gpu_asked) {
    entry.file = v.plain;
    entry.source = v.plain_source;
    entry.yanked = entry.file->yanked();
    return {};
  }
  return unusable(fmt::format("has {}", chosen.problem));
}

}  // namespace gpulock::catalog

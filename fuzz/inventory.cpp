// Inventory readers (gpu/inventory.h, issue 45): kubectl node JSON and describe, the nvidia-smi
// table, CSV, /proc, `nvidia-smi -q -x`, `-q` and `-L`, probe JSON, collect_env, scontrol. Byte 0
// picks the format (0 and 12: detected from the content, else 1-11 forced); the rest is the
// text. Properties: a read inventory has a host, every host has a name and at most the bounded
// number of GPUs, a known compute capability of a host is one of its GPUs', and a ceiling is
// stated, derived or assumed when known. The text is also read as a Slurm feature map (parsed
// maps always apply to a fixed scontrol line). A text that passes fleet probe's check, gathered
// with other nodes, reads back node by node.
#include "gpulock/gpu/inventory.h"

#include <algorithm>

#include <fmt/format.h>

#include "fuzz_check.h"

using namespace gpulock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto pick = static_cast<std::uint8_t>(data[0] % 13);
  const auto format =
      pick == 12 ? gpu::InventoryFormat::Auto : static_cast<gpu::InventoryFormat>(pick);
  std::string_view text = gpulock::fuzz::as_text(data + 1, size - 1);
  (void)gpu::detect_inventory_format(text);
  (void)gpu::compute_capability_of_name(text.substr(0, 300));
  // The text as a node's `probe --lock --json` document: every failed line has an id.
  for (const auto& line : gpu::lock_probe_failures(text))
    FUZZ_CHECK(line.find(": ") != std::string::npos, std::string("a failed line without its id"));
  // The text as `nvidia-smi --query-gpu` output with probe's columns: every line is a row or
  // listed as another line.
  {
    const auto csv =
        gpu::read_smi_csv_rows(text, {"driver_version", "name", "compute_cap", "uuid"});
    for (const auto& row : csv.rows)
      FUZZ_CHECK(row.line >= 1 && !row.text.empty(), std::string("a CSV row without its line"));
  }
  // The text as a site's Slurm feature map, applied to a fixed scontrol line.
  if (auto map = gpu::parse_feature_map(text, "fuzz/site.map")) {
    auto slurm = gpu::parse_inventory(
        "NodeName=n1 Arch=x86_64 ActiveFeatures=a,b,cuda Gres=gpu:a100:2,gpu:x:1\n", "n",
        gpu::InventoryFormat::Slurm, &*map);
    FUZZ_CHECK(slurm.has_value() && slurm->hosts.size() == 1, std::string("scontrol with a map"));
  }
  // `fleet probe`: a node's output that passes the check, gathered between a failed node whose
  // error is the text and another copy, reads back as exactly those three hosts, by name.
  if (gpu::check_probe_document(text, "n1")) {
    const std::string gathered =
        gpu::probe_entry_text({"n1", std::string(text), "", {{"l", 1, std::string(text)}}}) +
        gpu::probe_entry_text({"n2", "", std::string(text), {}}) +
        gpu::probe_entry_text({"n3", std::string(text), "", {}});
    auto back = gpu::parse_inventory(gathered, "fleet.json", gpu::InventoryFormat::ProbeJson);
    FUZZ_CHECK(back.has_value() && back->hosts.size() == 3 && back->hosts[0].name == "n1" &&
                   back->hosts[1].name == "n2" && back->hosts[2].name == "n3",
               std::string("a gathered fleet probe does not read back node by node"));
  }
  auto inv = gpu::parse_inventory(text, "fuzz/input.txt", format);
  if (!inv) return 0;
  FUZZ_CHECK(!inv->hosts.empty(), std::string("an inventory without hosts"));
  FUZZ_CHECK(inv->format != gpu::InventoryFormat::Auto, std::string("format left Auto"));
  for (const auto& h : inv->hosts) {
    FUZZ_CHECK(!h.name.empty(), std::string("a host without a name"));
    FUZZ_CHECK(h.gpus.size() <= 256, fmt::format("{} GPUs", h.gpus.size()));
    for (const auto& a : h.machine.archs) {
      const bool from_gpu = std::any_of(h.gpus.begin(), h.gpus.end(),
                                        [&](const gpu::InventoryGpu& g) { return g.cc == a; });
      FUZZ_CHECK(from_gpu, fmt::format("arch {} of no GPU on {}", a.dotted(), h.name));
    }
    if (h.machine.ceiling) {
      const auto& m = h.machine.ceiling_method;
      FUZZ_CHECK(m == "stated" || m == "derived" || m == "assumed", m);
    }
  }
  return 0;
}

// The inventory `gpulock fleet probe` gathers (gpu/inventory.h ProbeEntry, issue 45 item 4): each
// node's `probe --machine --json` document, checked by the probe-json reader, with the node's
// name and its lock probes written first; the reader (read_probe_json) names the host by it.
#include <fmt/format.h>

#include "inventory_internal.h"

namespace gpulock::gpu {
namespace {

using namespace inventory_detail;

constexpr std::size_t kMaxDocument = std::size_t{1} << 20;
constexpr std::size_t kMaxNodeText = 512;

// Text from a node as a JSON string: printable ASCII kept, other bytes '?', at most
// kMaxNodeText bytes.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMaxNodeText; ++i) {
    const char c = text[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n' || c == '\t') {
      out += c == '\n' ? "\\n" : "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      out += '?';
    } else {
      out += c;
    }
  }
  if (text.size() > kMaxNodeText) out += "...";
  return out + "\"";
}

std::string lock_probes_json(const ProbeEntry& e) {
  std::string out = "[";
  for (std::size_t i = 0; i < e.locks.size(); ++i) {
    const auto& l = e.locks[i];
    out += fmt::format("{}{{\"lock\": {}, \"exit\": {}, \"result\": {}}}", i == 0 ? "" : ", ",
                       json_string(l.lock), l.exit, json_string(l.result));
  }
  return out + "]";
}

}  // namespace

core::Status check_probe_document(std::string_view text, std::string_view node) {
  const std::string where(node);
  auto bad = [&](std::string why) {
    return core::fail_at(core::ErrorCode::InvalidInput, std::move(why), where);
  };
  if (text.size() > kMaxDocument)
    return bad(fmt::format("probe --machine --json printed {} bytes (at most {})", text.size(),
                           kMaxDocument));
  if (core::trim(text).empty()) return bad("probe --machine --json printed nothing");
  if (!one_json_document(text, "gpulock.machine/1"))
    return bad(
        "probe --machine --json did not print exactly one complete gpulock.machine/1 JSON "
        "document");
  // A document without a single fact (no-permission, say) is still the node's answer.
  auto inv = parse_inventory(text, where, InventoryFormat::ProbeJson);
  if (inv && inv->hosts.size() != 1)
    return bad(
        fmt::format("probe --machine --json described {} hosts, not one", inv->hosts.size()));
  return {};
}

std::string probe_entry_text(const ProbeEntry& e) {
  std::string head =
      fmt::format("{{\"node\": {}, \"lock_probes\": {}", json_string(e.node), lock_probes_json(e));
  const auto doc = core::trim(e.document);
  if (!e.error.empty() || doc.size() < 2 || doc.front() != '{')
    return fmt::format("{{\"schema\": \"gpulock.machine/1\", {}, \"probe_error\": {}}}\n",
                       head.substr(1),
                       json_string(e.error.empty() ? "no document" : std::string_view(e.error)));
  // The checked document's members follow ours: `{"node": ..., "lock_probes": [...], "schema"...`.
  auto rest = doc.substr(1);
  if (core::trim_left(rest).starts_with('}')) return head + "}\n";
  if (rest.starts_with('\n')) rest.remove_prefix(1);
  return fmt::format("{},\n{}\n", head, rest);
}

}  // namespace gpulock::gpu

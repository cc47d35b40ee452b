#pragma once
// What the inventory readers share (inventory*.cpp): each reader fills RawHosts with the text it
// found; finish_host turns one into an InventoryHost (the driver parsed, the ceiling read or
// derived, compute capabilities from the names, what was read, derived and unknown).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/text.h"
#include "gpulock/gpu/inventory.h"

namespace gpulock::gpu::inventory_detail {

/// The token after the first `key` in `s`: leading white space skipped, up to the first of
/// `stops`; empty when `key` is not there.
[[nodiscard]] inline std::string_view token_after(std::string_view s, std::string_view key,
                                                  std::string_view stops = " \t") {
  auto p = s.find(key);
  if (p == std::string_view::npos) return {};
  auto rest = core::trim_left(s.substr(p + key.size()));
  return rest.substr(0, rest.find_first_of(stops));
}

/// Bounds on untrusted text (an inventory of 10,000 nodes is about 60 MB).
inline constexpr std::size_t kMaxText = std::size_t{1} << 30;
inline constexpr std::size_t kMaxHosts = 200000;
inline constexpr std::size_t kMaxGpusPerHost = 256;
inline constexpr std::size_t kMaxField = 4096;

struct RawGpu {
  std::string name;
  std::string cc;  ///< stated compute capability ("8.0"), else empty
  bool mig = false;
};

struct RawHost {
  std::string name;
  std::size_t line = 0;
  std::string driver;        ///< the driver version as printed, else empty
  std::string ceiling;       ///< the stated CUDA ceiling as printed ("12.4", "N/A"), else empty
  std::string ceiling_from;  ///< where the ceiling was stated ("CUDA Version")
  std::string smi_version;   ///< the table's `NVIDIA-SMI` number (WSL when it differs)
  std::optional<Platform> platform;
  std::vector<RawGpu> gpus;
  bool gpus_listed = false;  ///< the source lists GPUs (an empty list then means none)
  bool wsl = false;
  std::string l4t;  ///< Jetson: the L4T release in place of a driver version
  std::vector<std::pair<std::string, std::string>> labels;  ///< kubectl: the GPU and arch labels
  bool labelled = false;
  std::vector<std::string> warnings;
  std::vector<std::string> unknown;  ///< facts the text lacks, named by the reader
  /// The source states there is no NVIDIA driver (probe's `no-driver`): the fact as read.
  std::string no_gpu_read;
  /// `fleet probe`: the node's probe gave no document, and why (a statement about the node,
  /// though not a fact of its GPUs: the host is kept and the error shown).
  std::string probe_error;
  std::vector<std::string> features;  ///< Slurm: the node's ActiveFeatures
  bool featured = false;              ///< the source is Slurm's (features known, maybe none)
};

/// The file's stem ("inventory/node-a.txt" -> "node-a").
[[nodiscard]] std::string stem_of(std::string_view display_name);

/// The lines of `text` (without "\r"), each with its 1-based number; at most kMaxText bytes.
struct Line {
  std::string_view text;
  std::size_t number = 0;
};
[[nodiscard]] std::vector<Line> split_lines(std::string_view text);

/// Does `s` contain `needle`, ignoring ASCII case?
[[nodiscard]] bool icontains(std::string_view s, std::string_view needle) noexcept;

/// A driver version at the start of `s` ("550.54.15", "550.135"), else empty.
[[nodiscard]] std::string_view leading_version(std::string_view s) noexcept;

/// "amd64" -> x86_64, "arm64" -> aarch64; the name otherwise.
[[nodiscard]] std::string cpu_of(std::string_view arch);

/// Turns what a reader found into a host.
[[nodiscard]] InventoryHost finish_host(RawHost raw);

// The readers: hosts found, an Error when the text is not of the format at all.
[[nodiscard]] core::Result<std::vector<RawHost>> read_kubectl_json(std::string_view text,
                                                                   std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_smi_table(std::string_view text, std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_smi_csv(std::string_view text, std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_proc(std::string_view text, std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_smi_xml(std::string_view text, std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_smi_list(std::string_view text, std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_kubectl_describe(std::string_view text,
                                                         std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_probe_json(std::string_view text, std::string_view stem);
/// Is `text` exactly one complete JSON object (white space around it allowed) whose `schema` is
/// `schema`? Through the reader of read_probe_json, with its bounds.
[[nodiscard]] bool one_json_document(std::string_view text, std::string_view schema);
[[nodiscard]] std::vector<RawHost> read_smi_query(std::string_view text, std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_collect_env(std::string_view text, std::string_view stem);
[[nodiscard]] std::vector<RawHost> read_slurm(std::string_view text, std::string_view stem,
                                              const FeatureMap* features);

}  // namespace gpulock::gpu::inventory_detail

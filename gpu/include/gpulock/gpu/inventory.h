#pragma once
/// @file
/// A team's machine inventory as gpulock reads it (issue 45, `gpulock fleet check`): the text
/// people already have (kubectl node JSON with GPU Feature Discovery labels, the default
/// `nvidia-smi` table, `nvidia-smi --query-gpu` CSV, `/proc/driver/nvidia/version` with
/// `gpus/*/information`, `nvidia-smi -q -x` XML, `nvidia-smi -L`) turned into one
/// `gpu::Machine` per host, for `gpu::lock_fits`. Each host says which facts were read, which
/// were derived from NVIDIA's tables, and which are unknown. Format facts:
/// shared/data/inventory-formats.md; product names: shared/data/gpu-names.md. Pure: the caller
/// gives the text, nothing here opens a file. Every size and loop is bounded; untrusted text
/// never crashes it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/machine.h"

namespace gpulock::gpu {

/// The formats `parse_inventory` reads.
enum class InventoryFormat : std::uint8_t {
  Auto,             ///< detected from the content
  KubectlJson,      ///< `kubectl get nodes -o json` (or one node's `kubectl get node N -o json`)
  SmiTable,         ///< the default `nvidia-smi` table, drivers 450 to 610
  SmiCsv,           ///< `nvidia-smi --query-gpu=... --format=csv[,noheader]`
  Proc,             ///< `/proc/driver/nvidia/version` (+ `/proc/driver/nvidia/gpus/*/information`)
  SmiXml,           ///< `nvidia-smi -q -x`
  SmiList,          ///< `nvidia-smi -L`
  KubectlDescribe,  ///< `kubectl describe node(s)` (the Labels: block)
  ProbeJson,        ///< `gpulock probe --machine --json` (one or several documents)
  SmiQuery,         ///< `nvidia-smi -q`
  CollectEnv,       ///< PyTorch's `python -m torch.utils.collect_env`
  Slurm,            ///< Slurm's `scontrol show node -o` (Arch, Gres=gpu:TYPE:N, ActiveFeatures)
};

/// "kubectl-json", "nvidia-smi", "csv", "proc", "xml", "nvidia-smi-L", "kubectl-describe",
/// "probe-json", "nvidia-smi-q", "collect-env", "slurm" ("auto" for Auto).
[[nodiscard]] std::string_view inventory_format_name(InventoryFormat format) noexcept;

/// `--inventory-format`: one of the names above. Errors: Usage, with the names as a hint.
[[nodiscard]] core::Result<InventoryFormat> parse_inventory_format(std::string_view text);

/// One GPU of a host.
struct InventoryGpu {
  std::string name;                     ///< as the source prints it ("NVIDIA A100-SXM4-80GB")
  std::optional<ComputeCapability> cc;  ///< stated, or from the name; nullopt: unknown
  bool cc_stated = false;               ///< read from the source (CSV compute_cap, GFD labels)
  bool mig = false;                     ///< MIG is on for it
};

/// One host of an inventory.
struct InventoryHost {
  std::string name;      ///< the source's host name, else the file's stem
  std::size_t line = 0;  ///< where it starts in the text (1-based)
  Machine machine;       ///< what `gpu::lock_fits` is given
  std::vector<InventoryGpu> gpus;
  std::vector<std::string> read;      ///< facts read ("driver 550.54.15", "CUDA ceiling 12.4")
  std::vector<std::string> derived;   ///< facts derived ("CUDA ceiling 12.4 (R550's, ...)")
  std::vector<std::string> unknown;   ///< facts the text lacks ("GPU compute capability")
  std::vector<std::string> warnings;  ///< what the reader should know (WSL, MIG, cut text)
  bool wsl = false;                   ///< the Windows driver under WSL: no Linux minimums
  std::string l4t;                    ///< Jetson: the L4T release /proc shows ("35.3.1")
  /// Kubernetes sources: the node's `nvidia.com/*` and `kubernetes.io/arch` labels, for a
  /// placement's selector to be checked against (`fleet place`).
  std::vector<std::pair<std::string, std::string>> labels;
  bool labelled = false;  ///< the source has node labels (kubectl), even if none of those
  /// Slurm sources: the node's `ActiveFeatures`, for a `--constraint` to be checked against.
  std::vector<std::string> features;
  bool featured = false;  ///< the source is Slurm's (`scontrol show node`), even with none
};

/// What `parse_inventory` read.
struct Inventory {
  InventoryFormat format = InventoryFormat::Auto;  ///< the format read (never Auto)
  std::vector<InventoryHost> hosts;
};

/// The format of `text`, from its content; Auto when none is recognised.
[[nodiscard]] InventoryFormat detect_inventory_format(std::string_view text);

/// Reads `text` (named `display_name` in errors; its stem names a host the source does not
/// name). Errors (InvalidInput, located in `display_name`): no fact at all can be read, the
/// format is not recognised, `kubectl -o yaml` (with a hint to use `-o json`). A text cut off
/// part way is read as far as it is complete, the facts it lacks named in `unknown`.
struct FeatureMap;
[[nodiscard]] core::Result<Inventory> parse_inventory(
    std::string_view text, std::string_view display_name,
    InventoryFormat format = InventoryFormat::Auto, const FeatureMap* features = nullptr);

/// One data row of `nvidia-smi --query-gpu=... --format=csv[,noheader]` output: the fields
/// by the header's names, as printed (quotes and spaces around them dropped, "[N/A]" kept).
struct SmiCsvRow {
  std::string_view text;  ///< the whole line (a view into the text read)
  std::size_t line = 0;   ///< 1-based
  std::string host, driver, name, cc, uuid;
};

/// The rows of a `--query-gpu` CSV, read by one reader for `fleet` (any columns, a header or
/// none, other text around it) and `probe --machine` (its own query, nothing else). `columns`:
/// the query's field names (`driver_version,name,compute_cap,uuid`) when the text has no header;
/// empty: a header line is looked for, else each row's columns are inferred from its values.
/// A row with more fields than its columns has a comma in its name (nvidia-smi does not quote):
/// the extra fields join the name. Every other non-blank line (a prompt, the command, a line of
/// another text, a row cut off) is listed in `other_lines`.
struct SmiCsv {
  std::vector<SmiCsvRow> rows;
  std::vector<std::pair<std::size_t, std::string_view>> other_lines;  ///< (line number, text)
};
[[nodiscard]] SmiCsv read_smi_csv_rows(std::string_view text,
                                       const std::vector<std::string_view>& columns = {});

/// A site's Slurm names (`fleet --slurm-features FILE`), one per line: `NAME KIND=VALUE`, where
/// NAME is an `ActiveFeatures` word or a `Gres=gpu:TYPE` type and KIND is `driver` (a driver
/// version), `ceiling` (a CUDA ceiling) or `gpu` (the product name a Gres type stands for);
/// `#` starts a comment. "cuda12 ceiling=12.4", "a100 gpu=NVIDIA A100-SXM4-80GB".
struct FeatureMap {
  struct Entry {
    std::string name, kind, value;
  };
  std::vector<Entry> entries;
  /// The value of `kind` for `name`, else empty.
  [[nodiscard]] std::string_view find(std::string_view name, std::string_view kind) const;
};
/// Errors: InvalidInput naming `where` and the line (not `NAME KIND=VALUE`, an unknown KIND, a
/// value its parser refuses).
[[nodiscard]] core::Result<FeatureMap> parse_feature_map(std::string_view text,
                                                         std::string_view where);

/// `gpulock fleet probe` (issue 45 item 4): the inventory it gathers is a `probe-json` text, one
/// entry per node, each a JSON object at the start of a line: the node's own `gpulock probe
/// --machine --json` document with `node` (its Slurm name) and `lock_probes` written first, or,
/// for a node whose probe gave no document, `{"schema": "gpulock.machine/1", "node": ...,
/// "probe_error": ...}`. parse_inventory names each host by `node` and reports `probe_error`.
struct ProbeEntry {
  /// `gpulock probe --lock L --json` on the node: its exit status (0: the environment matches
  /// the lock, 1: a verdict line fails, other: an error) and a line saying so.
  struct LockProbe {
    std::string lock;
    int exit = 0;
    std::string result;
  };
  std::string node;
  std::string document;  ///< the node's output, checked by check_probe_document; empty: `error`
  std::string error;     ///< why the node has no document
  std::vector<LockProbe> locks;
};

/// Checks a node's `probe --machine --json` output before it is gathered: exactly one complete
/// `gpulock.machine/1` object (nothing before or after it) that parse_inventory reads as one
/// host, at most 1 MiB. Errors: InvalidInput located at `node`, saying what is wrong.
[[nodiscard]] core::Status check_probe_document(std::string_view text, std::string_view node);

/// The failed verdict lines of a node's `gpulock probe --lock L --json` document, as "id:
/// message", in the document's order; empty when it has none or is not one.
[[nodiscard]] std::vector<std::string> lock_probe_failures(std::string_view text);

/// The entry's text, ending in a newline; the entries of a fleet are concatenated. Text read
/// from the node (the error, a lock probe's result) is kept to printable ASCII and bounded.
[[nodiscard]] std::string probe_entry_text(const ProbeEntry& entry);

/// The compute capability of a product name as `nvidia-smi` or GFD prints it ("NVIDIA
/// A100-SXM4-80GB", "Tesla-T4", "NVIDIA RTX PRO 6000 Blac..."), through the table of
/// shared/data/gpu-names.md; nullopt for a name it does not match (or matches ambiguously).
[[nodiscard]] std::optional<ComputeCapability> compute_capability_of_name(std::string_view name);

/// The kernel module line of `/proc/driver/nvidia/version` (the first in `text`): proprietary
/// ("NVIDIA UNIX x86_64 Kernel Module  580.173.02 ...") or open ("NVIDIA UNIX Open Kernel Module
/// for aarch64  580.142 ..."). One reader for `fleet` and `probe --machine` (issue 45 item 5).
struct ProcModule {
  std::optional<DriverVersion> driver;  ///< nullopt: no version, or a Jetson's L4T release
  std::string cpu;                      ///< "x86_64", "aarch64"; empty when not said
  std::string l4t;                      ///< Jetson: the L4T release shown in place of a driver
};
/// nullopt when `text` has no kernel module line.
[[nodiscard]] std::optional<ProcModule> read_proc_module(std::string_view text);

/// A driver's CUDA ceiling derived from its branch (inventory-formats.md's branch table, over
/// cuda_versions.h's). `newer_than_table`: the branch is newer than every row, `ceiling` is
/// then the newest known ceiling (what the fit assumes at least).
struct DerivedCeiling {
  std::optional<CudaVersion> ceiling;
  bool newer_than_table = false;
};
[[nodiscard]] DerivedCeiling ceiling_of_branch(const DriverVersion& driver);

}  // namespace gpulock::gpu

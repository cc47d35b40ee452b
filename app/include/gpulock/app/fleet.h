#pragma once
/// @file
/// `gpulock fleet check` (issue 45): which lock runs on which node of an inventory. The
/// inventory's files are read here (a file, every file of a directory, or standard input for
/// `-`), parsed by gpu::parse_inventory, and each node is judged against each lock by
/// gpu::lock_fits, the rule `install` uses. A result, never printed.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/fit.h"
#include "gpulock/gpu/inventory.h"

namespace gpulock::app {

struct FleetRequest {
  std::vector<std::string> locks;        ///< lock files; empty: ./pylock.toml and ./pylock.*.toml
  std::vector<std::string> inventories;  ///< files, directories, "-" (standard input)
  gpu::InventoryFormat format = gpu::InventoryFormat::Auto;  ///< `--inventory-format`
  /// `--all-targets`: the locks of the targets declared here (gpulock.toml or pyproject.toml),
  /// `pylock.<name>.toml` each, after those of `locks`.
  bool all_targets = false;
  std::string slurm_features;  ///< `--slurm-features`: a gpu::FeatureMap file, else empty
};

/// One lock of the check.
struct FleetLock {
  std::string path;
  std::string name;  ///< its declared target, else the file name
  bool gpu = false;  ///< it has CUDA builds
  std::optional<gpu::CudaVersion> cuda;
  std::vector<std::size_t> nodes;  ///< the nodes it runs on (indexes into FleetResult::nodes)
};

/// One lock against one node.
struct FleetFit {
  bool fits = false;
  std::string why;                   ///< the first reason it does not fit, in fleet's words
  std::vector<std::string> reasons;  ///< every reason
  std::vector<std::string> unknown;  ///< what the fit assumed (gpu::Fit::unknown)
};

/// One node of the inventory.
struct FleetNode {
  std::string source;  ///< the file it was read from ("-" for standard input)
  std::string format;  ///< the format it was read as (gpu::inventory_format_name)
  gpu::InventoryHost host;
  std::vector<FleetFit> fits;       ///< one per lock, in FleetResult::locks order
  std::optional<std::size_t> best;  ///< the lock to run: the fitting CUDA lock of the highest CUDA,
                                    ///< else the first CPU lock
};

struct FleetResult {
  std::vector<FleetLock> locks;
  std::vector<gpu::LockFacts> facts;  ///< each lock's, as the fit read them
  std::vector<FleetNode> nodes;
  std::vector<std::string> warnings;  ///< files of a directory that were skipped, and why
};

/// One expression of a Kubernetes node selector term (`In` or `Gt`).
struct SelectorExpression {
  std::string key;
  std::string op;  ///< "In", "Gt"
  std::vector<std::string> values;
};

/// `fleet place --emit k8s` (issue 45 item 3): a lock's required nodeAffinity over the GFD labels
/// (terms ORed, expressions ANDed), checked against the inventory's labelled nodes.
struct LockPlacement {
  std::vector<std::vector<SelectorExpression>> terms;  ///< empty with `problem` set
  std::string problem;                                 ///< why no selector could be made
  std::vector<std::string> extra;       ///< nodes it selects that the lock does not fit
  std::vector<std::string> missing;     ///< nodes the lock fits that it does not select
  std::vector<std::string> unlabelled;  ///< nodes without labels (not from kubectl): not checked
  [[nodiscard]] bool exact() const { return problem.empty() && extra.empty() && missing.empty(); }
};

/// A selector per lock (in `result.locks` order), from the lock's platforms, CUDA and the
/// compute capabilities among the inventory's nodes it has kernels for.
[[nodiscard]] std::vector<LockPlacement> place_k8s(const FleetResult& result);

/// Does a node's labels satisfy a term?
[[nodiscard]] bool selects(const std::vector<SelectorExpression>& term,
                           const std::vector<std::pair<std::string, std::string>>& labels);

/// `fleet place --emit slurm` (issue 45 item 3): a lock's `--constraint` over the ActiveFeatures
/// of the inventory's Slurm nodes (`scontrol show node -o`) when some select exactly the nodes
/// the lock fits, checked against every Slurm node of the inventory; else its `--nodelist`.
struct SlurmPlacement {
  std::vector<std::string> nodelist;  ///< the nodes the lock fits (every source)
  std::string constraint;             ///< "a100", "r550|r580" or "a100&ib"; empty: none
  std::string why_not;                ///< why there is no constraint (empty with one)
  std::vector<std::string> extra;     ///< Slurm nodes it selects that the lock does not fit
  std::vector<std::string> missing;   ///< nodes the lock fits that it does not select
  [[nodiscard]] bool exact() const { return extra.empty() && missing.empty(); }
};

/// A placement per lock (in `result.locks` order): one feature, else the fewest features ORed
/// that only fitting nodes carry, else ANDed that every fitting node carries; never a guess.
[[nodiscard]] std::vector<SlurmPlacement> place_slurm(const FleetResult& result);

/// Does a node with `features` satisfy `constraint` (features joined by '|' or by '&', not
/// both)?
[[nodiscard]] bool satisfies(std::string_view constraint, const std::vector<std::string>& features);

/// Reads the locks and the inventory and judges every node. Errors: a lock or an inventory file
/// that does not read (InvalidInput/InvalidLockfile/Io naming the file; a directory's files
/// that hold no inventory are skipped with a warning, but a directory with none is an error),
/// no lock found (Usage).
[[nodiscard]] core::Result<FleetResult> fleet_check(const FleetRequest& request);

}  // namespace gpulock::app

#pragma once
/// @file
/// `gpulock fleet check` (issue 45): which lock runs on which node of an inventory. The
/// inventory's files are read here (a file, every file of a directory, or standard input for
/// `-`), parsed by gpu::parse_inventory, and each node is judged against each lock by
/// gpu::lock_fits, the rule `install` uses. A result, never printed.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/inventory.h"

namespace gpulock::app {

struct FleetRequest {
  std::vector<std::string> locks;        ///< lock files; empty: ./pylock.toml and ./pylock.*.toml
  std::vector<std::string> inventories;  ///< files, directories, "-" (standard input)
  gpu::InventoryFormat format = gpu::InventoryFormat::Auto;  ///< `--inventory-format`
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
  std::vector<FleetNode> nodes;
  std::vector<std::string> warnings;  ///< files of a directory that were skipped, and why
};

/// Reads the locks and the inventory and judges every node. Errors: a lock or an inventory file
/// that does not read (InvalidInput/InvalidLockfile/Io naming the file; a directory's files
/// that hold no inventory are skipped with a warning, but a directory with none is an error),
/// no lock found (Usage).
[[nodiscard]] core::Result<FleetResult> fleet_check(const FleetRequest& request);

}  // namespace gpulock::app

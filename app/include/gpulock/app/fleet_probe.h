#pragma once
/// @file
/// `gpulock fleet probe --slurm` (issue 45 item 4): one Slurm job array, a task pinned to each
/// node, runs `gpulock probe --machine --json` (and `probe --lock L --json` per lock) there; the
/// results are gathered as one `probe-json` inventory (gpu::ProbeEntry: each node named, a node
/// whose task failed kept with its error) that `fleet check` reads. A result, never printed.
///
/// The array is submitted held (`sbatch --hold --array=0-N`), each task is pinned to its node
/// (`scontrol update JobId=J_I ReqNodeList=NODE`), the array released, and `squeue` polled until
/// it is gone or the timeout passes (then `scancel`). The tasks write into a private directory
/// made under `work_dir`, which the nodes must see (a shared file system); what they write is
/// read back bounded and checked (gpu::check_probe_document), and the task's own node name is
/// compared with the node it was pinned to.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/gpu/inventory.h"

namespace gpulock::app {

struct FleetProbeRequest {
  std::string gpulock;  ///< its path on the nodes; empty: this binary
  /// Copy the binary (`gpulock`, else this one) to each node first, with `sbcast` in an
  /// allocation of the nodes made from here (`salloc ... sbcast`), to a node-local path the
  /// tasks run and remove: for nodes that do not have gpulock, or where it should not run
  /// from a shared file system.
  bool sbcast = false;
  std::string sbcast_dir = "/tmp";       ///< where on the nodes the copy goes
  std::vector<std::string> nodes;        ///< Slurm host lists (`gpu[01-04],cpu01`); empty: all
  std::vector<std::string> locks;        ///< `probe --lock L --json` on each node, per lock
  std::vector<std::string> sbatch_args;  ///< given to sbatch after gpulock's own (after `--`)
  std::string work_dir;                  ///< where the private directory is made; empty: "."
  std::chrono::seconds timeout{600};     ///< from the submission to the last task's end
  std::string output;  ///< the gathered inventory is written here (every node, failed ones too)
};

struct FleetProbeResult {
  std::string job;                     ///< the array's job id
  std::vector<gpu::ProbeEntry> nodes;  ///< one per node, in the order the nodes were listed
  std::string inventory;               ///< the entries' text (gpu::probe_entry_text), joined
  bool timed_out = false;              ///< the timeout passed: the array was cancelled
  /// Every node gave a document and every lock probe exited 0.
  [[nodiscard]] bool all_ok() const;
};

/// Progress for people ("submitted job 42: 3 tasks"), called as each step starts.
using FleetProbeProgress = std::function<void(std::string_view)>;

/// Submits, waits and gathers; a node sinfo shows down, drained or not responding gets no task
/// and an entry saying so. Errors: Usage (no node, a node sinfo does not list, a node name
/// gpulock does not submit to),
/// Io (a Slurm command cannot be run or fails: sinfo, sbatch, scontrol, squeue; the private
/// directory cannot be made; `output` cannot be written). A node whose task failed is not an error:
/// its entry says why.
[[nodiscard]] core::Result<FleetProbeResult> fleet_probe(const FleetProbeRequest& request,
                                                         const FleetProbeProgress& progress = {});

/// The array's job script (`#!/bin/sh`): task I writes I.node (the node it ran on),
/// I.machine.{json,err,rc} and, per lock K, I.lock.K.{json,err,rc} into `dir`. Every path is
/// shell-quoted. `remove_gpulock`: the task removes `gpulock` when done (the copy --sbcast
/// made). Pure.
[[nodiscard]] std::string probe_job_script(const std::string& gpulock,
                                           const std::vector<std::string>& locks,
                                           const std::string& dir, bool remove_gpulock = false);

/// Is `name` a node name gpulock submits to (letters, digits, '.', '_', '-'; at most 255)?
[[nodiscard]] bool valid_node_name(std::string_view name) noexcept;

}  // namespace gpulock::app

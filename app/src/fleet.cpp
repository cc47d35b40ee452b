// `gpulock fleet check` (app/fleet.h, issue 45): the inventory's files read, each node judged
// against each lock by gpu::lock_fits, the best lock per node and the nodes per lock.
#include "gpulock/app/fleet.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "gpulock/app/targets.h"
#include "gpulock/gpu/fit.h"
#include "gpulock/lock/gpu_facts.h"
#include "gpulock/lock/lockfile.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;

constexpr std::size_t kMaxInventoryBytes = std::size_t{1} << 30;
constexpr std::size_t kMaxDirectoryFiles = 100000;

core::Result<std::string> read_inventory_file(const std::string& path) {
  if (path == "-") {
    std::string text;
    char buf[65536];
    while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(std::cin.gcount()));
      if (text.size() > kMaxInventoryBytes)
        return core::fail_at(ErrorCode::InvalidInput, "standard input is over 1 GiB", "-");
    }
    return text;
  }
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec)
    return core::fail_at(ErrorCode::Io, fmt::format("cannot read file: {}", ec.message()), path);
  if (size > kMaxInventoryBytes)
    return core::fail_at(ErrorCode::InvalidInput,
                         fmt::format("file is {} bytes; inventories over 1 GiB are refused", size),
                         path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::fail_at(ErrorCode::Io, "cannot open file", path);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// The files an inventory source names: itself, or a directory's regular files, sorted.
core::Result<std::vector<std::string>> inventory_files(const std::string& source, bool& is_dir) {
  is_dir = false;
  if (source == "-") return std::vector<std::string>{source};
  std::error_code ec;
  if (!fs::is_directory(source, ec)) return std::vector<std::string>{source};
  is_dir = true;
  std::vector<std::string> files;
  for (fs::directory_iterator it(source, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;
    const auto name = it->path().filename().string();
    if (name.starts_with('.') || name == "README.md") continue;
    files.push_back(it->path().string());
    if (files.size() > kMaxDirectoryFiles) break;
  }
  if (ec)
    return core::fail_at(ErrorCode::Io, fmt::format("cannot list directory: {}", ec.message()),
                         source);
  std::sort(files.begin(), files.end());
  return files;
}

core::Status read_inventory(const FleetRequest& request, FleetResult& result) {
  std::optional<gpu::FeatureMap> features;
  if (!request.slurm_features.empty()) {
    auto text = read_inventory_file(request.slurm_features);
    if (!text) return std::unexpected(text.error());
    auto map = gpu::parse_feature_map(*text, request.slurm_features);
    if (!map) return std::unexpected(map.error());
    features = std::move(*map);
  }
  for (const auto& source : request.inventories) {
    bool is_dir = false;
    auto files = inventory_files(source, is_dir);
    if (!files) return std::unexpected(files.error());
    std::size_t read = 0;
    for (const auto& file : *files) {
      auto text = read_inventory_file(file);
      if (!text) return std::unexpected(text.error());
      auto inv = gpu::parse_inventory(*text, file, request.format, features ? &*features : nullptr);
      if (!inv) {
        if (!is_dir) return std::unexpected(inv.error());
        result.warnings.push_back(fmt::format("{}: skipped: {}", file, inv.error().message));
        continue;
      }
      ++read;
      for (auto& host : inv->hosts) {
        FleetNode node;
        node.source = file;
        node.format = std::string(gpu::inventory_format_name(inv->format));
        node.host = std::move(host);
        result.nodes.push_back(std::move(node));
      }
    }
    if (is_dir && read == 0)
      return core::fail_at(ErrorCode::InvalidInput,
                           "no inventory file in this directory can be read", source);
  }
  return {};
}

std::vector<std::string> default_locks() {
  std::vector<std::string> locks;
  std::error_code ec;
  for (fs::directory_iterator it(".", ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name == "pylock.toml" || (name.starts_with("pylock.") && name.ends_with(".toml")))
      locks.push_back(name);
  }
  std::sort(locks.begin(), locks.end());
  return locks;
}

std::string driver_words(const gpu::InventoryHost& h) {
  if (h.wsl) return "the Windows driver (WSL)";
  if (h.machine.driver) return fmt::format("driver {}", h.machine.driver->to_string());
  return "the driver";
}

// A reason of the fit rule in fleet's words (the node's facts, not this machine's).
std::string reason_words(const gpu::FitReason& r, const gpu::LockFacts& lock,
                         const gpu::InventoryHost& h) {
  const auto cuda = lock.cuda ? lock.cuda->to_string() : std::string("CUDA builds");
  switch (r.problem) {
    case gpu::FitProblem::NoDriver:
      return h.machine.no_gpu ? fmt::format("needs CUDA {} and the node has no NVIDIA GPU", cuda)
                              : fmt::format("needs CUDA {} and the node's driver is unknown", cuda);
    case gpu::FitProblem::DriverBelow:
      if (lock.cuda && h.machine.ceiling &&
          !gpu::ceiling_allows(*h.machine.ceiling, *lock.cuda, lock.compat))
        return fmt::format("{} supports CUDA <= {}, the lock needs {}", driver_words(h),
                           h.machine.ceiling->to_string(), cuda);
      return fmt::format("{} is older than the lock's minimum {}", driver_words(h), r.expected);
    case gpu::FitProblem::CeilingBelow:
      return fmt::format("{} supports CUDA <= {}, the lock needs {}", driver_words(h), r.actual,
                         r.expected);
    case gpu::FitProblem::Platform:
    case gpu::FitProblem::CudnnArch:
    case gpu::FitProblem::NoKernels:
      break;
  }
  // The rule's sentence speaks of "this machine": here it is the node.
  std::string text = gpu::reason_text(r);
  if (auto at = text.find("this machine"); at != std::string::npos)
    text.replace(at, 12, "the node");
  return text;
}

FleetFit judge(const gpu::LockFacts& lock_facts, const gpu::InventoryHost& h) {
  gpu::LockFacts facts = lock_facts;
  if (facts.cpu.empty() && h.machine.platform) facts.cpu = h.machine.platform->cpu;
  const gpu::Fit fit = gpu::lock_fits(facts, h.machine);
  FleetFit out;
  out.fits = fit.fits;
  out.unknown = fit.unknown;
  for (const auto& r : fit.reasons)
    out.reasons.push_back(reason_words(r, facts, h));
  if (!out.reasons.empty()) out.why = out.reasons.front();
  return out;
}

void pick_best(FleetNode& node, const std::vector<FleetLock>& locks) {
  std::optional<std::size_t> gpu_best, cpu_best;
  for (std::size_t i = 0; i < locks.size(); ++i) {
    if (!node.fits[i].fits) continue;
    if (!locks[i].gpu) {
      if (!cpu_best) cpu_best = i;
    } else if (!gpu_best || locks[*gpu_best].cuda < locks[i].cuda) {
      gpu_best = i;
    }
  }
  node.best = gpu_best ? gpu_best : cpu_best;
}

}  // namespace

core::Result<FleetResult> fleet_check(const FleetRequest& request) {
  FleetResult result;
  std::vector<std::string> paths = request.locks;
  if (request.all_targets) {
    auto declared = read_targets("", ".");
    if (!declared) return std::unexpected(declared.error());
    for (const auto& t : declared->targets)
      paths.push_back(fmt::format("pylock.{}.toml", t.name));
  } else if (paths.empty()) {
    paths = default_locks();
  }
  if (paths.empty())
    return std::unexpected(
        core::make_error(ErrorCode::Usage, "no lock given and no pylock.toml here")
            .with_hint("name each lock with --lock (e.g. --lock pylock.toml)"));
  if (request.inventories.empty())
    return std::unexpected(
        core::make_error(ErrorCode::Usage, "no inventory given")
            .with_hint("give --inventory FILE, e.g. the output of kubectl get nodes -o json"));
  std::vector<gpu::LockFacts> facts;
  for (const auto& path : paths) {
    auto file = lock::read_lock_file(path);
    if (!file) return std::unexpected(file.error());
    FleetLock l;
    l.path = path;
    l.name = fs::path(path).filename().string();
    const auto& tool = file->lock.gpulock;
    if (tool && tool->target && tool->target->name) l.name = *tool->target->name;
    facts.push_back(lock::gpu_facts(file->lock));
    l.gpu = facts.back().cuda_builds;
    l.cuda = facts.back().cuda;
    result.locks.push_back(std::move(l));
  }
  result.facts = facts;
  if (auto st = read_inventory(request, result); !st) return std::unexpected(st.error());
  for (std::size_t n = 0; n < result.nodes.size(); ++n) {
    auto& node = result.nodes[n];
    for (std::size_t i = 0; i < facts.size(); ++i) {
      node.fits.push_back(judge(facts[i], node.host));
      if (node.fits.back().fits) result.locks[i].nodes.push_back(n);
    }
    pick_best(node, result.locks);
  }
  return result;
}

}  // namespace gpulock::app

// `gpulock fleet probe --slurm` (app/fleet_probe.h, issue 45 item 4): a held job array, each
// task pinned to its node, released, polled to its end, and what each task wrote gathered as one
// probe-json inventory (gpu::ProbeEntry), every node kept, a failed one with its error.
#include "gpulock/app/fleet_probe.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "gpulock/core/command_line.h"
#include "gpulock/core/text.h"
#include "gpulock/sys/atomic_file.h"
#include "gpulock/sys/paths.h"
#include "gpulock/sys/process.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;

constexpr std::size_t kMaxNodes = 10000;
constexpr std::size_t kMaxDocument = (std::size_t{1} << 20) + 1;  // one byte over: "too big"
constexpr std::size_t kMaxSmallFile = 4096;
constexpr std::chrono::milliseconds kCommandTimeout{60'000};

// A Slurm command's stdout; Io when it cannot be run or exits non-zero (its stderr's last line).
core::Result<std::string> slurm(const std::vector<std::string>& argv) {
  sys::ProgramOptions options;
  options.timeout = kCommandTimeout;
  auto r = sys::run_program(argv, options);
  std::string line;
  for (const auto& w : argv)
    line += (line.empty() ? "" : " ") + core::shell_quote(w);
  if (!r)
    return std::unexpected(core::make_error(ErrorCode::Io, r.error().message)
                               .with_hint("fleet probe --slurm runs sinfo, sbatch, scontrol and "
                                          "squeue: run it where Slurm's commands are installed"));
  if (r->timed_out || r->exit_code != 0) {
    auto err = core::trim(r->err);
    if (auto nl = err.find_last_of('\n'); nl != std::string_view::npos) err = err.substr(nl + 1);
    return core::fail(
        ErrorCode::Io,
        fmt::format("{} {}: {}", line,
                    r->timed_out ? "timed out" : fmt::format("failed (exit {})", r->exit_code),
                    err.empty() ? std::string_view("no message") : err));
  }
  return std::move(r->out);
}

// The non-empty lines of a command's output, trimmed.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    auto t = core::trim(text.substr(0, nl));
    if (!t.empty()) out.emplace_back(t);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// The nodes: `sinfo -N -h -o %N` (a node of several partitions once), or each host list given
// expanded by `scontrol show hostnames`.
core::Result<std::vector<std::string>> list_nodes(const FleetProbeRequest& request) {
  std::vector<std::string> nodes;
  if (request.nodes.empty()) {
    auto out = slurm({"sinfo", "-N", "-h", "-o", "%N"});
    if (!out) return std::unexpected(out.error());
    nodes = words_of(*out);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  } else {
    std::set<std::string> seen;
    for (const auto& list : request.nodes) {
      auto out = slurm({"scontrol", "show", "hostnames", list});
      if (!out) return std::unexpected(out.error());
      for (auto& n : words_of(*out))
        if (seen.insert(n).second && nodes.size() <= kMaxNodes) nodes.push_back(std::move(n));
    }
  }
  if (nodes.empty())
    return std::unexpected(core::make_error(ErrorCode::Usage, "Slurm lists no node to probe")
                               .with_hint("name the nodes with --nodes LIST"));
  if (nodes.size() > kMaxNodes)
    return core::fail(ErrorCode::Usage,
                      fmt::format("{} nodes: at most {} are probed at once; give --nodes",
                                  nodes.size(), kMaxNodes));
  for (const auto& n : nodes)
    if (!valid_node_name(n))
      return core::fail(ErrorCode::Usage,
                        fmt::format("Slurm node name {} is not one gpulock submits to "
                                    "(letters, digits, '.', '_', '-')",
                                    core::quote_for_message(n)));
  return nodes;
}

// Why a node is not submitted to, from its `sinfo -N -o %t` state ("down*", "drain"); empty when
// it can run a task (idle, mix, alloc, powered down and the like: it waits for it).
std::string unusable(std::string_view state) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kDead{{
      {"down", "down"},
      {"drain", "drained"},
      {"drng", "draining"},
      {"fail", "failed"},
      {"failg", "failing"},
      {"futr", "a future node"},
      {"inval", "invalid"},
  }};
  std::string_view base = state;
  while (!base.empty() && std::string_view("*~#!%$@^-").find(base.back()) != std::string_view::npos)
    base.remove_suffix(1);
  for (const auto& [name, words] : kDead)
    if (base == name) return fmt::format("not submitted: sinfo shows it {} ({})", words, state);
  if (state.find('*') != std::string_view::npos)
    return fmt::format("not submitted: sinfo shows it not responding ({})", state);
  return {};
}

// A node as `sinfo -N -h -o "%N %P %t"` shows it: its state and partitions (a row for each).
struct NodeInfo {
  std::string state;
  std::set<std::string> partitions;
};

core::Result<std::map<std::string, NodeInfo>> node_infos() {
  auto out = slurm({"sinfo", "-N", "-h", "-o", "%N %P %t"});
  if (!out) return std::unexpected(out.error());
  std::map<std::string, NodeInfo> nodes;
  for (const auto& line : words_of(*out)) {
    const auto sp = line.find(' ');
    const auto sp2 = sp == std::string::npos ? sp : line.find(' ', sp + 1);
    if (sp2 == std::string::npos || nodes.size() >= kMaxNodes * 4) continue;
    auto& n = nodes[line.substr(0, sp)];
    std::string partition = line.substr(sp + 1, sp2 - sp - 1);
    if (!partition.empty() && partition.back() == '*') partition.pop_back();  // the default
    if (!partition.empty() && n.partitions.size() < 64)
      n.partitions.insert(partition.substr(0, 128));
    n.state = std::string(core::trim(std::string_view(line).substr(sp2 + 1))).substr(0, 32);
  }
  return nodes;
}

// Did the user choose the partition (`-p P`, `-pP`, `--partition P`, `--partition=P`)?
bool partition_given(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--partition" || a.starts_with("--partition=") ||
           (a.starts_with("-p") && !a.starts_with("--"));
  });
}

// This binary, as the nodes should run it.
core::Result<std::string> this_binary() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return std::unexpected(
        core::make_error(ErrorCode::Io, fmt::format("cannot read /proc/self/exe: {}", ec.message()))
            .with_hint("give the path gpulock has on the nodes with --gpulock PATH"));
  return p.string();
}

// A private directory (0700) under `parent`, removed when this goes out of scope.
class WorkDir {
 public:
  WorkDir() = default;
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  ~WorkDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  core::Status make(const std::string& parent) {
    std::string tmpl = (sys::absolute_path(parent.empty() ? fs::path(".") : fs::path(parent)) /
                        ".gpulock-fleet-probe.XXXXXX")
                           .lexically_normal()
                           .string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      return core::fail_at(ErrorCode::Io,
                           fmt::format("cannot make a private directory: {}", std::strerror(errno)),
                           parent.empty() ? std::string(".") : parent);
    path_ = tmpl;
    return {};
  }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// At most `limit` bytes of a file the nodes wrote; nullopt when it is not there.
std::optional<std::string> read_bounded(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::optional<int> exit_status(const std::string& path) {
  auto text = read_bounded(path, 32);
  if (!text) return std::nullopt;
  auto t = core::trim(*text);
  if (t.empty() || t.size() > 3 ||
      !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoi(std::string(t));
}

// The last non-empty line of what a command wrote to stderr on the node.
std::string last_line(const std::string& path) {
  auto text = read_bounded(path, kMaxSmallFile * 4);
  if (!text) return {};
  auto t = core::trim(*text);
  if (auto nl = t.find_last_of('\n'); nl != std::string_view::npos) t = t.substr(nl + 1);
  return std::string(core::trim(t));
}

core::Status write_script(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (!out || ec) return core::fail_at(ErrorCode::Io, "cannot write the job script", path);
  return {};
}

// A path in sbatch's --output, where '%' starts a replacement: "%%" is a '%'.
std::string sbatch_literal(std::string_view path) {
  std::string out;
  for (char c : path)
    out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

// The array as submitted: its job id, and for each task the error that kept it from its node
// (empty when it was pinned).
struct Submitted {
  std::string job;
  std::vector<std::string> pin_errors;
};

// Submits the array held to all the nodes' partitions (none given: sbatch's default or the
// user's), pins each task to its node and its node's partitions (a task that cannot be is
// cancelled, its error kept), releases it.
core::Result<Submitted> submit(const FleetProbeRequest& request,
                               const std::vector<std::string>& nodes,
                               const std::vector<std::string>& node_partitions,
                               const std::string& dir, const std::string& script,
                               const std::string& partitions) {
  std::vector<std::string> argv{"sbatch",
                                "--parsable",
                                "--hold",
                                fmt::format("--array=0-{}", nodes.size() - 1),
                                "--job-name=gpulock-fleet-probe",
                                "--nodes=1",
                                "--ntasks=1",
                                fmt::format("--output={}/%a.slurm.out", sbatch_literal(dir))};
  if (!partitions.empty()) argv.push_back("--partition=" + partitions);
  argv.insert(argv.end(), request.sbatch_args.begin(), request.sbatch_args.end());
  argv.push_back(script);
  auto out = slurm(argv);
  if (!out) return std::unexpected(out.error());
  // "42" or "42;cluster".
  Submitted sub;
  sub.job = std::string(core::trim(std::string_view(*out).substr(0, out->find(';'))));
  const auto& job = sub.job;
  if (job.empty() || job.size() > 20 ||
      !std::all_of(job.begin(), job.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return core::fail(ErrorCode::Io, fmt::format("sbatch --parsable printed {}, not a job id",
                                                 core::quote_for_message(*out)));
  sub.pin_errors.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto task = fmt::format("{}_{}", job, i);
    std::vector<std::string> update{"scontrol", "update", "JobId=" + task,
                                    fmt::format("ReqNodeList={}", nodes[i])};
    // A task left to several partitions waits for a scheduling pass of each (seconds to minutes).
    if (!partitions.empty() && !node_partitions[i].empty())
      update.push_back("Partition=" + node_partitions[i]);
    auto pinned = slurm(update);
    if (!pinned) {
      sub.pin_errors[i] =
          fmt::format("the task could not be pinned to the node: {}", pinned.error().message);
      (void)slurm({"scancel", task});
    }
  }
  if (auto released = slurm({"scontrol", "release", job}); !released) {
    (void)slurm({"scancel", job});
    return std::unexpected(released.error());
  }
  return sub;
}

// Pending reasons of a task that Slurm will never start as submitted (its node is not in the
// partition, the account or QOS refuses it).
constexpr std::array<std::string_view, 7> kNever{
    "BadConstraints", "PartitionConfig",   "PartitionNodeLimit", "InvalidAccount",
    "InvalidQOS",     "AccountNotAllowed", "QOSNotAllowed"};
constexpr std::string_view kNeverRuns = ": Slurm will not start it as submitted, cancelled";

// Polls squeue until the array is gone or the deadline passes (then cancels it); a task pending
// for a reason of kNever is cancelled at once. The last state seen of each task ("PENDING
// (ReqNodeNotAvail)"), by task index.
core::Result<std::map<std::size_t, std::string>> wait_for(const std::string& job,
                                                          std::chrono::seconds timeout,
                                                          bool& timed_out) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + timeout;
  std::map<std::size_t, std::string> states;
  std::chrono::milliseconds pause{250};
  int failures = 0;
  for (;;) {
    auto out = slurm({"squeue", "-h", "-r", "-j", job, "-o", "%K %P %T %r"});
    if (!out) {
      // A job that has left the controller's memory is "Invalid job id specified".
      if (out.error().message.find("Invalid job id") != std::string::npos) break;
      if (++failures >= 3) return std::unexpected(out.error());
    } else {
      failures = 0;
      const auto lines = words_of(*out);
      if (lines.empty()) break;
      for (const auto& l : lines) {
        auto sp = l.find(' ');
        const auto id = l.substr(0, sp);
        if (sp == std::string::npos || id.empty() || id.size() > 6 ||
            !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
          continue;
        auto rest = core::trim(std::string_view(l).substr(sp + 1));
        // The partitions it may run in: with several, a pending reason may be one partition's.
        const bool one_partition = rest.substr(0, rest.find(' ')).find(',') == std::string::npos;
        rest = core::trim_left(rest.substr(std::min(rest.size(), rest.find(' '))));
        auto sp2 = rest.find(' ');
        std::string state(rest.substr(0, sp2));
        const auto reason =
            sp2 == std::string_view::npos ? std::string_view() : core::trim(rest.substr(sp2 + 1));
        if (!reason.empty() && reason != "None") state += fmt::format(" ({})", reason);
        auto& seen = states[std::stoul(id)];
        if (seen.ends_with(kNeverRuns)) continue;
        // A task Slurm says twice it will never start in its one partition is cancelled now, not
        // at --timeout.
        const bool never = one_partition && state.starts_with("PENDING") &&
                           std::find(kNever.begin(), kNever.end(), reason) != kNever.end();
        const bool again = never && seen == state.substr(0, 200);
        seen = state.substr(0, 200);
        if (again) {
          (void)slurm({"scancel", fmt::format("{}_{}", job, id)});
          seen += kNeverRuns;
        }
      }
    }
    if (clock::now() >= deadline) {
      timed_out = true;
      (void)slurm({"scancel", job});
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds{2000});
  }
  return states;
}

// What task `i` left for its node.
gpu::ProbeEntry gather_one(const FleetProbeRequest& request, const std::string& dir, std::size_t i,
                           const std::string& node, const std::string& state, bool timed_out) {
  gpu::ProbeEntry e;
  e.node = node;
  const auto base = fmt::format("{}/{}", dir, i);
  const auto rc = exit_status(base + ".machine.rc");
  if (!rc) {
    e.error = "the task left no result";
    if (!state.empty()) e.error += fmt::format(" (last seen {})", state);
    if (timed_out) e.error += "; the array was cancelled at --timeout";
    if (auto slurm_out = last_line(base + ".slurm.out"); !slurm_out.empty())
      e.error += fmt::format("; its output: {}", slurm_out);
    else if (!timed_out && !state.ends_with(kNeverRuns))
      e.error += "; is the work directory shared with the node? (--work-dir)";
    return e;
  }
  auto ran_on = read_bounded(base + ".node", 256);
  if (ran_on && !core::trim(*ran_on).empty() && core::trim(*ran_on) != node) {
    e.error = fmt::format("the task ran on {}, not on the node it was pinned to",
                          core::quote_for_message(core::trim(*ran_on)));
    return e;
  }
  if (*rc != 0) {
    auto why = last_line(base + ".machine.err");
    e.error = fmt::format("gpulock probe --machine --json exited {}{}{}", *rc,
                          why.empty() ? "" : ": ", why);
    return e;
  }
  auto doc = read_bounded(base + ".machine.json", kMaxDocument).value_or("");
  if (auto ok = gpu::check_probe_document(doc, node); !ok) {
    e.error = ok.error().message;
    return e;
  }
  e.document = std::move(doc);
  for (std::size_t k = 0; k < request.locks.size(); ++k) {
    const auto lock_base = fmt::format("{}.lock.{}", base, k);
    gpu::ProbeEntry::LockProbe l;
    l.lock = request.locks[k];
    const auto lrc = exit_status(lock_base + ".rc");
    l.exit = lrc.value_or(-1);
    if (!lrc) {
      l.result = "no result";
    } else if (*lrc == 0) {
      l.result = "the environment matches the lock";
    } else if (*lrc == 1) {
      // Which verdict lines fail, from the node's JSON document (the first, and how many more).
      const auto failures =
          gpu::lock_probe_failures(read_bounded(lock_base + ".json", kMaxDocument).value_or(""));
      if (failures.empty()) {
        l.result = "the environment does not match the lock (a verdict line fails)";
      } else {
        l.result = fmt::format(
            "the environment does not match the lock: {}{}", failures.front(),
            failures.size() == 1 ? std::string()
                                 : fmt::format(" (and {} more failed line{})", failures.size() - 1,
                                               failures.size() == 2 ? "" : "s"));
      }
    } else {
      auto why = last_line(lock_base + ".err");
      l.result =
          fmt::format("gpulock probe --lock exited {}{}{}", *lrc, why.empty() ? "" : ": ", why);
    }
    e.locks.push_back(std::move(l));
  }
  return e;
}

}  // namespace

bool FleetProbeResult::all_ok() const {
  return !timed_out && std::all_of(nodes.begin(), nodes.end(), [](const gpu::ProbeEntry& e) {
    return e.error.empty() &&
           std::all_of(e.locks.begin(), e.locks.end(), [](const auto& l) { return l.exit == 0; });
  });
}

bool valid_node_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 255 || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string probe_job_script(const std::string& gpulock, const std::vector<std::string>& locks,
                             const std::string& dir, bool remove_gpulock) {
  using core::shell_quote;
  std::string s =
      "#!/bin/sh\n"
      "# gpulock fleet probe --slurm: array task I probes the node it is pinned to and writes\n"
      "# I.node, I.machine.{json,err,rc} and I.lock.K.{json,err,rc} into the directory below.\n";
  s += fmt::format("dir={}\ngpulock={}\n", shell_quote(dir), shell_quote(gpulock));
  s += "i=\"${SLURM_ARRAY_TASK_ID:?not an array task}\"\n";
  s += "printf '%s\\n' \"${SLURMD_NODENAME:-}\" > \"$dir/$i.node\"\n";
  s += "\"$gpulock\" probe --machine --json > \"$dir/$i.machine.json\" 2> "
       "\"$dir/$i.machine.err\"\n"
       "echo \"$?\" > \"$dir/$i.machine.rc\"\n";
  for (std::size_t k = 0; k < locks.size(); ++k) {
    s += fmt::format(
        "\"$gpulock\" probe --lock {} --json > \"$dir/$i.lock.{}.json\" 2> "
        "\"$dir/$i.lock.{}.err\"\n"
        "echo \"$?\" > \"$dir/$i.lock.{}.rc\"\n",
        shell_quote(locks[k]), k, k, k);
  }
  // The copy sbcast made for this run (--sbcast) is this node's alone: removed once used.
  if (remove_gpulock) s += "rm -f \"$gpulock\"\n";
  s += "exit 0\n";
  return s;
}

namespace {

// --sbcast: `source` copied to `dest` on every node, by `sbcast` run here inside an allocation
// of the nodes (salloc runs its command on this host, so sbcast reads this host's file). One
// allocation per partition, since one job cannot span partitions; nodes is (node, partition).
core::Status broadcast(const std::string& source, const std::string& dest,
                       const std::vector<std::pair<std::string, std::string>>& nodes) {
  std::map<std::string, std::vector<std::string>> by_partition;
  for (const auto& [node, partition] : nodes)
    by_partition[partition].push_back(node);
  for (const auto& [partition, names] : by_partition) {
    std::vector<std::string> argv{"salloc",
                                  "--quiet",
                                  "--job-name=gpulock-fleet-probe-sbcast",
                                  fmt::format("--nodes={}", names.size()),
                                  fmt::format("--nodelist={}", fmt::join(names, ",")),
                                  "--time=5"};
    if (!partition.empty()) argv.push_back("--partition=" + partition);
    argv.insert(argv.end(), {"sbcast", "--force", "--preserve", source, dest});
    if (auto copied = slurm(argv); !copied)
      return std::unexpected(
          core::make_error(ErrorCode::Io,
                           fmt::format("--sbcast: copying {} to {} on {} failed: {}", source, dest,
                                       fmt::join(names, ","), copied.error().message))
              .with_hint("give the path gpulock has on the nodes with --gpulock PATH instead"));
  }
  return {};
}

}  // namespace

core::Result<FleetProbeResult> fleet_probe(const FleetProbeRequest& request,
                                           const FleetProbeProgress& progress) {
  auto say = [&](const std::string& what) {
    if (progress) progress(what);
  };
  std::string gpulock = request.gpulock;
  if (gpulock.empty()) {
    auto self = this_binary();
    if (!self) return std::unexpected(self.error());
    gpulock = *self;
  }
  auto nodes = list_nodes(request);
  if (!nodes) return std::unexpected(nodes.error());
  auto infos = node_infos();
  if (!infos) return std::unexpected(infos.error());
  // The nodes a task is submitted to (array index -> node index) and their partitions (the job
  // may run in any of them: each task's node picks one); the others are reported now.
  std::vector<std::size_t> runnable;
  std::vector<std::string> skipped(nodes->size());
  std::set<std::string> partitions;
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    auto info = infos->find((*nodes)[i]);
    if (info == infos->end())
      return std::unexpected(
          core::make_error(ErrorCode::Usage, fmt::format("Slurm has no node {}",
                                                         core::quote_for_message((*nodes)[i])))
              .with_hint("sinfo -N lists the nodes; give them with --nodes LIST"));
    skipped[i] = unusable(info->second.state);
    if (!skipped[i].empty()) continue;
    runnable.push_back(i);
    partitions.insert(info->second.partitions.begin(), info->second.partitions.end());
  }
  FleetProbeResult result;
  auto finish = [&]() -> core::Result<FleetProbeResult> {
    for (const auto& e : result.nodes)
      result.inventory += gpu::probe_entry_text(e);
    if (!request.output.empty()) {
      if (auto w = sys::write_file_atomically(request.output, result.inventory); !w)
        return std::unexpected(w.error());
    }
    return std::move(result);
  };
  if (runnable.empty()) {
    for (std::size_t i = 0; i < nodes->size(); ++i)
      result.nodes.push_back({(*nodes)[i], "", skipped[i], {}});
    return finish();
  }
  WorkDir dir;
  if (auto made = dir.make(request.work_dir); !made) return std::unexpected(made.error());
  if (request.sbcast) {
    // A name of this run's own on every node (the private directory's random part).
    const std::string dest = (fs::path(request.sbcast_dir) /
                              ("gpulock-fleet-probe" + fs::path(dir.path()).extension().string()))
                                 .string();
    std::vector<std::pair<std::string, std::string>> copy_to;
    for (auto i : runnable) {
      const auto& ps = infos->at((*nodes)[i]).partitions;
      copy_to.emplace_back((*nodes)[i], ps.empty() ? std::string() : *ps.begin());
    }
    say(fmt::format("copying {} to {} on {} node{} with sbcast", gpulock, dest, copy_to.size(),
                    copy_to.size() == 1 ? "" : "s"));
    if (auto copied = broadcast(gpulock, dest, copy_to); !copied)
      return std::unexpected(copied.error());
    gpulock = dest;
  }
  const std::string script = dir.path() + "/probe.sh";
  if (auto w = write_script(script,
                            probe_job_script(gpulock, request.locks, dir.path(), request.sbcast));
      !w)
    return std::unexpected(w.error());
  std::vector<std::string> targets, target_partitions;
  for (auto i : runnable) {
    targets.push_back((*nodes)[i]);
    const auto& ps = infos->at((*nodes)[i]).partitions;
    target_partitions.push_back(fmt::format("{}", fmt::join(ps, ",")));
  }
  const std::string partition_list = partition_given(request.sbatch_args)
                                         ? std::string()
                                         : fmt::format("{}", fmt::join(partitions, ","));
  auto sub = submit(request, targets, target_partitions, dir.path(), script, partition_list);
  if (!sub) return std::unexpected(sub.error());
  result.job = sub->job;
  say(fmt::format("submitted job {}: {} task{}, one per node", sub->job, targets.size(),
                  targets.size() == 1 ? "" : "s"));
  auto states = wait_for(sub->job, request.timeout, result.timed_out);
  if (!states) return std::unexpected(states.error());
  for (std::size_t i = 0, task = 0; i < nodes->size(); ++i) {
    if (!skipped[i].empty()) {
      result.nodes.push_back({(*nodes)[i], "", skipped[i], {}});
      continue;
    }
    if (!sub->pin_errors[task].empty()) {
      result.nodes.push_back({(*nodes)[i], "", sub->pin_errors[task++], {}});
      continue;
    }
    auto s = states->find(task);
    result.nodes.push_back(gather_one(request, dir.path(), task, (*nodes)[i],
                                      s == states->end() ? std::string() : s->second,
                                      result.timed_out));
    ++task;
  }
  return finish();
}

}  // namespace gpulock::app

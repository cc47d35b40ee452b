// `gpulock fleet check --inventory SRC ... [--lock L ...]` (issue 45): which lock runs on which
// node of a team's inventory (kubectl node JSON, nvidia-smi table/CSV/XML/-L, /proc), judged by
// gpu::lock_fits as `install` judges this machine. Per node: the locks that fit, the best one,
// and for a node no lock fits, the reasons; per lock: its nodes. Text, `--json`
// (docs/schemas/fleet-check.schema.json) or `--format github`. Exit 1 when a lock runs on no
// node (or, with --require-all, a node runs no lock); 3 when an inventory cannot be read.
// `fleet place` prints a nodeAffinity or sbatch lines per lock; `fleet probe --slurm` runs
// `probe --machine` on every node through a job array (app/fleet_probe.h) and reports the nodes
// of the inventory it gathers.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/fleet.h"
#include "gpulock/app/fleet_probe.h"

#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"
#include "table.h"

namespace gpulock::cli {
namespace {

struct FleetArgs {
  std::vector<std::string> locks;
  std::vector<std::string> inventories;
  std::string inventory_format = "auto";
  std::string format = "text";
  bool json = false;
  bool require_all = false;
  std::string emit;  ///< place: "k8s" or "slurm"
  bool all_targets = false;
  std::string slurm_features;
  // fleet probe
  bool slurm = false;
  std::string gpulock;
  bool sbcast = false;
  std::string sbcast_dir = "/tmp";
  std::vector<std::string> nodes;
  std::string output;
  std::string work_dir;
  int timeout = 600;
  std::vector<std::string> sbatch_args;
};

std::string archs_text(const gpu::InventoryHost& h) {
  if (h.machine.archs.empty()) return h.gpus.empty() ? "-" : "unknown";
  std::vector<std::string> a;
  for (const auto& cc : h.machine.archs)
    a.push_back(cc.to_string());
  return fmt::format("{}", fmt::join(a, ","));
}

std::string driver_text(const gpu::InventoryHost& h) {
  if (!h.l4t.empty()) return "L4T " + h.l4t;
  for (const auto& r : h.read)
    if (r.starts_with("Windows driver ")) return r.substr(15, r.find(' ', 15) - 15) + " (WSL)";
  if (h.machine.driver) return h.machine.driver->to_string();
  return h.machine.no_gpu ? "none" : "unknown";
}

std::string ceiling_text(const gpu::InventoryHost& h) {
  if (!h.machine.ceiling) return h.machine.no_gpu ? "none" : "unknown";
  if (h.machine.ceiling_method == "assumed")
    return fmt::format(">={} (assumed)", h.machine.ceiling->to_string());
  return fmt::format("{} ({})", h.machine.ceiling->to_string(),
                     h.machine.ceiling_method == "stated" ? "read" : h.machine.ceiling_method);
}

bool node_runs_nothing(const app::FleetNode& n) {
  return !n.best.has_value();
}

constexpr std::string_view kPlatformUnknown = "platform (OS and CPU)";

// What the inventory does not say, per node; an unknown platform (nvidia-smi, CSV, XML and -L
// never state it) once for all the nodes it concerns.
std::string notes_text(const app::FleetResult& r, const Terminal& term) {
  std::string out;
  std::size_t no_platform = 0;
  for (const auto& n : r.nodes) {
    for (const auto& u : n.host.unknown) {
      if (u == kPlatformUnknown) {
        ++no_platform;
        continue;
      }
      out += fmt::format("{}{}: unknown: {}\n", kSectionIndent, n.host.name, u);
    }
    for (const auto& w : n.host.warnings)
      out += fmt::format("{}{}: {}\n", kSectionIndent, n.host.name, w);
  }
  if (no_platform > 0)
    out += fmt::format(
        "{}{} node{}: the platform (OS and CPU) is not stated: not compared with "
        "the locks' platforms\n",
        kSectionIndent, no_platform, no_platform == 1 ? "" : "s");
  if (out.empty()) return out;
  return "\n" + section_heading(term, "what the inventory does not say") + out;
}

std::string text_report(const app::FleetResult& r, const Terminal& term) {
  TableRows rows{{"node", "driver", "CUDA ceiling", "GPUs", "best lock", "fits"}};
  TableStyles styles{
      {Style::Bold, Style::Bold, Style::Bold, Style::Bold, Style::Bold, Style::Bold}};
  for (const auto& n : r.nodes) {
    std::size_t fitting = 0;
    bool assumed = false;
    for (const auto& f : n.fits) {
      fitting += f.fits ? 1 : 0;
      assumed = assumed || (f.fits && !f.unknown.empty());
    }
    rows.push_back({n.host.name, driver_text(n.host), ceiling_text(n.host), archs_text(n.host),
                    n.best ? r.locks[*n.best].name : "none",
                    fmt::format("{}/{}{}", fitting, r.locks.size(), assumed ? " (assumed)" : "")});
    styles.push_back({Style::Plain, Style::Plain, Style::Plain, Style::Plain,
                      n.best ? Style::Green : Style::Red});
  }
  std::string out = render_table(rows, styles, term);
  bool heading = false;
  for (const auto& n : r.nodes) {
    if (!node_runs_nothing(n)) continue;
    if (!heading) out += "\n" + section_heading(term, "nodes no lock runs on");
    heading = true;
    out += fmt::format("{}{} ({}):\n", kSectionIndent, n.host.name, n.source);
    for (std::size_t i = 0; i < r.locks.size(); ++i)
      out += fmt::format("{}{}{}: {}\n", kSectionIndent, kSectionIndent, r.locks[i].name,
                         n.fits[i].why);
  }
  out += "\n" + section_heading(term, "locks");
  for (const auto& l : r.locks) {
    std::vector<std::string> names;
    for (auto i : l.nodes)
      names.push_back(r.nodes[i].host.name);
    const std::string what = l.gpu && l.cuda ? fmt::format("CUDA {}", l.cuda->to_string())
                                             : std::string(l.gpu ? "CUDA" : "CPU");
    out += fmt::format("{}{} ({}): {}\n", kSectionIndent, l.name, what,
                       names.empty()
                           ? term.paint(Style::Red, "runs on no node")
                           : fmt::format("{} node{}: {}", names.size(),
                                         names.size() == 1 ? "" : "s", fmt::join(names, ", ")));
  }
  out += notes_text(r, term);
  return out;
}

void host_json(JsonWriter& j, const gpu::InventoryHost& h) {
  j.field("driver", h.machine.driver ? h.machine.driver->to_string() : std::string());
  j.key("ceiling").value_or_null(h.machine.ceiling, [](const auto& c) { return c.to_string(); });
  j.field("ceiling_method", h.machine.ceiling_method);
  j.key("platform");
  if (h.machine.platform) {
    j.value(h.machine.platform->os + "/" + h.machine.platform->cpu);
  } else {
    j.null();
  }
  j.field("wsl", h.wsl);
  j.field("l4t", h.l4t);
  j.key("archs").begin_array();
  for (const auto& a : h.machine.archs)
    j.value(a.to_string());
  j.end_array();
  j.key("gpus").begin_array();
  for (const auto& g : h.gpus) {
    j.begin_object();
    j.field("name", g.name);
    j.key("compute_capability").value_or_null(g.cc, [](const auto& c) { return c.dotted(); });
    j.field("stated", g.cc_stated);
    j.field("mig", g.mig);
    j.end_object();
  }
  j.end_array();
  j.field("read", h.read);
  j.field("derived", h.derived);
  j.field("unknown", h.unknown);
  j.field("warnings", h.warnings);
}

std::string json_report(const app::FleetResult& r) {
  JsonWriter j;
  j.begin_object();
  j.field("schema", "gpulock.fleet-check/1");
  j.key("locks").begin_array();
  for (const auto& l : r.locks) {
    std::vector<std::string> names;
    for (auto i : l.nodes)
      names.push_back(r.nodes[i].host.name);
    j.begin_object();
    j.field("path", l.path);
    j.field("name", l.name);
    j.field("gpu", l.gpu);
    j.key("cuda").value_or_null(l.cuda, [](const auto& c) { return c.to_string(); });
    j.field("nodes", names);
    j.end_object();
  }
  j.end_array();
  j.key("nodes").begin_array();
  for (const auto& n : r.nodes) {
    j.begin_object();
    j.field("name", n.host.name);
    j.field("source", n.source);
    j.field("line", static_cast<std::uint64_t>(n.host.line));
    j.field("format", n.format);
    host_json(j, n.host);
    j.key("best").value_or_null(n.best, [&](std::size_t i) { return r.locks[i].name; });
    j.key("fits").begin_array();
    for (std::size_t i = 0; i < r.locks.size(); ++i) {
      j.begin_object();
      j.field("lock", r.locks[i].name);
      j.field("fits", n.fits[i].fits);
      j.field("reasons", n.fits[i].reasons);
      j.field("unknown", n.fits[i].unknown);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.field("warnings", r.warnings);
  j.end_object();
  return j.str();
}

std::string gh_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\n')
      out += "%0A";
    else if (c == '\r')
      out += "%0D";
    else
      out += c;
  }
  return out;
}

std::string github_report(const app::FleetResult& r, bool require_all) {
  std::string out;
  std::size_t idle_locks = 0, idle_nodes = 0;
  for (const auto& l : r.locks) {
    if (!l.nodes.empty()) continue;
    ++idle_locks;
    out += fmt::format("::error title=gpulock fleet::{}\n",
                       gh_escape(fmt::format("{} runs on no node of the inventory", l.name)));
  }
  for (const auto& n : r.nodes) {
    if (!node_runs_nothing(n)) continue;
    ++idle_nodes;
    std::string message = fmt::format("node {} runs no lock", n.host.name);
    for (std::size_t i = 0; i < r.locks.size(); ++i)
      message += fmt::format("\n  {}: {}", r.locks[i].name, n.fits[i].why);
    out += fmt::format("::{} title=gpulock fleet::{}\n", require_all ? "error" : "warning",
                       gh_escape(message));
  }
  out += fmt::format(
      "gpulock fleet check: {} nodes, {} locks; {} locks run on no node, {} nodes "
      "run no lock\n",
      r.nodes.size(), r.locks.size(), idle_locks, idle_nodes);
  return out;
}

// The emitted placement of each lock: YAML (k8s) or sbatch lines (slurm), with how it was
// checked against the inventory.
// `--emit slurm`: the `--constraint` when ActiveFeatures select exactly the nodes, checked;
// else the `--nodelist`, saying why.
std::string slurm_lines(const app::SlurmPlacement& p) {
  if (p.nodelist.empty()) return "# (no node: nothing to submit to)\n";
  if (p.constraint.empty())
    return fmt::format("#SBATCH --nodelist={}\n# no --constraint: {}\n", fmt::join(p.nodelist, ","),
                       p.why_not);
  std::string out = fmt::format("#SBATCH --constraint={}\n", p.constraint);
  if (!p.extra.empty())
    out += fmt::format("# selects nodes the lock does not fit: {}\n", fmt::join(p.extra, ", "));
  if (!p.missing.empty())
    out += fmt::format("# misses nodes the lock fits: {}\n", fmt::join(p.missing, ", "));
  if (p.exact())
    out += "# checked: its ActiveFeatures select exactly the Slurm nodes the lock fits\n";
  return out;
}

std::string place_report(const app::FleetResult& r, const std::vector<app::LockPlacement>& k8s,
                         const std::vector<app::SlurmPlacement>& slurm, const std::string& emit) {
  std::string out;
  for (std::size_t i = 0; i < r.locks.size(); ++i) {
    const auto& l = r.locks[i];
    std::vector<std::string> names;
    for (auto n : l.nodes)
      names.push_back(r.nodes[n].host.name);
    out += fmt::format("# {}: runs on {} node{}{}{}\n", l.name, names.size(),
                       names.size() == 1 ? "" : "s", names.empty() ? "" : ": ",
                       fmt::join(names, ", "));
    if (emit == "slurm") {
      out += slurm_lines(slurm[i]);
      continue;
    }
    const auto& p = k8s[i];
    if (!p.problem.empty()) {
      out += fmt::format("# no selector: {}\n\n", p.problem);
      continue;
    }
    if (p.terms.size() == 1 && p.terms[0].empty()) {
      out += "# any node: no nodeAffinity needed (CPU builds, no platform)\n\n";
      continue;
    }
    out +=
        "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      nodeSelectorTerms:\n";
    for (const auto& term : p.terms) {
      out += "      - matchExpressions:\n";
      for (const auto& e : term) {
        std::vector<std::string> quoted;
        for (const auto& v : e.values)
          quoted.push_back(fmt::format("\"{}\"", v));
        out += fmt::format("        - {{key: {}, operator: {}, values: [{}]}}\n", e.key, e.op,
                           fmt::join(quoted, ", "));
      }
    }
    if (p.terms.empty()) out += "      []\n";
    if (!p.extra.empty())
      out += fmt::format("# selects nodes the lock does not fit: {}\n", fmt::join(p.extra, ", "));
    if (!p.missing.empty())
      out += fmt::format("# misses nodes the lock fits: {}\n", fmt::join(p.missing, ", "));
    if (p.exact()) out += "# checked: it selects exactly the labelled nodes the lock fits\n";
    if (!p.unlabelled.empty())
      out += fmt::format("# not checked (no labels): {}\n", fmt::join(p.unlabelled, ", "));
    out += "\n";
  }
  return out;
}

void add_inventory_flags(CLI::App* cmd, FleetArgs& a) {
  cmd->add_option("--lock", a.locks,
                  "A lock to place (repeatable; default: ./pylock.toml and ./pylock.*.toml)");
  cmd->add_option("--slurm-features", a.slurm_features,
                  "A file of site-specific Slurm names: NAME driver=V | ceiling=X.Y | gpu=PRODUCT");
  cmd->add_flag("--all-targets", a.all_targets,
                "The locks of the targets declared here (gpulock.toml or pyproject.toml)");
  cmd->add_option("--inventory", a.inventories,
                  "An inventory: a file, a directory of files, or - for standard input "
                  "(repeatable)")
      ->required();
  cmd->add_option("--inventory-format", a.inventory_format,
                  "Read every inventory as: auto, kubectl-json, kubectl-describe, nvidia-smi, "
                  "nvidia-smi-q, xml, csv, nvidia-smi-L, proc, probe-json, collect-env, slurm")
      ->capture_default_str();
}

core::Result<app::FleetResult> run_fleet(const FleetArgs& a, Context& ctx) {
  app::FleetRequest request;
  request.locks = a.locks;
  request.inventories = a.inventories;
  request.all_targets = a.all_targets;
  request.slurm_features = a.slurm_features;
  auto format = gpu::parse_inventory_format(a.inventory_format);
  if (!format) return std::unexpected(format.error());
  request.format = *format;
  auto result = app::fleet_check(request);
  if (!result) return result;
  for (const auto& w : result->warnings)
    ctx.term.warning(w);
  return result;
}

int run_check(const FleetArgs& a, Context& ctx) {
  auto result = run_fleet(a, ctx);
  if (!result) return report_error(ctx.term, result.error());
  const std::string out_format = a.json ? "json" : a.format;
  if (out_format == "json") {
    ctx.term.out(json_report(*result));
  } else if (out_format == "github") {
    ctx.term.out(github_report(*result, a.require_all));
  } else {
    ctx.term.out(text_report(*result, ctx.term));
  }
  bool idle_lock = false, idle_node = false;
  for (const auto& l : result->locks)
    idle_lock = idle_lock || l.nodes.empty();
  for (const auto& n : result->nodes)
    idle_node = idle_node || node_runs_nothing(n);
  return idle_lock || (a.require_all && idle_node) ? kExitFinding : kExitSuccess;
}

int run_place(const FleetArgs& a, Context& ctx) {
  auto result = run_fleet(a, ctx);
  if (!result) return report_error(ctx.term, result.error());
  std::vector<app::LockPlacement> k8s;
  std::vector<app::SlurmPlacement> slurm;
  if (a.emit == "k8s") k8s = app::place_k8s(*result);
  if (a.emit == "slurm") slurm = app::place_slurm(*result);
  ctx.term.out(place_report(*result, k8s, slurm, a.emit));
  bool failed = false;
  for (std::size_t i = 0; i < result->locks.size(); ++i)
    failed = failed || result->locks[i].nodes.empty() || (a.emit == "k8s" && !k8s[i].exact()) ||
             (a.emit == "slurm" && !slurm[i].exact());
  return failed ? kExitFinding : kExitSuccess;
}

// `fleet probe`: per node, the facts its probe gave (read back from the gathered inventory) or
// why it has none, and each lock probe's result.
std::string probe_report(const app::FleetProbeResult& r, const Terminal& term) {
  TableRows rows{{"node", "driver", "CUDA ceiling", "GPUs", "probe"}};
  TableStyles styles{{Style::Bold, Style::Bold, Style::Bold, Style::Bold, Style::Bold}};
  auto inv = gpu::parse_inventory(r.inventory, "fleet-probe.json", gpu::InventoryFormat::ProbeJson);
  std::size_t failed = 0;
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    const auto& e = r.nodes[i];
    const gpu::InventoryHost* h = inv && i < inv->hosts.size() ? &inv->hosts[i] : nullptr;
    const bool ok = e.error.empty() && h != nullptr;
    failed += ok ? 0 : 1;
    const std::string driver = h == nullptr ? "-" : (h->machine.no_gpu ? "none" : driver_text(*h));
    rows.push_back({e.node, ok ? driver : "-", ok ? ceiling_text(*h) : "-",
                    ok ? archs_text(*h) : "-", ok ? "ok" : "failed: " + e.error});
    styles.push_back(
        {Style::Plain, Style::Plain, Style::Plain, Style::Plain, ok ? Style::Green : Style::Red});
  }
  std::string out = render_table(rows, styles, term);
  bool heading = false;
  std::size_t lock_failed = 0;
  for (const auto& e : r.nodes) {
    for (const auto& l : e.locks) {
      if (!heading) out += "\n" + section_heading(term, "lock probes");
      heading = true;
      lock_failed += l.exit == 0 ? 0 : 1;
      out += fmt::format("{}{}: {}: {}\n", kSectionIndent, e.node, l.lock, l.result);
    }
  }
  const std::string locks_text = heading ? fmt::format("; {} lock probe{} did not pass",
                                                       lock_failed, lock_failed == 1 ? "" : "s")
                                         : std::string();
  out += fmt::format("\n{}: {} node{} probed, {} failed{}{}\n",
                     r.job.empty() ? std::string("no job submitted") : "job " + r.job,
                     r.nodes.size() - failed, r.nodes.size() - failed == 1 ? "" : "s", failed,
                     locks_text, r.timed_out ? " (the array was cancelled at --timeout)" : "");
  return out;
}

// Exit 0 when every node gave its facts (and every lock probe passed), 1 otherwise (the
// inventory is written all the same, failed nodes with their errors); 74 when Slurm cannot be
// used.
int run_probe(const FleetArgs& a, Context& ctx) {
  if (!a.slurm)
    return report_error(
        ctx.term,
        core::make_error(core::ErrorCode::Usage, "fleet probe needs an engine: give --slurm")
            .with_hint("add --slurm: Slurm is the one engine fleet probe runs on"));
  if (a.timeout <= 0)
    return report_error(ctx.term, core::make_error(core::ErrorCode::Usage,
                                                   "invalid --timeout: expected seconds > 0"));
  app::FleetProbeRequest request;
  request.gpulock = a.gpulock;
  request.sbcast = a.sbcast;
  request.sbcast_dir = a.sbcast_dir;
  request.nodes = a.nodes;
  request.locks = a.locks;
  request.sbatch_args = a.sbatch_args;
  request.work_dir = a.work_dir;
  request.timeout = std::chrono::seconds(a.timeout);
  request.output = a.output == "-" ? std::string() : a.output;
  auto result = app::fleet_probe(request, [&](std::string_view line) { ctx.term.info(line, 0); });
  if (!result) return report_error(ctx.term, result.error());
  const std::string report = probe_report(*result, ctx.term);
  if (request.output.empty()) {
    ctx.term.out(result->inventory);
    ctx.term.err(report);
  } else {
    ctx.term.out(report + fmt::format("wrote {}: gpulock fleet check --inventory {}\n",
                                      request.output, request.output));
  }
  return result->all_ok() ? kExitSuccess : kExitFinding;
}

void add_probe_flags(CLI::App* probe, FleetArgs& a) {
  probe->add_flag("--slurm", a.slurm, "Run the probes as a Slurm job array (the only engine)");
  probe->add_option("--gpulock", a.gpulock,
                    "The path of gpulock on the nodes (default: this binary's path); with "
                    "--sbcast, the file to copy");
  probe->add_flag("--sbcast", a.sbcast,
                  "Copy gpulock to each node first (salloc + sbcast from this host) and run the "
                  "copy, removed by the task when done");
  probe->add_option("--sbcast-dir", a.sbcast_dir, "Where on the nodes --sbcast puts the copy")
      ->capture_default_str();
  probe
      ->add_option("--nodes", a.nodes,
                   "Slurm nodes to probe, a host list such as gpu[01-04],cpu01 (repeatable; "
                   "default: every node sinfo lists)")
      ->allow_extra_args(false);
  probe
      ->add_option("--lock", a.locks,
                   "Also run gpulock probe --lock FILE --json on each node (repeatable; the path "
                   "as the nodes see it)")
      ->allow_extra_args(false);
  probe->add_option("-o,--output", a.output,
                    "Write the gathered inventory here (default: standard output, the report to "
                    "standard error)");
  probe->add_option("--work-dir", a.work_dir,
                    "Where the tasks write their results: a directory the nodes share (default: "
                    "the current directory)");
  probe->add_option("--timeout", a.timeout, "Seconds to wait for the array before it is cancelled")
      ->capture_default_str();
  probe->add_option("sbatch_args", a.sbatch_args, "Arguments for sbatch, after --");
}

RunFn setup(CLI::App& sub) {
  auto a = std::make_shared<FleetArgs>();
  sub.require_subcommand(1);
  CLI::App* check = sub.add_subcommand(
      "check", "Which lock runs on which node of an inventory (kubectl, nvidia-smi, /proc, Slurm)");
  add_inventory_flags(check, *a);
  check->add_option("--format", a->format, "Output: text, json or github (annotations)")
      ->check(CLI::IsMember({"text", "json", "github"}))
      ->capture_default_str();
  check->add_flag("--json", a->json, "Same as --format json");
  check->add_flag("--require-all", a->require_all, "Exit 1 when some node runs no lock");
  CLI::App* place = sub.add_subcommand(
      "place",
      "Per lock, a Kubernetes nodeAffinity or a Slurm --nodelist, checked against the "
      "inventory");
  add_inventory_flags(place, *a);
  place
      ->add_option("--emit", a->emit,
                   "What to print: k8s (nodeAffinity) or slurm (--constraint, else --nodelist)")
      ->check(CLI::IsMember({"k8s", "slurm"}))
      ->required();
  CLI::App* probe = sub.add_subcommand(
      "probe",
      "Run gpulock probe --machine on every node through a Slurm job array and gather the "
      "results as an inventory");
  add_probe_flags(probe, *a);
  return [a, place, probe](Context& ctx) -> int {
    if (probe->parsed()) return run_probe(*a, ctx);
    return place->parsed() ? run_place(*a, ctx) : run_check(*a, ctx);
  };
}

const bool registered = register_command(
    {"fleet",
     "Which lock runs on which node of a team's machines (fleet check, fleet place, fleet probe)",
     58, &setup});

}  // namespace
}  // namespace gpulock::cli

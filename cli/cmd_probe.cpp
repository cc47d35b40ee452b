// `gpulock probe`: what this machine and an installed environment can really run
// (DESIGN.md §Probe). `--machine` reports the NVIDIA driver, its CUDA ceiling and the GPUs, each
// value with the method that gave it, every detection step and the verdict (issue "Machine
// detection"); the JSON schema is docs/schemas/probe-machine.schema.json.
// Without `--machine`, the environment probe: what an installed environment really loads (the
// cuDNN/CUDA load check in a child process) compared with the lock (issue "Post-install:
// `gpulock install` and the cuDNN/CUDA load probe"); text and JSON in probe_render.cpp, the JSON
// schema docs/schemas/probe.schema.json.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/machine.h"
#include "gpulock/app/probe_env.h"

#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"
#include "machine_flags.h"
#include "probe_render.h"
#include "table.h"

namespace gpulock::cli {
namespace {

struct ProbeArgs {
  bool machine = false;
  bool json = false;
  probe::OverrideFlags overrides;
  std::string lock;
  std::string python;
  std::string site_packages;
  bool run_kernels = false;
  bool require_gpu = false;
};

std::string memory_text(std::uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

template <class T>
std::string method_text(const probe::Detected<T>& d, const std::string& value_text) {
  std::string text = fmt::format("{}: {}", probe::method_name(d.method), d.source);
  if (!d.raw.empty() && d.raw != value_text && d.method != probe::Method::DriverTable) {
    text += fmt::format(" = {}", d.raw);
  }
  return text;
}

Style outcome_style(probe::StepOutcome o) {
  switch (o) {
    case probe::StepOutcome::Ok:
      return Style::Green;
    case probe::StepOutcome::NotFound:
      return Style::Plain;
    case probe::StepOutcome::Skipped:
      return Style::Dim;
    case probe::StepOutcome::Failed:
      return Style::Yellow;
    case probe::StepOutcome::TimedOut:
      return Style::Red;
    case probe::StepOutcome::Crashed:
      return Style::Red;
  }
  return Style::Plain;
}

std::string render_text(const probe::MachineInfo& m, const Terminal& term) {
  std::string out;
  auto heading = [&](std::string_view title) { out += section_heading(term, title); };

  heading("Driver");
  {
    TableRows rows;
    TableStyles styles;
    auto value_row = [&](std::string label, const auto& detected, std::string missing) {
      if (detected) {
        std::string v = detected->value.to_string();
        rows.push_back({std::move(label), v, method_text(*detected, v)});
        styles.push_back({Style::Plain, Style::Bold, Style::Dim});
      } else {
        rows.push_back({std::move(label), std::move(missing)});
        styles.push_back({Style::Plain, Style::Dim});
      }
    };
    bool detected = m.status != probe::MachineStatus::Override &&
                    m.status != probe::MachineStatus::NoGpuOverride;
    value_row("version", m.driver, detected ? "not found" : "not detected");
    value_row("CUDA ceiling", m.cuda_ceiling, "unknown");
    value_row("kernel module", m.kernel_module,
              !detected ? "not detected"
              : m.wsl   ? "none (WSL 2)"
                        : "not loaded");
    if (m.wsl) {
      rows.push_back({"platform", "WSL 2", "the driver is the Windows host's"});
      styles.push_back({Style::Plain, Style::Bold, Style::Dim});
    }
    out += render_table(rows, styles, term, kSectionIndent);
  }

  heading("GPUs");
  {
    TableRows rows;
    TableStyles styles;
    for (const auto& g : m.gpus) {
      rows.push_back({std::to_string(g.index), g.name.empty() ? "(unnamed)" : g.name,
                      g.compute_capability ? g.compute_capability->to_string() : "sm_?",
                      g.memory_bytes ? memory_text(*g.memory_bytes) : "-",
                      g.uuid.empty() ? "-" : g.uuid, std::string(probe::method_name(g.method))});
      styles.push_back(
          {Style::Plain, Style::Bold, Style::Bold, Style::Plain, Style::Dim, Style::Dim});
    }
    if (m.gpus.empty()) {
      rows.push_back({"none found"});
      styles.push_back({Style::Dim});
    }
    std::string archs;
    if (m.gpu_archs) {
      for (const auto& a : m.gpu_archs->value)
        archs += (archs.empty() ? "" : ", ") + a.to_string();
      rows.push_back(
          {"archs", archs,
           fmt::format("{}: {}", probe::method_name(m.gpu_archs->method), m.gpu_archs->source)});
      styles.push_back({Style::Plain, Style::Bold, Style::Dim});
    }
    // The archs row has three cells; keep the GPU rows' columns apart from it.
    TableRows gpu_rows(rows.begin(), rows.end() - (m.gpu_archs ? 1 : 0));
    out += render_table(gpu_rows, styles, term, kSectionIndent);
    if (m.gpu_archs) {
      out += render_table({rows.back()}, {styles.back()}, term, kSectionIndent);
    }
  }

  heading("Steps");
  {
    TableRows rows;
    TableStyles styles;
    for (const auto& s : m.steps) {
      rows.push_back({s.name, std::string(probe::step_outcome_name(s.outcome)), s.detail});
      styles.push_back({Style::Plain, outcome_style(s.outcome), Style::Plain});
    }
    out += render_table(rows, styles, term, kSectionIndent);
  }

  if (!m.warnings.empty()) {
    heading("Warnings");
    for (const auto& w : m.warnings)
      out += labelled_line(term, Style::Yellow, "warning", w);
  }

  heading("Verdict");
  bool good = m.status == probe::MachineStatus::Gpu || m.status == probe::MachineStatus::Override ||
              m.status == probe::MachineStatus::NoGpuOverride;
  out += labelled_line(term, good ? Style::Green : Style::Yellow,
                       probe::machine_status_name(m.status), m.verdict);
  for (const auto& h : m.hints)
    out += labelled_line(term, Style::Cyan, "hint", h);
  return out;
}

template <class T>
void detected_json(JsonWriter& w, std::string_view key,
                   const std::optional<probe::Detected<T>>& d) {
  w.key(key);
  if (!d) {
    w.null();
    return;
  }
  w.begin_object();
  w.field("version", d->value.to_string());
  w.field("method", std::string(probe::method_name(d->method)));
  w.field("source", d->source);
  w.field("raw", d->raw);
  w.end_object();
}

std::string render_json(const probe::MachineInfo& m) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.machine/1");
  w.field("status", std::string(probe::machine_status_name(m.status)));
  w.field("verdict", m.verdict);
  w.field("hints", m.hints);
  detected_json(w, "driver", m.driver);
  detected_json(w, "cuda_ceiling", m.cuda_ceiling);
  detected_json(w, "kernel_module", m.kernel_module);
  w.key("gpus").begin_array();
  for (const auto& g : m.gpus) {
    w.begin_object();
    w.field("index", static_cast<std::uint64_t>(g.index));
    w.field("name", g.name);
    w.key("uuid").value_or_null(g.uuid);
    w.key("arch").value_or_null(g.compute_capability, [](const auto& v) { return v.to_string(); });
    w.key("compute_capability").value_or_null(g.compute_capability, [](const auto& v) {
      return v.dotted();
    });
    w.field("memory_bytes", g.memory_bytes);
    w.field("method", std::string(probe::method_name(g.method)));
    w.end_object();
  }
  w.end_array();
  w.key("gpu_archs");
  if (m.gpu_archs) {
    w.begin_object();
    w.key("archs").begin_array();
    for (const auto& a : m.gpu_archs->value)
      w.value(a.to_string());
    w.end_array();
    w.field("method", std::string(probe::method_name(m.gpu_archs->method)));
    w.field("source", m.gpu_archs->source);
    w.end_object();
  } else {
    w.null();
  }
  w.field("wsl", m.wsl);
  // This host's OS and CPU (uname), for `fleet check` to compare with a lock's platforms.
  w.key("platform");
  if (const auto platform = probe::fit_machine(m).platform) {
    w.begin_object();
    w.field("os", platform->os);
    w.field("cpu", platform->cpu);
    w.end_object();
  } else {
    w.null();
  }
  w.field("warnings", m.warnings);
  w.key("steps").begin_array();
  for (const auto& s : m.steps) {
    w.begin_object();
    w.field("name", s.name);
    w.field("outcome", std::string(probe::step_outcome_name(s.outcome)));
    w.field("detail", s.detail);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

int run_machine(Context& ctx, const ProbeArgs& args) {
  auto info = app::probe_machine(args.overrides);
  if (!info) return report_error(ctx.term, info.error());
  ctx.term.out(args.json ? render_json(*info) : render_text(*info, ctx.term));
  // Every machine state is a normal result of the report, no GPU included.
  return kExitSuccess;
}

// The environment probe: exit 1 when a verdict line fails, 0 otherwise (no GPU included).
int run_environment(Context& ctx, const ProbeArgs& args) {
  app::ProbeRequest request;
  request.lock = args.lock;
  request.python = args.python;
  request.site_packages = args.site_packages;
  request.run_kernels = args.run_kernels;
  request.require_gpu = args.require_gpu;
  request.machine = args.overrides;
  // The member lists of the locked wheels come from the cache ($GPULOCK_CACHE_DIR), offline.
  auto client = index::ClientOptions::from_environment();
  if (!client) return report_error(ctx.term, client.error());
  request.client = std::move(*client);
  auto report = app::probe_environment(request);
  if (!report) return report_error(ctx.term, report.error());
  ctx.term.out(args.json ? render_probe_json(*report) : render_probe_text(*report, ctx.term));
  return report->ok() ? kExitSuccess : kExitFinding;
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<ProbeArgs>();
  sub.add_flag("--machine", args->machine,
               "Report the machine: NVIDIA driver, CUDA ceiling, GPUs, and how each was found");
  sub.add_flag("--json", args->json, "Print the report as JSON (docs/schemas/probe.schema.json)");
  sub.add_option("--lock", args->lock,
                 "Compare the environment with this lock (default: ./pylock.toml if present)");
  auto* python = sub.add_option("--python", args->python,
                                "The environment's interpreter (default: $VIRTUAL_ENV/bin/python, "
                                "else python3)");
  auto* site = sub.add_option("--site-packages", args->site_packages,
                              "Read this site-packages directory instead of asking an interpreter");
  python->excludes(site);
  sub.add_flag("--run-kernels", args->run_kernels,
               "With a GPU: create a cuDNN handle and run a small convolution");
  sub.add_flag("--require-gpu", args->require_gpu,
               "Fail when the lock is for CUDA and no GPU is usable here");
  add_machine_flags(sub, args->overrides, MachineRole::Assume);
  return [args](Context& ctx) {
    return args->machine ? run_machine(ctx, *args) : run_environment(ctx, *args);
  };
}

const bool registered = register_command(
    {"probe", "Check what an installed environment really loads (--machine: driver, CUDA, GPUs)",
     50, &setup});

}  // namespace
}  // namespace gpulock::cli

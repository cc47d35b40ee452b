#include "probe_render.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "json_writer.h"
#include "table.h"

namespace gpulock::cli {
namespace {

using probe::LoadOutcome;

Style outcome_style(LoadOutcome o) {
  switch (o) {
    case LoadOutcome::Ok:
      return Style::Green;
    case LoadOutcome::NotRun:
      return Style::Dim;
    case LoadOutcome::NotFound:
    case LoadOutcome::Failed:
      return Style::Yellow;
    case LoadOutcome::Crashed:
    case LoadOutcome::TimedOut:
      return Style::Red;
  }
  return Style::Plain;
}

Style severity_style(probe::Severity s) {
  switch (s) {
    case probe::Severity::Fail:
      return Style::Red;
    case probe::Severity::Warn:
      return Style::Yellow;
    case probe::Severity::Info:
      return Style::Cyan;
  }
  return Style::Plain;
}

std::string version_text(const std::optional<probe::VersionRead>& v) {
  return v ? v->text : "?";
}

std::string via_text(const probe::LibraryReport& lib) {
  if (!lib.found_via) return "-";
  std::string via(probe::found_via_name(*lib.found_via));
  if (*lib.found_via == probe::FoundVia::Runpath || *lib.found_via == probe::FoundVia::Rpath) {
    via += " " + lib.search_entry;
  }
  return via;
}

// "12.4" from cudnnGetCudartVersion's 12040; "sm_90" from cudnnGetMaxDeviceVersion's 900.
std::string cudart_text(std::uint64_t v) {
  return fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}
std::string max_device_text(std::uint64_t v) {
  return fmt::format("sm_{}{}", v / 100, v % 100 / 10);
}

std::string call_result(const probe::CudnnCall& c) {
  if (c.outcome == LoadOutcome::Ok)
    return c.detail.empty() && c.value ? std::to_string(*c.value) : c.detail;
  return fmt::format("{}{}", probe::load_outcome_name(c.outcome),
                     c.detail.empty() ? "" : ": " + c.detail);
}

// The Environment section: the interpreter, site-packages, torch, the lock compared and
// LD_LIBRARY_PATH.
std::string environment_section(const app::EnvironmentReport& report, const Terminal& term) {
  const auto& env = report.environment;
  const auto& load = report.load;
  std::string out = section_heading(term, "Environment");
  TableRows rows;
  if (!env.python.empty()) {
    rows.push_back({"python", env.python_version.empty()
                                  ? env.python
                                  : fmt::format("{} ({})", env.python, env.python_version)});
  }
  for (const auto& sp : env.site_packages)
    rows.push_back({"site-packages", sp.string()});
  if (env.torch) {
    std::string t = env.torch->version;
    std::vector<std::string> parts;
    if (env.torch->version_py_read) {
      parts.push_back(fmt::format("torch.version.cuda {}", env.torch->cuda.value_or("None")));
    }
    if (env.torch->cudnn_pin) {
      parts.push_back(fmt::format("pins {}=={}", *env.torch->cudnn_package, *env.torch->cudnn_pin));
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
      t += (i == 0 ? " (" : "; ") + parts[i];
    if (!parts.empty()) t += ")";
    rows.push_back({"torch", t});
  } else {
    rows.push_back({"torch", "not installed"});
  }
  if (!report.lock_path.empty()) {
    std::string l = report.lock_path;
    if (report.lock_gpu) {
      std::vector<std::string> parts;
      if (report.lock_gpu->variant) parts.push_back(*report.lock_gpu->variant);
      if (report.lock_gpu->cudnn) parts.push_back("cuDNN " + *report.lock_gpu->cudnn);
      if (report.lock_gpu->min_driver)
        parts.push_back("min driver " + report.lock_gpu->min_driver->to_string());
      for (std::size_t i = 0; i < parts.size(); ++i)
        l += (i == 0 ? " (" : ", ") + parts[i];
      if (!parts.empty()) l += ")";
    }
    rows.push_back({"lock", l});
  } else {
    rows.push_back({"lock", "none (checking the environment's own consistency)"});
  }
  std::string llp;
  for (const auto& e : load.ld_library_path)
    llp += (llp.empty() ? "" : ":") + e;
  rows.push_back({"LD_LIBRARY_PATH", llp.empty() ? "(empty)" : llp});
  out += render_table(rows, {}, term, kSectionIndent);
  return out;
}

// The cuDNN section: the library the environment loads and what its calls answered.
std::string cudnn_section(const probe::LoadReport& load, const Terminal& term) {
  std::string out = section_heading(term, "cuDNN");
  if (!load.cudnn_found) {
    out += std::string(kSectionIndent) +
           term.paint(Style::Dim, "no libcudnn.so in the environment's nvidia/*/lib") + "\n";
  } else {
    TableRows rows;
    TableStyles styles;
    std::string lib = load.cudnn_library;
    if (!load.cudnn_distribution.empty()) {
      lib += fmt::format(" ({} {})", load.cudnn_distribution, load.cudnn_distribution_version);
    }
    rows.push_back({"library", lib});
    styles.push_back({});
    for (const auto& c : load.calls) {
      std::string v = call_result(c);
      if (c.outcome == LoadOutcome::Ok && c.value) {
        auto raw = static_cast<std::uint64_t>(*c.value);
        if (c.function == "cudnnGetVersion" && load.cudnn_version) {
          v = fmt::format("{} ({})", load.cudnn_version->to_string(), raw);
        } else if (c.function == "cudnnGetCudartVersion") {
          v = fmt::format("CUDA {} ({})", cudart_text(raw), raw);
        } else if (c.function == "cudnnGetMaxDeviceVersion") {
          v = fmt::format("{} ({})", max_device_text(raw), raw);
        }
      }
      rows.push_back({c.function, v});
      styles.push_back(
          {Style::Plain, c.outcome == LoadOutcome::Ok ? Style::Bold : outcome_style(c.outcome)});
    }
    for (const auto& c : load.version_checks) {
      bool good = c.outcome == LoadOutcome::Ok && c.value && *c.value == 0;
      rows.push_back({c.function, call_result(c)});
      styles.push_back({Style::Plain, good                           ? Style::Green
                                      : c.outcome == LoadOutcome::Ok ? Style::Red
                                                                     : outcome_style(c.outcome)});
    }
    out += render_table(rows, styles, term, kSectionIndent);
  }
  return out;
}

// The libraries the probe process found, preloaded and mapped (each section only when the
// probe has something to say).
std::string library_sections(const probe::LoadReport& load, const Terminal& term) {
  std::string out;
  if (!load.sublibraries.empty()) {
    out += section_heading(
        term, "Sub-libraries (found as the loader would, from the library that loads each)");
    TableRows rows;
    TableStyles styles;
    for (const auto& lib : load.sublibraries) {
      std::string where = !lib.path                ? "missing"
                          : lib.inside_environment ? "environment"
                                                   : "OUTSIDE";
      std::string load_text(probe::load_outcome_name(lib.load));
      rows.push_back({lib.soname, version_text(lib.version), where, via_text(lib), load_text,
                      lib.path.value_or(lib.required ? "not found"
                                                     : "not found (not shipped by this version)")});
      styles.push_back({Style::Plain, Style::Bold,
                        !lib.path                ? (lib.required ? Style::Red : Style::Dim)
                        : lib.inside_environment ? Style::Green
                                                 : Style::Red,
                        Style::Plain, outcome_style(lib.load), Style::Dim});
    }
    out += render_table(rows, styles, term, kSectionIndent);
  }

  if (!load.preloads.empty()) {
    out += section_heading(term, "Preloaded by absolute path, in torch's order");
    TableRows rows;
    TableStyles styles;
    for (const auto& lib : load.preloads) {
      rows.push_back({lib.soname, version_text(lib.version),
                      std::string(probe::load_outcome_name(lib.load)), lib.path.value_or("")});
      styles.push_back({Style::Plain, Style::Bold, outcome_style(lib.load), Style::Dim});
    }
    out += render_table(rows, styles, term, kSectionIndent);
  }

  if (!load.runs.empty()) {
    out += section_heading(term, "Mapped in the probe process after cuDNN loaded");
    TableRows rows;
    TableStyles styles;
    for (const auto& m : load.mapped) {
      rows.push_back(
          {version_text(m.version), m.inside_environment ? "environment" : "OUTSIDE", m.path});
      styles.push_back(
          {Style::Bold, m.inside_environment ? Style::Green : Style::Red, Style::Plain});
    }
    if (rows.empty()) {
      rows.push_back({"none"});
      styles.push_back({Style::Dim});
    }
    out += render_table(rows, styles, term, kSectionIndent);
  }
  return out;
}

// The GPU section: the kernel check's steps and its result.
std::string gpu_section(const probe::LoadReport& load, const Terminal& term) {
  std::string out = section_heading(term, "GPU");
  const auto& k = load.kernels;
  TableRows rows;
  TableStyles styles;
  for (const auto& s : k.steps) {
    rows.push_back({s.function, call_result(s)});
    styles.push_back(
        {Style::Plain, outcome_style(s.outcome == LoadOutcome::Ok && s.value && *s.value != 0
                                         ? LoadOutcome::Failed
                                         : s.outcome)});
  }
  std::string check;
  if (!load.cudnn_found || load.runs.empty()) {
    check = "not run (no cuDNN to load)";
  } else if (!k.gpu_usable) {
    check = "not possible: no usable GPU";
  } else if (!k.requested) {
    check = "not requested (--run-kernels)";
  } else if (k.result_correct) {
    check =
        *k.result_correct ? "passed: 1x3x8x8 convolution, result correct" : "FAILED: " + k.reason;
  } else {
    check = "FAILED";
  }
  rows.push_back({"kernel check", check});
  styles.push_back({Style::Plain, k.gpu_usable && k.result_correct && *k.result_correct
                                      ? Style::Green
                                      : Style::Bold});
  out += render_table(rows, styles, term, kSectionIndent);
  return out;
}

}  // namespace

std::string render_probe_text(const app::EnvironmentReport& report, const Terminal& term) {
  const auto& load = report.load;
  std::string out;
  auto heading = [&](std::string_view title) { out += section_heading(term, title); };

  out += environment_section(report, term);
  out += cudnn_section(load, term);
  out += library_sections(load, term);
  out += gpu_section(load, term);

  heading("Machine");
  {
    const auto& m = report.machine;
    TableRows rows;
    rows.push_back({"status", std::string(probe::machine_status_name(m.status)), m.verdict});
    if (m.driver) rows.push_back({"driver", m.driver->value.to_string()});
    if (m.cuda_ceiling) rows.push_back({"CUDA ceiling", m.cuda_ceiling->value.to_string()});
    if (m.gpu_archs) {
      std::string archs;
      for (const auto& a : m.gpu_archs->value)
        archs += (archs.empty() ? "" : ", ") + a.to_string();
      rows.push_back({"GPU archs", archs});
    }
    out += render_table(rows, {}, term, kSectionIndent);
  }

  if (!report.packages.empty()) {
    heading("Lock");
    TableRows rows;
    TableStyles styles;
    for (const auto& p : report.packages) {
      rows.push_back({p.name, "lock " + p.locked,
                      p.installed.empty() ? "not installed" : "installed " + p.installed,
                      p.matches ? "ok" : "differs"});
      styles.push_back(
          {Style::Plain, Style::Plain, Style::Bold, p.matches ? Style::Green : Style::Red});
    }
    out += render_table(rows, styles, term, kSectionIndent);
  }

  if (!report.warnings.empty() || !load.warnings.empty()) {
    heading("Warnings");
    for (const auto& w : report.warnings)
      out += labelled_line(term, Style::Yellow, "warning", w);
    for (const auto& w : load.warnings)
      out += labelled_line(term, Style::Yellow, "warning", w);
  }

  heading("Verdict");
  for (const auto& f : report.findings) {
    out += labelled_line(term, severity_style(f.severity), probe::severity_name(f.severity),
                         f.message);
    if (!f.hint.empty()) out += labelled_line(term, Style::Cyan, "hint", f.hint, "    ");
  }
  std::size_t fails = static_cast<std::size_t>(
      std::count_if(report.findings.begin(), report.findings.end(),
                    [](const probe::Finding& f) { return f.severity == probe::Severity::Fail; }));
  if (fails == 0) {
    out += labelled_line(term, Style::Green, "ok", "the environment loads what it should");
  } else {
    out += labelled_line(term, Style::Red, "failed",
                         fmt::format("{} problem{} found", fails, fails == 1 ? "" : "s"));
  }
  return out;
}

namespace {

void version_json(JsonWriter& w, std::string_view key, const std::optional<probe::VersionRead>& v) {
  w.key(key);
  if (!v) {
    w.null();
    return;
  }
  w.begin_object();
  w.field("text", v->text);
  w.field("source", v->source);
  w.end_object();
}

void call_json(JsonWriter& w, const probe::CudnnCall& c) {
  w.begin_object();
  w.field("function", c.function);
  w.field("outcome", std::string(probe::load_outcome_name(c.outcome)));
  w.field("value", c.value);
  w.field("detail", c.detail);
  w.end_object();
}

void library_json(JsonWriter& w, const probe::LibraryReport& lib, bool sublibrary) {
  w.begin_object();
  w.field("soname", lib.soname);
  w.field("name", lib.name);
  if (sublibrary) {
    w.field("loaded_by", lib.loaded_by);
    w.field("required", lib.required);
    w.field("table_source", lib.table_source);
    w.field("in_wheel_dir", lib.in_wheel_dir);
    w.field("wheel_dir", lib.wheel_dir);
  }
  w.field("path", lib.path);
  w.field("real_path", lib.real_path);
  w.key("found_via").value_or_null(lib.found_via, [](const auto& v) {
    return std::string(probe::found_via_id(v));
  });
  w.field("search_entry", lib.search_entry);
  w.field("inside_environment", lib.inside_environment);
  w.field("owner", lib.owner);
  version_json(w, "version", lib.version);
  w.field("load", std::string(probe::load_outcome_name(lib.load)));
  w.field("error", lib.error);
  if (sublibrary) w.field("actually_mapped", lib.actually_mapped);
  w.end_object();
}

// "environment": the interpreter, its site-packages and library dirs, torch, the
// distributions.
void environment_json(JsonWriter& w, const probe::PythonEnvironment& env) {
  w.key("environment").begin_object();
  w.key("python").value_or_null(env.python);
  w.key("python_version").value_or_null(env.python_version);
  w.key("site_packages").begin_array();
  for (const auto& s : env.site_packages)
    w.value(s.string());
  w.end_array();
  w.key("library_dirs").begin_array();
  for (const auto& d : env.library_dirs) {
    w.begin_object();
    w.field("folder", d.folder);
    w.field("path", d.path.string());
    w.end_object();
  }
  w.end_array();
  w.key("torch");
  if (env.torch) {
    w.begin_object();
    w.field("version", env.torch->version);
    w.field("cuda", env.torch->cuda);
    w.field("cudnn_package", env.torch->cudnn_package);
    w.field("cudnn_pin", env.torch->cudnn_pin);
    w.end_object();
  } else {
    w.null();
  }
  w.key("distributions").begin_array();
  for (const auto& d : env.distributions) {
    w.begin_object();
    w.field("name", d.name);
    w.field("version", d.version);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// "cudnn": null when the environment has no cuDNN.
void cudnn_json(JsonWriter& w, const probe::LoadReport& load) {
  w.key("cudnn");
  if (!load.cudnn_found) {
    w.null();
  } else {
    w.begin_object();
    w.field("library", load.cudnn_library);
    w.field("distribution", load.cudnn_distribution);
    w.field("distribution_version", load.cudnn_distribution_version);
    w.key("version").value_or_null(load.cudnn_version, [](const auto& v) { return v.to_string(); });
    w.field("version_raw", load.cudnn_version_raw);
    w.field("cudart_version_raw", load.cudart_version_raw);
    w.field("max_device_version_raw", load.max_device_version_raw);
    w.key("calls").begin_array();
    for (const auto& c : load.calls)
      call_json(w, c);
    w.end_array();
    w.key("version_checks").begin_array();
    for (const auto& c : load.version_checks)
      call_json(w, c);
    w.end_array();
    w.end_object();
  }
}

// "machine": the detected status, driver, CUDA ceiling and GPU archs.
void machine_json(JsonWriter& w, const probe::MachineInfo& machine) {
  w.key("machine").begin_object();
  w.field("status", std::string(probe::machine_status_name(machine.status)));
  w.key("driver").value_or_null(machine.driver, [](const auto& v) { return v.value.to_string(); });
  w.key("cuda_ceiling").value_or_null(machine.cuda_ceiling, [](const auto& v) {
    return v.value.to_string();
  });
  w.key("gpu_archs");
  if (machine.gpu_archs) {
    w.begin_array();
    for (const auto& a : machine.gpu_archs->value)
      w.value(a.to_string());
    w.end_array();
  } else {
    w.null();
  }
  w.end_object();
}

// "lock": null when no lock was compared; else its GPU facts and its packages here.
void lock_json(JsonWriter& w, const app::EnvironmentReport& report) {
  w.key("lock");
  if (report.lock_path.empty()) {
    w.null();
  } else {
    w.begin_object();
    w.field("path", report.lock_path);
    w.key("gpu");
    if (report.lock_gpu) {
      w.begin_object();
      w.field("variant", report.lock_gpu->variant);
      const auto text = [](const auto& v) { return v.to_string(); };
      w.key("cuda").value_or_null(report.lock_gpu->cuda, text);
      w.field("cudnn", report.lock_gpu->cudnn);
      w.key("min_driver").value_or_null(report.lock_gpu->min_driver, text);
      std::vector<std::string> archs;
      for (const auto& a : report.lock_gpu->archs)
        archs.push_back(a.to_string());
      w.field("archs", archs);
      w.end_object();
    } else {
      w.null();
    }
    w.key("packages").begin_array();
    for (const auto& p : report.packages) {
      w.begin_object();
      w.field("name", p.name);
      w.field("locked", p.locked);
      w.key("installed").value_or_null(p.installed);
      w.field("matches", p.matches);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
}

}  // namespace

std::string render_probe_json(const app::EnvironmentReport& report) {
  const auto& load = report.load;
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.probe/1");
  w.field("ok", report.ok());

  environment_json(w, report.environment);

  w.key("loader").begin_object();
  w.field("ld_library_path", load.ld_library_path);
  w.field("ld_cache", load.ld_cache);
  w.field("ld_cache_read", load.ld_cache_read);
  w.end_object();

  cudnn_json(w, load);

  w.key("sublibraries").begin_array();
  for (const auto& lib : load.sublibraries)
    library_json(w, lib, true);
  w.end_array();
  w.key("preloads").begin_array();
  for (const auto& lib : load.preloads)
    library_json(w, lib, false);
  w.end_array();
  w.key("mapped").begin_array();
  for (const auto& m : load.mapped) {
    w.begin_object();
    w.field("path", m.path);
    w.field("inside_environment", m.inside_environment);
    w.field("owner", m.owner);
    version_json(w, "version", m.version);
    w.end_object();
  }
  w.end_array();

  w.key("kernels").begin_object();
  w.field("requested", load.kernels.requested);
  w.field("gpu_usable", load.kernels.gpu_usable);
  w.field("reason", load.kernels.reason);
  w.field("cudart", load.kernels.cudart);
  w.key("steps").begin_array();
  for (const auto& s : load.kernels.steps)
    call_json(w, s);
  w.end_array();
  w.field("result_correct", load.kernels.result_correct);
  w.end_object();

  w.key("runs").begin_array();
  for (const auto& r : load.runs) {
    w.begin_object();
    w.field("outcome", std::string(probe::load_outcome_name(r.outcome)));
    w.field("step", r.step);
    w.field("detail", r.detail);
    w.end_object();
  }
  w.end_array();

  machine_json(w, report.machine);

  lock_json(w, report);

  w.key("findings").begin_array();
  for (const auto& f : report.findings) {
    w.begin_object();
    w.field("id", f.id);
    w.field("severity", std::string(probe::severity_name(f.severity)));
    w.field("subject", f.subject);
    w.field("message", f.message);
    w.field("hint", f.hint);
    w.end_object();
  }
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& s : report.warnings)
    w.value(s);
  for (const auto& s : load.warnings)
    w.value(s);
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace gpulock::cli

// Step 2 of the load probe (load_probe_impl.h): the child process, forked and run with a
// deadline (load_child.h has its side and the protocol), its lines read into the report; a step
// that crashed or hung is recorded and the child run again without it.
#include <charconv>
#include <system_error>

#include <fmt/format.h>

#include "gpulock/sys/process.h"

#include "load_probe_impl.h"

namespace gpulock::probe::detail {
namespace {

std::optional<std::int64_t> to_int(const std::string& s) {
  std::int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return fmt::format("{} s", ms.count() / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(ms.count()) / 1000.0);
}

}  // namespace

CudnnCall* Probe::call_named(std::vector<CudnnCall>& calls, const std::string& fn) {
  for (auto& c : calls) {
    if (c.function == fn) return &c;
  }
  return nullptr;
}

std::optional<std::size_t> Probe::index_field(const std::string& text, std::size_t size) {
  auto v = to_int(text);
  if (!v || *v < 0 || static_cast<std::size_t>(*v) >= size) return std::nullopt;
  return static_cast<std::size_t>(*v);
}

// Applies one protocol line of a run.
void Probe::apply(const std::vector<std::string>& f) {
  const std::string& tag = f[0];
  auto at = [&](std::size_t i) -> const std::string& {
    static const std::string empty;
    return i < f.size() ? f[i] : empty;
  };
  if (tag == "preload") {
    if (auto i = index_field(at(1), report_.preloads.size())) {
      auto& lib = report_.preloads[*i];
      lib.load = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
      lib.error = at(3);
    }
  } else if (tag == "call") {
    if (auto* c = call_named(report_.calls, at(1))) {
      c->outcome = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
      c->value = to_int(at(3));
      c->detail = at(2) == "ok" ? "" : "the function is not exported";
    }
  } else if (tag == "check") {
    if (auto* c = call_named(report_.version_checks, at(1))) {
      c->outcome = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
      c->value = to_int(at(3));
      c->detail = c->value ? cudnn_status_name(static_cast<int>(*c->value))
                           : "the function is not exported";
    }
  } else if (tag == "create") {
    CudnnCall c{"cudnnCreate", LoadOutcome::Ok, to_int(at(1)), {}};
    if (at(1) == "absent") {
      c.outcome = LoadOutcome::Failed;
      c.detail = "the function is not exported";
    } else if (c.value) {
      c.detail = cudnn_status_name(static_cast<int>(*c.value));
      report_.kernels.gpu_usable = *c.value == 0;
      if (*c.value != 0) {
        report_.kernels.reason = fmt::format("cudnnCreate returned {}", c.detail);
        if (!at(2).empty()) report_.kernels.reason += fmt::format(" ({})", at(2));
      }
    }
    report_.kernels.steps.push_back(std::move(c));
  } else if (tag == "kstep") {
    CudnnCall c{at(1), LoadOutcome::Ok, to_int(at(2)), at(3)};
    if (!c.value || *c.value != 0) c.outcome = LoadOutcome::Failed;
    if (c.value && *c.value > 0 && at(1).starts_with("cudnn")) {
      c.detail = cudnn_status_name(static_cast<int>(*c.value));
    } else if (c.value && *c.value == 0 && at(1).starts_with("cudnn")) {
      c.detail = cudnn_status_name(0);
    }
    report_.kernels.steps.push_back(std::move(c));
  } else if (tag == "kresult") {
    report_.kernels.result_correct = at(1) == "ok";
    if (at(1) != "ok")
      report_.kernels.reason = fmt::format("the convolution gave {}, not 27", at(2));
  } else if (tag == "map") {
    MappedLibrary m;
    m.path = at(3);
    m.inside_environment = env_.contains(m.path);
    m.owner = owner_text(env_.owner_of(m.path));
    report_.mapped.push_back(std::move(m));
  } else if (tag == "lib") {
    if (auto j = index_field(at(1), report_.sublibraries.size())) {
      auto& lib = report_.sublibraries[*j];
      lib.load = at(2) == "ok" ? LoadOutcome::Ok : LoadOutcome::Failed;
      lib.error = at(3);
    }
  } else if (tag == "libver") {
    if (auto j = index_field(at(1), report_.sublibraries.size())) {
      report_.sublibraries[*j].version = VersionRead{at(2), at(3)};
    }
  }
}

// Records a crash or hang in the step with this key.
void Probe::mark(const std::string& key, const std::string& text, LoadOutcome outcome,
                 const std::string& detail) {
  auto suffix = [&](std::string_view prefix) -> std::optional<std::string> {
    if (!key.starts_with(prefix)) return std::nullopt;
    return key.substr(prefix.size());
  };
  if (auto i = suffix("preload:")) {
    if (auto n = index_field(*i, report_.preloads.size())) {
      report_.preloads[*n].load = outcome;
      report_.preloads[*n].error = detail;
    }
  } else if (auto fn = suffix("call:")) {
    if (auto* c = call_named(report_.calls, *fn)) {
      c->outcome = outcome;
      c->detail = detail;
    }
  } else if (auto cf = suffix("check:")) {
    if (auto* c = call_named(report_.version_checks, *cf)) {
      c->outcome = outcome;
      c->detail = detail;
    }
  } else if (key == "create" || key.starts_with("kernel:")) {
    report_.kernels.steps.push_back(
        {key == "create" ? std::string("cudnnCreate") : text, outcome, std::nullopt, detail});
    if (key == "create") report_.kernels.reason = fmt::format("cudnnCreate {}", detail);
  } else if (auto j = suffix("lib:")) {
    if (auto n = index_field(*j, report_.sublibraries.size())) {
      report_.sublibraries[*n].load = outcome;
      report_.sublibraries[*n].error = detail;
    }
  }
}

void Probe::run_children() {
  constexpr int kMaxRuns = 4;
  for (int run = 0; run < kMaxRuns; ++run) {
    // Each run starts from a clean slate except for what earlier runs marked as crashed.
    reset_for_run();
    detail::ChildPlan plan = plan_;
    plan.skip = skip_;
    auto child = sys::ChildProcess::fork_call([&plan](int fd) { detail::run_child(plan, fd); });
    if (!child) {
      report_.runs.push_back({LoadOutcome::Failed, "", child.error().message});
      return;
    }
    auto results = sys::wait_all({&*child}, options_.timeout);
    const auto& result = results.front();
    std::string last_key, last_text;
    bool done = false;
    std::size_t start = 0;
    const std::string& out = result.out;
    while (start < out.size()) {
      auto nl = out.find('\n', start);
      if (nl == std::string::npos) break;  // a torn last line
      auto fields = detail::split_fields(std::string_view(out).substr(start, nl - start));
      start = nl + 1;
      if (fields.empty()) continue;
      if (fields[0] == "step" && fields.size() >= 3) {
        last_key = fields[1];
        last_text = fields[2];
      } else if (fields[0] == "done") {
        done = true;
      } else {
        apply(fields);
      }
    }
    // The last step key is the kernel's group key for skipping.
    std::string skip_key = last_key.starts_with("kernel:") ? "kernel" : last_key;
    ChildRun r;
    if (result.end == sys::ChildResult::End::TimedOut) {
      r = {LoadOutcome::TimedOut, last_text,
           fmt::format("no answer after {}; killed", seconds_text(options_.timeout))};
    } else if (result.end == sys::ChildResult::End::Signaled) {
      r = {LoadOutcome::Crashed, last_text,
           fmt::format("died of {}", sys::signal_name(result.code))};
    } else if (!done || result.code != 0) {
      r = {LoadOutcome::Failed, last_text, fmt::format("exited with status {}", result.code)};
    } else {
      r = {LoadOutcome::Ok, "", ""};
    }
    if (r.outcome != LoadOutcome::Ok) {
      std::string detail_text = r.detail;
      if (auto tail = last_lines(result.err, 3); !tail.empty()) detail_text += ": " + tail;
      crashes_.push_back({last_key, last_text, r.outcome, detail_text});
    }
    for (const auto& c : crashes_)
      mark(c.key, c.text, c.outcome, c.detail);
    report_.runs.push_back(std::move(r));
    if (report_.runs.back().outcome == LoadOutcome::Ok) return;
    if (last_key.empty() || skip_.contains(skip_key)) return;  // no progress possible
    skip_.insert(skip_key);
  }
}

std::string Probe::last_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty()) lines.push_back(line);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out;
}

void Probe::reset_for_run() {
  for (auto& l : report_.preloads) {
    l.load = LoadOutcome::NotRun;
    l.error.clear();
  }
  for (auto& l : report_.sublibraries) {
    if (l.path) {
      l.load = LoadOutcome::NotRun;
      l.error.clear();
    }
    l.version.reset();
  }
  for (auto& c : report_.calls)
    c = {c.function, LoadOutcome::NotRun, {}, {}};
  for (auto& c : report_.version_checks)
    c = {c.function, LoadOutcome::NotRun, {}, {}};
  report_.kernels.steps.clear();
  report_.kernels.gpu_usable = false;
  report_.kernels.reason.clear();
  report_.kernels.result_correct.reset();
  report_.mapped.clear();
}

}  // namespace gpulock::probe::detail

// The lock of a solved resolve: one PEP 751 package per chosen candidate (hashed, nightlies
// digested once), why each was chosen, [tool.gpulock] (inputs, target, GPU, snapshot, indexes)
// and the one-line GPU summary; written atomically unless unchanged.

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "gpulock/app/version.h"
#include "gpulock/core/civil_date.h"
#include "gpulock/index/page.h"
#include "gpulock/index/url.h"
#include "gpulock/lock/wheel_files.h"

#include "resolve_steps.h"

namespace gpulock::app::detail {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;

lock::TomlDatetime to_toml_datetime(std::int64_t micros) {
  const core::CivilTime t = core::civil_from_micros(micros);
  lock::TomlDatetime dt;
  dt.date = {static_cast<std::int32_t>(t.date.year), static_cast<std::uint8_t>(t.date.month),
             static_cast<std::uint8_t>(t.date.day)};
  dt.time = {static_cast<std::uint8_t>(t.hour), static_cast<std::uint8_t>(t.minute),
             static_cast<std::uint8_t>(t.second), t.micros * 1000};
  dt.offset_minutes = 0;
  return dt;
}

// The lock file's directory, for recording input paths relative to it.
fs::path lock_dir_of(const std::string& output) {
  std::error_code ec;
  if (output == "-") {
    auto cwd = fs::current_path(ec);
    return ec ? fs::path(".") : cwd;
  }
  fs::path p = fs::absolute(output, ec);
  return ec ? fs::path(output).parent_path() : p.parent_path();
}

// PEP 825 §pylock: `[packages.variants-json]` inlines the release's variant metadata in the
// format of the index's file, keeping `$schema`; only the labels of the wheels listed are kept
// (PEP 825 allows removing the others), and a draft dialect keeps its static properties, which
// ordering needs.
lock::TomlTable variants_json_table(const index::VariantsJson& meta, const std::string& label) {
  auto strings = [](const std::vector<std::string>& v) {
    lock::TomlArray out;
    for (const auto& s : v)
      out.emplace_back(s);
    return out;
  };
  lock::TomlTable out;
  out["$schema"] = meta.schema;
  out["default-priorities"] = lock::TomlTable{{"namespace", strings(meta.namespace_priorities)}};
  lock::TomlTable variants;
  if (auto it = meta.variants.find(label); it != meta.variants.end()) {
    lock::TomlTable namespaces;
    for (const auto& [ns, features] : it->second) {
      lock::TomlTable fs;
      for (const auto& [feature, values] : features)
        fs[feature] = strings(values);
      namespaces[ns] = std::move(fs);
    }
    variants[label] = std::move(namespaces);
  }
  out["variants"] = std::move(variants);
  if (!meta.static_properties.empty()) {
    lock::TomlTable statics;
    for (const auto& [ns, features] : meta.static_properties) {
      lock::TomlTable fs;
      for (const auto& [feature, values] : features)
        fs[feature] = strings(values);
      statics[ns] = std::move(fs);
    }
    if (meta.dialect == index::VariantDialect::WheelnextDraft) {
      out["static-properties"] = std::move(statics);
    } else if (meta.dialect == index::VariantDialect::Pep850) {
      lock::TomlTable providers;
      for (auto& [ns, fs] : statics)
        providers[ns] = lock::TomlTable{{"static-properties", std::move(fs)}};
      out["providers"] = std::move(providers);
    }
  }
  return out;
}

// What the chosen packages say about the lock's GPU record and summary.
struct LockedFacts {
  std::optional<gpu::CudaVersion> locked_cuda;
  std::optional<std::string> cudnn;
  std::optional<std::string> variant;
  // The provider holds its own copy of the config, so sources are matched by URL.
  std::set<std::string> used_sources;
  const resolver::ChosenPackage* torch = nullptr;
  // Every locked wheel: its package's place in the lock and how to read its file list.
  struct Wheel {
    std::size_t package = 0;
    std::string filename;
    index::WheelRef ref;
    std::vector<std::string> missing;    // sonames of its hazards (gpu::wheel_hazards)
    std::vector<std::string> conflicts;  // rules its set breaks (--allow-incomplete)
  };
  std::vector<Wheel> wheels;
};

// Issue 44 item 1: every locked wheel's file list, read from its zip's central directory (all
// at once: two waves of range requests, or the cache) and recorded in the lock as a digest and
// the shared libraries. A list that cannot be read (an --offline run without it in the cache, a
// server that lost the file) leaves that wheel without a record, and says so.
void record_wheel_files(index::IndexClient& client, const LockedFacts& facts, lock::Lock& lk,
                        ResolveResult& result, const Phase& phase) {
  if (facts.wheels.empty()) return;
  phase(fmt::format("Reading the file lists of {} wheels", facts.wheels.size()));
  std::vector<index::WheelRef> refs;
  for (const auto& w : facts.wheels)
    refs.push_back(w.ref);
  auto lists = client.wheel_members(refs);
  std::vector<std::string> unread;
  for (std::size_t i = 0; i < facts.wheels.size() && i < lists.size(); ++i) {
    const auto& w = facts.wheels[i];
    if (!lists[i]) {
      unread.push_back(fmt::format("{} ({})", w.filename, lists[i].error().message));
      continue;
    }
    lock::set_wheel_files(lk.packages[w.package], w.filename,
                          {lists[i]->members.size(), lists[i]->digest, lists[i]->shared_libraries,
                           w.missing, w.conflicts});
  }
  if (!unread.empty()) {
    result.warnings.push_back(fmt::format(
        "the lock records no file list for {} of {} wheels, which could not be read: {}{}",
        unread.size(), facts.wheels.size(), unread.front(),
        unread.size() > 1 ? fmt::format(" and {} more", unread.size() - 1) : ""));
  }
}

// Issue 44 item 3: a wheel chosen although its files leave a hazard (gpu::wheel_hazards), so
// a requirement pinned it exactly: one warning per hazard, naming the pin.
void warn_hazards(const resolver::ChosenPackage& chosen, const catalog::Selection& sel,
                  ResolveResult& result) {
  if (sel.hazards.empty()) return;
  std::string pins;
  std::size_t pinners = 0;
  for (const auto& r : chosen.required_by) {
    if (r.requirement.find("==") == std::string::npos) continue;  // not the pin
    ++pinners;
    if (!pins.empty()) pins += ", ";
    pins += r.package.empty() ? fmt::format("your requirement {}", r.requirement)
                              : fmt::format("{} {} ({})", r.package,
                                            r.version ? r.version->to_string() : "", r.requirement);
  }
  for (const auto& h : sel.hazards) {
    result.warnings.push_back(fmt::format(
        "{} {} ({}) {}; it is locked because {} pin{} it exactly, and the lock records the "
        "missing {}",
        chosen.name, chosen.version.to_string(), sel.file->filename(), h.text(),
        pins.empty() ? std::string("a requirement") : pins, pinners > 1 ? "" : "s", h.file));
  }
}

// Why `chosen` is locked: its source, file, requirers and notes, and (for the torch family and
// packages with a hazard or a conflict rule) the versions passed over for it.
PackageWhy why_chosen(catalog::IndexProvider& provider, const ResolvePlan& plan,
                      const resolver::Solution& solution, const resolver::ChosenPackage& chosen,
                      const catalog::Selection& sel) {
  PackageWhy why;
  why.name = chosen.name;
  why.version = chosen.version.to_string();
  why.source = sel.source ? index::redact_url(sel.source->source.url) : "";
  why.file = sel.file->filename();
  why.required_by = chosen.required_by;
  if (!sel.variant_label.empty())
    why.notes.push_back(fmt::format("variant {} (PEP 825)", sel.variant_label));
  if (sel.cuda) {
    why.notes.push_back(sel.cuda_minor_exact ? fmt::format("needs CUDA {}", sel.cuda->to_string())
                                             : fmt::format("needs CUDA {}.x", sel.cuda->major));
  }
  if (chosen.version.is_prerelease()) why.notes.push_back("a pre-release");
  if (gpu::is_torch_family(chosen.name) ||
      catalog::has_wheel_findings(provider.catalog(), chosen.name, solution)) {
    for (auto& s : catalog::skipped_before(provider.catalog(), chosen.name, chosen.candidate_index,
                                           &solution, provider.hint_writer())) {
      // Versions the requirements never allowed (`torch<2.6`, an `==` pin) explain themselves.
      if (s.kind == "excluded") continue;
      // A named cause is said only when a second solve confirms it (issue 43 item 5): torch
      // 2.8.0 "needs sympy>=1.14, and sympy 1.13.1 was chosen" when the missing torchaudio
      // build kept it out is not.
      if (s.kind == "conflict" && !s.blocker.empty() &&
          !catalog::confirm_blocker(provider, {plan.requirements, plan.constraints},
                                    plan.solve_options, chosen.name, s.version, s.blocker)) {
        s.reason = "conflicts with the other requirements";
        s.hint.clear();
      }
      why.skipped.push_back(
          {s.version.to_string(), std::move(s.kind), std::move(s.reason), std::move(s.hint)});
    }
  }
  return why;
}

// One lock package per chosen candidate, and why it was chosen (result.why).
// `conflicts`: what the set breaks, locked anyway (catalog::set_conflicts under
// --allow-incomplete; without it the solve avoided or refused them).
core::Result<LockedFacts> lock_packages(index::IndexClient& client,
                                        catalog::IndexProvider& provider, const ResolvePlan& plan,
                                        const resolver::Solution& solution,
                                        const std::vector<catalog::SetConflict>& conflicts,
                                        ResolveResult& result, const Phase& phase) {
  LockedFacts facts;
  lock::Lock& lk = result.lock;
  // Issue 44 item 2: a library a wheel's libraries load by name that the set does not ship.
  const auto companions = catalog::companion_gaps(provider.catalog(), solution);
  for (const auto& g : companions) {
    result.warnings.push_back(fmt::format("{}; the lock records the missing {}", g.text, g.file));
  }
  // Issue 44 item 3: each conflict said once, recorded on both wheels.
  for (const auto& c : conflicts) {
    result.warnings.push_back(
        fmt::format("{}; locked anyway (--allow-incomplete), and the lock records it", c.text));
  }
  // The provider holds its own copy of the config, so sources are matched by URL.
  for (const auto& chosen : solution.packages) {
    if (chosen.is_virtual) continue;
    auto sel = catalog::selection(provider.catalog(), chosen.name, chosen.candidate_index);
    if (sel.file == nullptr) {
      return core::fail(ErrorCode::Internal, fmt::format("no file recorded for {} {}", chosen.name,
                                                         chosen.version.to_string()));
    }
    lock::Package p;
    p.name = chosen.name;
    p.version = chosen.version.to_string();
    if (sel.source && sel.source->source.kind == index::SourceKind::SimpleApi) {
      p.index = index::redact_url(sel.source->source.url);
    }
    if (sel.source) facts.used_sources.insert(sel.source->source.url);
    lock::FileEntry f;
    f.url = index::redact_url(sel.file->url());
    if (index::url_basename(sel.file->url()) != sel.file->filename()) f.name = sel.file->filename();
    f.size = sel.file->size();
    if (sel.file->upload_time()) f.upload_time = to_toml_datetime(*sel.file->upload_time());
    for (const auto& h : sel.file->hashes())
      f.hashes[h.algorithm] = h.hex;
    const bool direct_ref = sel.source != nullptr && sel.source->type.is<catalog::Direct>();
    if (direct_ref) {
      // A direct URL wheel is a PEP 751 archive; its URL is written without credentials.
      f.url = index::strip_credentials(sel.file->url());
      f.name.reset();
    }
    if (f.hashes.find("sha256") == f.hashes.end()) {
      // Nightly links carry no hash: download once, streaming, to record sha256 and size.
      phase(fmt::format("Hashing {}", sel.file->filename()));
      auto digest = client.fetch_file_digest(sel.file->url());
      if (!digest) return std::unexpected(digest.error());
      f.hashes["sha256"] = digest->sha256;
      if (!f.size) f.size = digest->size;
    }
    if (sel.file->filename().ends_with(".whl")) {
      LockedFacts::Wheel w;
      w.package = lk.packages.size();
      w.filename = sel.file->filename();
      w.ref.url = sel.file->url();
      w.ref.size = f.size;
      w.ref.sha256 = f.hashes["sha256"];
      for (const auto& h : sel.hazards)
        w.missing.push_back(h.file);
      for (const auto& g : companions) {
        if (g.package == chosen.name) w.missing.push_back(g.file);
      }
      for (const auto& c : conflicts) {
        if (c.package == chosen.name || c.other == chosen.name) w.conflicts.push_back(c.text);
      }
      facts.wheels.push_back(std::move(w));
    }
    if (direct_ref) {
      p.archive = std::move(f);
    } else {
      p.wheels = std::vector<lock::FileEntry>{std::move(f)};
    }
    if (!sel.variant_label.empty() && sel.variants_json) {
      p.unknown["variants-json"] = variants_json_table(*sel.variants_json, sel.variant_label);
      lock::TomlArray props;
      for (const auto& prop : sel.variant_properties)
        props.emplace_back(prop);
      p.tool =
          lock::TomlTable{{"gpulock", lock::TomlTable{{"variant", sel.variant_label},
                                                      {"variant-properties", std::move(props)}}}};
    }
    lk.packages.push_back(std::move(p));

    if (chosen.name == "torch") facts.torch = &chosen;
    if (chosen.name.starts_with("nvidia-cudnn-")) facts.cudnn = chosen.version.to_string();
    if (sel.cuda && (!facts.locked_cuda || *sel.cuda > *facts.locked_cuda))
      facts.locked_cuda = sel.cuda;
    if (chosen.name == "torch") {
      if (sel.build.kind == gpu::BuildKind::Cuda && sel.cuda)
        facts.variant = gpu::variant_name(*sel.cuda);
      else if (sel.build.kind == gpu::BuildKind::Cpu)
        facts.variant = "cpu";
      else if (sel.cuda)
        facts.variant = gpu::variant_name(*sel.cuda);
    }

    result.why.push_back(why_chosen(provider, plan, solution, chosen, sel));
    warn_hazards(chosen, sel, result);
  }
  return facts;
}

// [tool.gpulock].
lock::GpulockTool gpulock_tool(const ResolveRequest& request, const ResolvePlan& plan,
                               const SourceRecords& sources, const LockedFacts& facts,
                               const ResolveResult& result, const fs::path& lock_dir) {
  lock::GpulockTool tool;
  tool.inputs = to_record(request, plan.inputs, lock_dir);
  tool.target = lock::GpulockTarget{};
  tool.target->python = result.target.python_version;
  tool.target->platform = result.target.platform;
  if (!request.target_name.empty()) tool.target->name = request.target_name;

  const auto& ctx = plan.gpu.context;
  if (ctx.ceiling || ctx.no_gpu || facts.locked_cuda) {
    lock::GpulockGpu g;
    if (ctx.driver) g.driver = gpu::DriverSpec::of(*ctx.driver);
    if (ctx.no_gpu) g.driver = gpu::DriverSpec::none();
    g.cuda_ceiling = ctx.ceiling;
    if (!ctx.ceiling_method.empty()) g.method = ctx.ceiling_method;
    g.compat = ctx.compat;
    g.archs = ctx.archs;
    g.variant = facts.variant;
    if (facts.locked_cuda) {
      g.cuda = facts.locked_cuda;
      g.min_driver = gpu::min_driver_for_cuda(*facts.locked_cuda, ctx.compat);
    }
    g.cudnn = facts.cudnn;
    tool.gpu = std::move(g);
  }
  if (plan.exclude_newer || sources.nightly_date) {
    lock::GpulockSnapshot snap;
    if (plan.exclude_newer) snap.exclude_newer = to_toml_datetime(*plan.exclude_newer);
    if (sources.nightly_date) snap.nightly = sources.nightly_date->to_string();
    tool.snapshot = std::move(snap);
  }
  // A source a user-level setting named (issue 41 item 2) is recorded, with that origin, only
  // when it supplied a locked file: one developer's PIP_FIND_LINKS that gave nothing is not
  // part of a shared lock. A pinned index is kept: the recorded --index-for pins name it.
  auto add_record = [&](const catalog::SourceSpec& s) {
    if (!s.origin.empty() && s.type.role != catalog::Role::Pinned &&
        !facts.used_sources.contains(s.source.url))
      return;
    lock::IndexRecord r{s.source.name,
                        index::redact_url(s.source.url),
                        std::string(catalog::recorded_role(s.type)),
                        {},
                        {}};
    if (!s.origin.empty()) r.origin = s.origin;
    tool.indexes.push_back(std::move(r));
  };
  for (const auto& [glob, s] : sources.pinned)
    add_record(s);
  for (const auto& s : sources.torch) {
    if (facts.used_sources.contains(s.source.url)) add_record(s);
  }
  for (const auto& s : sources.general)
    add_record(s);
  return tool;
}

// The one-line GPU summary: the build chosen and what decided it.
void summarize_gpu(const ResolvePlan& plan, catalog::IndexProvider& provider,
                   const LockedFacts& facts, ResolveResult& result) {
  const auto& ctx = plan.gpu.context;
  if (facts.torch == nullptr) return;
  {
    auto sel = catalog::selection(provider.catalog(), "torch", facts.torch->candidate_index);
    std::string v = facts.torch->version.to_string();
    // PEP 825: the release's variant names the build (variant wheels carry no local label).
    if (!sel.variant_label.empty()) v += fmt::format(" (variant {})", sel.variant_label);
    // Credit the driver only when the driver decided (issue 16 item 7): when a newer build was
    // passed over for a conflict, say that the other requirements limited it, naming the
    // requirement when one alone explains it.
    const PackageWhy::Skipped* conflict = nullptr;
    auto twhy = std::find_if(result.why.begin(), result.why.end(),
                             [](const PackageWhy& w) { return w.name == "torch"; });
    if (twhy != result.why.end()) {
      auto k = std::find_if(twhy->skipped.begin(), twhy->skipped.end(),
                            [](const PackageWhy::Skipped& x) { return x.kind == "conflict"; });
      if (k != twhy->skipped.end()) conflict = &*k;
    }
    const bool blocker_named =
        conflict != nullptr && !conflict->reason.starts_with("conflicts with");
    if (conflict != nullptr && !conflict->hint.empty()) result.hints.push_back(conflict->hint);
    const std::string cpu_newer =
        blocker_named ? fmt::format("; torch {} {}", conflict->version, conflict->reason) : "";
    if (ctx.no_gpu) {
      result.gpu_summary =
          fmt::format("torch {}: a CPU build, because --driver none means no GPU{}", v, cpu_newer);
    } else if (sel.cuda && ctx.ceiling) {
      std::string archs;
      for (const auto& a : ctx.archs)
        archs += (archs.empty() ? "" : ", ") + a.to_string();
      // Under --cuda-compat minor a build may be newer than the ceiling, within its major.
      std::string how =
          *sel.cuda > *ctx.ceiling
              ? fmt::format("CUDA {} on {} through minor-version compatibility",
                            sel.cuda->to_string(), ctx.ceiling->to_string())
              : fmt::format(
                    "CUDA {} <= {}{}", sel.cuda->to_string(), ctx.ceiling->to_string(),
                    ctx.compat == gpu::CudaCompat::Minor ? ", minor-version compatibility" : "");
      // A build whose arch list is unknown is bounded by what its CUDA can build: say "assumed".
      std::string kernels = archs.empty() ? std::string()
                            : sel.archs_assumed
                                ? fmt::format(
                                      "; kernels for {} assumed (no arch list is known for "
                                      "this build; CUDA {} can build for {})",
                                      archs, sel.cuda->to_string(), archs)
                                : fmt::format(" with kernels for {}", archs);
      std::string newer =
          blocker_named
              ? fmt::format("torch {} {}", conflict->version, conflict->reason)
              : std::string(
                    "newer builds it runs conflict with the other requirements (see --explain)");
      result.gpu_summary =
          conflict
              ? fmt::format(
                    "torch {}: the newest torch that fits the other requirements; your driver "
                    "{}runs it ({}){}; {}",
                    v, ctx.driver ? ctx.driver->to_string() + " " : "", how, kernels, newer)
              : fmt::format("torch {}: the newest torch whose CUDA build your driver {}runs ({}){}",
                            v, ctx.driver ? ctx.driver->to_string() + " " : "", how, kernels);
    } else if (sel.build.kind == gpu::BuildKind::Cpu) {
      result.gpu_summary = fmt::format("torch {}: a CPU build{}", v, cpu_newer);
    }
  }
}

}  // namespace

core::Status write_lock(const ResolveRequest& request, const ResolvePlan& plan,
                        const SourceRecords& sources, index::IndexClient& client,
                        catalog::IndexProvider& provider, const resolver::Solution& solution,
                        ResolveResult& result, const Phase& phase) {
  phase("Writing the lock");
  auto t_lock = std::chrono::steady_clock::now();
  fs::path lock_dir = lock_dir_of(request.output);
  lock::Lock& lk = result.lock;
  lk.created_by = fmt::format("gpulock {}", version());
  lk.environments = std::vector<std::string>{result.target.environment_marker()};
  lk.requires_python = fmt::format("=={}.*", result.target.python_version);
  lk.extras = std::vector<std::string>{};
  lk.dependency_groups = std::vector<std::string>{};
  lk.default_groups = std::vector<std::string>{};
  const auto conflicts = request.allow_incomplete
                             ? catalog::set_conflicts(provider.catalog(), solution)
                             : std::vector<catalog::SetConflict>{};
  auto facts = lock_packages(client, provider, plan, solution, conflicts, result, phase);
  if (!facts) return std::unexpected(facts.error());
  if (!plan.run.trial) record_wheel_files(client, *facts, lk, result, phase);
  lk.gpulock = gpulock_tool(request, plan, sources, *facts, result, lock_dir);
  lk.command = request.command_line;
  summarize_gpu(plan, provider, *facts, result);

  result.lock_text = lock::to_toml(lk, lock::WriteOptions{request.command_line});
  if (!plan.run.trial && !plan.run.defer_write && request.output != "-" &&
      plan.existing_text != result.lock_text) {
    auto written = write_output(request.output, result.lock_text);
    if (!written) return std::unexpected(written.error());
  }
  result.timings.lock_ms = elapsed_ms(t_lock);
  return {};
}

}  // namespace gpulock::app::detail

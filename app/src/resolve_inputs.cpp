#include "resolve_inputs.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/app/project_file.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/sha256.h"
#include "gpulock/index/url.h"
#include "gpulock/lock/toml_value.h"
#include "gpulock/sys/paths.h"

namespace gpulock::app::detail {

namespace fs = std::filesystem;

core::Result<ResolveInputs> read_resolve_inputs(const ResolveRequest& request) {
  ResolveInputs in;
  for (std::size_t i = 0; i < request.requirements.size(); ++i) {
    auto r = core::Requirement::parse(request.requirements[i]);
    if (!r) {
      core::Error e = r.error();
      // core's message usually names the requirement already ("invalid requirement 'x[': ...").
      if (!e.message.starts_with("invalid requirement")) {
        e.message = fmt::format("invalid requirement {}: {}",
                                core::quote_for_message(request.requirements[i]), e.message);
      }
      e.where = fmt::format("argument {}", i + 1);
      return std::unexpected(std::move(e));
    }
    in.req.requirements.push_back({*r, {"", 0}, {}});
  }
  if (request.project.empty() && (!request.extras.empty() || !request.groups.empty())) {
    return core::fail(core::ErrorCode::Usage, "--extra and --group need --project PYPROJECT");
  }
  for (const auto& f : request.requirement_files) {
    if (auto s = read_requirements_file(f, false, in.req); !s) return std::unexpected(s.error());
  }
  for (const auto& f : request.constraint_files) {
    if (auto s = read_requirements_file(f, true, in.req); !s) return std::unexpected(s.error());
  }
  if (!request.project.empty()) {
    auto text = read_text_file(request.project);
    if (!text) return std::unexpected(text.error());
    auto project =
        read_project_requirements(*text, request.project, request.extras, request.groups);
    if (!project) return std::unexpected(project.error());
    for (auto& r : *project)
      in.req.requirements.push_back(std::move(r));
    in.project_files.emplace_back(request.project, std::move(*text));
  }
  return in;
}

std::string path_relative_to(const fs::path& dir, const std::string& path) {
  std::error_code ec;
  const fs::path absolute = sys::absolute_path(path);
  fs::path rel = fs::relative(absolute, dir, ec);
  if (ec || rel.empty()) return absolute.generic_string();
  return rel.generic_string();
}

lock::GpulockInputs make_inputs_record(const ResolveRequest& request, const ResolveInputs& inputs,
                                       const fs::path& lock_dir) {
  // Small texts hashed on every run: core's portable SHA-256 loads nothing, where index's
  // (OpenSSL EVP, for downloads) would load libcrypto.
  lock::GpulockInputs rec;
  // A direct reference's credentials (`name @ https://user:token@host/...`) are never written.
  for (const auto& r : request.requirements)
    rec.requirements.push_back(index::redact_text(r));
  for (const auto& f : inputs.req.files) {
    rec.files.push_back(
        {path_relative_to(lock_dir, f.path), f.kind, core::sha256_hex(f.content), {}});
  }
  for (const auto& [path, content] : inputs.project_files) {
    rec.files.push_back(
        {path_relative_to(lock_dir, path), "project", core::sha256_hex(content), {}});
  }
  rec.extras = request.extras;
  rec.groups = request.groups;
  // Each typed option in its one spelling (its to_string / name), which read_recorded_options
  // (check --index) parses back with the same parser.
  rec.options["index-strategy"] = index_strategy_name(request.index_strategy);
  rec.options["prerelease"] = resolver::prerelease_policy_name(request.prerelease);
  if (request.torch_backend) rec.options["torch-backend"] = request.torch_backend->to_string();
  if (request.nightly) rec.options["nightly"] = request.nightly->to_string();
  if (request.exclude_newer) rec.options["exclude-newer"] = request.exclude_newer->to_string();
  rec.options["cuda-compat"] = gpu::cuda_compat_name(request.cuda_compat);
  // The machine, when flags described it (issue 16): what the lock was made for. Detected
  // values are [tool.gpulock.gpu]'s, not inputs.
  if (!request.driver.is_auto()) rec.options["driver"] = request.driver.to_string();
  if (!request.cuda_ceiling.empty()) rec.options["cuda-ceiling"] = request.cuda_ceiling;
  if (!request.gpu_arch.empty()) rec.options["gpu-arch"] = request.gpu_arch;
  // `--index-for GLOB=NAME`, in order (the named indexes are [[tool.gpulock.indexes]] records
  // with role "pinned"), so that `check --index` re-resolves with the same pins.
  if (!request.index_for.empty()) {
    std::string pins;
    for (const auto& p : request.index_for)
      pins += (pins.empty() ? "" : ",") + p.to_string();
    rec.options["index-for"] = pins;
  }
  // Configured pins with a marker ([tool.uv.sources]), "GLOB=NAME; MARKER" joined by " | ".
  if (!request.index_for_when.empty()) {
    std::string pins;
    for (const auto& p : request.index_for_when)
      pins += fmt::format("{}{}; {}", pins.empty() ? "" : " | ", p.pin.to_string(), p.marker);
    rec.options["index-for-when"] = pins;
  }
  // The project's configuration files with their sha256 (issue 26), so that `check --inputs`
  // names a changed source. User-level settings are not inputs (issue 41 item 2): one that
  // supplied a locked file is named as the `origin` of its index record.
  for (const auto& path : request.config_files) {
    bool recorded = std::any_of(
        inputs.project_files.begin(), inputs.project_files.end(),
        [&](const auto& f) { return sys::absolute_path(f.first) == sys::absolute_path(path); });
    if (recorded) continue;
    auto content = read_text_file(path);
    rec.files.push_back({path_relative_to(lock_dir, path),
                         "config",
                         core::sha256_hex(content ? *content : std::string()),
                         {}});
  }
  rec.sha256 = core::sha256_hex(lock::canonical_inputs_text(rec));
  return rec;
}

namespace {

// A recorded value its parser refused, naming where the lock has it.
std::unexpected<core::Error> recorded_error(std::string_view field, const core::Error& e) {
  return std::unexpected(core::make_error(e.code, fmt::format("{}: {}", field, e.message)));
}

// One recorded option through its parser; absent keys leave `into` as it is.
template <class Parse, class Into>
core::Status read_option(const lock::GpulockInputs& record, std::string_view key, Parse parse,
                         Into& into) {
  auto it = record.options.find(key);
  if (it == record.options.end() || it->second.empty()) return {};
  auto v = parse(it->second);
  if (!v) return recorded_error(fmt::format("[tool.gpulock.inputs.options] {}", key), v.error());
  into = std::move(*v);
  return {};
}

}  // namespace

core::Status read_recorded_options(const lock::GpulockInputs& record, const lock::GpulockTool& tool,
                                   ResolveRequest& request) {
  core::Status s;
  auto ok = [&](core::Status next) {
    if (s && !next) s = std::move(next);
  };
  ok(read_option(record, "index-strategy", parse_index_strategy, request.index_strategy));
  ok(read_option(record, "prerelease", resolver::parse_prerelease_policy, request.prerelease));
  ok(read_option(record, "cuda-compat", gpu::parse_cuda_compat, request.cuda_compat));
  ok(read_option(record, "torch-backend", TorchBackend::parse, request.torch_backend));
  ok(read_option(record, "nightly", NightlyDate::parse, request.nightly));
  ok(read_option(record, "exclude-newer", ExcludeNewer::parse, request.exclude_newer));
  // `--index-for` pins, as recorded ("GLOB=NAME,GLOB=NAME"; a glob holds no comma).
  if (auto it = record.options.find("index-for"); it != record.options.end()) {
    for (std::string_view pins = it->second; !pins.empty();) {
      auto comma = pins.find(',');
      auto pin = index::IndexPin::parse(pins.substr(0, comma));
      if (!pin) return recorded_error("[tool.gpulock.inputs.options] index-for", pin.error());
      request.index_for.push_back(std::move(*pin));
      pins = comma == std::string_view::npos ? std::string_view() : pins.substr(comma + 1);
    }
  }
  if (auto it = record.options.find("index-for-when"); it != record.options.end()) {
    std::string_view all = it->second;
    for (std::size_t pos = 0; pos <= all.size();) {
      std::size_t bar = all.find(" | ", pos);
      std::string_view one = all.substr(pos, bar == std::string_view::npos ? bar : bar - pos);
      auto semi = one.find("; ");
      auto pin = index::IndexPin::parse(one.substr(0, semi));
      if (!pin || semi == std::string_view::npos) {
        return recorded_error(
            "[tool.gpulock.inputs.options] index-for-when",
            pin ? core::make_error(core::ErrorCode::Usage, "expected GLOB=NAME; MARKER")
                : pin.error());
      }
      request.index_for_when.push_back({std::move(*pin), std::string(one.substr(semi + 2))});
      if (bar == std::string_view::npos) break;
      pos = bar + 3;
    }
  }
  if (!s) return s;
  // The same snapshot: the instant the lock recorded, not "7d before now" again.
  if (tool.snapshot && tool.snapshot->exclude_newer) {
    auto instant = ExcludeNewer::parse(lock::to_toml_text(tool.snapshot->exclude_newer->to_utc()));
    if (!instant) return recorded_error("[tool.gpulock.snapshot] exclude-newer", instant.error());
    request.exclude_newer = std::move(*instant);
  }
  if (tool.target) {
    request.target.python_version = tool.target->python;
    request.target.platform = tool.target->platform;
  }
  if (!tool.gpu) {
    request.driver = gpu::DriverSpec::none();
    return {};
  }
  if (tool.gpu->driver) {
    auto driver = gpu::DriverSpec::parse(*tool.gpu->driver);
    if (!driver) return recorded_error("[tool.gpulock.gpu] driver", driver.error());
    request.driver = std::move(*driver);
  }
  request.cuda_ceiling = tool.gpu->cuda_ceiling.value_or("");
  std::string archs;
  for (const auto& a : tool.gpu->archs)
    archs += (archs.empty() ? "" : ",") + a;
  request.gpu_arch = archs;
  return {};
}

std::string user_origin(const ResolveRequest& request, std::string_view key) {
  for (const auto& s : request.user_settings) {
    if (s.key == key) return s.origin;
  }
  return {};
}

std::vector<GeneralIndex> general_indexes(const ResolveRequest& request,
                                          const RequirementsInput& req) {
  const catalog::Source kDefaultSource{catalog::Simple{}, catalog::Role::Default};
  const catalog::Source kExtraSource{catalog::Simple{}, catalog::Role::Extra};
  const catalog::Source kFindLinksSource{catalog::FindLinks{}, catalog::Role::Extra};
  std::vector<GeneralIndex> out;
  if (!req.no_index) {
    // The configured index only when neither a flag nor a requirements file names one.
    const bool configured = !request.index_url && !req.index_url && request.configured_index_url;
    std::string url = request.index_url.value_or(req.index_url.value_or(
        request.configured_index_url.value_or(std::string(kDefaultIndexUrl))));
    out.push_back({kDefaultSource, index::url_from_user_input(url),
                   configured ? user_origin(request, "index-url") : std::string()});
  }
  // A list key the request has from configuration came whole from one source (apply_config);
  // a requirements file's own lines are project inputs.
  for (const auto& e : request.extra_index_urls)
    out.push_back(
        {kExtraSource, index::url_from_user_input(e), user_origin(request, "extra-index-url")});
  for (const auto& e : req.extra_index_urls)
    out.push_back({kExtraSource, index::url_from_user_input(e), {}});
  for (const auto& l : request.find_links)
    out.push_back({kFindLinksSource, l, user_origin(request, "find-links")});
  for (const auto& l : req.find_links)
    out.push_back({kFindLinksSource, l, {}});
  return out;
}

}  // namespace gpulock::app::detail

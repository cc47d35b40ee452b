// A request and the lock's record of it (resolve_record.h): to_record writes
// [tool.gpulock.inputs], from_record reads a whole lock back into the request that makes it.

#include "gpulock/app/resolve_record.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpulock/app/requirements_file.h"
#include "gpulock/catalog/source.h"
#include "gpulock/core/sha256.h"
#include "gpulock/core/text.h"
#include "gpulock/index/url.h"
#include "gpulock/lock/toml_value.h"
#include "gpulock/sys/paths.h"

#include "resolve_inputs.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;

std::unexpected<core::Error> cannot(std::string message) {
  return std::unexpected(core::make_error(core::ErrorCode::InvalidInput, std::move(message)));
}

// `<base>/<variant>/` or `<base>/nightly/<variant>/` -> `<base>`: the torch family's records
// are its variant indexes, and --torch-index-base is their base.
std::string torch_base_of(const std::string& url) {
  std::string s(core::trim_slash(url));
  auto slash = s.rfind('/');
  if (slash == std::string::npos) return s;
  s = s.substr(0, slash);
  if (s.ends_with("/nightly")) s = s.substr(0, s.size() - 8);
  return s;
}

// The input files: only top-level ones (nested -r/-c files are read through the file that
// includes them), and the indexes those name (resolve adds them again, so the records of those
// indexes are not flags).
core::Status read_files(const lock::GpulockInputs& rec, const fs::path& lock_dir, ResolveRequest& r,
                        std::set<std::string>& from_file_urls) {
  std::set<std::string> nested;
  std::map<std::string, RequirementsInput> read;
  for (const auto& f : rec.files) {
    if (f.kind == "project" || f.kind == "config") continue;
    std::string abs = (lock_dir / fs::path(f.path)).lexically_normal().string();
    RequirementsInput one;
    auto s = read_requirements_file(abs, f.kind == "constraints", one);
    if (!s) return cannot(fmt::format("{} cannot be read: {}", f.path, s.error().to_string()));
    for (std::size_t i = 1; i < one.files.size(); ++i) {
      nested.insert(sys::absolute_path(one.files[i].path).lexically_normal().string());
    }
    read[abs] = std::move(one);
  }
  for (const auto& f : rec.files) {
    std::string abs = (lock_dir / fs::path(f.path)).lexically_normal().string();
    if (f.kind == "project") {
      r.project = abs;
      continue;
    }
    if (f.kind == "config" || nested.contains(abs)) continue;
    (f.kind == "constraints" ? r.constraint_files : r.requirement_files).push_back(abs);
    const auto& in = read[abs];
    for (const auto& u : in.extra_index_urls) {
      from_file_urls.insert(
          index::redact_url(index::IndexSource::simple(index::url_from_user_input(u)).url));
    }
    for (const auto& u : in.find_links) {
      from_file_urls.insert(index::redact_url(index::IndexSource::find_links(u).url));
    }
  }
  return {};
}

// The indexes by their recorded role; a direct reference's record is its requirement's.
void read_indexes(const lock::GpulockTool& tool, const std::set<std::string>& from_file_urls,
                  ResolveRequest& r) {
  for (const auto& ix : tool.indexes) {
    auto source = catalog::read_recorded_role(ix.role);
    if (!source || source->is<catalog::Direct>()) continue;
    const bool from_file = from_file_urls.contains(ix.url);
    if (source->is<catalog::FindLinks>()) {
      if (!from_file) r.find_links.push_back(ix.url);
    } else if (source->role == catalog::Role::Default) {
      r.index_url = ix.url;
    } else if (source->role == catalog::Role::Extra) {
      if (!from_file) r.extra_index_urls.push_back(ix.url);
    } else if (source->role == catalog::Role::Family) {
      r.torch_index_base = torch_base_of(ix.url);
    } else if (source->role == catalog::Role::Pinned && !ix.name.empty()) {
      // One record per pin: an index two pins name is recorded twice, and given once.
      index::NamedIndex named{ix.name, ix.url};
      if (std::find(r.named_indexes.begin(), r.named_indexes.end(), named) ==
          r.named_indexes.end()) {
        r.named_indexes.push_back(std::move(named));
      }
    }
  }
}

// The options through the table's readers (each its flag's own parser), then the snapshot, the
// target and the machine.
core::Status read_options(const lock::GpulockInputs& rec, const lock::GpulockTool& tool,
                          ResolveRequest& r) {
  for (const auto& option : request_options()) {
    if (option.read == nullptr) continue;
    if (auto s = option.read(rec.options, r); !s) return s;
  }
  // The same snapshot: for a relative --exclude-newer ("7d") the instant the lock recorded, not
  // "7d before now" again (a date or a timestamp is that instant already).
  if (tool.snapshot && tool.snapshot->exclude_newer &&
      (!r.exclude_newer || r.exclude_newer->relative())) {
    auto instant = ExcludeNewer::parse(lock::to_toml_text(tool.snapshot->exclude_newer->to_utc()));
    if (!instant) {
      return std::unexpected(core::make_error(
          instant.error().code,
          fmt::format("[tool.gpulock.snapshot] exclude-newer: {}", instant.error().message)));
    }
    r.exclude_newer = std::move(*instant);
  }
  if (tool.target) {
    r.target.python_version = tool.target->python;
    r.target.platform = tool.target->platform;
  }
  // The machine the lock was made for: as flags described it (read above), else the facts of
  // [tool.gpulock.gpu], else no GPU at all.
  if (r.machine != gpu::MachineFlags{}) return {};
  if (!tool.gpu) {
    r.machine.driver = "none";
    return {};
  }
  const lock::GpulockGpu& g = *tool.gpu;
  if (g.driver) r.machine.driver = g.driver->is_auto() ? "" : g.driver->to_string();
  r.machine.cuda_ceiling = g.cuda_ceiling ? g.cuda_ceiling->to_string() : "";
  std::string archs;
  for (const auto& a : g.archs)
    archs += (archs.empty() ? "" : ",") + a.to_string();
  r.machine.gpu_arch = archs;
  return {};
}

}  // namespace

namespace detail {

lock::GpulockInputs to_record(const ResolveRequest& request, const ResolveInputs& inputs,
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
  // Each recorded option in its one spelling (its to_string / name), which from_record parses
  // back with the same parser (the table's rows, resolve_request.h).
  for (const auto& option : request_options()) {
    if (option.record != nullptr) option.record(request, rec.options);
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

}  // namespace detail

core::Result<lock::GpulockInputs> to_record(const ResolveRequest& request,
                                            const fs::path& lock_dir) {
  auto inputs = detail::read_resolve_inputs(request);
  if (!inputs) return std::unexpected(inputs.error());
  return detail::to_record(request, *inputs, lock_dir);
}

core::Result<ResolveRequest> from_record(const lock::Lock& lock, const fs::path& lock_dir) {
  if (!lock.gpulock || !lock.gpulock->inputs) return cannot("the lock records no inputs");
  const auto& tool = *lock.gpulock;
  const auto& rec = *tool.inputs;
  ResolveRequest r;
  r.requirements = rec.requirements;
  r.extras = rec.extras;
  r.groups = rec.groups;
  std::set<std::string> from_file_urls;
  if (auto s = read_files(rec, lock_dir, r, from_file_urls); !s) return std::unexpected(s.error());
  read_indexes(tool, from_file_urls, r);
  if (auto s = read_options(rec, tool, r); !s) {
    return cannot(
        fmt::format("the lock's recorded options do not read: {}", s.error().to_string()));
  }
  if (tool.target && tool.target->name) r.target_name = *tool.target->name;
  r.output = "-";
  return r;
}

}  // namespace gpulock::app

#include "resolve_inputs.h"

#include <fmt/format.h>

#include "gpulock/app/project_file.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/sha256.h"
#include "gpulock/index/url.h"
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
    auto project = read_project_requirements(*text, request.project, request.extras, request.groups);
    if (!project) return std::unexpected(project.error());
    for (auto& r : *project) in.req.requirements.push_back(std::move(r));
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
  for (const auto& r : request.requirements) rec.requirements.push_back(index::redact_text(r));
  for (const auto& f : inputs.req.files) {
    rec.files.push_back({path_relative_to(lock_dir, f.path), f.kind, core::sha256_hex(f.content), {}});
  }
  for (const auto& [path, content] : inputs.project_files) {
    rec.files.push_back({path_relative_to(lock_dir, path), "project", core::sha256_hex(content), {}});
  }
  rec.extras = request.extras;
  rec.groups = request.groups;
  rec.options["index-strategy"] = request.index_strategy;
  rec.options["prerelease"] = request.prerelease;
  if (!request.torch_backend.empty()) rec.options["torch-backend"] = request.torch_backend;
  if (!request.nightly.empty()) rec.options["nightly"] = request.nightly;
  if (!request.exclude_newer.empty()) rec.options["exclude-newer"] = request.exclude_newer;
  rec.options["cuda-compat"] = request.cuda_compat;
  // The machine, when flags described it (issue 16): what the lock was made for. Detected
  // values are [tool.gpulock.gpu]'s, not inputs.
  if (!request.driver.empty() && request.driver != "auto") rec.options["driver"] = request.driver;
  if (!request.cuda_ceiling.empty()) rec.options["cuda-ceiling"] = request.cuda_ceiling;
  if (!request.gpu_arch.empty()) rec.options["gpu-arch"] = request.gpu_arch;
  // `--index-for GLOB=NAME`, in order (the named indexes are [[tool.gpulock.indexes]] records
  // with role "pinned"), so that `check --index` re-resolves with the same pins.
  if (!request.index_for.empty()) {
    std::string pins;
    for (const auto& p : request.index_for) pins += (pins.empty() ? "" : ",") + p;
    rec.options["index-for"] = pins;
  }
  rec.sha256 = core::sha256_hex(lock::canonical_inputs_text(rec));
  return rec;
}

std::vector<GeneralIndex> general_indexes(const ResolveRequest& request,
                                          const RequirementsInput& req) {
  std::vector<GeneralIndex> out;
  if (!req.no_index) {
    std::string url = request.index_url.value_or(req.index_url.value_or(std::string(kDefaultIndexUrl)));
    out.push_back({"default", index::url_from_user_input(url)});
  }
  for (const auto* list : {&request.extra_index_urls, &req.extra_index_urls}) {
    for (const auto& e : *list) out.push_back({"extra", index::url_from_user_input(e)});
  }
  for (const auto* list : {&request.find_links, &req.find_links}) {
    for (const auto& l : *list) out.push_back({"find-links", l});
  }
  return out;
}

}  // namespace gpulock::app::detail

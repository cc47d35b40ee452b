#include "resolve_inputs.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/app/project_file.h"
#include "gpulock/core/requirement.h"
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

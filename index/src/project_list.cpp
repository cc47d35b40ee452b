// The root of a simple index: which projects it serves (see project_list.h).
#include "gpulock/index/project_list.h"

#include <simdjson.h>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/core/text.h"

#include "page_builder.h"

namespace gpulock::index {

namespace {

// The position of `tag` ("<a", "</a") at or after `from`, case-insensitive, followed by a space,
// '>' or '/', or npos.
std::size_t find_tag(std::string_view s, std::string_view tag, std::size_t from) {
  while (from + tag.size() <= s.size()) {
    std::size_t at = s.find('<', from);
    if (at == std::string_view::npos || at + tag.size() > s.size()) return std::string_view::npos;
    bool match = true;
    for (std::size_t i = 1; i < tag.size() && match; ++i)
      match = core::ascii_lower(s[at + i]) == tag[i];
    std::size_t after = at + tag.size();
    if (match && (after == s.size() || detail::is_html_space(s[after]) || s[after] == '>' ||
                  s[after] == '/'))
      return at;
    from = at + 1;
  }
  return std::string_view::npos;
}

void add_name(ProjectList& list, std::string_view text) {
  text = core::trim(text, " \t\r\n\f");
  if (core::is_valid_name(text)) list.names.insert(core::normalize_name(text));
}

core::Result<ProjectList> parse_html(std::string_view html) {
  ProjectList list;
  std::size_t pos = 0;
  while ((pos = find_tag(html, "<a", pos)) != std::string_view::npos) {
    std::size_t open_end = html.find('>', pos);
    if (open_end == std::string_view::npos) break;
    std::size_t close = find_tag(html, "</a", open_end + 1);
    std::size_t text_end = close == std::string_view::npos ? html.size() : close;
    // Text up to the next tag: `<a href="x/">x</a>`; nested markup is not a project name.
    std::string_view text = html.substr(open_end + 1, text_end - open_end - 1);
    if (text.find('<') == std::string_view::npos) add_name(list, text);
    if (close == std::string_view::npos) break;
    pos = close + 3;
  }
  return list;
}

core::Result<ProjectList> parse_json(std::string_view json, std::string_view page_url) {
  auto fail = [&](std::string what) {
    return core::fail_at(core::ErrorCode::IndexFormat,
                         fmt::format("invalid PEP 691 index root: {}", what),
                         std::string(page_url));
  };
  simdjson::padded_string padded(json);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return fail("not valid JSON");
  simdjson::ondemand::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return fail("not a JSON object");
  simdjson::ondemand::array projects;
  auto err = root.find_field_unordered("projects").get_array().get(projects);
  if (err != simdjson::SUCCESS) return fail("no `projects` array");
  ProjectList list;
  std::size_t i = 0;
  for (auto element : projects) {
    simdjson::ondemand::object project;
    if (element.get_object().get(project) != simdjson::SUCCESS)
      return fail(fmt::format("projects[{}] is not an object", i));
    std::string_view name;
    if (project.find_field_unordered("name").get_string().get(name) != simdjson::SUCCESS)
      return fail(fmt::format("projects[{}].name is not a string", i));
    add_name(list, name);
    ++i;
  }
  return list;
}

}  // namespace

core::Result<ProjectList> parse_project_list(std::string_view body, bool json,
                                             std::string_view page_url) {
  return json ? parse_json(body, page_url) : parse_html(body);
}

}  // namespace gpulock::index

#include "gpulock/app/project_file.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/core/text.h"
#include "gpulock/lock/toml_document.h"

namespace gpulock::app {
namespace {

using core::ErrorCode;
using lock::TomlArray;
using lock::TomlTable;
using lock::TomlValue;

// The line of the first quoted occurrence of `needle` in the file (TOML values carry no
// positions once converted), for error messages; 0 when not found.
std::size_t line_of(std::string_view text, std::string_view needle) {
  auto pos = text.find(needle);
  if (pos == std::string_view::npos) return 0;
  return static_cast<std::size_t>(
             std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n')) +
         1;
}

// The line of a `name = ...` key (bare or quoted) at the start of a line; 0 when not found.
std::size_t key_line(std::string_view text, std::string_view name) {
  std::size_t number = 1;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    line = core::trim_left(line, " \t");
    for (std::string_view quote : {"", "\"", "'"}) {
      std::string key = fmt::format("{}{}{}", quote, name, quote);
      if (line.starts_with(key)) {
        std::string_view rest = line.substr(key.size());
        rest = core::trim_left(rest, " \t");
        if (rest.starts_with("=")) return number;
      }
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
    ++number;
  }
  return 0;
}

core::Error invalid(const std::string& path, std::size_t line, std::string message) {
  return core::make_error(ErrorCode::InvalidInput, std::move(message), path, line);
}

const TomlTable* table_at(const TomlTable& root, std::string_view key) {
  auto it = root.find(key);
  if (it == root.end()) return nullptr;
  return it->second.get_if<TomlTable>();
}

core::Status add_requirements(const TomlValue& value, std::string_view text,
                              const std::string& path, std::string_view field,
                              std::vector<RequirementEntry>& out) {
  const auto* array = value.get_if<TomlArray>();
  if (array == nullptr) {
    return std::unexpected(
        invalid(path, line_of(text, field), fmt::format("{} must be an array of strings", field)));
  }
  for (const auto& item : *array) {
    const auto* s = item.get_if<std::string>();
    if (s == nullptr) {
      return std::unexpected(invalid(path, line_of(text, field),
                                     fmt::format("{} must be an array of strings", field)));
    }
    auto req = core::Requirement::parse(*s);
    std::size_t line = line_of(text, *s);
    if (!req) {
      core::Error e = req.error();
      e.where = path;
      e.line = line;
      e.column = 0;
      e.message = fmt::format("invalid requirement {} in {}: {}", core::quote_for_message(*s),
                              field, e.message);
      return std::unexpected(e);
    }
    out.push_back({*req, {path, line}, {}});
  }
  return {};
}

}  // namespace

core::Result<std::vector<RequirementEntry>> read_project_requirements(
    std::string_view text, const std::string& path, const std::vector<std::string>& extras,
    const std::vector<std::string>& groups) {
  auto doc = lock::parse_toml_document(text, path);
  if (!doc) {
    return std::unexpected(doc.error().with_code(ErrorCode::InvalidInput));
  }
  std::vector<RequirementEntry> out;
  const TomlTable* project = table_at(*doc, "project");
  if (project == nullptr && (!extras.empty() || doc->find("dependency-groups") == doc->end())) {
    return std::unexpected(invalid(path, 0, "no [project] table"));
  }
  if (project != nullptr) {
    if (auto it = project->find("dependencies"); it != project->end()) {
      auto s = add_requirements(it->second, text, path, "project.dependencies", out);
      if (!s) return std::unexpected(s.error());
    }
    const TomlTable* optional = table_at(*project, "optional-dependencies");
    for (const auto& extra : extras) {
      std::string wanted = core::normalize_extra(extra);
      const TomlValue* found = nullptr;
      if (optional != nullptr) {
        for (const auto& [key, value] : *optional) {
          if (core::normalize_extra(key) == wanted) found = &value;
        }
      }
      if (found == nullptr) {
        return std::unexpected(
            invalid(path, line_of(text, "optional-dependencies"),
                    fmt::format("the project has no extra {}", core::quote_for_message(extra))));
      }
      auto s = add_requirements(*found, text, path,
                                fmt::format("project.optional-dependencies.{}", extra), out);
      if (!s) return std::unexpected(s.error());
    }
  }

  // PEP 735 dependency groups, with include-group resolved iteratively (a loop is an error).
  const TomlTable* dep_groups = table_at(*doc, "dependency-groups");
  auto find_group = [&](std::string_view name) -> const TomlValue* {
    if (dep_groups == nullptr) return nullptr;
    std::string wanted = core::normalize_name(name);
    for (const auto& [key, value] : *dep_groups) {
      if (core::normalize_name(key) == wanted) return &value;
    }
    return nullptr;
  };
  for (const auto& group : groups) {
    std::vector<std::pair<std::string, std::size_t>> stack{{group, 0}};
    std::vector<std::string> chain;  // normalized names of the open groups, as `stack`
    while (!stack.empty()) {
      auto [name, pos] = stack.back();
      const TomlValue* value = find_group(name);
      if (value == nullptr) {
        return std::unexpected(invalid(
            path, line_of(text, "dependency-groups"),
            fmt::format("the project has no dependency group {}", core::quote_for_message(name))));
      }
      const auto* array = value->get_if<TomlArray>();
      if (array == nullptr) {
        return std::unexpected(invalid(path, line_of(text, name),
                                       fmt::format("dependency group {} must be an array", name)));
      }
      if (pos == 0) {
        std::string key = core::normalize_name(name);
        if (std::find(chain.begin(), chain.end(), key) != chain.end()) {
          // Name the loop as written, at the line of the group that closes it.
          std::string names;
          for (const auto& [open, unused] : stack)
            names += (names.empty() ? "" : " -> ") + open;
          const std::string& closer = stack.size() >= 2 ? stack[stack.size() - 2].first : name;
          std::string message =
              stack.size() == 1 || (stack.size() == 2 && core::normalize_name(closer) == key)
                  ? fmt::format("dependency group {} includes itself",
                                core::quote_for_message(name))
                  : fmt::format("dependency groups include each other in a loop: {}", names);
          return std::unexpected(invalid(path, key_line(text, closer), message));
        }
        chain.push_back(key);
      }
      if (pos >= array->size()) {
        stack.pop_back();
        chain.pop_back();
        continue;
      }
      stack.back().second = pos + 1;
      const TomlValue& item = (*array)[pos];
      if (const auto* s = item.get_if<std::string>()) {
        TomlValue one{TomlArray{TomlValue{*s}}};
        auto st = add_requirements(one, text, path, fmt::format("dependency-groups.{}", name), out);
        if (!st) return std::unexpected(st.error());
      } else if (const auto* t = item.get_if<TomlTable>()) {
        auto inc = t->find("include-group");
        const auto* target = inc == t->end() ? nullptr : inc->second.get_if<std::string>();
        if (target == nullptr) {
          return std::unexpected(
              invalid(path, line_of(text, name),
                      fmt::format("dependency group {}: a table entry needs include-group", name)));
        }
        stack.emplace_back(*target, 0);
      } else {
        return std::unexpected(invalid(
            path, line_of(text, name),
            fmt::format("dependency group {}: entries are strings or {{include-group = ...}}",
                        name)));
      }
    }
  }
  return out;
}

}  // namespace gpulock::app

#pragma once
/// @file
/// The root of a simple index (PEP 503 `/simple/` as HTML, PEP 691 as JSON): the names of the
/// projects it serves. gpulock reads it for the torch source only (small: a few hundred names on
/// download.pytorch.org), to learn which names that source serves for first-index (issue 17);
/// never for a general index (PyPI's root lists 700k names).

#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::index {

/// The projects of an index root, PEP 503 normalized.
struct ProjectList {
  std::set<std::string, std::less<>> names;
  [[nodiscard]] bool serves(std::string_view normalized_name) const {
    return names.count(normalized_name) > 0;
  }
};

using ProjectListPtr = std::shared_ptr<const ProjectList>;

/// Parses a root page: JSON (`{"meta": ..., "projects": [{"name": "..."}]}`) when `json`, else
/// HTML, where each anchor's text is a project name (PEP 503). Names that do not normalize to a
/// valid project name are skipped. Errors (IndexFormat) name `page_url`.
[[nodiscard]] core::Result<ProjectList> parse_project_list(std::string_view body, bool json,
                                                           std::string_view page_url);

}  // namespace gpulock::index

#include "page_builder.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpulock::index::detail {
namespace {

bool ends_with_icase(std::string_view s, std::string_view suffix) noexcept {
  if (s.size() < suffix.size()) return false;
  std::string_view tail = s.substr(s.size() - suffix.size());
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char c = tail[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

bool is_sdist_name(std::string_view filename) noexcept {
  return ends_with_icase(filename, ".tar.gz") || ends_with_icase(filename, ".zip") ||
         ends_with_icase(filename, ".tar.bz2") || ends_with_icase(filename, ".tar.xz") ||
         ends_with_icase(filename, ".tar") || ends_with_icase(filename, ".tgz");
}

}  // namespace

void ascii_lower(std::string& s) noexcept {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
}

std::size_t line_of(std::string_view text, std::size_t offset) noexcept {
  offset = std::min(offset, text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

bool parse_hash_pair(std::string_view text, Hash& out) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 >= text.size()) return false;
  std::string_view algo = text.substr(0, eq);
  std::string_view hex = text.substr(eq + 1);
  for (char c : algo) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  for (char c : hex) {
    bool ok = (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  out.algorithm.assign(algo);
  out.hex.assign(hex);
  ascii_lower(out.algorithm);
  ascii_lower(out.hex);
  return true;
}

bool FileClassifier::accept(DistFile& file) {
  std::string_view name = file.filename;
  std::string reason;
  if (ends_with_icase(name, ".whl")) {
    auto parsed = core::WheelFilename::parse(name);
    if (parsed) {
      file.wheel = std::move(*parsed);
    } else {
      reason = parsed.error().message;
    }
  } else if (is_sdist_name(name)) {
    auto parsed = core::SdistFilename::parse(name);
    if (parsed) {
      file.sdist = std::move(*parsed);
    } else {
      reason = parsed.error().message;
    }
  } else {
    reason = "not a wheel or sdist";
  }
  if (!file.wheel && !file.sdist) {
    if (!filter_.quiet_drops) {
      if (unparseable_ == 0) {
        first_unparseable_ = file.filename;
        first_unparseable_reason_ = std::move(reason);
      }
      ++unparseable_;
    }
    return false;
  }
  if (!filter_.project.empty() && file.project() != filter_.project) {
    if (!filter_.quiet_drops) {
      if (other_project_ == 0) first_other_project_ = file.filename;
      ++other_project_;
    }
    return false;
  }
  return true;
}

void FileClassifier::finish(ProjectPage& page) const {
  if (unparseable_ > 0) {
    page.warnings.push_back(
        unparseable_ == 1
            ? fmt::format("skipped '{}': {}", first_unparseable_, first_unparseable_reason_)
            : fmt::format("skipped {} files that are not valid wheel or sdist names (first: '{}': {})",
                          unparseable_, first_unparseable_, first_unparseable_reason_));
  }
  if (other_project_ > 0) {
    page.warnings.push_back(
        other_project_ == 1
            ? fmt::format("skipped '{}': not a file of project '{}'", first_other_project_, filter_.project)
            : fmt::format("skipped {} files of other projects than '{}' (first: '{}')", other_project_,
                          filter_.project, first_other_project_));
  }
}

}  // namespace gpulock::index::detail

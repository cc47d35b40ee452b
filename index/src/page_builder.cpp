#include "page_builder.h"

#include <algorithm>
#include <array>

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
  return 1 + static_cast<std::size_t>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

namespace {

// 0: not hex; else the lowercase hex digit.
constexpr auto kHexLower = [] {
  std::array<char, 256> t{};
  for (int c = '0'; c <= '9'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<char>(c);
  for (int c = 'a'; c <= 'f'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<char>(c);
  for (int c = 'A'; c <= 'F'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<char>(c - 'A' + 'a');
  return t;
}();

}  // namespace

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
  out.hex.resize(hex.size());
  for (std::size_t i = 0; i < hex.size(); ++i) {
    char h = kHexLower[static_cast<unsigned char>(hex[i])];
    if (h == 0) return false;
    out.hex[i] = h;
  }
  out.algorithm.assign(algo);
  ascii_lower(out.algorithm);
  return true;
}

core::Result<core::WheelFilename> WheelNameMemo::parse(std::string_view filename) {
  // The common shape: name-version-python-abi-platform.whl, printable ASCII.
  if (filename.size() <= 4 || !filename.ends_with(".whl"))
    return core::WheelFilename::parse(filename);
  std::string_view stem = filename.substr(0, filename.size() - 4);
  std::size_t dashes[4];
  std::size_t count = 0;
  for (std::size_t i = 0; i < stem.size(); ++i) {
    auto c = static_cast<unsigned char>(stem[i]);
    if (c <= 0x20 || c >= 0x7f) return core::WheelFilename::parse(filename);
    if (c == '-') {
      if (count == 4) return core::WheelFilename::parse(filename);  // a build tag, or an error
      dashes[count++] = i;
    }
  }
  if (count != 4) return core::WheelFilename::parse(filename);
  std::string_view name = stem.substr(0, dashes[0]);
  std::string_view version = stem.substr(dashes[0] + 1, dashes[1] - dashes[0] - 1);
  std::string_view tags = stem.substr(dashes[1] + 1);

  auto name_it = names_.find(name);
  if (name_it == names_.end()) {
    // First file with this name: the full parse validates the name (and everything else).
    auto full = core::WheelFilename::parse(filename);
    if (!full) return full;
    names_.emplace(std::string(name), full->name);
    versions_.emplace(std::string(version), full->version);
    tags_.emplace(std::string(tags), full->tags);
    return full;
  }
  auto version_it = versions_.find(version);
  if (version_it == versions_.end()) {
    auto v = core::Version::parse(version);
    if (!v) return core::WheelFilename::parse(filename);
    version_it = versions_.emplace(std::string(version), std::move(*v)).first;
  }
  auto tags_it = tags_.find(tags);
  if (tags_it == tags_.end()) {
    auto t = core::parse_tag_set(tags);
    if (!t) return core::WheelFilename::parse(filename);
    tags_it = tags_.emplace(std::string(tags), std::move(*t)).first;
  }
  core::WheelFilename out;
  out.name = name_it->second;
  out.version = version_it->second;
  out.tags = tags_it->second;
  out.python_tag.assign(stem.substr(dashes[1] + 1, dashes[2] - dashes[1] - 1));
  out.abi_tag.assign(stem.substr(dashes[2] + 1, dashes[3] - dashes[2] - 1));
  out.platform_tag.assign(stem.substr(dashes[3] + 1));
  return out;
}

bool FileClassifier::accept(DistFile& file) {
  std::string_view name = file.filename;
  std::string reason;
  if (ends_with_icase(name, ".whl")) {
    auto parsed = wheels_.parse(name);
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
            : fmt::format(
                  "skipped {} files that are not valid wheel or sdist names (first: '{}': {})",
                  unparseable_, first_unparseable_, first_unparseable_reason_));
  }
  if (other_project_ > 0) {
    page.warnings.push_back(
        other_project_ == 1
            ? fmt::format("skipped '{}': not a file of project '{}'", first_other_project_,
                          filter_.project)
            : fmt::format("skipped {} files of other projects than '{}' (first: '{}')",
                          other_project_, filter_.project, first_other_project_));
  }
}

}  // namespace gpulock::index::detail

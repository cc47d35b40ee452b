// The typed view of `[packages.tool.gpulock.files]` (wheel_files.h).
#include "gpulock/lock/wheel_files.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace gpulock::lock {
namespace {

using core::ErrorCode;

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A member path as a zip names it, safe to join to a directory: relative, '/'-separated, no
// empty, `.` or `..` component, no backslash or NUL.
bool is_member_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string_view::npos) return false;
  // No control character (a NUL included): the paths are printed in check's and probe's words.
  if (std::any_of(p.begin(), p.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    return false;
  std::size_t start = 0;
  while (start <= p.size()) {
    auto end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    auto part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

core::Result<WheelFilesMap> wheel_files(const Package& package) {
  WheelFilesMap out;
  auto bad = [&](std::string_view file, std::string what) {
    return core::fail(ErrorCode::InvalidLockfile,
                      fmt::format("package '{}': [packages.tool.gpulock.files] \"{}\": {}",
                                  package.name, file, what));
  };
  if (!package.tool) return out;
  auto g = package.tool->find("gpulock");
  const auto* gpulock = g == package.tool->end() ? nullptr : g->second.get_if<TomlTable>();
  if (gpulock == nullptr) return out;
  auto f = gpulock->find("files");
  if (f == gpulock->end()) return out;
  const auto* table = f->second.get_if<TomlTable>();
  if (table == nullptr) {
    return core::fail(
        ErrorCode::InvalidLockfile,
        fmt::format("package '{}': [packages.tool.gpulock] files is not a table", package.name));
  }
  std::vector<std::string> names;
  for (const FileEntry* file : package.files())
    names.push_back(file->filename());
  for (const auto& [name, value] : *table) {
    if (std::find(names.begin(), names.end(), name) == names.end())
      return bad(name, "names a file the package does not list");
    const auto* t = value.get_if<TomlTable>();
    if (t == nullptr) return bad(name, "is not a table");
    WheelFiles rec;
    auto members = t->find("members");
    const auto* count = members == t->end() ? nullptr : members->second.get_if<std::int64_t>();
    if (count == nullptr || *count < 0) return bad(name, "members is not a non-negative integer");
    rec.members = static_cast<std::uint64_t>(*count);
    auto digest = t->find("members-sha256");
    const auto* hex = digest == t->end() ? nullptr : digest->second.get_if<std::string>();
    if (hex == nullptr || !is_hex64(*hex))
      return bad(name, "members-sha256 is not 64 lowercase hex digits");
    rec.members_sha256 = *hex;
    auto read = [&](const char* key, auto accept, const char* what,
                    std::vector<std::string>& into) -> std::optional<std::string> {
      auto it = t->find(key);
      if (it == t->end()) return std::nullopt;
      const auto* array = it->second.get_if<TomlArray>();
      if (array == nullptr) return fmt::format("{} is not an array", key);
      for (const auto& item : *array) {
        const auto* text = item.get_if<std::string>();
        if (text == nullptr || !accept(*text))
          return fmt::format("{} holds an entry that is not {}", key, what);
        into.push_back(*text);
      }
      return std::nullopt;
    };
    auto is_file_name = [](const std::string& s) {
      return is_member_path(s) && s.find('/') == std::string::npos;
    };
    auto is_sentence = [](const std::string& s) { return !s.empty(); };
    std::optional<std::string> problem =
        read("shared-libraries", is_member_path, "a relative path", rec.shared_libraries);
    if (!problem)
      problem = read("missing-libraries", is_file_name, "a file name", rec.missing_libraries);
    if (!problem) problem = read("conflicts", is_sentence, "a sentence", rec.conflicts);
    if (problem) return bad(name, *problem);
    out.emplace(name, std::move(rec));
  }
  return out;
}

void set_wheel_files(Package& package, std::string_view filename, const WheelFiles& files) {
  // A value of another type where a table belongs is replaced: the record is gpulock's own.
  auto table_at = [](TomlValue& v) -> TomlTable& {
    if (!v.is<TomlTable>()) v = TomlTable{};
    return std::get<TomlTable>(v.data);
  };
  if (!package.tool) package.tool = TomlTable{};
  TomlTable& files_tab = table_at(table_at((*package.tool)["gpulock"])["files"]);
  auto array = [](const std::vector<std::string>& items) {
    TomlArray out;
    for (const auto& item : items)
      out.emplace_back(item);
    return out;
  };
  TomlTable rec{{"members", static_cast<std::int64_t>(files.members)},
                {"members-sha256", files.members_sha256},
                {"shared-libraries", array(files.shared_libraries)}};
  if (!files.missing_libraries.empty()) rec["missing-libraries"] = array(files.missing_libraries);
  if (!files.conflicts.empty()) rec["conflicts"] = array(files.conflicts);
  files_tab[std::string(filename)] = std::move(rec);
}

}  // namespace gpulock::lock

// PEP 751's parts of a pylock.toml as the Reader reads them: lock-version, packages, their
// sources and files, and the checks of their markers, specifiers and filenames.

#include <string>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "gpulock/lock/wheel_files.h"

#include "reader_impl.h"
#include "toml_convert.h"

namespace gpulock::lock::reading {

core::Status Reader::read_lock_version(const toml::table& root) {
  auto v = req_string(root, "lock-version", "at the top level");
  if (!v) return std::unexpected(v.error());
  const std::size_t line = line_of(*root.get("lock-version"));
  const std::string& text = *v;
  // "MAJOR.MINOR" (packaging.pylock: 1 <= Version(lock_version) < 2).
  std::size_t i = 0;
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  bool ok = !text.empty() && text[0] >= '0' && text[0] <= '9';
  while (ok && i < text.size() && text[i] >= '0' && text[i] <= '9' && major < 1000000) {
    major = major * 10 + static_cast<std::uint64_t>(text[i++] - '0');
  }
  if (ok && i < text.size()) {
    ok = text[i] == '.' && i + 1 < text.size();
    ++i;
    while (ok && i < text.size()) {
      if (text[i] == '.') break;
      ok = text[i] >= '0' && text[i] <= '9' && minor < 1000000;
      if (ok) minor = minor * 10 + static_cast<std::uint64_t>(text[i++] - '0');
    }
  }
  if (!ok) {
    return fail(line, fmt::format("lock-version {} is not a version number",
                                  core::quote_for_message(text)));
  }
  if (major != 1) {
    return std::unexpected(
        error(line, fmt::format("unsupported lock-version {}: gpulock reads lock-version 1.x",
                                core::quote_for_message(text)))
            .with_hint("this lock was written for a newer version of the pylock.toml "
                       "specification; use a tool that supports it, or lock again"));
  }
  if (minor > 0) {
    warn(line, fmt::format("lock-version {} is newer than 1.0; keys this gpulock does not know "
                           "are kept but not checked",
                           core::quote_for_message(text)));
  }
  lock_version_ = text;
  return {};
}

core::Result<std::optional<TomlDatetime>> Reader::read_datetime(const toml::table& t,
                                                                std::string_view key,
                                                                std::string_view in) {
  const toml::node* n = get(t, key);
  if (!n) return std::optional<TomlDatetime>{};
  if (!n->is_date_time()) {
    return fail(line_of(*n),
                fmt::format("'{}' {} must be a TOML date-time (e.g. 2025-01-25T11:30:10Z), not {}",
                            key, in, node_type_name(*n)));
  }
  TomlDatetime dt = convert(n->as_date_time()->get());
  if (!dt.offset_minutes) {
    warn(line_of(*n), fmt::format("'{}' {} has no time zone; taken as UTC", key, in));
  } else if (*dt.offset_minutes != 0) {
    warn(line_of(*n),
         fmt::format("'{}' {} is not in UTC (PEP 751 requires UTC); converted", key, in));
  }
  return std::optional<TomlDatetime>(dt.to_utc());
}

core::Result<FileEntry> Reader::read_file(const toml::table& t, std::string_view in,
                                          bool is_archive) {
  FileEntry f;
  f.line.line = line_of(t);
  auto name = opt_string(t, "name", in);
  if (!name) return std::unexpected(name.error());
  f.name = std::move(*name);
  if (is_archive && f.name) {
    // `name` is not an archive key in PEP 751; keep it as unknown rather than model it.
    f.unknown.emplace("name", TomlValue(*f.name));
    warn(line_of(*t.get("name")), fmt::format("unknown key 'name' {} (kept as is)", in));
    f.name.reset();
  }
  auto url = opt_string(t, "url", in);
  if (!url) return std::unexpected(url.error());
  f.url = std::move(*url);
  if (f.url) GPULOCK_TRY(check_field(t, "url", in, url_problem(*f.url)));
  auto path = opt_string(t, "path", in);
  if (!path) return std::unexpected(path.error());
  f.path = std::move(*path);
  if (f.path) GPULOCK_TRY(check_field(t, "path", in, path_problem(*f.path)));
  if (!f.url && !f.path) return fail(f.line.line, fmt::format("{} needs a 'url' or a 'path'", in));
  if (const toml::node* s = get(t, "size")) {
    // A boolean is not an integer (packaging.pylock checks this too; TOML keeps them apart).
    if (!s->is_integer()) {
      return fail(line_of(*s),
                  fmt::format("'size' {} must be an integer, not {}", in, node_type_name(*s)));
    }
    const std::int64_t size = s->as_integer()->get();
    if (size < 0) {
      return fail(line_of(*s), fmt::format("'size' {} must not be negative ({})", in, size));
    }
    if (size > kMaxFileSize) {
      return fail(line_of(*s), fmt::format("'size' {} is {} bytes, over the {} bytes (1 PiB) a "
                                           "file may have",
                                           in, size, kMaxFileSize));
    }
    f.size = static_cast<std::uint64_t>(size);
  }
  auto upload = read_datetime(t, "upload-time", in);
  if (!upload) return std::unexpected(upload.error());
  f.upload_time = *upload;
  auto hashes = opt_table(t, "hashes", in);
  if (!hashes) return std::unexpected(hashes.error());
  if (!*hashes) {
    return std::unexpected(
        error(f.line.line,
              fmt::format("{} has no 'hashes' (PEP 751 requires at least one hash)", in))
            .with_hint("lock again with gpulock resolve, which computes missing hashes"));
  }
  for (const auto& [algo, digest] : **hashes) {
    if (!digest.is_string() || digest.as_string()->get().empty()) {
      return fail(line_of(digest),
                  fmt::format("hash '{}' {} must be a non-empty string, not {}", algo.str(), in,
                              digest.is_string() ? "an empty string" : node_type_name(digest)));
    }
    const std::string_view value = digest.as_string()->get();
    if (!is_algorithm_name(algo.str())) {
      return fail(line_of(digest),
                  fmt::format("hash algorithm {} {} is not a hash algorithm's name (lowercase "
                              "letters, digits, '_' and '-')",
                              core::quote_for_message(algo.str()), in));
    }
    if (auto problem = digest_problem(algo.str(), value); !problem.empty()) {
      return fail(line_of(digest), fmt::format("hash '{}' {} {}, not {}", algo.str(), in, problem,
                                               core::quote_for_message(value)));
    }
    f.hashes.emplace(std::string(algo.str()), std::string(value));
  }
  if (f.hashes.empty()) {
    return std::unexpected(
        error(
            line_of(**hashes),
            fmt::format("{} has an empty 'hashes' table (PEP 751 requires at least one hash)", in))
            .with_hint("uv writes 'hashes = {}' for files its index gave no hash for; lock "
                       "again with gpulock resolve, which downloads such files to hash them"));
  }
  if (is_archive) {
    auto sub = opt_string(t, "subdirectory", in);
    if (!sub) return std::unexpected(sub.error());
    f.subdirectory = std::move(*sub);
    auto unknown = unknown_keys(
        t, {"name", "url", "path", "size", "upload-time", "hashes", "subdirectory"}, in);
    f.unknown.merge(unknown);
  } else {
    f.unknown = unknown_keys(t, {"name", "url", "path", "size", "upload-time", "hashes"}, in);
  }
  return f;
}

core::Result<VcsSource> Reader::read_vcs(const toml::table& t, std::string_view in) {
  VcsSource v;
  v.line.line = line_of(t);
  auto type = req_string(t, "type", in);
  if (!type) return std::unexpected(type.error());
  v.type = std::move(*type);
  auto url = opt_string(t, "url", in);
  if (!url) return std::unexpected(url.error());
  v.url = std::move(*url);
  // A VCS URL may have any scheme its tool knows (git+ssh, ...); still one line of text.
  if (v.url) GPULOCK_TRY(check_field(t, "url", in, path_problem(*v.url)));
  auto path = opt_string(t, "path", in);
  if (!path) return std::unexpected(path.error());
  v.path = std::move(*path);
  if (v.path) GPULOCK_TRY(check_field(t, "path", in, path_problem(*v.path)));
  if (!v.url && !v.path) return fail(v.line.line, fmt::format("{} needs a 'url' or a 'path'", in));
  auto rev = opt_string(t, "requested-revision", in);
  if (!rev) return std::unexpected(rev.error());
  v.requested_revision = std::move(*rev);
  auto commit = req_string(t, "commit-id", in);
  if (!commit) return std::unexpected(commit.error());
  v.commit_id = std::move(*commit);
  auto sub = opt_string(t, "subdirectory", in);
  if (!sub) return std::unexpected(sub.error());
  v.subdirectory = std::move(*sub);
  v.unknown = unknown_keys(
      t, {"type", "url", "path", "requested-revision", "commit-id", "subdirectory"}, in);
  return v;
}

core::Result<DirectorySource> Reader::read_directory(const toml::table& t, std::string_view in) {
  DirectorySource d;
  d.line.line = line_of(t);
  auto path = req_string(t, "path", in);
  if (!path) return std::unexpected(path.error());
  d.path = std::move(*path);
  GPULOCK_TRY(check_field(t, "path", in, path_problem(d.path)));
  if (const toml::node* e = get(t, "editable")) {
    if (!e->is_boolean()) {
      return fail(line_of(*e),
                  fmt::format("'editable' {} must be a boolean, not {}", in, node_type_name(*e)));
    }
    d.editable = e->as_boolean()->get();
  }
  auto sub = opt_string(t, "subdirectory", in);
  if (!sub) return std::unexpected(sub.error());
  d.subdirectory = std::move(*sub);
  d.unknown = unknown_keys(t, {"path", "editable", "subdirectory"}, in);
  return d;
}

core::Result<std::optional<std::vector<TomlTable>>> Reader::read_tables(const toml::table& t,
                                                                        std::string_view key,
                                                                        std::string_view in,
                                                                        bool need_kind) {
  auto arr = opt_table_array(t, key, in);
  if (!arr) return std::unexpected(arr.error());
  if (!*arr) return std::optional<std::vector<TomlTable>>{};
  std::vector<TomlTable> out;
  for (const auto& e : **arr) {
    const toml::table& et = *e.as_table();
    if (need_kind) {
      auto kind = req_string(et, "kind", fmt::format("in '{}' {}", key, in));
      if (!kind) return std::unexpected(kind.error());
    }
    TomlValue v = to_value(e);
    out.push_back(std::move(*std::get_if<TomlTable>(&v.data)));
  }
  return std::optional<std::vector<TomlTable>>(std::move(out));
}

core::Status Reader::check_marker(const std::string& text, std::size_t line,
                                  std::string_view what) {
  auto m = core::Marker::parse(text);
  if (!m) {
    return fail(line, fmt::format("{} {} is not a valid marker: {}", what,
                                  core::quote_for_message(text), m.error().to_string()));
  }
  return {};
}

core::Status Reader::check_specifier(const std::string& text, std::size_t line,
                                     std::string_view what) {
  auto s = core::SpecifierSet::parse(text);
  if (!s) {
    return fail(line, fmt::format("{} {} is not a valid version specifier: {}", what,
                                  core::quote_for_message(text), s.error().to_string()));
  }
  return {};
}

// packaging.pylock: a wheel's/sdist's file name must parse and agree with the package's name
// and version. Unlike packaging 26.3, a PEP 825 (Draft) variant label is accepted in a wheel's
// name: PEP 825's pylock section lists variant wheels.
core::Status Reader::check_filename(const Package& p, const FileEntry& f, bool wheel,
                                    std::size_t line) {
  const std::string filename = f.filename();
  std::string name;
  std::optional<core::Version> version;
  if (wheel) {
    auto w = core::WheelFilename::parse_with_variant(filename);
    if (!w) {
      return fail(line, fmt::format("wheel file name {} of package '{}' is invalid: {}",
                                    core::quote_for_message(filename), p.name, w.error().message));
    }
    name = w->name;
    version = w->version;
  } else {
    auto s = core::SdistFilename::parse(filename);
    if (!s) {
      return fail(line, fmt::format("sdist file name {} of package '{}' is invalid: {}",
                                    core::quote_for_message(filename), p.name, s.error().message));
    }
    name = s->name;
    version = s->version;
  }
  if (core::normalize_name(name) != p.name) {
    return fail(line, fmt::format("file {} is not a file of package '{}'",
                                  core::quote_for_message(filename), p.name));
  }
  if (p.version) {
    auto pv = core::Version::parse(*p.version);
    if (pv && version && !(*pv == *version)) {
      return fail(line, fmt::format("file {} has version {}, but package '{}' has version {}",
                                    core::quote_for_message(filename), version->to_string(), p.name,
                                    *p.version));
    }
  }
  return {};
}
core::Result<Package> Reader::read_package(const toml::table& t, std::size_t index) {
  Package p;
  p.line.line = line_of(t);
  const std::string anonymous = fmt::format("in package {} (line {})", index + 1, p.line.line);
  auto name = req_string(t, "name", anonymous);
  if (!name) return std::unexpected(name.error());
  p.name = std::move(*name);
  const std::size_t name_line = line_of(*t.get("name"));
  if (!core::is_valid_name(p.name)) {
    return fail(name_line, fmt::format("package name {} is not a valid project name",
                                       core::quote_for_message(p.name)));
  }
  if (core::normalize_name(p.name) != p.name) {
    return fail(name_line,
                fmt::format("package name {} is not normalized (PEP 751 requires the "
                            "normalized name '{}')",
                            core::quote_for_message(p.name), core::normalize_name(p.name)));
  }
  const std::string in = fmt::format("in package '{}'", p.name);

  auto version = opt_string(t, "version", in);
  if (!version) return std::unexpected(version.error());
  p.version = std::move(*version);
  if (p.version) {
    auto v = core::Version::parse(*p.version);
    if (!v) {
      return fail(line_of(*t.get("version")),
                  fmt::format("version {} of package '{}' is not a valid version",
                              core::quote_for_message(*p.version), p.name));
    }
  }
  auto marker = opt_string(t, "marker", in);
  if (!marker) return std::unexpected(marker.error());
  p.marker = std::move(*marker);
  if (p.marker) {
    GPULOCK_TRY(check_marker(*p.marker, line_of(*t.get("marker")),
                             fmt::format("marker of package '{}'", p.name)));
  }
  auto rp = opt_string(t, "requires-python", in);
  if (!rp) return std::unexpected(rp.error());
  p.requires_python = std::move(*rp);
  if (p.requires_python) {
    GPULOCK_TRY(check_specifier(*p.requires_python, line_of(*t.get("requires-python")),
                                fmt::format("requires-python of package '{}'", p.name)));
  }
  auto deps = read_tables(t, "dependencies", in, false);
  if (!deps) return std::unexpected(deps.error());
  p.dependencies = std::move(*deps);
  auto index_url = opt_string(t, "index", in);
  if (!index_url) return std::unexpected(index_url.error());
  p.index = std::move(*index_url);
  if (p.index) GPULOCK_TRY(check_field(t, "index", in, path_problem(*p.index)));
  auto att = read_tables(t, "attestation-identities", in, true);
  if (!att) return std::unexpected(att.error());
  p.attestation_identities = std::move(*att);

  GPULOCK_TRY(read_package_sources(t, in, p));

  auto tool = opt_table(t, "tool", in);
  if (!tool) return std::unexpected(tool.error());
  if (*tool) {
    TomlValue v = to_value(**tool);
    p.tool = std::move(*std::get_if<TomlTable>(&v.data));
    // gpulock's own record of the wheels' files (issue 44) is checked as any other field.
    auto files = wheel_files(p);
    if (!files) return std::unexpected(error(line_of(**tool), files.error().message));
  }
  p.unknown =
      unknown_keys(t,
                   {"name", "version", "marker", "requires-python", "dependencies", "index", "vcs",
                    "directory", "archive", "sdist", "wheels", "attestation-identities", "tool"},
                   in);
  return p;
}

// The package's source: one of vcs, directory or archive, or an sdist and/or wheels.
core::Status Reader::read_package_sources(const toml::table& t, std::string_view in, Package& p) {
  auto vcs = opt_table(t, "vcs", in);
  if (!vcs) return std::unexpected(vcs.error());
  if (*vcs) {
    auto v = read_vcs(**vcs, fmt::format("in the vcs source of package '{}'", p.name));
    if (!v) return std::unexpected(v.error());
    p.vcs = std::move(*v);
  }
  auto dir = opt_table(t, "directory", in);
  if (!dir) return std::unexpected(dir.error());
  if (*dir) {
    auto d = read_directory(**dir, fmt::format("in the directory source of package '{}'", p.name));
    if (!d) return std::unexpected(d.error());
    p.directory = std::move(*d);
  }
  auto archive = opt_table(t, "archive", in);
  if (!archive) return std::unexpected(archive.error());
  if (*archive) {
    auto a = read_file(**archive, fmt::format("in the archive of package '{}'", p.name), true);
    if (!a) return std::unexpected(a.error());
    p.archive = std::move(*a);
  }
  auto sdist = opt_table(t, "sdist", in);
  if (!sdist) return std::unexpected(sdist.error());
  if (*sdist) {
    auto s = read_file(**sdist, fmt::format("in the sdist of package '{}'", p.name), false);
    if (!s) return std::unexpected(s.error());
    GPULOCK_TRY(check_filename(p, *s, false, s->line.line));
    p.sdist = std::move(*s);
  }
  auto wheels = opt_table_array(t, "wheels", in);
  if (!wheels) return std::unexpected(wheels.error());
  if (*wheels) {
    p.wheels.emplace();
    std::size_t i = 0;
    for (const auto& e : **wheels) {
      ++i;
      auto w =
          read_file(*e.as_table(), fmt::format("in wheel {} of package '{}'", i, p.name), false);
      if (!w) return std::unexpected(w.error());
      GPULOCK_TRY(check_filename(p, *w, true, w->line.line));
      p.wheels->push_back(std::move(*w));
    }
  }
  const int trees = (p.vcs ? 1 : 0) + (p.directory ? 1 : 0) + (p.archive ? 1 : 0);
  const bool dists = p.sdist.has_value() || (p.wheels && !p.wheels->empty());
  if (trees > 1 || (trees == 1 && (p.sdist || p.wheels))) {
    std::vector<std::string> kinds;
    for (auto [has, kind] :
         {std::pair{p.vcs.has_value(), "vcs"}, std::pair{p.directory.has_value(), "directory"},
          std::pair{p.archive.has_value(), "archive"}, std::pair{p.sdist.has_value(), "sdist"},
          std::pair{p.wheels.has_value(), "wheels"}}) {
      if (has) kinds.emplace_back(kind);
    }
    return fail(p.line.line,
                fmt::format("package '{}' has more than one kind of source ({}); PEP 751 allows "
                            "exactly one of vcs, directory, archive, or sdist and/or wheels",
                            p.name, fmt::join(kinds, ", ")));
  }
  if (trees == 0 && !dists) {
    return fail(p.line.line, fmt::format("package '{}' has no source: give one of vcs, "
                                         "directory, archive, or sdist and/or wheels",
                                         p.name));
  }
  return {};
}

}  // namespace gpulock::lock::reading

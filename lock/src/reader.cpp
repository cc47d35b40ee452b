// pylock.toml reader: toml++ parses TOML 1.0; this file enforces PEP 751 (canonical spec
// "pylock.toml Specification") and the extra checks of pypa/packaging's `packaging.pylock`, and
// builds the model. No toml++ exception escapes: parse errors become InvalidLockfile errors with
// the file, line and column.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <sys/stat.h>
#include <toml++/toml.h>

#include "gpulock/core/filename.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/text.h"
#include "gpulock/core/version.h"
#include "gpulock/lock/lockfile.h"

#include "header_comment.h"
#include "toml_convert.h"

namespace gpulock::lock {
namespace {

using core::ErrorCode;

// Propagates the error of a Status-returning call.
#define GPULOCK_TRY(expr)                                 \
  do {                                                    \
    if (auto status_ = (expr); !status_) {                \
      return std::unexpected(std::move(status_.error())); \
    }                                                     \
  } while (false)

constexpr std::size_t kMaxWarnings = 50;

std::string_view node_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

std::size_t line_of(const toml::node& n) {
  return n.source().begin.line;
}

// ---- field checks ---------------------------------------------------------------------------
// A lock is input: its hashes become path components (the install cache's
// <cache>/wheels-v1/<sha256>, the mirror's store), its URLs are fetched and its paths opened.
// Every such field is checked when read, so no later step sees a hostile value.

// Sizes above this (1 PiB) are refused: no wheel is that large, and sums stay far from overflow.
constexpr std::int64_t kMaxFileSize = std::int64_t{1} << 50;

bool is_control(char c) noexcept {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

bool has_control(std::string_view s) noexcept {
  return std::any_of(s.begin(), s.end(), is_control);
}

bool is_lower_hex(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A hash algorithm's name as hashlib spells it: lowercase letters, digits, '_' and '-'.
bool is_algorithm_name(std::string_view s) noexcept {
  return !s.empty() && s.size() <= 32 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// Empty when `digest` is a plausible digest for `algorithm`, else what is wrong with it: sha256
// exactly 64 lowercase hex digits, others 32 to 128 (md5 to sha512).
std::string digest_problem(std::string_view algorithm, std::string_view digest) {
  if (algorithm == "sha256") {
    if (digest.size() == 64 && is_lower_hex(digest)) return {};
    return "must be 64 lowercase hex digits";
  }
  if (digest.size() >= 32 && digest.size() <= 128 && digest.size() % 2 == 0 &&
      is_lower_hex(digest)) {
    return {};
  }
  return "must be an even number (32 to 128) of lowercase hex digits";
}

// Empty when `url` is a URL gpulock may fetch a file from, else what is wrong with it.
std::string url_problem(std::string_view url) {
  if (url.empty()) return "is empty";
  if (std::any_of(url.begin(), url.end(), [](char c) { return c == ' ' || is_control(c); })) {
    return "contains whitespace or a control character";
  }
  const auto colon = url.find(':');
  std::string scheme;
  if (colon != std::string_view::npos) {
    for (char c : url.substr(0, colon))
      scheme.push_back(core::ascii_lower(c));
  }
  const std::string_view rest = colon == std::string_view::npos ? url : url.substr(colon + 1);
  if (scheme == "http" || scheme == "https") {
    if (rest.starts_with("//") && rest.size() > 2) return {};
    return fmt::format("is not an absolute {} URL ({}://host/...)", scheme, scheme);
  }
  if (scheme == "file") {
    if (rest.starts_with("/")) return {};
    return "is not a file URL with an absolute path (file:///...)";
  }
  return "must be an http, https or file URL";
}

// Empty when `path` may name a local file, else what is wrong with it.
std::string path_problem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (has_control(path)) return "contains a control character";
  return {};
}

class Reader {
 public:
  explicit Reader(std::string_view where) : where_(where) {}

  core::Result<LockFile> read(std::string_view text);

 private:
  // ---- errors and warnings -------------------------------------------------------------
  core::Error error(std::size_t line, std::string message) const {
    return core::make_error(ErrorCode::InvalidLockfile, std::move(message), where_, line);
  }
  std::unexpected<core::Error> fail(std::size_t line, std::string message) const {
    return std::unexpected(error(line, std::move(message)));
  }
  void warn(std::size_t line, std::string message) {
    ++warning_count_;
    if (warnings_.size() < kMaxWarnings) {
      core::Error e = error(line, std::move(message));
      warnings_.push_back(std::move(e));
    }
  }

  // ---- typed access: each returns an error naming the key, its table and the line --------
  const toml::node* get(const toml::table& t, std::string_view key) const { return t.get(key); }

  core::Result<std::optional<std::string>> opt_string(const toml::table& t, std::string_view key,
                                                      std::string_view in) const {
    const toml::node* n = get(t, key);
    if (!n) return std::optional<std::string>{};
    if (!n->is_string()) {
      return fail(line_of(*n),
                  fmt::format("'{}' {} must be a string, not {}", key, in, node_type_name(*n)));
    }
    return std::optional<std::string>(std::string(n->as_string()->get()));
  }

  core::Result<std::string> req_string(const toml::table& t, std::string_view key,
                                       std::string_view in) const {
    auto v = opt_string(t, key, in);
    if (!v) return std::unexpected(v.error());
    if (!*v) return fail(line_of(t), fmt::format("'{}' is required {}", key, in));
    return std::move(**v);
  }

  core::Result<std::optional<std::vector<std::string>>> opt_string_array(
      const toml::table& t, std::string_view key, std::string_view in) const {
    const toml::node* n = get(t, key);
    if (!n) return std::optional<std::vector<std::string>>{};
    if (!n->is_array()) {
      return fail(line_of(*n), fmt::format("'{}' {} must be an array of strings, not {}", key, in,
                                           node_type_name(*n)));
    }
    std::vector<std::string> out;
    for (const auto& e : *n->as_array()) {
      if (!e.is_string()) {
        return fail(line_of(e), fmt::format("'{}' {} must be an array of strings, found {}", key,
                                            in, node_type_name(e)));
      }
      out.emplace_back(e.as_string()->get());
    }
    return std::optional<std::vector<std::string>>(std::move(out));
  }

  core::Result<const toml::table*> opt_table(const toml::table& t, std::string_view key,
                                             std::string_view in) const {
    const toml::node* n = get(t, key);
    if (!n) return static_cast<const toml::table*>(nullptr);
    if (!n->is_table()) {
      return fail(line_of(*n),
                  fmt::format("'{}' {} must be a table, not {}", key, in, node_type_name(*n)));
    }
    return n->as_table();
  }

  // An array of tables (`[[x]]` or `x = [{...}]`), or nullptr when absent.
  core::Result<const toml::array*> opt_table_array(const toml::table& t, std::string_view key,
                                                   std::string_view in) const {
    const toml::node* n = get(t, key);
    if (!n) return static_cast<const toml::array*>(nullptr);
    if (!n->is_array()) {
      return fail(line_of(*n), fmt::format("'{}' {} must be an array of tables, not {}", key, in,
                                           node_type_name(*n)));
    }
    for (const auto& e : *n->as_array()) {
      if (!e.is_table()) {
        return fail(line_of(e), fmt::format("'{}' {} must be an array of tables, found {}", key, in,
                                            node_type_name(e)));
      }
    }
    return n->as_array();
  }

  // Fails at the line of `t[key]` when `problem` (what is wrong with its value) is not empty.
  core::Status check_field(const toml::table& t, std::string_view key, std::string_view in,
                           const std::string& problem) const {
    if (problem.empty()) return {};
    const toml::node* n = get(t, key);
    const std::string value = n && n->is_string() ? n->as_string()->get() : std::string();
    return fail(n ? line_of(*n) : line_of(t),
                fmt::format("'{}' {} {}: {}", key, in, problem, core::quote_for_message(value)));
  }

  // Keys of `t` not in `known`, kept as generic values, with a warning each.
  TomlTable unknown_keys(const toml::table& t, std::initializer_list<std::string_view> known,
                         std::string_view in) {
    TomlTable out;
    for (const auto& [k, v] : t) {
      bool is_known = false;
      for (auto kk : known)
        is_known |= (k.str() == kk);
      if (is_known) continue;
      warn(line_of(v), fmt::format("unknown key '{}' {} (kept as is)", k.str(), in));
      out.emplace(std::string(k.str()), to_value(v));
    }
    return out;
  }

  // ---- PEP 751 parts --------------------------------------------------------------------
  core::Status read_lock_version(const toml::table& root);
  core::Result<FileEntry> read_file(const toml::table& t, std::string_view in, bool is_archive);
  core::Result<VcsSource> read_vcs(const toml::table& t, std::string_view in);
  core::Result<DirectorySource> read_directory(const toml::table& t, std::string_view in);
  core::Result<std::optional<std::vector<TomlTable>>> read_tables(const toml::table& t,
                                                                  std::string_view key,
                                                                  std::string_view in,
                                                                  bool need_kind);
  core::Result<Package> read_package(const toml::table& t, std::size_t index);
  core::Status check_marker(const std::string& text, std::size_t line, std::string_view what);
  core::Status check_specifier(const std::string& text, std::size_t line, std::string_view what);
  core::Status check_filename(const Package& p, const FileEntry& f, bool wheel, std::size_t line);
  core::Result<std::optional<TomlDatetime>> read_datetime(const toml::table& t,
                                                          std::string_view key,
                                                          std::string_view in);
  core::Status read_tool(const toml::table& tool, Lock& lock);
  core::Result<GpulockTool> read_gpulock(const toml::table& t);

  std::string where_;
  std::vector<core::Error> warnings_;
  std::size_t warning_count_ = 0;
  std::string lock_version_;
};

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

  // Sources.
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

  auto tool = opt_table(t, "tool", in);
  if (!tool) return std::unexpected(tool.error());
  if (*tool) {
    TomlValue v = to_value(**tool);
    p.tool = std::move(*std::get_if<TomlTable>(&v.data));
  }
  p.unknown =
      unknown_keys(t,
                   {"name", "version", "marker", "requires-python", "dependencies", "index", "vcs",
                    "directory", "archive", "sdist", "wheels", "attestation-identities", "tool"},
                   in);
  return p;
}

core::Result<GpulockTool> Reader::read_gpulock(const toml::table& t) {
  GpulockTool g;
  g.line.line = line_of(t);
  constexpr std::string_view in = "in [tool.gpulock]";
  g.schema = t.get("schema")->as_integer()->get();
  if (auto arr = opt_table_array(t, "indexes", in); !arr) {
    return std::unexpected(arr.error());
  } else if (*arr) {
    for (const auto& e : **arr) {
      const toml::table& et = *e.as_table();
      constexpr std::string_view iin = "in [[tool.gpulock.indexes]]";
      IndexRecord r;
      auto name = req_string(et, "name", iin);
      if (!name) return std::unexpected(name.error());
      auto url = req_string(et, "url", iin);
      if (!url) return std::unexpected(url.error());
      auto role = req_string(et, "role", iin);
      if (!role) return std::unexpected(role.error());
      r.name = std::move(*name);
      r.url = std::move(*url);
      r.role = std::move(*role);
      auto origin = opt_string(et, "origin", iin);
      if (!origin) return std::unexpected(origin.error());
      r.origin = std::move(*origin);
      r.unknown = unknown_keys(et, {"name", "url", "role", "origin"}, iin);
      g.indexes.push_back(std::move(r));
    }
  }
  auto strs = [&](const toml::table& tt, std::string_view key,
                  std::string_view tin) -> core::Result<std::vector<std::string>> {
    auto v = opt_string_array(tt, key, tin);
    if (!v) return std::unexpected(v.error());
    return *v ? std::move(**v) : std::vector<std::string>{};
  };

  auto inputs = opt_table(t, "inputs", in);
  if (!inputs) return std::unexpected(inputs.error());
  if (*inputs) {
    const toml::table& it = **inputs;
    constexpr std::string_view iin = "in [tool.gpulock.inputs]";
    GpulockInputs x;
    x.line.line = line_of(it);
    auto reqs = strs(it, "requirements", iin);
    if (!reqs) return std::unexpected(reqs.error());
    x.requirements = std::move(*reqs);
    auto files = opt_table_array(it, "files", iin);
    if (!files) return std::unexpected(files.error());
    if (*files) {
      for (const auto& e : **files) {
        const toml::table& ft = *e.as_table();
        constexpr std::string_view fin = "in [tool.gpulock.inputs] files";
        InputFile f;
        auto path = req_string(ft, "path", fin);
        if (!path) return std::unexpected(path.error());
        auto kind = req_string(ft, "kind", fin);
        if (!kind) return std::unexpected(kind.error());
        auto sha = req_string(ft, "sha256", fin);
        if (!sha) return std::unexpected(sha.error());
        f.path = std::move(*path);
        f.kind = std::move(*kind);
        f.sha256 = std::move(*sha);
        f.unknown = unknown_keys(ft, {"path", "kind", "sha256"}, fin);
        x.files.push_back(std::move(f));
      }
    }
    auto extras = strs(it, "extras", iin);
    if (!extras) return std::unexpected(extras.error());
    x.extras = std::move(*extras);
    auto groups = strs(it, "groups", iin);
    if (!groups) return std::unexpected(groups.error());
    x.groups = std::move(*groups);
    auto options = opt_table(it, "options", iin);
    if (!options) return std::unexpected(options.error());
    if (*options) {
      for (const auto& [k, v] : **options) {
        if (!v.is_string()) {
          return fail(line_of(v), fmt::format("option '{}' in [tool.gpulock.inputs.options] "
                                              "must be a string, not {}",
                                              k.str(), node_type_name(v)));
        }
        x.options.emplace(std::string(k.str()), std::string(v.as_string()->get()));
      }
    }
    auto sha = opt_string(it, "sha256", iin);
    if (!sha) return std::unexpected(sha.error());
    x.sha256 = sha->value_or("");
    x.unknown =
        unknown_keys(it, {"requirements", "files", "extras", "groups", "options", "sha256"}, iin);
    g.inputs = std::move(x);
  }

  auto target = opt_table(t, "target", in);
  if (!target) return std::unexpected(target.error());
  if (*target) {
    constexpr std::string_view tin = "in [tool.gpulock.target]";
    GpulockTarget x;
    x.line.line = line_of(**target);
    auto python = opt_string(**target, "python", tin);
    if (!python) return std::unexpected(python.error());
    auto platform = opt_string(**target, "platform", tin);
    if (!platform) return std::unexpected(platform.error());
    auto name = opt_string(**target, "name", tin);
    if (!name) return std::unexpected(name.error());
    x.python = python->value_or("");
    x.platform = platform->value_or("");
    x.name = std::move(*name);
    auto pythons = opt_string_array(**target, "pythons", tin);
    if (!pythons) return std::unexpected(pythons.error());
    auto platforms = opt_string_array(**target, "platforms", tin);
    if (!platforms) return std::unexpected(platforms.error());
    x.pythons = pythons->value_or(std::vector<std::string>{});
    x.platforms = platforms->value_or(std::vector<std::string>{});
    x.unknown = unknown_keys(**target, {"name", "python", "platform", "pythons", "platforms"}, tin);
    g.target = std::move(x);
  }

  auto gpu = opt_table(t, "gpu", in);
  if (!gpu) return std::unexpected(gpu.error());
  if (*gpu) {
    const toml::table& gt = **gpu;
    constexpr std::string_view gin = "in [tool.gpulock.gpu]";
    GpulockGpu x;
    x.line.line = line_of(gt);
    for (auto [key, field] :
         {std::pair{"driver", &x.driver}, std::pair{"cuda-ceiling", &x.cuda_ceiling},
          std::pair{"method", &x.method}, std::pair{"compat", &x.compat},
          std::pair{"variant", &x.variant}, std::pair{"cuda", &x.cuda},
          std::pair{"cudnn", &x.cudnn}, std::pair{"min-driver", &x.min_driver}}) {
      auto v = opt_string(gt, key, gin);
      if (!v) return std::unexpected(v.error());
      *field = std::move(*v);
    }
    auto archs = strs(gt, "archs", gin);
    if (!archs) return std::unexpected(archs.error());
    x.archs = std::move(*archs);
    x.unknown = unknown_keys(gt,
                             {"driver", "cuda-ceiling", "method", "compat", "archs", "variant",
                              "cuda", "cudnn", "min-driver"},
                             gin);
    g.gpu = std::move(x);
  }

  auto snapshot = opt_table(t, "snapshot", in);
  if (!snapshot) return std::unexpected(snapshot.error());
  if (*snapshot) {
    constexpr std::string_view sin = "in [tool.gpulock.snapshot]";
    GpulockSnapshot x;
    x.line.line = line_of(**snapshot);
    auto en = read_datetime(**snapshot, "exclude-newer", sin);
    if (!en) return std::unexpected(en.error());
    x.exclude_newer = *en;
    auto nightly = opt_string(**snapshot, "nightly", sin);
    if (!nightly) return std::unexpected(nightly.error());
    x.nightly = std::move(*nightly);
    x.unknown = unknown_keys(**snapshot, {"exclude-newer", "nightly"}, sin);
    g.snapshot = std::move(x);
  }
  g.unknown = unknown_keys(t, {"schema", "indexes", "inputs", "target", "gpu", "snapshot"}, in);
  return g;
}

core::Status Reader::read_tool(const toml::table& tool, Lock& lock) {
  for (const auto& [k, v] : tool) {
    if (k.str() == "gpulock" && v.is_table()) {
      const toml::table& gt = *v.as_table();
      const toml::node* schema = gt.get("schema");
      if (!schema || !schema->is_integer()) {
        return fail(schema ? line_of(*schema) : line_of(gt),
                    "[tool.gpulock] needs 'schema' = an integer (1)");
      }
      if (schema->as_integer()->get() == GpulockTool::kSchema) {
        auto g = read_gpulock(gt);
        if (!g) return std::unexpected(g.error());
        lock.gpulock = std::move(*g);
        continue;
      }
      warn(line_of(*schema),
           fmt::format("[tool.gpulock] has schema {}, which this gpulock does not know; kept as "
                       "is but not used",
                       schema->as_integer()->get()));
    }
    lock.tool.emplace(std::string(k.str()), to_value(v));
  }
  return {};
}

core::Result<LockFile> Reader::read(std::string_view text) {
  toml::table root;
#if TOML_EXCEPTIONS
  try {
    root = toml::parse(text, std::string_view(where_));
  } catch (const toml::parse_error& e) {
    core::Error err =
        error(e.source().begin.line, fmt::format("not valid TOML: {}", e.description()));
    err.column = e.source().begin.column;
    return std::unexpected(std::move(err));
  }
#else
  toml::parse_result parsed = toml::parse(text, std::string_view(where_));
  if (!parsed) {
    core::Error err = error(parsed.error().source().begin.line,
                            fmt::format("not valid TOML: {}", parsed.error().description()));
    err.column = parsed.error().source().begin.column;
    return std::unexpected(std::move(err));
  }
  root = std::move(parsed).table();
#endif

  LockFile out;
  Lock& lock = out.lock;
  lock.command = command_from_header(text);
  GPULOCK_TRY(read_lock_version(root));
  lock.lock_version = lock_version_;
  constexpr std::string_view top = "at the top level";
  auto created = req_string(root, "created-by", top);
  if (!created) return std::unexpected(created.error());
  lock.created_by = std::move(*created);
  auto envs = opt_string_array(root, "environments", top);
  if (!envs) return std::unexpected(envs.error());
  lock.environments = std::move(*envs);
  if (lock.environments) {
    const toml::array& arr = *root.get("environments")->as_array();
    for (std::size_t i = 0; i < lock.environments->size(); ++i) {
      GPULOCK_TRY(check_marker((*lock.environments)[i], line_of(*arr.get(i)), "environment"));
    }
  }
  auto rp = opt_string(root, "requires-python", top);
  if (!rp) return std::unexpected(rp.error());
  lock.requires_python = std::move(*rp);
  if (lock.requires_python) {
    GPULOCK_TRY(check_specifier(*lock.requires_python, line_of(*root.get("requires-python")),
                                "requires-python"));
  }
  for (auto [key, field] :
       {std::pair{"extras", &lock.extras}, std::pair{"dependency-groups", &lock.dependency_groups},
        std::pair{"default-groups", &lock.default_groups}}) {
    auto v = opt_string_array(root, key, top);
    if (!v) return std::unexpected(v.error());
    *field = std::move(*v);
  }

  auto packages = opt_table_array(root, "packages", top);
  if (!packages) return std::unexpected(packages.error());
  if (!*packages) {
    return fail(1, "'packages' is required (an array of tables, '[[packages]]')");
  }
  // (name, marker) -> line, to refuse two entries that can never be told apart.
  std::map<std::pair<std::string, std::string>, std::size_t> seen;
  std::size_t index = 0;
  for (const auto& e : **packages) {
    auto p = read_package(*e.as_table(), index++);
    if (!p) return std::unexpected(p.error());
    std::string marker_key = "<none>";
    if (p->marker) {
      auto m = core::Marker::parse(*p->marker);
      marker_key = m ? m->to_string() : *p->marker;
      if (marker_key.empty()) marker_key = "<none>";
    }
    auto [it, inserted] = seen.emplace(std::pair{p->name, marker_key}, p->line.line);
    if (!inserted) {
      return fail(p->line.line,
                  fmt::format("package '{}' is listed twice with {} (first at line {}); PEP 751 "
                              "needs every package to narrow down to one entry",
                              p->name, p->marker ? "the same marker" : "no marker", it->second));
    }
    lock.packages.push_back(std::move(*p));
  }

  auto tool = opt_table(root, "tool", top);
  if (!tool) return std::unexpected(tool.error());
  if (*tool) GPULOCK_TRY(read_tool(**tool, lock));

  lock.unknown =
      unknown_keys(root,
                   {"lock-version", "environments", "requires-python", "extras",
                    "dependency-groups", "default-groups", "created-by", "packages", "tool"},
                   top);
  if (warning_count_ > warnings_.size()) {
    warnings_.push_back(
        error(0, fmt::format("{} more warnings not shown", warning_count_ - warnings_.size())));
  }
  out.warnings = std::move(warnings_);
  return out;
}

}  // namespace

core::Result<LockFile> parse_lock(std::string_view text, std::string_view where) {
  try {
    Reader reader(where);
    return reader.read(text);
  } catch (const std::exception& e) {
    return core::fail_at(ErrorCode::InvalidLockfile,
                         fmt::format("cannot read lock file: {}", e.what()), std::string(where));
  }
}

core::Result<LockFile> read_lock_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  auto io_error = [&](std::string what, int err) {
    return core::fail_at(ErrorCode::Io, fmt::format("{}: {}", what, std::strerror(err)), where);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open the lock file", errno);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error("cannot stat the lock file", errno);
  if (!S_ISREG(st.st_mode)) {
    return core::fail_at(ErrorCode::InvalidLockfile, "not a regular file", where);
  }
  // Checked before reading: a huge file is refused without being loaded.
  auto too_big = [&](std::uintmax_t size) {
    return std::unexpected(
        core::make_error(ErrorCode::InvalidLockfile,
                         fmt::format("the lock file is {} bytes; lock files over {} MB are refused",
                                     size, kMaxLockFileBytes / (1024 * 1024)),
                         where));
  };
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxLockFileBytes) {
    return too_big(static_cast<std::uintmax_t>(st.st_size));
  }
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (true) {
    if (got == text.size()) {
      // The file may have grown since fstat: read on, up to the limit.
      if (text.size() > kMaxLockFileBytes) return too_big(text.size());
      text.resize(text.size() + 4096);
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot read the lock file", errno);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (text.size() > kMaxLockFileBytes) return too_big(text.size());
  return parse_lock(text, where);
}

}  // namespace gpulock::lock

// pylock.toml reader: toml++ parses TOML 1.0; this file enforces PEP 751 (canonical spec
// "pylock.toml Specification") and the extra checks of pypa/packaging's `packaging.pylock`, and
// builds the model. No toml++ exception escapes: parse errors become InvalidLockfile errors with
// the file, line and column.
//
// The Reader class is in reader_impl.h; this file holds the field checks, the document's
// top level, parse_lock and read_lock_file; PEP 751's packages are read in reader_package.cpp,
// [tool.gpulock] in reader_gpulock.cpp.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <sys/stat.h>
#include <toml++/toml.h>

#include "gpulock/core/text.h"
#include "gpulock/lock/lockfile.h"

#include "header_comment.h"
#include "reader_impl.h"
#include "toml_convert.h"

namespace gpulock::lock::reading {

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

// ---- field checks (reader_impl.h says why) --------------------------------------------------

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

}  // namespace gpulock::lock::reading

namespace gpulock::lock {

using core::ErrorCode;

core::Result<LockFile> parse_lock(std::string_view text, std::string_view where) {
  try {
    reading::Reader reader(where);
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

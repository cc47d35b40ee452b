#pragma once
// The pylock.toml Reader class, its typed access to toml++ nodes and the field checks, shared
// by reader.cpp (the document, parse_lock, read_lock_file), reader_package.cpp (PEP 751's
// packages and files) and reader_gpulock.cpp ([tool.gpulock]).

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "gpulock/core/filename.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/text.h"
#include "gpulock/core/version.h"
#include "gpulock/lock/lockfile.h"

#include "toml_convert.h"

namespace gpulock::lock::reading {

using core::ErrorCode;

// Propagates the error of a Status-returning call.
#define GPULOCK_TRY(expr)                                 \
  do {                                                    \
    if (auto status_ = (expr); !status_) {                \
      return std::unexpected(std::move(status_.error())); \
    }                                                     \
  } while (false)

constexpr std::size_t kMaxWarnings = 50;

std::string_view node_type_name(const toml::node& n);
std::size_t line_of(const toml::node& n);

// ---- field checks ---------------------------------------------------------------------------
// A lock is input: its hashes become path components (the install cache's
// <cache>/wheels-v1/<sha256>, the mirror's store), its URLs are fetched and its paths opened.
// Every such field is checked when read, so no later step sees a hostile value.

// Sizes above this (1 PiB) are refused: no wheel is that large, and sums stay far from overflow.
constexpr std::int64_t kMaxFileSize = std::int64_t{1} << 50;

bool is_control(char c) noexcept;
bool has_control(std::string_view s) noexcept;
bool is_lower_hex(std::string_view s) noexcept;
bool is_algorithm_name(std::string_view s) noexcept;
std::string digest_problem(std::string_view algorithm, std::string_view digest);
std::string url_problem(std::string_view url);
std::string path_problem(std::string_view path);

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

  // The strings of an optional array of strings, none when it is absent.
  core::Result<std::vector<std::string>> strings_or_empty(const toml::table& tt,
                                                          std::string_view key,
                                                          std::string_view tin) const {
    auto v = opt_string_array(tt, key, tin);
    if (!v) return std::unexpected(v.error());
    return *v ? std::move(**v) : std::vector<std::string>{};
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
  core::Status read_package_sources(const toml::table& t, std::string_view in, Package& p);
  core::Status check_marker(const std::string& text, std::size_t line, std::string_view what);
  core::Status check_specifier(const std::string& text, std::size_t line, std::string_view what);
  core::Status check_filename(const Package& p, const FileEntry& f, bool wheel, std::size_t line);
  core::Result<std::optional<TomlDatetime>> read_datetime(const toml::table& t,
                                                          std::string_view key,
                                                          std::string_view in);
  core::Status read_tool(const toml::table& tool, Lock& lock);
  core::Result<GpulockTool> read_gpulock(const toml::table& t);
  core::Status read_gpulock_indexes(const toml::table& t, std::string_view in, GpulockTool& g);
  core::Status read_gpulock_inputs(const toml::table& t, std::string_view in, GpulockTool& g);
  core::Status read_gpulock_target(const toml::table& t, std::string_view in, GpulockTool& g);
  core::Status read_gpulock_gpu(const toml::table& t, std::string_view in, GpulockTool& g);
  core::Status read_gpulock_snapshot(const toml::table& t, std::string_view in, GpulockTool& g);

  std::string where_;
  std::vector<core::Error> warnings_;
  std::size_t warning_count_ = 0;
  std::string lock_version_;
};

}  // namespace gpulock::lock::reading

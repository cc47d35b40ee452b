// gpulock's pylock.toml writer: a fixed layout so the same model always gives the same bytes
// (docs/concepts/lockfile.md). toml++'s serializer is not used: it orders keys its own way and
// prefers literal strings.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/lock/lockfile.h"
#include "gpulock/sys/atomic_file.h"

#include "gpu_text.h"
#include "header_comment.h"

namespace gpulock::lock {
namespace {

constexpr std::size_t kMaxInlineWidth = 100;

class Writer {
 public:
  std::string take() { return std::move(out_); }

  void comment_header(const std::string& command) { out_ += header_comment(command); }

  void key_value(std::string_view key, const std::string& value_text) {
    out_ += toml_key(key);
    out_ += " = ";
    out_ += value_text;
    out_ += '\n';
  }
  void string(std::string_view key, const std::string& value) {
    key_value(key, toml_string(value));
  }
  void opt_string(std::string_view key, const std::optional<std::string>& value) {
    if (value) string(key, *value);
  }

  // An array of strings: on one line when it fits, else one element per line.
  void string_array(std::string_view key, const std::vector<std::string>& values) {
    std::string one_line = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i) one_line += ", ";
      one_line += toml_string(values[i]);
    }
    one_line += "]";
    if (toml_key(key).size() + 3 + one_line.size() <= kMaxInlineWidth || values.size() <= 1) {
      key_value(key, one_line);
      return;
    }
    std::vector<std::string> items;
    for (const auto& v : values)
      items.push_back(toml_string(v));
    multiline_array(key, items);
  }
  void opt_string_array(std::string_view key, const std::optional<std::vector<std::string>>& v) {
    if (v) string_array(key, *v);
  }

  // `key = [` + one item per line + `]`; `key = []` when empty.
  void multiline_array(std::string_view key, const std::vector<std::string>& items) {
    if (items.empty()) {
      key_value(key, "[]");
      return;
    }
    out_ += toml_key(key);
    out_ += " = [\n";
    for (const auto& item : items) {
      out_ += "  ";
      out_ += item;
      out_ += ",\n";
    }
    out_ += "]\n";
  }

  // Keys of a generic table whose values are not tables, as `key = inline`; an array of
  // strings too long for one line gets one item per line (string_array), as a wheel's shared
  // libraries under [packages.tool.gpulock.files] do.
  void scalar_keys(const TomlTable& table) {
    for (const auto& [k, v] : table) {
      if (v.is<TomlTable>()) continue;
      const auto* array = v.get_if<TomlArray>();
      if (array != nullptr && !array->empty() &&
          std::all_of(array->begin(), array->end(),
                      [](const TomlValue& item) { return item.is<std::string>(); })) {
        std::vector<std::string> items;
        for (const auto& item : *array)
          items.push_back(*item.get_if<std::string>());
        string_array(k, items);
        continue;
      }
      key_value(k, to_toml_inline(v));
    }
  }

  // Unknown keys of a known table: everything inline, in key order.
  void unknown_keys(const TomlTable& table) {
    for (const auto& [k, v] : table)
      key_value(k, to_toml_inline(v));
  }

  void header(std::string_view text) {
    out_ += "\n";
    out_ += text;
    out_ += '\n';
  }

  // A generic table as a `[path]` section, its sub-tables as `[path.key]` sections after it.
  // A table holding only sub-tables gets no header of its own (TOML defines it implicitly).
  void table_section(const std::string& path, const TomlTable& table) {
    bool only_tables = !table.empty();
    for (const auto& [k, v] : table)
      only_tables &= v.is<TomlTable>();
    if (!only_tables) header("[" + path + "]");
    scalar_keys(table);
    for (const auto& [k, v] : table) {
      if (const auto* sub = v.get_if<TomlTable>()) table_section(path + "." + toml_key(k), *sub);
    }
  }

 private:
  std::string out_;
};

// The URL without `user:password@` (or a bare token `TOKEN@`): credentials are never written
// to a lock.
std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host_start = scheme + 3;
  const auto host_end = url.find_first_of("/?#", host_start);
  const auto authority =
      url.substr(host_start, host_end == std::string_view::npos ? std::string_view::npos
                                                                : host_end - host_start);
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  // ssh URLs (git+ssh://git@host/...) name a user, not a secret: keep it, drop a password.
  if (url.substr(0, scheme).find("ssh") != std::string_view::npos) {
    const auto colon = authority.substr(0, at).find(':');
    if (colon == std::string_view::npos) return std::string(url);
    return std::string(url.substr(0, host_start + colon)) +
           std::string(url.substr(host_start + at));
  }
  return std::string(url.substr(0, host_start)) + std::string(url.substr(host_start + at + 1));
}

void add(std::string& out, std::string_view key, const std::string& value_text) {
  if (out.size() > 2) out += ", ";
  out += toml_key(key);
  out += " = ";
  out += value_text;
}

// `{ name = ..., url = ..., path = ..., size = ..., upload-time = ..., hashes = { ... } }`.
std::string file_inline(const FileEntry& f) {
  std::string out = "{ ";
  if (f.name) add(out, "name", toml_string(*f.name));
  if (f.url) add(out, "url", toml_string(redact_url(*f.url)));
  if (f.path) add(out, "path", toml_string(*f.path));
  if (f.size) add(out, "size", fmt::format("{}", *f.size));
  if (f.upload_time) add(out, "upload-time", to_toml_text(f.upload_time->to_utc()));
  {
    TomlTable hashes;
    for (const auto& [algo, digest] : f.hashes)
      hashes.emplace(algo, digest);
    add(out, "hashes", to_toml_inline(TomlValue(std::move(hashes))));
  }
  if (f.subdirectory) add(out, "subdirectory", toml_string(*f.subdirectory));
  for (const auto& [k, v] : f.unknown)
    add(out, k, to_toml_inline(v));
  return out + " }";
}

std::string vcs_inline(const VcsSource& v) {
  std::string out = "{ ";
  add(out, "type", toml_string(v.type));
  if (v.url) add(out, "url", toml_string(redact_url(*v.url)));
  if (v.path) add(out, "path", toml_string(*v.path));
  if (v.requested_revision) add(out, "requested-revision", toml_string(*v.requested_revision));
  add(out, "commit-id", toml_string(v.commit_id));
  if (v.subdirectory) add(out, "subdirectory", toml_string(*v.subdirectory));
  for (const auto& [k, val] : v.unknown)
    add(out, k, to_toml_inline(val));
  return out + " }";
}

std::string directory_inline(const DirectorySource& d) {
  std::string out = "{ ";
  add(out, "path", toml_string(d.path));
  if (d.editable) add(out, "editable", *d.editable ? "true" : "false");
  if (d.subdirectory) add(out, "subdirectory", toml_string(*d.subdirectory));
  for (const auto& [k, val] : d.unknown)
    add(out, k, to_toml_inline(val));
  return out + " }";
}

std::vector<std::string> tables_inline(const std::vector<TomlTable>& tables) {
  std::vector<std::string> items;
  items.reserve(tables.size());
  for (const auto& t : tables)
    items.push_back(to_toml_inline(TomlValue(t)));
  return items;
}

void write_package(Writer& w, const Package& p) {
  w.header("[[packages]]");
  w.string("name", p.name);
  w.opt_string("version", p.version);
  w.opt_string("marker", p.marker);
  w.opt_string("requires-python", p.requires_python);
  if (p.index) w.string("index", redact_url(*p.index));
  if (p.dependencies) w.multiline_array("dependencies", tables_inline(*p.dependencies));
  if (p.vcs) w.key_value("vcs", vcs_inline(*p.vcs));
  if (p.directory) w.key_value("directory", directory_inline(*p.directory));
  if (p.archive) w.key_value("archive", file_inline(*p.archive));
  if (p.sdist) w.key_value("sdist", file_inline(*p.sdist));
  if (p.wheels) {
    std::vector<std::string> items;
    items.reserve(p.wheels->size());
    for (const auto& f : *p.wheels)
      items.push_back(file_inline(f));
    w.multiline_array("wheels", items);
  }
  if (p.attestation_identities) {
    w.multiline_array("attestation-identities", tables_inline(*p.attestation_identities));
  }
  w.unknown_keys(p.unknown);
  if (p.tool) w.table_section("packages.tool", *p.tool);
}

void write_gpulock(Writer& w, const GpulockTool& g) {
  w.header("[tool.gpulock]");
  w.key_value("schema", fmt::format("{}", g.schema));
  {
    std::vector<std::string> items;
    for (const auto& i : g.indexes) {
      std::string item = "{ ";
      add(item, "name", toml_string(i.name));
      add(item, "url", toml_string(redact_url(i.url)));
      add(item, "role", toml_string(i.role));
      if (i.origin) add(item, "origin", toml_string(*i.origin));
      for (const auto& [k, v] : i.unknown)
        add(item, k, to_toml_inline(v));
      items.push_back(item + " }");
    }
    w.multiline_array("indexes", items);
  }
  w.unknown_keys(g.unknown);
  if (g.inputs) {
    const auto& in = *g.inputs;
    w.header("[tool.gpulock.inputs]");
    w.string_array("requirements", in.requirements);
    std::vector<std::string> files;
    for (const auto& f : in.files) {
      std::string item = "{ ";
      add(item, "path", toml_string(f.path));
      add(item, "kind", toml_string(f.kind));
      add(item, "sha256", toml_string(f.sha256));
      for (const auto& [k, v] : f.unknown)
        add(item, k, to_toml_inline(v));
      files.push_back(item + " }");
    }
    w.multiline_array("files", files);
    w.string_array("extras", in.extras);
    w.string_array("groups", in.groups);
    if (!in.sha256.empty()) w.string("sha256", in.sha256);
    w.unknown_keys(in.unknown);
    w.header("[tool.gpulock.inputs.options]");
    for (const auto& [k, v] : in.options)
      w.string(k, v);
  }
  if (g.target) {
    w.header("[tool.gpulock.target]");
    if (g.target->name) w.string("name", *g.target->name);
    w.string("python", g.target->python);
    w.string("platform", g.target->platform);
    if (!g.target->pythons.empty()) w.string_array("pythons", g.target->pythons);
    if (!g.target->platforms.empty()) w.string_array("platforms", g.target->platforms);
    w.unknown_keys(g.target->unknown);
  }
  if (g.gpu) {
    const auto& gpu = *g.gpu;
    w.header("[tool.gpulock.gpu]");
    w.opt_string("driver", gpu_text(gpu.driver));
    w.opt_string("cuda-ceiling", gpu_text(gpu.cuda_ceiling));
    w.opt_string("method", gpu.method);
    w.opt_string("compat", gpu_text(gpu.compat));
    w.string_array("archs", gpu_text(gpu.archs));
    w.opt_string("variant", gpu.variant);
    w.opt_string("cuda", gpu_text(gpu.cuda));
    w.opt_string("cudnn", gpu.cudnn);
    w.opt_string("min-driver", gpu_text(gpu.min_driver));
    w.unknown_keys(gpu.unknown);
  }
  if (g.snapshot) {
    w.header("[tool.gpulock.snapshot]");
    if (g.snapshot->exclude_newer) {
      w.key_value("exclude-newer", to_toml_text(g.snapshot->exclude_newer->to_utc()));
    }
    w.opt_string("nightly", g.snapshot->nightly);
    w.unknown_keys(g.snapshot->unknown);
  }
}

}  // namespace

std::string to_toml(const Lock& input, const WriteOptions& options) {
  Lock lock = input;
  canonicalize(lock);
  Writer w;
  w.comment_header(options.command ? *options.command : lock.command);
  w.string("lock-version", lock.lock_version);
  w.string("created-by", lock.created_by);
  w.opt_string_array("environments", lock.environments);
  w.opt_string("requires-python", lock.requires_python);
  w.opt_string_array("extras", lock.extras);
  w.opt_string_array("dependency-groups", lock.dependency_groups);
  w.opt_string_array("default-groups", lock.default_groups);
  w.unknown_keys(lock.unknown);
  if (lock.packages.empty()) w.key_value("packages", "[]");
  for (const auto& p : lock.packages)
    write_package(w, p);
  if (lock.gpulock) write_gpulock(w, *lock.gpulock);
  for (const auto& [name, value] : lock.tool) {
    if (name == "gpulock" && lock.gpulock) continue;  // the typed table wins over a raw one
    if (const auto* t = value.get_if<TomlTable>()) {
      w.table_section("tool." + toml_key(name), *t);
    }
  }
  // Non-table values directly under [tool] (unusual, but valid TOML).
  bool has_scalar_tool_keys = false;
  for (const auto& [name, value] : lock.tool) {
    has_scalar_tool_keys |= !value.is<TomlTable>() && !(name == "gpulock" && lock.gpulock);
  }
  if (has_scalar_tool_keys) {
    TomlTable scalars = lock.tool;
    if (lock.gpulock) scalars.erase("gpulock");
    w.header("[tool]");
    w.scalar_keys(scalars);
  }
  return w.take();
}

core::Status write_lock_file(const std::filesystem::path& path, const Lock& lock,
                             const WriteOptions& options) {
  return sys::write_file_atomically(path, to_toml(lock, options));
}

}  // namespace gpulock::lock

namespace gpulock::lock {

// The reader is the one place PEP 751 is enforced; validating the text the writer would produce
// applies exactly the same rules to a model in memory.
core::Status validate_lock(const Lock& lock) {
  auto parsed = parse_lock(to_toml(lock), "lock");
  if (!parsed) return std::unexpected(parsed.error());
  return {};
}

}  // namespace gpulock::lock

// Project configuration (issue 26): the keys, the variables, the merge by precedence, and the
// request the effective settings make. The files are read in config_files.cpp.
#include "gpulock/app/config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "gpulock/app/requirements_file.h"
#include "gpulock/app/resolve_request.h"
#include "gpulock/core/text.h"
#include "gpulock/index/url.h"
#include "gpulock/lock/toml_document.h"
#include "gpulock/resolver/provider.h"
#include "gpulock/sys/env.h"
#include "gpulock/sys/paths.h"

#include "config_internal.h"
#include "resolve_inputs.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;
using config_detail::Candidate;
using config_detail::Layer;
using config_detail::SourceFile;

constexpr std::array<ConfigKey, 15> kKeys{{
    {"index-url", "--index-url", "GPULOCK_INDEX_URL", false, "an index URL"},
    {"extra-index-url", "--extra-index-url", "GPULOCK_EXTRA_INDEX_URL", true, "index URLs"},
    {"find-links", "--find-links", "GPULOCK_FIND_LINKS", true, "directories or pages of wheels"},
    {"index", "--index", "GPULOCK_INDEX", true, "NAME=URL"},
    {"index-for", "--index-for", "GPULOCK_INDEX_FOR", true, "GLOB=NAME, optionally '; MARKER'"},
    {"index-strategy", "--index-strategy", "GPULOCK_INDEX_STRATEGY", false,
     "first-index or unsafe-best-match"},
    {"torch-backend", "--torch-backend", "GPULOCK_TORCH_BACKEND", false, "auto, cpu or cuXYZ"},
    {"torch-index-base", "--torch-index-base", "GPULOCK_TORCH_INDEX_BASE", false, "a URL"},
    {"nightly", "--nightly", "GPULOCK_NIGHTLY", false, "YYYY-MM-DD or latest"},
    {"exclude-newer", "--exclude-newer", "GPULOCK_EXCLUDE_NEWER", false,
     "a date, an RFC 3339 timestamp or a duration such as 7d"},
    {"prerelease", "--prerelease", "GPULOCK_PRERELEASE", false, "if-necessary, allow or disallow"},
    {"cuda-compat", "--cuda-compat", "GPULOCK_CUDA_COMPAT", false, "strict or minor"},
    {"python-version", "--python-version", "GPULOCK_PYTHON_VERSION", false, "X.Y"},
    {"platform", "--platform", "GPULOCK_PLATFORM", true, "platform tags"},
    {"mirror", "--mirror", "GPULOCK_MIRROR", false, "a mirror URL or directory"},
}};

constexpr std::array<std::string_view, 27> kVariables{{
    "GPULOCK_INDEX_URL",
    "GPULOCK_EXTRA_INDEX_URL",
    "GPULOCK_FIND_LINKS",
    "GPULOCK_INDEX",
    "GPULOCK_INDEX_FOR",
    "GPULOCK_INDEX_STRATEGY",
    "GPULOCK_TORCH_BACKEND",
    "GPULOCK_TORCH_INDEX_BASE",
    "GPULOCK_NIGHTLY",
    "GPULOCK_EXCLUDE_NEWER",
    "GPULOCK_PRERELEASE",
    "GPULOCK_CUDA_COMPAT",
    "GPULOCK_PYTHON_VERSION",
    "GPULOCK_PLATFORM",
    "UV_DEFAULT_INDEX",
    "UV_INDEX_URL",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_INDEX_STRATEGY",
    "UV_TORCH_BACKEND",
    "UV_EXCLUDE_NEWER",
    "UV_PRERELEASE",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_PRE",
}};

// gpulock's defaults, shown by `gpulock config`.
std::optional<std::string_view> default_value(std::string_view key) {
  if (key == "index-url") return detail::kDefaultIndexUrl;
  if (key == "index-strategy") return "first-index";
  if (key == "torch-index-base") return "https://download.pytorch.org/whl";
  if (key == "prerelease") return "if-necessary";
  if (key == "cuda-compat") return "strict";
  return std::nullopt;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find_first_of(" \t\n", pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) out.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

SettingOrigin env_origin(std::string_view name) {
  SettingOrigin o;
  o.kind = SettingOrigin::Kind::Env;
  o.name = std::string(name);
  o.user_source = fmt::format("env {}", name);
  return o;
}

std::optional<std::string> lookup(const ConfigEnvironment& environment, std::string_view name) {
  if (!environment.env) return std::nullopt;
  auto v = environment.env(name);
  if (!v || v->empty()) return std::nullopt;
  return v;
}

// GPULOCK_* variables: each through its key's parser; a value it refuses is a usage error.
core::Result<Layer> gpulock_variables(const ConfigEnvironment& environment) {
  Layer out;
  for (const auto& key : kKeys) {
    auto value = lookup(environment, key.variable);
    if (!value) continue;
    std::vector<std::string> values =
        key.list ? split_words(*value) : std::vector<std::string>{std::string(core::trim(*value))};
    for (const auto& v : values) {
      if (auto ok = config_detail::check_value(key.key, v); !ok) {
        return std::unexpected(sys::invalid_env(key.variable, *value, key.expected));
      }
    }
    out[std::string(key.key)] = Candidate{std::move(values), env_origin(key.variable)};
  }
  return out;
}

// Another tool's variable: taken when it parses, else a warning naming it.
void other_variable(const ConfigEnvironment& environment, std::string_view name,
                    std::string_view key, Layer& out, std::vector<std::string>& warnings) {
  auto value = lookup(environment, name);
  if (!value || out.contains(key)) return;
  const ConfigKey* info = config_detail::key_info(key);
  std::vector<std::string> values =
      info->list ? split_words(*value) : std::vector<std::string>{std::string(core::trim(*value))};
  if (key == "extra-index-url") {
    // UV_INDEX entries may be named: `name=url`.
    for (auto& v : values) {
      auto eq = v.find('=');
      if (eq != std::string::npos && v.find("://") > eq) v = v.substr(eq + 1);
    }
  }
  for (const auto& v : values) {
    if (!config_detail::check_value(key, v)) {
      warnings.push_back(fmt::format("gpulock cannot use {}={}; ignored", name,
                                     core::quote_for_message(index::redact_text(*value))));
      return;
    }
  }
  out[std::string(key)] = Candidate{std::move(values), env_origin(name)};
}

Layer uv_variables(const ConfigEnvironment& environment, std::vector<std::string>& warnings) {
  Layer out;
  other_variable(environment, "UV_DEFAULT_INDEX", "index-url", out, warnings);
  other_variable(environment, "UV_INDEX_URL", "index-url", out, warnings);
  other_variable(environment, "UV_INDEX", "extra-index-url", out, warnings);
  other_variable(environment, "UV_EXTRA_INDEX_URL", "extra-index-url", out, warnings);
  other_variable(environment, "UV_FIND_LINKS", "find-links", out, warnings);
  other_variable(environment, "UV_INDEX_STRATEGY", "index-strategy", out, warnings);
  other_variable(environment, "UV_TORCH_BACKEND", "torch-backend", out, warnings);
  other_variable(environment, "UV_EXCLUDE_NEWER", "exclude-newer", out, warnings);
  other_variable(environment, "UV_PRERELEASE", "prerelease", out, warnings);
  return out;
}

Layer pip_variables(const ConfigEnvironment& environment, std::vector<std::string>& warnings) {
  Layer out;
  other_variable(environment, "PIP_INDEX_URL", "index-url", out, warnings);
  other_variable(environment, "PIP_EXTRA_INDEX_URL", "extra-index-url", out, warnings);
  other_variable(environment, "PIP_FIND_LINKS", "find-links", out, warnings);
  if (auto pre = lookup(environment, "PIP_PRE")) {
    std::string v(core::trim(*pre));
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (v == "1" || v == "true" || v == "yes" || v == "on") {
      out["prerelease"] = Candidate{{"allow"}, env_origin("PIP_PRE")};
    } else if (v != "0" && v != "false" && v != "no" && v != "off") {
      warnings.push_back(
          fmt::format("gpulock cannot use PIP_PRE={}; ignored", core::quote_for_message(*pre)));
    }
  }
  // PIP_ONLY_BINARY: gpulock locks wheels only, so `:all:` is what it always does.
  return out;
}

// A path as `gpulock config` shows it: relative to the working directory when inside it.
std::string shown_path(const fs::path& path, const fs::path& cwd) {
  fs::path rel = path.lexically_normal().lexically_relative(cwd.lexically_normal());
  if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  return path.lexically_normal().generic_string();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// Reads a file and parses it as TOML; nullopt when it does not exist. A file that is not TOML is
// an error for gpulock's files (`strict`), else a warning.
struct TomlSource {
  SourceFile file;
  lock::TomlTable doc;
};

core::Result<std::optional<TomlSource>> read_toml(const fs::path& path, const fs::path& cwd,
                                                  bool strict, std::vector<std::string>& warnings) {
  if (!is_file(path)) return std::optional<TomlSource>();
  TomlSource src;
  src.file.path = path.string();
  src.file.shown = shown_path(path, cwd);
  auto text = read_text_file(src.file.path);
  if (!text) {
    if (strict) return std::unexpected(text.error());
    warnings.push_back(fmt::format("{}: cannot be read; ignored", src.file.shown));
    return std::optional<TomlSource>();
  }
  src.file.text = std::move(*text);
  auto doc = lock::parse_toml_document(src.file.text, src.file.shown);
  if (!doc) {
    if (strict) return std::unexpected(doc.error().with_code(core::ErrorCode::InvalidInput));
    warnings.push_back(fmt::format("{}; ignored", doc.error().to_string()));
    return std::optional<TomlSource>();
  }
  src.doc = std::move(*doc);
  return std::optional<TomlSource>(std::move(src));
}

const lock::TomlTable* sub_table(const lock::TomlTable& t, std::string_view key) {
  auto it = t.find(key);
  return it == t.end() ? nullptr : it->second.get_if<lock::TomlTable>();
}

// The project's directory: --project's, else the first directory up from the working directory
// with a pyproject.toml or a gpulock.toml.
std::optional<fs::path> project_dir(const ConfigEnvironment& environment) {
  if (!environment.project.empty()) {
    fs::path p = fs::path(environment.project);
    if (p.is_relative()) p = environment.cwd / p;
    return p.lexically_normal().parent_path();
  }
  for (fs::path dir = environment.cwd.lexically_normal(); !dir.empty(); dir = dir.parent_path()) {
    if (is_file(dir / "pyproject.toml") || is_file(dir / "gpulock.toml")) return dir;
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

struct Loaded {
  std::vector<Layer> layers;  ///< highest first
  std::vector<std::string> warnings;
  std::vector<std::pair<std::string, std::string>> files;  ///< (shown, path)
  std::vector<std::string> user_files;                     ///< paths of user-level files
};

void note_file(Loaded& loaded, const SourceFile& file, const Layer& layer) {
  if (layer.empty()) return;
  loaded.files.emplace_back(file.shown, file.path);
}

// A user-level file's settings (issue 41 item 2): their origin as the lock would record it, the
// path under $HOME spelled with `~` so that two developers' locks agree.
void note_user_file(Loaded& loaded, const ConfigEnvironment& environment, const SourceFile& file,
                    Layer& layer) {
  if (layer.empty()) return;
  note_file(loaded, file, layer);
  loaded.user_files.push_back(file.path);
  fs::path rel = fs::path(file.path).lexically_normal().lexically_relative(
      environment.home.lexically_normal());
  std::string shown = !environment.home.empty() && !rel.empty() && *rel.begin() != ".."
                          ? "~/" + rel.generic_string()
                          : fs::path(file.path).lexically_normal().generic_string();
  for (auto& [key, candidate] : layer)
    candidate.origin.user_source = "file " + shown;
}

bool sets_indexes(const Layer& layer) {
  for (std::string_view k : {"index-url", "extra-index-url", "find-links", "index", "index-for"}) {
    if (layer.contains(k)) return true;
  }
  return false;
}

// Layers 3 and 4: gpulock's project table (gpulock.toml wins over pyproject's [tool.gpulock]),
// then uv's (uv.toml wins over pyproject's [tool.uv]), uv's indexes only when gpulock's table
// names none.
core::Status project_layers(const ConfigEnvironment& environment, Loaded& loaded) {
  auto dir = project_dir(environment);
  if (!dir) return {};
  fs::path pyproject_path = *dir / "pyproject.toml";
  if (!environment.project.empty() && fs::path(environment.project).filename() != "gpulock.toml")
    pyproject_path = fs::path(environment.project).is_relative()
                         ? environment.cwd / environment.project
                         : fs::path(environment.project);
  auto pyproject = read_toml(pyproject_path, environment.cwd, true, loaded.warnings);
  if (!pyproject) return std::unexpected(pyproject.error());
  auto gpulock_file = read_toml(*dir / "gpulock.toml", environment.cwd, true, loaded.warnings);
  if (!gpulock_file) return std::unexpected(gpulock_file.error());
  Layer own;
  if (*gpulock_file) {
    const auto& g = **gpulock_file;
    if (auto s = config_detail::read_gpulock_table(g.doc, "", g.file, true, own); !s) return s;
    note_file(loaded, g.file, own);
  } else if (*pyproject) {
    const auto& p = **pyproject;
    const auto* tool = sub_table(p.doc, "tool");
    const auto* table = tool ? sub_table(*tool, "gpulock") : nullptr;
    if (table != nullptr) {
      auto s = config_detail::read_gpulock_table(*table, "tool.gpulock", p.file, true, own);
      if (!s) return s;
      note_file(loaded, p.file, own);
    }
  }
  Layer uv;
  auto uv_toml = read_toml(*dir / "uv.toml", environment.cwd, false, loaded.warnings);
  if (!uv_toml) return std::unexpected(uv_toml.error());
  if (*uv_toml) {
    const auto& u = **uv_toml;
    config_detail::read_uv_table(u.doc, "", u.file, !sets_indexes(own), uv, loaded.warnings);
    note_file(loaded, u.file, uv);
  } else if (*pyproject) {
    const auto& p = **pyproject;
    const auto* tool = sub_table(p.doc, "tool");
    const auto* table = tool ? sub_table(*tool, "uv") : nullptr;
    if (table != nullptr) {
      config_detail::read_uv_table(*table, "tool.uv", p.file, !sets_indexes(own), uv,
                                   loaded.warnings);
      note_file(loaded, p.file, uv);
    }
  }
  loaded.layers.push_back(std::move(own));
  loaded.layers.push_back(std::move(uv));
  return {};
}

// Layer 5: $XDG_CONFIG_HOME/gpulock/gpulock.toml, pip's files, uv's user and system uv.toml.
core::Status user_layers(const ConfigEnvironment& environment, Loaded& loaded) {
  auto xdg_home = lookup(environment, "XDG_CONFIG_HOME");
  const fs::path xdg = xdg_home ? fs::path(*xdg_home) : environment.home / ".config";
  const fs::path etc = environment.system_root / "etc";
  Layer user;
  auto own = read_toml(xdg / "gpulock" / "gpulock.toml", environment.cwd, true, loaded.warnings);
  if (!own) return std::unexpected(own.error());
  if (*own) {
    const auto& g = **own;
    if (auto s = config_detail::read_gpulock_table(g.doc, "", g.file, false, user); !s) return s;
    note_user_file(loaded, environment, g.file, user);
  }
  loaded.layers.push_back(std::move(user));
  // pip: site-wide, then the user's files, then PIP_CONFIG_FILE; a later file wins (pip's
  // order). PIP_CONFIG_FILE=/dev/null turns them all off.
  Layer pip;
  auto pip_config_file = lookup(environment, "PIP_CONFIG_FILE");
  if (pip_config_file != "/dev/null") {
    std::vector<fs::path> paths{etc / "xdg" / "pip" / "pip.conf", etc / "pip.conf",
                                environment.home / ".pip" / "pip.conf", xdg / "pip" / "pip.conf"};
    if (pip_config_file) paths.emplace_back(*pip_config_file);
    for (const auto& path : paths) {
      if (!is_file(path)) continue;
      auto text = read_text_file(path.string());
      if (!text) {
        loaded.warnings.push_back(fmt::format("{}: cannot be read; ignored", path.string()));
        continue;
      }
      SourceFile file{path.string(), shown_path(path, environment.cwd), std::move(*text)};
      Layer one;
      config_detail::read_pip_conf(file, one);
      note_user_file(loaded, environment, file, one);
      for (auto& [k, c] : one)
        pip[k] = std::move(c);
    }
  }
  loaded.layers.push_back(std::move(pip));
  Layer uv;
  for (const auto& path : {xdg / "uv" / "uv.toml", etc / "uv" / "uv.toml"}) {
    auto doc = read_toml(path, environment.cwd, false, loaded.warnings);
    if (!doc) return std::unexpected(doc.error());
    if (!*doc) continue;
    Layer one;
    config_detail::read_uv_table((*doc)->doc, "", (*doc)->file, true, one, loaded.warnings);
    note_user_file(loaded, environment, (*doc)->file, one);
    for (auto& [k, c] : one)
      uv.emplace(k, std::move(c));
    break;  // uv reads the first of the user and system files
  }
  loaded.layers.push_back(std::move(uv));
  return {};
}

bool looks_like_torch_index(std::string_view url) {
  return url.find("download.pytorch.org") != std::string_view::npos ||
         url.find("/whl/") != std::string_view::npos || url.ends_with("/whl");
}

// pip takes the best match across its indexes; gpulock the first index that has a name. A pip
// extra index that serves the torch family then gives another torch than pip would.
void warn_pip_torch_index(const Config& config, std::vector<std::string>& warnings) {
  const Setting* extra = config.find("extra-index-url");
  if (extra == nullptr || config.find("torch-backend") || config.find("index-for")) return;
  const auto& o = extra->origin;
  bool from_pip = o.name.starts_with("PIP_") || o.name.ends_with("pip.conf");
  if (!from_pip) return;
  for (const auto& url : extra->values) {
    if (!looks_like_torch_index(url)) continue;
    warnings.push_back(fmt::format(
        "{} names {} as an extra index, which serves the torch family: pip takes the best match "
        "across indexes there, gpulock takes a package from the first index that has it (PyPI's "
        "torch); choose with --torch-backend cuXYZ, or --index NAME={} --index-for 'torch*=NAME'",
        o.to_string(), index::redact_url(url), index::redact_url(url)));
  }
}

// One value in its parser's spelling (a URL without its trailing slash), so that two spellings
// of one setting are no conflict.
std::string canonical_value(std::string_view key, std::string_view value) {
  if (key == "torch-backend") {
    if (auto b = TorchBackend::parse(value)) return b->to_string();
  } else if (key == "prerelease") {
    if (auto p = resolver::parse_prerelease_policy(value)) {
      return std::string(resolver::prerelease_policy_name(*p));
    }
  } else if (key == "index-strategy") {
    if (auto st = parse_index_strategy(value)) return std::string(index_strategy_name(*st));
  } else if (key == "index-url" || key == "extra-index-url" || key == "find-links" ||
             key == "torch-index-base") {
    return std::string(core::trim_slash(value));
  }
  return std::string(value);
}

bool same_values(std::string_view key, const std::vector<std::string>& a,
                 const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (canonical_value(key, a[i]) != canonical_value(key, b[i])) return false;
  }
  return true;
}

// A variable that wins over another variable with a different value (issue 26).
std::vector<ConfigConflict> find_conflicts(const std::vector<Setting>& settings) {
  std::vector<ConfigConflict> out;
  for (const auto& s : settings) {
    if (s.origin.kind != SettingOrigin::Kind::Env) continue;
    for (const auto& [values, origin] : s.overridden) {
      if (origin.kind != SettingOrigin::Kind::Env || same_values(s.key, s.values, values)) continue;
      out.push_back({s.key, s.origin.name, s.values, origin.name, values});
    }
  }
  return out;
}

}  // namespace

namespace config_detail {

const ConfigKey* key_info(std::string_view key) {
  for (const auto& k : kKeys) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

core::Status check_value(std::string_view key, std::string_view value) {
  // A resolve option's value through its row (resolve_request.h): its own parser, on a scratch
  // request. An untyped value (a URL, a tag, mirror's) must be one word.
  const RequestOption* option = find_request_option(key);
  if (option != nullptr && option->typed) {
    ResolveRequest scratch;
    return option->apply(scratch, value);
  }
  if (value.empty() || value.find_first_of(" \t\n") != std::string_view::npos) {
    return core::fail(core::ErrorCode::Usage,
                      fmt::format("invalid --{} {}", key, core::quote_for_message(value)));
  }
  return {};
}

}  // namespace config_detail

std::span<const ConfigKey> config_keys() noexcept {
  return kKeys;
}

std::span<const std::string_view> config_variables() noexcept {
  return kVariables;
}

std::string ConfigConflict::to_string() const {
  auto text = [](const std::vector<std::string>& values) {
    std::string joined;
    for (const auto& v : values)
      joined += (joined.empty() ? "" : " ") + index::redact_text(v);
    return core::quote_for_message(joined);
  };
  return fmt::format("{}={} wins over {}={}", winner, text(winner_values), overridden,
                     text(overridden_values));
}

std::string SettingOrigin::to_string() const {
  switch (kind) {
    case Kind::Default:
      return "default";
    case Kind::Flag:
      return fmt::format("command line {}", name);
    case Kind::Env:
      return fmt::format("env {}", name);
    case Kind::File:
      break;
  }
  std::string out = name;
  if (!table.empty()) out += " " + table;
  if (line != 0) out += fmt::format(" line {}", line);
  return out;
}

const Setting* Config::find(std::string_view key) const {
  for (const auto& s : settings) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

ConfigEnvironment process_config_environment(
    std::string project, std::map<std::string, std::vector<std::string>> flags) {
  ConfigEnvironment e;
  e.env = [](std::string_view name) -> std::optional<std::string> {
    auto v = sys::env_value(std::string(name).c_str());
    if (!v) return std::nullopt;
    return std::string(*v);
  };
  std::error_code ec;
  e.cwd = fs::current_path(ec);
  e.project = std::move(project);
  e.home = sys::env_value("HOME").value_or("/");
  // Tests describe a whole machine under a fake root (as machine detection does).
  if (auto root = sys::env_value("GPULOCK_TEST_ROOT")) e.system_root = std::string(*root);
  e.flags = std::move(flags);
  return e;
}

core::Result<Config> load_config(const ConfigEnvironment& environment) {
  Loaded loaded;
  Layer flags;
  for (const auto& [key, values] : environment.flags) {
    const ConfigKey* info = config_detail::key_info(key);
    SettingOrigin o;
    o.kind = SettingOrigin::Kind::Flag;
    o.name = info != nullptr && !info->flag.empty() ? std::string(info->flag) : "--" + key;
    flags[key] = Candidate{values, std::move(o)};
  }
  loaded.layers.push_back(std::move(flags));
  auto own = gpulock_variables(environment);
  if (!own) return std::unexpected(own.error());
  loaded.layers.push_back(std::move(*own));
  loaded.layers.push_back(uv_variables(environment, loaded.warnings));
  loaded.layers.push_back(pip_variables(environment, loaded.warnings));
  if (auto s = project_layers(environment, loaded); !s) return std::unexpected(s.error());
  if (auto s = user_layers(environment, loaded); !s) return std::unexpected(s.error());

  Config config;
  for (const auto& key : kKeys) {
    std::optional<Setting> setting;
    for (const auto& layer : loaded.layers) {
      auto it = layer.find(key.key);
      if (it == layer.end()) continue;
      if (!setting) {
        setting = Setting{std::string(key.key), it->second.values, it->second.origin, {}};
      } else {
        setting->overridden.emplace_back(it->second.values, it->second.origin);
      }
    }
    if (!setting) {
      auto d = default_value(key.key);
      if (!d) continue;
      setting = Setting{std::string(key.key), {std::string(*d)}, SettingOrigin{}, {}};
    }
    config.settings.push_back(std::move(*setting));
  }
  config.conflicts = find_conflicts(config.settings);
  for (std::string_view name : kVariables) {
    if (auto value = lookup(environment, name)) {
      config.variables[std::string(name)] = index::redact_text(*value);
    }
  }
  config.warnings = std::move(loaded.warnings);
  warn_pip_torch_index(config, config.warnings);
  for (auto& [shown, path] : loaded.files) {
    if (std::find(config.file_paths.begin(), config.file_paths.end(), path) !=
        config.file_paths.end())
      continue;
    config.files.push_back(std::move(shown));
    if (std::find(loaded.user_files.begin(), loaded.user_files.end(), path) ==
        loaded.user_files.end())
      config.project_file_paths.push_back(path);
    config.file_paths.push_back(std::move(path));
  }
  return config;
}

std::string config_text(const Config& config) {
  auto value_text = [](const ConfigKey* key, const std::vector<std::string>& values) {
    std::vector<std::string> quoted;
    for (const auto& v : values)
      quoted.push_back(fmt::format("\"{}\"", index::redact_text(v)));
    if (key != nullptr && !key->list && quoted.size() == 1) return quoted.front();
    return fmt::format("[{}]", fmt::join(quoted, ", "));
  };
  std::string out;
  for (const auto& s : config.settings) {
    const ConfigKey* key = config_detail::key_info(s.key);
    out += fmt::format("{} = {}  # {}\n", s.key, value_text(key, s.values), s.origin.to_string());
    for (const auto& [values, origin] : s.overridden) {
      bool conflict = std::any_of(
          config.conflicts.begin(), config.conflicts.end(),
          [&](const ConfigConflict& c) { return c.key == s.key && c.overridden == origin.name; });
      if (conflict) {
        out += fmt::format("  # conflict: {} = {}; {} wins\n", origin.to_string(),
                           value_text(key, values), s.origin.to_string());
      } else {
        out +=
            fmt::format("  # overridden: {} = {}\n", origin.to_string(), value_text(key, values));
      }
    }
  }
  for (const auto& w : config.warnings)
    out += fmt::format("warning: {}\n", w);
  return out;
}

}  // namespace gpulock::app

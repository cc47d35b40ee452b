// The configuration files (issue 26): gpulock's own table, uv's project and user settings, and
// pip's pip.conf, each turned into one layer of key -> value with where it came from.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/text.h"
#include "gpulock/index/url.h"

#include "config_internal.h"

namespace gpulock::app::config_detail {
namespace {

using lock::TomlArray;
using lock::TomlTable;
using lock::TomlValue;

// The blanks trimmed from configuration lines, keys and values.
constexpr std::string_view kBlank = " \t\r";

// The closest key to a typo (at most a third of it wrong), or "".
std::string closest_key(std::string_view typed, bool targets_allowed) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
  std::vector<std::string_view> names;
  for (const auto& k : config_keys())
    names.push_back(k.key);
  if (targets_allowed) names.push_back("targets");
  for (auto name : names) {
    std::size_t d = core::edit_distance(typed, name);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(name);
    }
  }
  return best;
}

std::string table_label(std::string_view name, bool array = false) {
  if (name.empty()) return "";
  return array ? fmt::format("[[{}]]", name) : fmt::format("[{}]", name);
}

std::string joined(std::string_view prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : fmt::format("{}.{}", prefix, name);
}

SettingOrigin file_origin(const SourceFile& file, std::string table, std::size_t line) {
  SettingOrigin o;
  o.kind = SettingOrigin::Kind::File;
  o.name = file.shown;
  o.table = std::move(table);
  o.line = line;
  return o;
}

// A TOML value as text: strings as they are, dates and datetimes in TOML's spelling.
std::optional<std::string> scalar_text(const TomlValue& v) {
  if (const auto* s = v.get_if<std::string>()) return *s;
  if (const auto* d = v.get_if<lock::TomlDate>()) return lock::to_toml_text(*d);
  if (const auto* dt = v.get_if<lock::TomlDatetime>()) return lock::to_toml_text(*dt);
  return std::nullopt;
}

// The error of a gpulock file: where = the file, line; the message names table and key.
core::Error file_error(const SourceFile& file, std::size_t line, std::string message) {
  return core::make_error(core::ErrorCode::InvalidInput, std::move(message), file.shown, line);
}

// `[[tool.gpulock.index]]` entries: tables with `name` and `url` (as uv's), or "NAME=URL".
core::Status index_entries(const TomlValue& value, std::string_view table, const SourceFile& file,
                           std::vector<std::string>& out) {
  const auto* array = value.get_if<TomlArray>();
  std::string label = table.empty() ? "index" : fmt::format("{}.index", table);
  if (array == nullptr) {
    return std::unexpected(file_error(
        file, toml_line(file.text, table, 0, "index"),
        fmt::format("{} index must be an array of NAME=URL strings or of tables with name and url",
                    table_label(table))));
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const TomlValue& item = (*array)[i];
    if (const auto* s = item.get_if<std::string>()) {
      out.push_back(*s);
      continue;
    }
    const auto* t = item.get_if<TomlTable>();
    std::size_t line = toml_line(file.text, label, i, "");
    if (t == nullptr) {
      return std::unexpected(file_error(
          file, line, fmt::format("{} entries must be tables with name and url", label)));
    }
    for (const auto& [k, v] : *t) {
      if (k != "name" && k != "url") {
        return std::unexpected(
            file_error(file, toml_line(file.text, label, i, k),
                       fmt::format("unknown key '{}' in {}", k, table_label(label, true)))
                .with_hint("an index table has name and url"));
      }
    }
    auto name = t->find("name");
    auto url = t->find("url");
    const auto* n = name == t->end() ? nullptr : name->second.get_if<std::string>();
    const auto* u = url == t->end() ? nullptr : url->second.get_if<std::string>();
    if (n == nullptr || u == nullptr) {
      return std::unexpected(
          file_error(file, line,
                     fmt::format("{} needs a name and a url (strings)", table_label(label, true))));
    }
    out.push_back(fmt::format("{}={}", *n, *u));
  }
  return {};
}

// One key's values from TOML: a string, a date, or (list keys) an array of strings.
core::Result<std::vector<std::string>> key_values(const ConfigKey& key, const TomlValue& value,
                                                  std::string_view table, const SourceFile& file,
                                                  std::size_t line) {
  std::vector<std::string> values;
  if (auto s = scalar_text(value)) {
    values.push_back(*s);
    return values;
  }
  const auto* array = value.get_if<TomlArray>();
  if (key.list && array != nullptr) {
    for (const auto& item : *array) {
      auto s = scalar_text(item);
      if (!s) break;
      values.push_back(*s);
    }
    if (values.size() == array->size()) return values;
  }
  return std::unexpected(
      file_error(file, line,
                 fmt::format("{} {} must be {}", table.empty() ? file.shown : table_label(table),
                             key.key, key.list ? "a string or an array of strings" : "a string")));
}

}  // namespace

std::size_t toml_line(std::string_view text, std::string_view table, std::size_t occurrence,
                      std::string_view key) {
  std::size_t number = 0;
  std::string current;
  std::size_t seen = 0;
  bool in_table = table.empty() && occurrence == 0;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    std::string_view line = core::trim(
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start),
        kBlank);
    ++number;
    if (line.starts_with("[")) {
      std::string_view header = line;
      std::size_t close = header.find(']');
      header = header.substr(0, close == std::string_view::npos ? header.size() : close);
      while (header.starts_with("["))
        header.remove_prefix(1);
      std::string name;
      for (char c : core::trim(header, kBlank)) {
        if (c != ' ' && c != '"' && c != '\'') name += c;
      }
      in_table = name == table && seen++ == occurrence;
      if (in_table && key.empty()) return number;
    } else if (in_table && !key.empty()) {
      for (std::string_view quote : {"", "\"", "'"}) {
        std::string spelled = fmt::format("{}{}{}", quote, key, quote);
        if (!line.starts_with(spelled)) continue;
        std::string_view rest = core::trim(line.substr(spelled.size()), kBlank);
        if (rest.starts_with("=")) return number;
      }
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return 0;
}

core::Status read_gpulock_table(const TomlTable& table, std::string_view name,
                                const SourceFile& file, bool targets_allowed, Layer& out) {
  for (const auto& [k, value] : table) {
    std::size_t line = toml_line(file.text, name, 0, k);
    if (k == "targets" && targets_allowed) continue;
    if (k == "index" && value.is<TomlArray>()) {
      Candidate c;
      if (auto s = index_entries(value, name, file, c.values); !s) return s;
      line = line != 0 ? line : toml_line(file.text, joined(name, "index"), 0, "");
      c.origin = file_origin(file, table_label(name), line);
      out["index"] = std::move(c);
      continue;
    }
    const ConfigKey* key = key_info(k);
    if (key == nullptr) {
      std::string where = name.empty() ? file.shown : table_label(name);
      core::Error e = file_error(file, line, fmt::format("unknown key '{}' in {}", k, where));
      if (auto best = closest_key(k, targets_allowed); !best.empty())
        e = e.with_hint(fmt::format("did you mean '{}'?", best));
      return std::unexpected(e);
    }
    auto values = key_values(*key, value, name, file, line);
    if (!values) return std::unexpected(values.error());
    for (const auto& v : *values) {
      auto ok = check_value(key->key, v);
      if (ok) continue;
      // "invalid --torch-backend 'x': expected ..." -> "invalid [tool.gpulock] torch-backend ..."
      std::string message = ok.error().message;
      std::string flag_prefix = fmt::format("invalid --{} ", key->key);
      std::string where = name.empty() ? std::string() : table_label(name) + " ";
      message =
          message.starts_with(flag_prefix)
              ? fmt::format("invalid {}{} {}", where, key->key, message.substr(flag_prefix.size()))
              : fmt::format("invalid {}{}: {}", where, key->key, message);
      core::Error e = file_error(file, line, std::move(message));
      for (const auto& h : ok.error().hints)
        e = e.with_hint(h);
      return std::unexpected(e);
    }
    out[k] = Candidate{std::move(*values), file_origin(file, table_label(name), line)};
  }
  return {};
}

namespace {

// [[tool.uv.index]] entries and the [tool.uv.sources] pins to them.
struct UvIndex {
  std::string name;
  std::string url;
  bool is_explicit = false;
  bool is_default = false;
  std::size_t line = 0;
};

std::vector<UvIndex> uv_indexes(const TomlTable& uv, std::string_view prefix,
                                const SourceFile& file, std::vector<std::string>& warnings) {
  std::vector<UvIndex> out;
  auto it = uv.find("index");
  if (it == uv.end()) return out;
  const std::string table = joined(prefix, "index");
  const auto* array = it->second.get_if<TomlArray>();
  if (array == nullptr) {
    warnings.push_back(fmt::format("{}: {} is not an array of tables; ignored", file.shown,
                                   table_label(table, true)));
    return out;
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto* t = (*array)[i].get_if<TomlTable>();
    std::size_t line = toml_line(file.text, table, i, "");
    UvIndex ix;
    ix.line = line;
    if (t == nullptr) continue;
    for (const auto& [k, v] : *t) {
      if (k == "name" || k == "url") {
        const auto* s = v.get_if<std::string>();
        if (s != nullptr) (k == "name" ? ix.name : ix.url) = *s;
      } else if (k == "explicit" || k == "default") {
        const auto* b = v.get_if<bool>();
        if (b != nullptr) (k == "explicit" ? ix.is_explicit : ix.is_default) = *b;
      } else if (k == "format" && v.get_if<std::string>() != nullptr &&
                 *v.get_if<std::string>() == "simple") {
        continue;
      } else if (k != "publish-url") {
        warnings.push_back(fmt::format("{} line {}: {} {} is not honoured by gpulock", file.shown,
                                       toml_line(file.text, table, i, k), table_label(table, true),
                                       k));
      }
    }
    if (ix.url.empty()) {
      warnings.push_back(fmt::format("{} line {}: {} has no url; ignored", file.shown, line,
                                     table_label(table, true)));
      continue;
    }
    out.push_back(std::move(ix));
  }
  return out;
}

// [tool.uv.sources]: package -> {index, marker} or an array of them. Other kinds of source
// (git, url, path, workspace) are named in a warning.
std::vector<std::string> uv_pins(const TomlTable& uv, std::string_view prefix,
                                 const SourceFile& file, const std::vector<UvIndex>& indexes,
                                 std::set<std::string>& used, std::vector<std::string>& warnings,
                                 std::size_t& first_line) {
  std::vector<std::string> pins;
  auto it = uv.find("sources");
  const auto* sources = it == uv.end() ? nullptr : it->second.get_if<TomlTable>();
  if (sources == nullptr) return pins;
  const std::string table = joined(prefix, "sources");
  for (const auto& [package, value] : *sources) {
    std::size_t line = toml_line(file.text, table, 0, package);
    std::vector<const TomlTable*> entries;
    if (const auto* t = value.get_if<TomlTable>()) entries.push_back(t);
    if (const auto* a = value.get_if<TomlArray>()) {
      for (const auto& item : *a) {
        if (const auto* t = item.get_if<TomlTable>()) entries.push_back(t);
      }
    }
    for (const auto* entry : entries) {
      auto ix = entry->find("index");
      const auto* index_name = ix == entry->end() ? nullptr : ix->second.get_if<std::string>();
      auto where = fmt::format("{} line {}: [{}] {}", file.shown, line, table, package);
      if (index_name == nullptr) {
        warnings.push_back(fmt::format(
            "{}: a source that is not an index (git, url, path or workspace) is not honoured by "
            "gpulock; {} comes from the indexes",
            where, package));
        continue;
      }
      if (entry->contains("extra") || entry->contains("group")) {
        warnings.push_back(fmt::format(
            "{}: a source for an extra or a group is not honoured by gpulock; ignored", where));
        continue;
      }
      if (std::none_of(indexes.begin(), indexes.end(),
                       [&](const UvIndex& u) { return u.name == *index_name; })) {
        warnings.push_back(fmt::format("{}: no [[{}]] is named '{}'; ignored", where,
                                       joined(prefix, "index"), *index_name));
        continue;
      }
      std::string pin = fmt::format("{}={}", core::normalize_name(package), *index_name);
      auto marker = entry->find("marker");
      if (marker != entry->end()) {
        const auto* text = marker->second.get_if<std::string>();
        if (text == nullptr || !core::Marker::parse(*text)) {
          warnings.push_back(
              fmt::format("{}: the marker cannot be read; the source is ignored", where));
          continue;
        }
        pin += "; " + *text;
      }
      used.insert(*index_name);
      pins.push_back(std::move(pin));
      if (first_line == 0) first_line = line != 0 ? line : toml_line(file.text, table, 0, "");
    }
  }
  return pins;
}

// A uv option through gpulock's parser: a value that does not parse is a warning.
void uv_option(const TomlTable& table, std::string_view table_name, std::string_view uv_key,
               std::string_view key, const SourceFile& file, Layer& out,
               std::vector<std::string>& warnings) {
  auto it = table.find(uv_key);
  if (it == table.end()) return;
  std::size_t line = toml_line(file.text, table_name, 0, uv_key);
  auto text = scalar_text(it->second);
  std::string label = table_name.empty() ? file.shown : table_label(table_name);
  if (!text || !check_value(key, *text)) {
    std::string shown = text ? core::quote_for_message(*text) : std::string("this value");
    warnings.push_back(fmt::format("{} line {}: gpulock cannot use {} {} = {}; ignored", file.shown,
                                   line, label, uv_key, shown));
    return;
  }
  out[std::string(key)] = Candidate{{*text}, file_origin(file, table_label(table_name), line)};
}

// uv's legacy index keys: `index-url`, `extra-index-url`, `find-links` in [tool.uv].
void uv_legacy_indexes(const TomlTable& uv, std::string_view prefix, const SourceFile& file,
                       Layer& out) {
  for (std::string_view key : {"index-url", "extra-index-url", "find-links"}) {
    auto it = uv.find(key);
    if (it == uv.end() || out.contains(key)) continue;
    Candidate c;
    if (auto s = scalar_text(it->second)) c.values.push_back(*s);
    if (const auto* a = it->second.get_if<TomlArray>()) {
      for (const auto& item : *a) {
        if (auto s = scalar_text(item)) c.values.push_back(*s);
      }
    }
    if (c.values.empty()) continue;
    if (key == "index-url") c.values.resize(1);
    c.origin = file_origin(file, table_label(prefix), toml_line(file.text, prefix, 0, key));
    out[std::string(key)] = std::move(c);
  }
}

}  // namespace

void read_uv_table(const TomlTable& uv, std::string_view prefix, const SourceFile& file,
                   bool with_indexes, Layer& out, std::vector<std::string>& warnings) {
  if (with_indexes) {
    auto indexes = uv_indexes(uv, prefix, file, warnings);
    std::set<std::string> used;
    std::size_t sources_line = 0;
    auto pins = uv_pins(uv, prefix, file, indexes, used, warnings, sources_line);
    // Explicit indexes serve only the packages pinned to them (uv's rule): named indexes. The
    // others are searched in the order given, the default one (else PyPI) last.
    Candidate named, general;
    const UvIndex* default_index = nullptr;
    for (const auto& ix : indexes) {
      if (used.contains(ix.name)) {
        named.values.push_back(fmt::format("{}={}", ix.name, ix.url));
        if (named.origin.kind == SettingOrigin::Kind::Default)
          named.origin = file_origin(file, table_label(joined(prefix, "index"), true), ix.line);
      }
      if (ix.is_explicit) continue;
      if (ix.is_default) {
        default_index = &ix;
        continue;
      }
      general.values.push_back(ix.url);
      if (general.origin.kind == SettingOrigin::Kind::Default)
        general.origin = file_origin(file, table_label(joined(prefix, "index"), true), ix.line);
    }
    if (!general.values.empty() || default_index != nullptr) {
      general.values.push_back(default_index ? default_index->url
                                             : std::string("https://pypi.org/simple/"));
      if (general.origin.kind == SettingOrigin::Kind::Default) {
        general.origin =
            file_origin(file, table_label(joined(prefix, "index"), true), default_index->line);
      }
      Candidate first{{general.values.front()}, general.origin};
      out["index-url"] = std::move(first);
      if (general.values.size() > 1) {
        general.values.erase(general.values.begin());
        out["extra-index-url"] = std::move(general);
      }
    }
    if (!named.values.empty()) out["index"] = std::move(named);
    if (!pins.empty()) {
      out["index-for"] = Candidate{
          std::move(pins), file_origin(file, table_label(joined(prefix, "sources")), sources_line)};
    }
    uv_legacy_indexes(uv, prefix, file, out);
  }
  uv_option(uv, prefix, "index-strategy", "index-strategy", file, out, warnings);
  uv_option(uv, prefix, "exclude-newer", "exclude-newer", file, out, warnings);
  uv_option(uv, prefix, "prerelease", "prerelease", file, out, warnings);
  if (auto it = uv.find("pip"); it != uv.end()) {
    if (const auto* pip = it->second.get_if<TomlTable>())
      uv_option(*pip, joined(prefix, "pip"), "torch-backend", "torch-backend", file, out, warnings);
  }
  for (std::string_view unhonoured :
       {"override-dependencies", "constraint-dependencies", "resolution", "no-index", "no-binary",
        "no-binary-package", "fork-strategy"}) {
    if (!uv.contains(unhonoured)) continue;
    warnings.push_back(fmt::format("{} line {}: {} {} is not honoured by gpulock", file.shown,
                                   toml_line(file.text, prefix, 0, unhonoured),
                                   prefix.empty() ? file.shown : table_label(prefix), unhonoured));
  }
}

void read_pip_conf(const SourceFile& file, Layer& out) {
  // section -> key -> (values, line)
  std::map<std::string, std::map<std::string, Candidate>> sections;
  std::string section;
  Candidate* open = nullptr;  // the key a continuation line adds to
  std::size_t number = 0;
  for (std::size_t start = 0; start <= file.text.size();) {
    std::size_t end = file.text.find('\n', start);
    std::string_view raw = std::string_view(file.text).substr(
        start, end == std::string::npos ? std::string::npos : end - start);
    ++number;
    std::string_view line = core::trim(raw, kBlank);
    bool continuation = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
    if (line.empty() || line.starts_with("#") || line.starts_with(";")) {
      // blank and comment lines end nothing: pip's parser keeps reading a value's lines
    } else if (line.starts_with("[") && line.ends_with("]")) {
      section = std::string(core::trim(line.substr(1, line.size() - 2), kBlank));
      open = nullptr;
    } else if (continuation && open != nullptr) {
      open->values.emplace_back(line);
    } else if (auto eq = line.find_first_of("=:"); eq != std::string_view::npos) {
      std::string key(core::trim(line.substr(0, eq), kBlank));
      std::replace(key.begin(), key.end(), '_', '-');
      Candidate c;
      c.origin = file_origin(file, fmt::format("[{}]", section), number);
      std::string_view value = core::trim(line.substr(eq + 1), kBlank);
      for (std::size_t pos = 0; pos < value.size();) {
        std::size_t space = value.find_first_of(" \t", pos);
        std::string_view word =
            value.substr(pos, space == std::string_view::npos ? space : space - pos);
        if (!word.empty()) c.values.emplace_back(word);
        if (space == std::string_view::npos) break;
        pos = space + 1;
      }
      open = &(sections[section][key] = std::move(c));
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  for (std::string_view key : {"index-url", "extra-index-url", "find-links"}) {
    for (std::string_view name : {"global", "install"}) {
      auto s = sections.find(std::string(name));
      if (s == sections.end()) continue;
      auto k = s->second.find(std::string(key));
      if (k == s->second.end() || k->second.values.empty()) continue;
      Candidate c = k->second;
      if (key == "index-url") c.values.resize(1);
      out[std::string(key)] = std::move(c);
    }
  }
}

}  // namespace gpulock::app::config_detail

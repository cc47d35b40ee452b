// `gpulock config`: every effective setting of a resolve with where it came from (issue 26),
// as `key = value  # origin` lines or `--json`.
#include <memory>

#include <fmt/format.h>

#include "gpulock/app/config.h"
#include "gpulock/index/url.h"

#include "command.h"
#include "config_flags.h"
#include "exit_codes.h"
#include "json_writer.h"
#include "resolve_flags.h"

namespace gpulock::cli {
namespace {

struct ConfigArgs {
  ResolveFlags flags;
  bool json = false;
};

std::string_view kind_name(app::SettingOrigin::Kind kind) {
  switch (kind) {
    case app::SettingOrigin::Kind::Default:
      return "default";
    case app::SettingOrigin::Kind::Flag:
      return "flag";
    case app::SettingOrigin::Kind::Env:
      return "env";
    case app::SettingOrigin::Kind::File:
      return "file";
  }
  return "default";
}

void origin_json(JsonWriter& w, const app::SettingOrigin& o) {
  w.begin_object();
  w.field("kind", kind_name(o.kind));
  if (o.kind == app::SettingOrigin::Kind::Flag) w.field("flag", o.name);
  if (o.kind == app::SettingOrigin::Kind::Env) w.field("variable", o.name);
  if (o.kind == app::SettingOrigin::Kind::File) {
    w.field("file", o.name);
    w.field("table", o.table);
    w.field("line", static_cast<std::uint64_t>(o.line));
  }
  w.field("text", o.to_string());
  w.end_object();
}

std::string config_json(const app::Config& config) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "gpulock.config/1");
  w.key("settings").begin_array();
  for (const auto& s : config.settings) {
    bool list = false;
    for (const auto& k : app::config_keys()) {
      if (k.key == s.key) list = k.list;
    }
    w.begin_object();
    w.field("key", s.key);
    std::vector<std::string> shown;
    for (const auto& v : s.values)
      shown.push_back(index::redact_text(v));
    if (list || shown.size() != 1) {
      w.field("value", shown);
    } else {
      w.field("value", shown.front());
    }
    w.key("origin");
    origin_json(w, s.origin);
    w.key("overridden").begin_array();
    for (const auto& [values, origin] : s.overridden) {
      std::vector<std::string> hidden;
      for (const auto& v : values)
        hidden.push_back(index::redact_text(v));
      bool conflict = false;
      for (const auto& c : config.conflicts)
        conflict = conflict || (c.key == s.key && c.overridden == origin.name);
      w.begin_object();
      w.field("value", hidden);
      w.key("origin");
      origin_json(w, origin);
      w.field("conflict", conflict);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  // Variables that set one key to different values: which wins (issue 26).
  w.key("conflicts").begin_array();
  for (const auto& c : config.conflicts) {
    auto redacted = [](const std::vector<std::string>& values) {
      std::vector<std::string> out;
      for (const auto& v : values)
        out.push_back(index::redact_text(v));
      return out;
    };
    w.begin_object();
    w.field("key", c.key);
    w.field("winner", c.winner);
    w.field("winner_value", redacted(c.winner_values));
    w.field("overridden", c.overridden);
    w.field("overridden_value", redacted(c.overridden_values));
    w.field("text", c.to_string());
    w.end_object();
  }
  w.end_array();
  w.field("files", config.files);
  w.field("warnings", config.warnings);
  w.end_object();
  return w.str();
}

RunFn setup(CLI::App& sub) {
  auto a = std::make_shared<ConfigArgs>();
  // The flags resolve takes: given here, they show as the command line's.
  (void)add_resolve_input_flags(sub, a->flags);
  add_resolve_source_and_machine_flags(sub, a->flags);
  sub.add_flag("--json", a->json, "Print the settings as JSON");
  return [a, &sub](Context& ctx) -> int {
    auto& term = ctx.term;
    if (auto s = a->flags.finish(); !s) return report_error(term, s.error());
    auto config = app::load_config(
        app::process_config_environment(a->flags.request.project, given_config_flags(sub)));
    if (!config) return report_error(term, config.error());
    if (a->json) {
      term.out(config_json(*config) + "\n");
      return kExitSuccess;
    }
    auto text = app::config_text(*config);
    // Warnings go to stderr, as every command's do.
    std::string settings;
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t end = text.find('\n', pos);
      std::string_view line(text.data() + pos, end - pos);
      if (line.starts_with("warning: ")) {
        term.warning(line.substr(9));
      } else {
        settings += std::string(line) + "\n";
      }
      pos = end + 1;
    }
    term.out(settings);
    return kExitSuccess;
  };
}

const bool registered = register_command(
    {"config", "Show every resolve setting and where it comes from (flags, variables, files)", 65,
     &setup});

}  // namespace
}  // namespace gpulock::cli

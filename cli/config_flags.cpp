// Project configuration beneath resolve's flags (config_flags.h).
#include "config_flags.h"

namespace gpulock::cli {

std::map<std::string, std::vector<std::string>> given_config_flags(const CLI::App& sub) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& key : app::config_keys()) {
    if (key.flag.empty()) continue;
    const CLI::Option* option = sub.get_option_no_throw(std::string(key.flag));
    // check's --index (a layer) and --mirror are its own flags, not resolve's settings.
    if (option == nullptr || option->count() == 0 || option->get_expected_min() == 0) continue;
    out[std::string(key.key)] = option->results();
  }
  const CLI::Option* pre = sub.get_option_no_throw("--pre");
  if (pre != nullptr && pre->count() > 0 && !out.contains("prerelease")) {
    out["prerelease"] = {"allow"};
  }
  return out;
}

core::Result<app::Config> apply_project_config(const CLI::App& sub, ResolveFlags& flags) {
  auto config = app::load_config(
      app::process_config_environment(flags.request.project, given_config_flags(sub)));
  if (!config) return config;
  if (auto s = app::apply_config(*config, flags.request); !s) return std::unexpected(s.error());
  return config;
}

core::Result<std::string> configured_mirror() {
  auto config = app::load_config(app::process_config_environment({}, {}));
  if (!config) return std::unexpected(config.error());
  const app::Setting* mirror = config->find("mirror");
  if (mirror == nullptr || mirror->values.empty()) return std::string();
  return mirror->values.front();
}

}  // namespace gpulock::cli

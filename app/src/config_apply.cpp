// apply_config (app/config.h): the loaded settings onto resolve's typed request, beneath the
// flags; user-level settings keep their origin (issue 41 item 2).

#include "gpulock/app/config.h"
#include "gpulock/app/resolve_request.h"

namespace gpulock::app {

core::Status apply_config(const Config& config, ResolveRequest& request) {
  // A --python interpreter is asked for its version and platform: configured ones do not apply.
  const bool interpreter = !request.target.python.empty();
  for (const auto& s : config.settings) {
    using Kind = SettingOrigin::Kind;
    if (s.origin.kind == Kind::Flag || s.origin.kind == Kind::Default || s.values.empty()) continue;
    // Through the option's row (resolve_request.h): its own parser into its field. Keys that
    // are not resolve options (mirror) are install's.
    const RequestOption* option = find_request_option(s.key);
    if (option == nullptr) continue;
    if (s.key == "index-url") {
      // Below a requirements file's --index-url line, unlike the flag.
      request.configured_index_url = s.values.front();
      continue;
    }
    if ((s.key == "python-version" || s.key == "platform") && interpreter) continue;
    // A configured list comes whole from one source: it replaces the list.
    if (option->list) option->clear(request);
    for (const auto& v : s.values) {
      if (auto st = option->apply(request, v); !st) return st;
      if (!option->list) break;
    }
  }
  // Issue 41 item 2: user-level settings are kept with their origin; the lock records one only
  // when it supplied a locked file. Project files are inputs as they were (issue 26).
  request.user_settings.clear();
  for (const auto& s : config.settings) {
    if (!s.origin.user_source.empty()) {
      request.user_settings.push_back({s.key, s.origin.user_source, s.values});
    }
  }
  request.config_files = config.project_file_paths;
  return {};
}

}  // namespace gpulock::app

// apply_config (app/config.h): the loaded settings onto resolve's typed request, beneath the
// flags; user-level settings keep their origin (issue 41 item 2).
#include <fmt/format.h>

#include "gpulock/app/config.h"
#include "gpulock/core/text.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/index/index_spec.h"
#include "gpulock/resolver/provider.h"

namespace gpulock::app {

core::Status apply_config(const Config& config, ResolveRequest& request) {
  // A --python interpreter is asked for its version and platform: configured ones do not apply.
  const bool interpreter = !request.target.python.empty();
  for (const auto& s : config.settings) {
    using Kind = SettingOrigin::Kind;
    if (s.origin.kind == Kind::Flag || s.origin.kind == Kind::Default || s.values.empty()) continue;
    const std::string& v = s.values.front();
    auto set = [&](auto parsed, auto& into) -> core::Status {
      if (!parsed) return std::unexpected(parsed.error());
      into = std::move(*parsed);
      return {};
    };
    core::Status st;
    if (s.key == "index-url") {
      request.configured_index_url = v;
    } else if (s.key == "extra-index-url") {
      request.extra_index_urls = s.values;
    } else if (s.key == "find-links") {
      request.find_links = s.values;
    } else if (s.key == "index") {
      request.named_indexes.clear();
      for (const auto& text : s.values) {
        auto ix = index::NamedIndex::parse(text);
        if (!ix) return std::unexpected(ix.error());
        request.named_indexes.push_back(std::move(*ix));
      }
    } else if (s.key == "index-for") {
      request.index_for.clear();
      request.index_for_when.clear();
      for (const auto& text : s.values) {
        auto semi = text.find(';');
        auto pin = index::IndexPin::parse(core::trim(std::string_view(text).substr(0, semi)));
        if (!pin) return std::unexpected(pin.error());
        if (semi == std::string::npos) {
          request.index_for.push_back(std::move(*pin));
        } else {
          request.index_for_when.push_back(
              {std::move(*pin), std::string(core::trim(std::string_view(text).substr(semi + 1)))});
        }
      }
    } else if (s.key == "index-strategy") {
      st = set(parse_index_strategy(v), request.index_strategy);
    } else if (s.key == "torch-backend") {
      st = set(TorchBackend::parse(v), request.torch_backend);
    } else if (s.key == "torch-index-base") {
      request.torch_index_base = v;
    } else if (s.key == "nightly") {
      st = set(NightlyDate::parse(v), request.nightly);
    } else if (s.key == "exclude-newer") {
      st = set(ExcludeNewer::parse(v), request.exclude_newer);
    } else if (s.key == "prerelease") {
      st = set(resolver::parse_prerelease_policy(v), request.prerelease);
    } else if (s.key == "cuda-compat") {
      st = set(gpu::parse_cuda_compat(v), request.cuda_compat);
    } else if (s.key == "python-version" && !interpreter) {
      request.target.python_version = v;
    } else if (s.key == "platform" && !interpreter) {
      request.target.platform = v;
      request.target.more_platforms.assign(s.values.begin() + 1, s.values.end());
    }
    if (!st) return st;
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

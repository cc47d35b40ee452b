// User-level settings in `gpulock check --inputs` (issue 41 item 2). A variable or a user-level
// configuration file (pip.conf, uv.toml, the user's gpulock.toml) is part of a lock only when it
// supplied a locked file: resolve then names it as the `origin` of that index's record. check
// reports such a setting when it differs now, and a user-level setting present now that would be
// asked before the index a locked file came from. Any other variable is none of the lock's
// business: one developer's PIP_FIND_LINKS that gave nothing never fails another's CI.
#include <algorithm>
#include <filesystem>
#include <set>
#include <span>

#include <fmt/format.h>

#include "gpulock/app/config.h"
#include "gpulock/app/requirements_file.h"
#include "gpulock/catalog/source.h"
#include "gpulock/core/command_line.h"
#include "gpulock/core/text.h"
#include "gpulock/index/page.h"
#include "gpulock/index/url.h"

#include "check_internal.h"
#include "resolve_inputs.h"

namespace gpulock::app::check_detail {
namespace {

namespace fs = std::filesystem;

// One spelling of an index URL for comparing: a local path as its file:// URL (as resolve
// records it), no credentials, no trailing slash.
std::string same_url(std::string_view url) {
  std::string u = index::IndexSource::find_links(url).url;
  return std::string(core::trim_slash(index::strip_credentials(u)));
}

// A recorded index's source (catalog::read_recorded_role); nullopt for a role gpulock does not
// write.
std::optional<catalog::Source> recorded_source(const lock::IndexRecord& ix) {
  return catalog::read_recorded_role(ix.role);
}

bool is_find_links(const std::optional<catalog::Source>& source) {
  return source && source->is<catalog::FindLinks>();
}

// The configuration key behind a general index (a role gpulock does not write reads as
// find-links).
std::string_view key_of_role(const std::optional<catalog::Source>& source) {
  if (!source || source->is<catalog::FindLinks>()) return "find-links";
  if (source->role == catalog::Role::Default) return "index-url";
  if (source->role == catalog::Role::Extra) return "extra-index-url";
  return "find-links";
}

// Whether the command that made the lock gave `key` as a flag (it then wins over any variable,
// and the same command run again would still use it).
bool flag_given(const lock::Lock& lk, std::string_view key) {
  std::vector<std::string_view> flags;
  if (key == "index-url") flags = {"--index-url", "-i", "--default-index"};
  if (key == "extra-index-url") flags = {"--extra-index-url", "--index"};
  if (key == "find-links") flags = {"--find-links", "-f"};
  std::string_view rest = lk.command;
  while (!rest.empty()) {
    auto space = rest.find(' ');
    std::string_view word = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    for (auto f : flags) {
      if (word == f || (word.starts_with(f) && word.size() > f.size() && word[f.size()] == '='))
        return true;
    }
  }
  return false;
}

// The locked packages a recorded general index supplied ("jinja2 3.1.4, markupsafe 2.1.5").
std::vector<std::string> supplied_by(const lock::Lock& lk, const lock::IndexRecord& ix) {
  std::vector<std::string> out;
  const std::string want = same_url(ix.url);
  const std::string as_file = ix.url.starts_with("/") ? "file://" + ix.url : ix.url;
  for (const auto& p : lk.packages) {
    bool from = p.index && same_url(*p.index) == want;
    if (!from && is_find_links(recorded_source(ix)) && p.wheels) {
      for (const auto& w : *p.wheels) {
        std::string u = w.url.value_or(w.path.value_or(""));
        if (u.starts_with(same_url(as_file) + "/") || u.starts_with(want + "/")) from = true;
      }
    }
    if (from) out.push_back(fmt::format("{} {}", p.name, p.version.value_or("")));
  }
  return out;
}

std::string some(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 3;
  std::vector<std::string> shown(
      names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), kShown)));
  std::string out = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kShown) out += fmt::format(" and {} more", names.size() - kShown);
  return out;
}

// "PIP_FIND_LINKS" for "env PIP_FIND_LINKS", "~/.config/pip/pip.conf" for "file ...".
std::string origin_name(std::string_view origin) {
  auto space = origin.find(' ');
  return std::string(space == std::string_view::npos ? origin : origin.substr(space + 1));
}

// What the configuration now says for `key` at `origin`, for the message; `winner` is set to
// the user-level source that overrides it now, if one does.
std::string now_text(const Config& config, std::string_view key, std::string_view origin,
                     std::string& winner) {
  auto quoted = [](const std::vector<std::string>& values) {
    std::vector<std::string> out;
    for (const auto& v : values)
      out.push_back(core::quote_for_message(index::redact_text(v)));
    return fmt::format("{}", fmt::join(out, " "));
  };
  const Setting* s = config.find(key);
  const bool env = origin.starts_with("env ");
  if (s != nullptr && s->origin.user_source == origin) {
    return env ? "is now " + quoted(s->values)
               : fmt::format("now sets {} {}", key, quoted(s->values));
  }
  if (s != nullptr) {
    for (const auto& [values, o] : s->overridden) {
      if (o.user_source != origin) continue;
      winner = s->origin.user_source;
      return fmt::format("is overridden now by {} {}", s->origin.to_string(), quoted(s->values));
    }
  }
  return env ? std::string("is not set now") : fmt::format("sets no {} now", key);
}

// The configuration as resolve would load it now for this lock's project.
core::Result<Config> config_now(const Context& ctx, const lock::GpulockInputs& rec) {
  std::string project;
  for (const auto& f : rec.files) {
    if (f.kind == "project") project = (ctx.lock_dir / f.path).lexically_normal().string();
  }
  ConfigEnvironment environment = process_config_environment(project, {});
  environment.cwd = ctx.lock_dir;
  return load_config(environment);
}

}  // namespace

core::Status compare_user_settings(const Context& ctx, const lock::GpulockInputs& rec,
                                   std::vector<Drift>& drifts) {
  if (!ctx.lock.gpulock) return {};
  auto config = config_now(ctx, rec);
  if (!config) return std::unexpected(config.error());
  ResolveRequest now;
  if (auto s = apply_config(*config, now); !s) return s;
  // Requirements files still decide their own indexes (`--index-url` in a file wins over any
  // variable); read as resolve reads them. A file that no longer reads is drift of its own.
  RequirementsInput req;
  for (const auto& f : rec.files) {
    if (f.kind != "requirements" && f.kind != "constraints") continue;
    (void)read_requirements_file((ctx.lock_dir / f.path).lexically_normal().string(),
                                 f.kind == "constraints", req);
  }
  const auto now_list = detail::general_indexes(now, req);
  std::set<std::string> now_urls, recorded_urls;
  for (const auto& g : now_list)
    now_urls.insert(same_url(g.url));
  const auto& indexes = ctx.lock.gpulock->indexes;
  for (const auto& ix : indexes)
    recorded_urls.insert(same_url(ix.url));
  const bool best_match = rec.options.contains("index-strategy") &&
                          rec.options.at("index-strategy") == "unsafe-best-match";

  // A setting that supplied locked files and differs now.
  std::set<std::string> reported;
  for (const auto& ix : indexes) {
    const auto source = recorded_source(ix);
    if (!ix.origin || (source && (source->role == catalog::Role::Pinned ||
                                  source->role == catalog::Role::Family)))
      continue;
    if (now_urls.contains(same_url(ix.url))) continue;
    auto names = supplied_by(ctx.lock, ix);
    std::string key(key_of_role(source));
    std::string winner;
    Drift d = make_drift(
        CheckLayer::Inputs, "setting-changed", origin_name(*ix.origin),
        fmt::format("{} supplied locked files ({} {}{}) and {}", origin_name(*ix.origin), key,
                    index::redact_url(ix.url), names.empty() ? "" : ": " + some(names),
                    now_text(*config, key, *ix.origin, winner)),
        rec.line.line);
    d.expected = ix.url;
    // The way out that works alone: the lock's command with the setting given as its flag (a
    // flag wins over any variable or file, and the lock then records it as given).
    const core::FlagEdit again{
        "--" + key, ix.url, key == "index-url" ? core::FlagEdit::Op::Set : core::FlagEdit::Op::Add};
    d.hint = fmt::format(
        "a setting outside the project made this lock: give {} {} again{}, or move it into the "
        "project's gpulock.toml and update the lock",
        key, index::redact_url(ix.url),
        ctx.lock.command.empty()
            ? std::string()
            : " (`" + core::command_with(ctx.lock.command, std::span(&again, 1)) + "`)");
    drifts.push_back(std::move(d));
    reported.insert(*ix.origin);
    if (!winner.empty()) reported.insert(winner);
  }

  // A user-level setting present now that would be asked before an index a locked file came
  // from (first-index: the default index, then extra indexes, then find-links; a setting's list
  // before a requirements file's; with unsafe-best-match every index competes).
  for (const auto& n : now_list) {
    if (n.origin.empty() || reported.contains(n.origin) ||
        recorded_urls.contains(same_url(n.url)) || flag_given(ctx.lock, key_of_role(n.type)))
      continue;
    const bool n_default =
        n.type.role == catalog::Role::Default && !n.type.is<catalog::FindLinks>();
    const bool n_find_links = n.type.is<catalog::FindLinks>();
    if (n_default && req.index_url) continue;
    std::vector<std::string> passed;
    std::size_t count = 0;
    for (const auto& ix : indexes) {
      const auto source = recorded_source(ix);
      if (!source || source->is<catalog::Direct>() ||
          (source->role != catalog::Role::Default && source->role != catalog::Role::Extra))
        continue;
      const bool ix_find_links = source->is<catalog::FindLinks>();
      const bool ix_extra = !ix_find_links && source->role == catalog::Role::Extra;
      const bool precedes =
          best_match || n_default ||
          (!n_default && !n_find_links && (ix_find_links || (ix_extra && !ix.origin))) ||
          (n_find_links && ix_find_links && !ix.origin);
      if (!precedes) continue;
      auto names = supplied_by(ctx.lock, ix);
      if (names.empty()) continue;
      passed.push_back(index::redact_url(ix.url));
      count += names.size();
    }
    if (passed.empty()) continue;
    Drift d = make_drift(
        CheckLayer::Inputs, "setting-precedes", origin_name(n.origin),
        fmt::format("{} ({} {}) is set now and would be asked before {}, where {} locked "
                    "package{} came from",
                    origin_name(n.origin), key_of_role(n.type), index::redact_url(n.url),
                    fmt::join(passed, ", "), count, count == 1 ? "" : "s"),
        rec.line.line);
    d.severity = DriftSeverity::Warning;
    d.actual = index::redact_url(n.url);
    d.hint = fmt::format(
        "installing the lock is not affected; a new resolve here would ask it first: unset it "
        "for this project, or update the lock with it{}",
        ctx.lock.command.empty() ? std::string() : ": " + ctx.lock.command);
    drifts.push_back(std::move(d));
    reported.insert(n.origin);
  }
  return {};
}

}  // namespace gpulock::app::check_detail

// A wheel's entry points and their launcher scripts (entry_points.h).
#include "entry_points.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "gpulock/core/text.h"

namespace gpulock::install::detail {
namespace {

using core::ErrorCode;

// distlib's shebang: simple when short and without spaces, else the /bin/sh trampoline.
std::string shebang(const std::string& python) {
  if (python.find(' ') == std::string::npos && python.size() + 3 <= 127)
    return "#!" + python + "\n";
  return "#!/bin/sh\n'''exec' " + python + " \"$0\" \"$@\"\n' '''\n";
}

}  // namespace

EntryPoints read_entry_points(const std::string& text) {
  EntryPoints out;
  std::istringstream in(text);
  std::string line, section;
  while (std::getline(in, line)) {
    std::string_view t = core::trim(line, " \t\r");
    if (t.empty() || t.front() == '#' || t.front() == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      section = std::string(core::trim(t.substr(1, t.size() - 2), " \t"));
      continue;
    }
    auto eq = t.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(core::trim(t.substr(0, eq), " \t"));
    std::string value(core::trim(t.substr(eq + 1), " \t"));
    if (auto bracket = value.find('['); bracket != std::string::npos)
      value = std::string(core::trim(std::string_view(value).substr(0, bracket), " \t"));
    if (section == "console_scripts") out.console.emplace_back(name, value);
    if (section == "gui_scripts") out.gui.emplace_back(name, value);
  }
  return out;
}

// pip's get_console_script_specs: pip and easy_install get versioned launchers.
std::vector<std::pair<std::string, std::string>> console_specs(
    std::vector<std::pair<std::string, std::string>> console, const std::string& xy) {
  std::vector<std::pair<std::string, std::string>> out;
  auto take = [&](const std::string& name) -> std::optional<std::string> {
    auto it = std::find_if(console.begin(), console.end(),
                           [&](const auto& p) { return p.first == name; });
    if (it == console.end()) return std::nullopt;
    std::string v = it->second;
    console.erase(it);
    return v;
  };
  auto drop_versioned = [&](std::string_view base, std::string_view sep) {
    std::erase_if(console, [&](const auto& p) {
      std::string_view n = p.first;
      if (!n.starts_with(base)) return false;
      n.remove_prefix(base.size());
      if (n.empty()) return true;
      if (!sep.empty()) {
        if (!n.starts_with(sep)) return false;
        n.remove_prefix(sep.size());
      }
      return std::all_of(n.begin(), n.end(),
                         [](char c) { return (c >= '0' && c <= '9') || c == '.'; }) &&
             !n.empty() && n.front() != '.';
    });
  };
  if (auto pip = take("pip")) {
    out.emplace_back("pip", *pip);
    out.emplace_back("pip" + xy.substr(0, xy.find('.')), *pip);
    out.emplace_back("pip" + xy, *pip);
    drop_versioned("pip", "");
  }
  if (auto easy = take("easy_install")) {
    out.emplace_back("easy_install", *easy);
    out.emplace_back("easy_install-" + xy, *easy);
    drop_versioned("easy_install", "-");
  }
  for (auto& p : console)
    out.push_back(std::move(p));
  return out;
}

// PipScriptMaker's launcher for "module:attr.sub".
core::Result<std::string> launcher(const std::string& name, const std::string& value,
                                   const std::string& python) {
  auto colon = value.find(':');
  if (colon == std::string::npos) {
    return std::unexpected(core::make_error(
        ErrorCode::InvalidInput,
        fmt::format("invalid script entry point: {} = {} - a callable suffix is required", name,
                    value)));
  }
  std::string module(core::trim(std::string_view(value).substr(0, colon), " \t"));
  std::string func(core::trim(std::string_view(value).substr(colon + 1), " \t"));
  std::string import_name = func.substr(0, func.find('.'));
  return shebang(python) +
         fmt::format(
             "import sys\nfrom {} import {}\nif __name__ == '__main__':\n"
             "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit({}())\n",
             module, import_name, func);
}

bool safe_script_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// setuptools' own wrappers in .data/scripts for an entry point pip generates itself.
bool is_entrypoint_wrapper(std::string name, const EntryPoints& eps) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  std::string l = lower(name);
  if (l.ends_with(".exe") || l.ends_with(".pya")) {
    name.resize(name.size() - 4);
  } else if (l.ends_with("-script.py")) {
    name.resize(name.size() - 10);
  }
  auto has = [&](const auto& v) {
    return std::any_of(v.begin(), v.end(), [&](const auto& p) { return p.first == name; });
  };
  return has(eps.console) || has(eps.gui);
}

}  // namespace gpulock::install::detail

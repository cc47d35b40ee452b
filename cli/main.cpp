// gpulock's entry point: global flags, the command table, `help`, exit codes.
#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/app/command_line.h"
#include "gpulock/app/version.h"
#include "gpulock/core/text.h"
#include "gpulock/sys/huge_pages.h"

#include "command.h"
#include "exit_codes.h"
#include "interrupt.h"
#include "terminal.h"

namespace gpulock::cli {
namespace {

std::vector<CommandInfo>& command_table() {
  static std::vector<CommandInfo> table;
  return table;
}

// The closest command name, if one is close enough to be a likely typo (ninja's
// SpellcheckString rule: at most a third of the word wrong, and at least one edit allowed).
std::string closest_command(std::string_view typed, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
  for (const auto& name : names) {
    std::size_t d = core::edit_distance(typed, name);
    if (d < best_distance || (name.starts_with(typed) && !typed.empty() && best.empty())) {
      best_distance = std::min(d, best_distance);
      best = name;
    }
  }
  return best;
}

// `typed` is no command: says so, suggests the closest one (as `prefix` + name), exit 2.
int unknown_command(Terminal& term, std::string_view typed, const std::vector<std::string>& names,
                    std::string_view prefix) {
  term.error(fmt::format("unknown command '{}'", typed));
  std::string suggestion = closest_command(typed, names);
  if (!suggestion.empty()) term.hint(fmt::format("did you mean '{}{}'?", prefix, suggestion));
  term.hint("run 'gpulock --help' for the list of commands");
  return kExitUsage;
}

// Global options that take a separate value: skipped when looking for the command word.
bool takes_value(std::string_view arg) {
  return arg == "--color";
}

// The first word that is not a global option (the command), or "".
std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("-")) return arg;
    if (takes_value(arg)) ++i;
  }
  return {};
}

}  // namespace

bool register_command(const CommandInfo& info) {
  command_table().push_back(info);
  return true;
}

std::vector<CommandInfo> registered_commands() {
  auto table = command_table();
  std::stable_sort(table.begin(), table.end(),
                   [](const CommandInfo& a, const CommandInfo& b) { return a.order < b.order; });
  return table;
}

namespace {

// A command line CLI11 refuses: the error (a mistyped flag named, with the closest flag of that
// command), the command's usage hint, exit 2.
int report_parse_error(Terminal& term, CLI::App& app,
                       const std::map<std::string, CLI::App*>& subcommands,
                       const CLI::ParseError& e, int argc, char** argv) {
  std::string where;
  CLI::App* parsed = &app;
  for (const auto& [name, sub] : subcommands) {
    if (sub->parsed()) {
      where = " " + name;
      parsed = sub;
    }
  }
  for (auto* nested : parsed->get_subcommands()) {
    where += " " + nested->get_name();
    parsed = nested;
  }
  // A mistyped flag: name it and suggest the closest flag of that command, as for commands.
  std::vector<std::string> flags;
  for (const auto* opt : parsed->get_options()) {
    for (const auto& l : opt->get_lnames())
      flags.push_back("--" + l);
  }
  for (const auto* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames())
      flags.push_back("--" + l);
  }
  std::string unknown;
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    for (int i = 1; i < argc && unknown.empty(); ++i) {
      std::string_view arg = argv[i];
      if (arg == "--") break;
      if (!arg.starts_with("--")) continue;
      std::string name(arg.substr(0, arg.find('=')));
      if (std::find(flags.begin(), flags.end(), name) == flags.end()) unknown = name;
    }
  }
  if (!unknown.empty()) {
    term.error(fmt::format("unknown flag '{}'", unknown));
    std::string suggestion = closest_command(unknown, flags);
    if (!suggestion.empty()) term.hint(fmt::format("did you mean '{}'?", suggestion));
  } else {
    term.error(e.what());
  }
  term.hint(fmt::format("run 'gpulock{} --help' for usage", where));
  return kExitUsage;
}

// `help [COMMAND [SUBCOMMAND...]]`: the overview, or the named (nested) command's help.
int show_help(Terminal& term, CLI::App& app, const std::vector<std::string>& help_words,
              const std::map<std::string, CLI::App*>& subcommands,
              const std::vector<std::string>& names) {
  if (help_words.empty()) {
    // app.help() would describe the selected subcommand ("help" itself).
    term.out(app.get_formatter()->make_help(&app, "gpulock", CLI::AppFormatMode::Normal));
    return kExitSuccess;
  }
  auto it = subcommands.find(help_words.front());
  if (it == subcommands.end()) {
    return unknown_command(term, help_words.front(), names, "gpulock help ");
  }
  // `help index show`: the nested command's help.
  CLI::App* topic = it->second;
  std::string prefix = "gpulock";
  for (std::size_t i = 1; i < help_words.size(); ++i) {
    CLI::App* nested = nullptr;
    for (auto* sub : topic->get_subcommands({})) {
      if (sub->get_name() == help_words[i]) nested = sub;
    }
    if (nested == nullptr) {
      std::vector<std::string> nested_names;
      for (auto* sub : topic->get_subcommands({}))
        nested_names.push_back(sub->get_name());
      return unknown_command(
          term, help_words[i], nested_names,
          fmt::format("gpulock help {} ",
                      fmt::join(help_words.begin(),
                                help_words.begin() + static_cast<std::ptrdiff_t>(i), " ")));
    }
    prefix += " " + topic->get_name();
    topic = nested;
  }
  term.out(topic->help(prefix));
  return kExitSuccess;
}

int run(int argc, char** argv) {
  Terminal term;
  std::string command_line = "gpulock";
  for (int i = 1; i < argc; ++i)
    command_line += " " + gpulock::app::shell_quote(argv[i]);
  Context ctx{term, command_line};

  CLI::App app{"gpulock: resolve, lock and probe GPU Python environments", "gpulock"};
  app.set_help_flag("-h,--help", "Show help and exit");
  app.footer(
      "Run 'gpulock help COMMAND' for a command's options.\n"
      "Exit codes: 0 ok, 1 finding (no solution, drift, failed probe), 2 usage, 3 invalid input,\n"
      "4 index/network, 70 internal, 74 local I/O, 130 interrupted.");
  app.require_subcommand(0, 1);
  app.fallthrough();

  bool show_version = false;
  std::string color = "auto";
  bool quiet = false;
  int verbose = 0;
  app.add_flag("-V,--version", show_version, "Print gpulock's version and exit");
  app.add_option("--color", color, "Colour output: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "Print only results and errors");
  app.add_flag("-v,--verbose", verbose, "More detail on stderr (repeat for more)");

  std::vector<std::string> names;
  std::map<std::string, RunFn> runners;
  std::map<std::string, CLI::App*> subcommands;
  // Only the command being run gets its options built (building every command's CLI11 options
  // is a measurable part of a warm `gpulock resolve`); `help COMMAND` and `completion` (which
  // writes every command's flags) build them all.
  std::string_view invoked = command_word(argc, argv);
  bool build_all = invoked == "help" || invoked == "completion";
  for (const auto& info : registered_commands()) {
    CLI::App* sub = app.add_subcommand(std::string(info.name), std::string(info.summary));
    sub->set_help_flag("-h,--help", "Show this command's help and exit");
    if (build_all || invoked == info.name) runners[std::string(info.name)] = info.setup(*sub);
    subcommands[std::string(info.name)] = sub;
    names.emplace_back(info.name);
  }

  std::vector<std::string> help_words;
  CLI::App* help = app.add_subcommand("help", "Show help for gpulock or one of its commands");
  help->add_option("command", help_words,
                   "The command to explain (and its subcommand: help index show)");
  names.emplace_back("help");

  // Unknown command: suggest the closest one before CLI11 reports a generic error.
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.starts_with("-")) {
      if (takes_value(arg)) ++i;
      continue;
    }
    if (std::find(names.begin(), names.end(), arg) == names.end()) {
      return unknown_command(term, arg, names, "gpulock ");
    }
    break;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    term.out(app.help());
    return kExitSuccess;
  } catch (const CLI::CallForAllHelp&) {
    term.out(app.help("", CLI::AppFormatMode::All));
    return kExitSuccess;
  } catch (const CLI::ParseError& e) {
    return report_parse_error(term, app, subcommands, e, argc, argv);
  }

  term.set_color_mode(color == "always"  ? ColorMode::Always
                      : color == "never" ? ColorMode::Never
                                         : ColorMode::Auto);
  term.set_quiet(quiet);
  term.set_verbosity(verbose);

  if (show_version) {
    term.out(fmt::format("gpulock {}\n", app::version()));
    return kExitSuccess;
  }
  if (help->parsed()) {
    return show_help(term, app, help_words, subcommands, names);
  }
  for (const auto& [name, sub] : subcommands) {
    if (sub->parsed()) return runners[name](ctx);
  }
  // No command is a usage error (as in uv and cargo): one error line, the overview on stderr,
  // exit 2.
  term.error("no command given");
  term.err(app.help());
  return kExitUsage;
}

}  // namespace
}  // namespace gpulock::cli

int main(int argc, char** argv) {
  // Before any thread starts (allocation.cpp, sys/huge_pages.h).
  gpulock::sys::use_huge_page_heap();
  // A broken pipe (`gpulock ... | head`) ends output quietly instead of killing the process.
  std::signal(SIGPIPE, SIG_IGN);
  gpulock::cli::install_interrupt_handler();
  try {
    int code = gpulock::cli::run(argc, argv);
    gpulock::cli::command_finished();
    if (gpulock::cli::interrupted_by_signal()) {
      // One line whatever the command was doing; its own error was held back (Terminal::error).
      if (gpulock::cli::claim_interrupt_report()) gpulock::cli::Terminal().error("interrupted");
      return gpulock::cli::kExitInterrupted;
    }
    return code;
  } catch (const std::exception& e) {
    gpulock::cli::Terminal term;
    term.error(fmt::format("internal error: {}", e.what()));
    term.hint("this is a bug in gpulock; please report it with the command you ran");
    return gpulock::cli::kExitInternal;
  }
}

#include "terminal.h"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "interrupt.h"

namespace gpulock::cli {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

std::string_view ansi(Style style) {
  switch (style) {
    case Style::Plain:
      return "";
    case Style::Bold:
      return "\x1b[1m";
    case Style::Dim:
      return "\x1b[2m";
    case Style::Red:
      return "\x1b[1;31m";
    case Style::Green:
      return "\x1b[32m";
    case Style::Yellow:
      return "\x1b[1;33m";
    case Style::Blue:
      return "\x1b[34m";
    case Style::Cyan:
      return "\x1b[36m";
  }
  return "";
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n <= 0) return;  // nothing sensible to do if the terminal is gone
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

Terminal::Terminal()
    : stdout_tty_(::isatty(STDOUT_FILENO) == 1), stderr_tty_(::isatty(STDERR_FILENO) == 1) {
  set_color_mode(ColorMode::Auto);
}

void Terminal::set_color_mode(ColorMode mode) {
  switch (mode) {
    case ColorMode::Always:
      color_stdout_ = color_stderr_ = true;
      break;
    case ColorMode::Never:
      color_stdout_ = color_stderr_ = false;
      break;
    case ColorMode::Auto: {
      // https://no-color.org: a non-empty NO_COLOR disables colour; CLICOLOR_FORCE forces it.
      bool no_color = env_set("NO_COLOR");
      bool force = env_set("CLICOLOR_FORCE");
      const char* term = std::getenv("TERM");
      bool dumb = term != nullptr && std::string_view(term) == "dumb";
      color_stdout_ = !no_color && (force || (stdout_tty_ && !dumb));
      color_stderr_ = !no_color && (force || (stderr_tty_ && !dumb));
      break;
    }
  }
}

std::string Terminal::paint(Style style, std::string_view text, bool for_stderr) const {
  bool on = for_stderr ? color_stderr_ : color_stdout_;
  if (!on || style == Style::Plain) return std::string(text);
  return fmt::format("{}{}\x1b[0m", ansi(style), text);
}

void Terminal::clear_progress() {
  if (progress_shown_) {
    write_all(STDERR_FILENO, "\r\x1b[2K");
    progress_shown_ = false;
  }
}

void Terminal::out(std::string_view text) {
  clear_progress();
  write_all(STDOUT_FILENO, text);
}

void Terminal::err(std::string_view text) {
  clear_progress();
  write_all(STDERR_FILENO, text);
}

void Terminal::error(const core::Error& e) {
  // After SIGINT/SIGTERM, main() prints the one `error: interrupted` line instead.
  if (interrupted_by_signal()) return;
  std::string text = paint(Style::Red, "error", true) + ": " + e.to_string() + "\n";
  for (const auto& frame : e.context)
    text += fmt::format("  {}\n", frame);
  for (const auto& h : e.hints)
    text += paint(Style::Cyan, "hint", true) + ": " + h + "\n";
  err(text);
}

void Terminal::error(std::string_view message) {
  if (interrupted_by_signal() && message != "interrupted") return;
  err(paint(Style::Red, "error", true) + ": " + std::string(message) + "\n");
}

void Terminal::warning(std::string_view message) {
  if (quiet_) return;
  err(paint(Style::Yellow, "warning", true) + ": " + std::string(message) + "\n");
}

void Terminal::hint(std::string_view message) {
  if (interrupted_by_signal()) return;
  err(paint(Style::Cyan, "hint", true) + ": " + std::string(message) + "\n");
}

void Terminal::info(std::string_view message, int level) {
  if (verbosity_ < level) return;
  err(std::string(message) + "\n");
}

void Terminal::progress(std::string_view line) {
  if (!stderr_tty_ || quiet_) return;
  if (line.empty()) {
    clear_progress();
    return;
  }
  write_all(STDERR_FILENO, fmt::format("\r\x1b[2K{}", line));
  progress_shown_ = true;
}

}  // namespace gpulock::cli

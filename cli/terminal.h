#pragma once
/// @file
/// The CLI owns the terminal: colour decisions (`--color`, NO_COLOR, CLICOLOR_FORCE), the
/// `error:` / `warning:` / `hint:` convention, and a one-line progress display on a TTY.
/// Libraries never print; they hand results and events to the CLI.

#include <cstdio>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::cli {

enum class ColorMode { Auto, Always, Never };

enum class Style { Plain, Bold, Dim, Red, Green, Yellow, Blue, Cyan };

class Terminal {
 public:
  Terminal();

  /// Applies `--color` (auto|always|never); re-reads NO_COLOR / CLICOLOR_FORCE.
  void set_color_mode(ColorMode mode);
  void set_quiet(bool quiet) { quiet_ = quiet; }
  void set_verbosity(int level) { verbosity_ = level; }
  [[nodiscard]] bool quiet() const noexcept { return quiet_; }
  [[nodiscard]] int verbosity() const noexcept { return verbosity_; }

  [[nodiscard]] bool stdout_is_tty() const noexcept { return stdout_tty_; }
  [[nodiscard]] bool stderr_is_tty() const noexcept { return stderr_tty_; }
  [[nodiscard]] bool color_stdout() const noexcept { return color_stdout_; }
  [[nodiscard]] bool color_stderr() const noexcept { return color_stderr_; }

  /// `text` wrapped in ANSI codes when colour is on for that stream.
  [[nodiscard]] std::string paint(Style style, std::string_view text,
                                  bool for_stderr = false) const;

  /// Writes to stdout / stderr (clearing a progress line first).
  void out(std::string_view text);
  void err(std::string_view text);

  /// `error: <message>` then `  while ...` context lines and `hint: ...` lines, to stderr.
  void error(const core::Error& error);
  void error(std::string_view message);
  void warning(std::string_view message);
  void hint(std::string_view message);
  /// Printed only with -v (level 1) or more.
  void info(std::string_view message, int level = 1);

  /// A one-line progress display on a TTY stderr ("Resolving  12/40 metadata"); nothing when
  /// stderr is not a terminal or -q is given. Call with an empty string to clear.
  void progress(std::string_view line);

 private:
  void clear_progress();

  bool stdout_tty_ = false;
  bool stderr_tty_ = false;
  bool color_stdout_ = false;
  bool color_stderr_ = false;
  bool quiet_ = false;
  int verbosity_ = 0;
  bool progress_shown_ = false;
};

}  // namespace gpulock::cli

#pragma once
/// @file
/// Hint: a suggested fix as typed flag edits (issue 43 item 2). The catalog knows no command
/// line: where a hint names a command ("to take foo from URL: `gpulock lock ... --index
/// other=URL --index-for foo=other`"), it gives the words around the command and the edits, and
/// the caller's HintWriter renders them (app: the run's recorded command line with the edits
/// applied, core::command_with).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/command_line.h"
#include "gpulock/core/version.h"

namespace gpulock::catalog {

/// `text_before`, the command the edits make, `text_after`. A hint without edits names no
/// command: it is `text_before` + `text_after`.
struct Hint {
  std::string text_before;
  std::vector<core::FlagEdit> edits;
  std::string text_after;
};

/// Proven words (issue 43 item 5): a fix hint with a command that the catalog would print
/// (after_solve.h: fix_hints), for the workflow to try before it is printed. `key` finds it again
/// ("first-index:setuptools", "torch-source:triton"). The claim: with `focus` empty, the edits
/// make the request solve; else they also lock `focus` at a version newer than `newer_than` (the
/// build that was passed over is then taken). `alternatives` are tried in order when `hint`'s
/// edits do not confirm (the first that does is printed instead).
struct FixHint {
  std::string key;
  Hint hint;
  std::string focus;
  std::optional<core::Version> newer_than;
  std::vector<Hint> alternatives;
};

/// What trying a FixHint gave (after_solve.h: set_hint_verdicts): confirmed (printed as made),
/// or not, with `instead` the alternative that was confirmed, if any. A hint not confirmed
/// and without an alternative keeps its fact and names no command.
struct HintVerdict {
  std::string key;
  bool confirmed = false;
  std::optional<Hint> instead;
};

/// Renders a hint as text.
using HintWriter = std::function<std::string(const Hint&)>;

/// `hint` through `write`; without a writer, with the edits alone (`--index other=URL
/// --index-for foo=other`, core::command_with with no command line).
[[nodiscard]] inline std::string write_hint(const Hint& hint, const HintWriter& write) {
  if (write) return write(hint);
  if (hint.edits.empty()) return hint.text_before + hint.text_after;
  return hint.text_before + core::command_with("", hint.edits) + hint.text_after;
}

}  // namespace gpulock::catalog

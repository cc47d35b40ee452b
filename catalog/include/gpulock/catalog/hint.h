#pragma once
/// @file
/// Hint: a suggested fix as typed flag edits (issue 43 item 2). The catalog knows no command
/// line: where a hint names a command ("to take foo from URL: `gpulock lock ... --index
/// other=URL --index-for foo=other`"), it gives the words around the command and the edits, and
/// the caller's HintWriter renders them (app: the run's recorded command line with the edits
/// applied, core::command_with).

#include <functional>
#include <string>
#include <vector>

#include "gpulock/core/command_line.h"

namespace gpulock::catalog {

/// `text_before`, the command the edits make, `text_after`. A hint without edits names no
/// command: it is `text_before` + `text_after`.
struct Hint {
  std::string text_before;
  std::vector<core::FlagEdit> edits;
  std::string text_after;
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

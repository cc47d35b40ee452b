// What `install` and `check` say when they pick a target lock (lock_choice.h).
#include "lock_choice.h"

#include <fmt/format.h>

#include "exit_codes.h"

namespace gpulock::cli {

void warn_python_unasked(Terminal& term, const app::HereChoice& here) {
  if (!here.python_unasked.empty()) {
    term.warning(
        fmt::format("the locks' Python and platform are not compared: {}", here.python_unasked));
  }
}

int report_no_fit(Terminal& term, const app::LockChoice& choice) {
  term.error("no lock fits this machine");
  std::string text;
  for (const auto& f : choice.locks)
    text += fmt::format("  {}: {}\n", f.path, f.why);
  term.err(text);
  return kExitFinding;
}

}  // namespace gpulock::cli

#pragma once
/// @file
/// What `install` and `check` say when they pick a project's target lock for this machine
/// (app::choose_lock_here, issue 22).

#include "gpulock/app/targets.h"

#include "terminal.h"

namespace gpulock::cli {

/// The warning when the interpreter could not be asked (the locks' Python was not compared).
void warn_python_unasked(Terminal& term, const app::HereChoice& here);

/// No lock fits: `error: no lock fits this machine` and one line per lock saying why. Returns
/// the exit code (1).
[[nodiscard]] int report_no_fit(Terminal& term, const app::LockChoice& choice);

}  // namespace gpulock::cli

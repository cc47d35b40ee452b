#pragma once
/// @file
/// gpulock::resolver: a PubGrub version solver with readable explanations.
///
/// Overview (dart pub doc/solver.md is the reference; pubgrub-rs and uv the models):
/// - provider.h: the Provider interface (candidates in preference order, dependencies for the
///   target, cancellation, a prefetch hook) and the Describer hooks that word explanations.
/// - solver.h: solve(provider, request, options) -> Result<Outcome>, Outcome being a Solution
///   (chosen versions, why each was chosen, counters) or a NoSolution (the derivation tree).
/// - report.h: report(no_solution, describer) -> sentences and hint: lines.
/// - in_memory_provider.h: a registry in memory, for tests and benchmarks.
///
/// The module is pure: no I/O, no printing; the app adapts the index to a Provider.

#include "gpulock/resolver/derivation_tree.h"
#include "gpulock/resolver/in_memory_provider.h"
#include "gpulock/resolver/provider.h"
#include "gpulock/resolver/report.h"
#include "gpulock/resolver/solver.h"
#include "gpulock/resolver/version_set.h"

// PubGrub's main loop (doc/solver.md §The Algorithm) and resolver::solve. The solver's data
// structures and the Solver class are in solver_impl.h, its members in the solver_*.cpp files.

#include "gpulock/resolver/solver.h"

#include "solver_impl.h"

namespace gpulock::resolver::pubgrub {

// ------------------------------------------------------------------------------------------
// doc/solver.md §The Algorithm

core::Result<Outcome> Solver::run() {
  make_root();
  for (const Dependency& c : request_.constraints)
    constraints_[c.name].push_back(&c);
  {
    // {not root}: the root must be selected.
    IncompatId id = make_one(NodeKind::Root, kRoot, false, detail::single(0), kNone);
    add_incompatibility(id);
  }
  PackageId next = kRoot;
  for (;;) {
    if (provider_.should_cancel()) {
      return core::fail(core::ErrorCode::Cancelled, "resolution cancelled");
    }
    IncompatId terminal = unit_propagation(next);
    if (terminal != kNone) return Outcome{build_no_solution(terminal)};
    next = pick_package();
    if (next == kNone) return Outcome{build_solution()};
    bool made = false;
    backjump_ = kNone;
    auto st = decision_making(next, made);
    if (!st) return std::unexpected(st.error());
    if (backjump_ != kNone) backtrack(backjump_);
    if (!made && pending(next)) push_priority(next);
  }
}

}  // namespace gpulock::resolver::pubgrub

namespace gpulock::resolver {

core::Result<Outcome> solve(Provider& provider, const SolveRequest& request,
                            const SolveOptions& options) {
  pubgrub::Solver solver(provider, request, options);
  return solver.run();
}

}  // namespace gpulock::resolver

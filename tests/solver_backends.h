// The solver backends every solver test runs on: both LP/MILP libraries and
// the exhaustive search they are checked against.
#pragma once

#include "solvers/solve.h"

namespace parplan::test {

inline constexpr SolverBackend kAllBackends[] = {SolverBackend::kCbc, SolverBackend::kGlpk,
                                                 SolverBackend::kExhaustive};

}  // namespace parplan::test

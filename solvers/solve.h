// solve(): runs a MilpModel on a backend chosen at run time (COIN-OR CBC,
// GLPK, or exhaustive enumeration for small models) and certifies the answer.
#pragma once

#include <string>
#include <vector>

#include "solvers/certificate.h"
#include "solvers/milp_model.h"

namespace parplan {

/// kCbc: CbcModel branch and bound over Clp (OsiClpSolverInterface).
/// kGlpk: glp_simplex for pure LPs, glp_intopt (presolve on) otherwise.
/// kExhaustive: enumerates every assignment of the integer/binary variables.
///   Restrictions (a model outside them gets kError, never a wrong answer):
///   - every integer/binary variable has finite bounds and the product of
///     their domain sizes is at most kExhaustiveMaxAssignments;
///   - every row contains at most one continuous variable. Given the integer
///     assignment, each continuous variable is then confined to an interval
///     independently of the others and set to the end that is best for the
///     objective (this covers epigraph variables such as a makespan
///     M >= extra_s + n_s * t_s). An infinite best end means kUnbounded.
///   It reports kOptimal with best_bound == objective and gap 0.
enum class SolverBackend { kCbc, kGlpk, kExhaustive };

inline constexpr double kExhaustiveMaxAssignments = 5e6;

/// "cbc", "glpk", "exhaustive".
const char* backend_name(SolverBackend backend);
/// Inverse of backend_name (case-insensitive); throws std::invalid_argument
/// naming the accepted values otherwise.
SolverBackend parse_backend(const std::string& name);

struct SolveResult {
  SolverCertificate certificate;
  /// One value per variable (integer variables rounded to integers); empty
  /// unless has_solution(certificate.status).
  std::vector<double> values;
  /// A pure LP solved to optimality: one dual value per row, the rate at
  /// which the optimal objective (in the model's own sense) changes per unit
  /// rise of that row's active bound; empty otherwise (MIPs, no optimum).
  /// Column generation prices new columns with them.
  std::vector<double> row_duals;

  bool has_solution() const { return parplan::has_solution(certificate.status); }
};

/// Never throws for a bad model and never lets a backend exit/abort: an
/// invalid model (MilpModel::validate) gives kError with the reason in
/// certificate.message. A variable or row whose bounds cross (lower > upper,
/// after rounding integer bounds inward) gives kInfeasible on every backend.
/// Thread-safe: calls may come from several threads (the backends run one at
/// a time per backend).
SolveResult solve(const MilpModel& model, SolverBackend backend,
                  const SolveOptions& options = SolveOptions{});

/// A makespan formulation whose times were divided by `time_scale`: the
/// certificate in seconds and the first `integer_count` variables rounded.
struct MakespanSolve {
  SolverCertificate certificate;
  std::vector<int> integers;  ///< empty without a solution
};
MakespanSolve solve_makespan(const MilpModel& model, double time_scale, int integer_count,
                             SolverBackend backend, const SolveOptions& options);
/// Puts the makespan evaluated from the returned integers into the certificate.
void set_makespan(SolverCertificate& certificate, double makespan_s);

}  // namespace parplan

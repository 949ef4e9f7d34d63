// LpSession: an LP solved again after its bounds change (warm-started on
// CBC's Clp) gives what a fresh solve() of the changed model gives, on every
// backend, infeasible and feasible again included.
#include "solvers/lp_session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/milp_model.h"
#include "solvers/solve.h"
#include "tests/xorshift_rng.h"

namespace parplan {
namespace {

constexpr SolverBackend kLpBackends[] = {SolverBackend::kCbc, SolverBackend::kGlpk};

using Rng = test::XorshiftRng;

/// A covering LP: minimise c x with A x >= b, 0 <= x <= u (feasible while
/// the upper bounds allow the cover).
MilpModel random_cover(Rng& rng, int vars, int rows) {
  MilpModel model("cover");
  for (int j = 0; j < vars; ++j)
    model.add_continuous("x", 0, rng.uniform_real(2, 6), rng.uniform_real(1, 10));
  for (int i = 0; i < rows; ++i) {
    std::vector<MilpTerm> terms;
    for (int j = 0; j < vars; ++j)
      if (rng.uniform_real(0, 1) < 0.6) terms.push_back({j, rng.uniform_real(0.5, 3)});
    terms.push_back({i % vars, 1.0});
    model.add_greater_equal("cover", terms, rng.uniform_real(1, 4));
  }
  return model;
}

void expect_same(const SolveResult& warm, const SolveResult& cold) {
  ASSERT_EQ(warm.certificate.status, cold.certificate.status);
  if (cold.certificate.status != SolveStatus::kOptimal) return;
  EXPECT_NEAR(warm.certificate.objective, cold.certificate.objective,
              1e-7 * std::max(1.0, std::abs(cold.certificate.objective)));
}

TEST(LpSession, AnLpSolvedAgainAfterItsBoundsChangeEqualsAFreshSolve) {
  for (SolverBackend backend : kLpBackends) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      Rng rng(seed);
      const int vars = 6, rows = 8;
      MilpModel model = random_cover(rng, vars, rows);
      LpSession session(model, backend);
      expect_same(session.solve({}), solve(model, backend));
      for (int change = 0; change < 6; ++change) {
        const int var = static_cast<int>(rng.uniform_real(0, vars - 1e-9));
        const double lower = rng.uniform_real(0, 1);
        const double upper = lower + rng.uniform_real(0, 5);
        session.set_variable_bounds(var, lower, upper);
        model.set_variable_bounds(var, lower, upper);
        const int row = static_cast<int>(rng.uniform_real(0, rows - 1e-9));
        const double need = rng.uniform_real(0.5, 6);
        session.set_row_bounds(row, need, kInfinity);
        model.set_row_bounds(row, need, kInfinity);
        SCOPED_TRACE(std::string(backend_name(backend)) + " seed " + std::to_string(seed) + " change " +
                     std::to_string(change));
        expect_same(session.solve({}), solve(model, backend));
      }
    }
  }
}

TEST(LpSession, InfeasibleBoundsThenFeasibleAgain) {
  for (SolverBackend backend : kLpBackends) {
    MilpModel model("two");
    const int x = model.add_continuous("x", 0, 10, 1);
    const int y = model.add_continuous("y", 0, 10, 2);
    const int sum = model.add_greater_equal("sum", {{x, 1}, {y, 1}}, 4);
    LpSession session(model, backend);
    EXPECT_NEAR(session.solve({}).certificate.objective, 4, 1e-9);
    // x + y >= 25 cannot hold with both at most 10.
    session.set_row_bounds(sum, 25, kInfinity);
    EXPECT_EQ(session.solve({}).certificate.status, SolveStatus::kInfeasible);
    session.set_variable_bounds(y, 0, 20);
    const SolveResult again = session.solve({});
    ASSERT_EQ(again.certificate.status, SolveStatus::kOptimal);
    // x = 10 (cost 1), y = 15 (cost 2).
    EXPECT_NEAR(again.certificate.objective, 10 + 2 * 15, 1e-7);
    // Crossed bounds: infeasible, as solve() says.
    session.set_variable_bounds(x, 3, 2);
    EXPECT_EQ(session.solve({}).certificate.status, SolveStatus::kInfeasible);
  }
}

TEST(LpSession, BadIndicesAndNaNBoundsThrowAsTheModelsSetters) {
  MilpModel model("one");
  model.add_continuous("x", 0, 1, 1);
  model.add_greater_equal("r", {{0, 1}}, 0);
  LpSession session(model, SolverBackend::kCbc);
  EXPECT_THROW(session.set_variable_bounds(1, 0, 1), std::invalid_argument);
  EXPECT_THROW(session.set_row_bounds(-1, 0, 1), std::invalid_argument);
  EXPECT_THROW(session.set_variable_bounds(0, std::nan(""), 1), std::invalid_argument);
}

}  // namespace
}  // namespace parplan

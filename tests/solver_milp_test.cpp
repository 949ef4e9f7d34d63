// Solver layer: the three backends (CBC, GLPK, exhaustive enumeration) agree
// on random small MILPs, report infeasible/unbounded/invalid models honestly,
// and never call a time-limited search optimal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "solvers/certificate.h"
#include "solvers/milp_model.h"
#include "solvers/solve.h"
#include "tests/solver_backends.h"
#include "tests/xorshift_rng.h"

namespace parplan {
namespace {

using test::kAllBackends;
constexpr SolverBackend kRealSolvers[] = {SolverBackend::kCbc, SolverBackend::kGlpk};

using Rng = test::XorshiftRng;

/// prefix + i (+ "_" + j): built by appending (GCC 12 warns falsely on
/// "literal" + std::string under -Werror=restrict).
std::string label(const char* prefix, int i, int j = -1) {
  std::string out(prefix);
  out += std::to_string(i);
  if (j >= 0) {
    out += '_';
    out += std::to_string(j);
  }
  return out;
}

bool close(double a, double b, double relative = 1e-6) {
  return std::abs(a - b) <= relative * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

/// Multi-constraint knapsack with general integer counts and fractional values.
MilpModel random_knapsack(Rng& rng) {
  MilpModel model("knapsack");
  const int items = rng.uniform(3, 8);
  const int rows = rng.uniform(1, 3);
  std::vector<int> x;
  for (int i = 0; i < items; ++i) {
    x.push_back(model.add_integer(label("x", i), 0, rng.uniform(1, 3), rng.uniform(1, 120) / 4.0));
  }
  for (int r = 0; r < rows; ++r) {
    std::vector<MilpTerm> terms;
    double total = 0;
    for (int i = 0; i < items; ++i) {
      const double w = rng.uniform(0, 20);
      terms.push_back({x[i], w});
      total += w * 2;
    }
    model.add_less_equal(label("capacity", r), terms, std::floor(total / 3) + 0.5);
  }
  model.set_sense(ObjectiveSense::kMaximize);
  return model;
}

/// k x k assignment with a side budget on a random subset (may be infeasible).
MilpModel random_assignment(Rng& rng) {
  MilpModel model("assignment");
  const int k = rng.uniform(2, 3);
  std::vector<std::vector<int>> x(k, std::vector<int>(k));
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      x[i][j] = model.add_binary(label("x", i, j), rng.uniform(-10, 40));
    }
  }
  for (int i = 0; i < k; ++i) {
    std::vector<MilpTerm> row, col;
    for (int j = 0; j < k; ++j) {
      row.push_back({x[i][j], 1});
      col.push_back({x[j][i], 1});
    }
    model.add_equal(label("row", i), row, 1);
    model.add_equal(label("col", i), col, 1);
  }
  std::vector<MilpTerm> side;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      if (rng.uniform(0, 2) == 0) side.push_back({x[i][j], static_cast<double>(rng.uniform(1, 5))});
    }
  }
  model.add_less_equal("budget", side, rng.uniform(0, 4));
  model.set_sense(ObjectiveSense::kMinimize);
  return model;
}

/// Makespan scheduling: jobs to machines, continuous makespan M bounded below
/// by every machine's load (an epigraph variable).
MilpModel random_makespan(Rng& rng) {
  MilpModel model("makespan");
  const int jobs = rng.uniform(2, 5);
  const int machines = rng.uniform(2, 3);
  std::vector<std::vector<int>> x(jobs, std::vector<int>(machines));
  std::vector<std::vector<double>> size(jobs, std::vector<double>(machines));
  for (int i = 0; i < jobs; ++i) {
    for (int j = 0; j < machines; ++j) {
      x[i][j] = model.add_binary(label("x", i, j));
      size[i][j] = rng.uniform(1, 50) / 8.0;
    }
  }
  const int m = model.add_continuous("M", 0, kInfinity, 1.0);
  for (int i = 0; i < jobs; ++i) {
    std::vector<MilpTerm> once;
    for (int j = 0; j < machines; ++j) once.push_back({x[i][j], 1});
    model.add_equal(label("once", i), once, 1);
  }
  for (int j = 0; j < machines; ++j) {
    std::vector<MilpTerm> load{{m, 1}};
    for (int i = 0; i < jobs; ++i) load.push_back({x[i][j], -size[i][j]});
    model.add_greater_equal(label("load", j), load, 0);
  }
  return model;
}

/// General integers in [-3, 3] with mixed-sign rows of every kind and either
/// sense; a fair share of these are infeasible.
MilpModel random_general(Rng& rng) {
  MilpModel model("general");
  const int vars = rng.uniform(2, 5);
  std::vector<int> x;
  for (int i = 0; i < vars; ++i) {
    x.push_back(
        model.add_integer(label("x", i), rng.uniform(-3, 0), rng.uniform(0, 3), rng.uniform(-9, 9) / 3.0));
  }
  const int rows = rng.uniform(1, 4);
  for (int r = 0; r < rows; ++r) {
    std::vector<MilpTerm> terms;
    for (int i = 0; i < vars; ++i) {
      if (rng.uniform(0, 3) != 0) terms.push_back({x[i], static_cast<double>(rng.uniform(-5, 5))});
    }
    const double a = rng.uniform(-6, 6);
    switch (rng.uniform(0, 2)) {
      case 0:
        model.add_less_equal(label("r", r), terms, a);
        break;
      case 1:
        model.add_greater_equal(label("r", r), terms, a);
        break;
      default:
        model.add_row(label("r", r), terms, a, a + rng.uniform(0, 2));
        break;
    }
  }
  model.set_sense(rng.uniform(0, 1) == 0 ? ObjectiveSense::kMinimize : ObjectiveSense::kMaximize);
  return model;
}

void expect_certified(const MilpModel& model, const SolveResult& result) {
  const SolverCertificate& c = result.certificate;
  EXPECT_EQ(c.name, model.name());
  EXPECT_GE(c.time_s, 0);
  if (!result.has_solution()) {
    EXPECT_TRUE(result.values.empty());
    return;
  }
  ASSERT_EQ(static_cast<int>(result.values.size()), model.num_variables());
  EXPECT_TRUE(model.is_feasible(result.values));
  EXPECT_TRUE(close(model.objective_value(result.values), c.objective));
  if (model.sense() == ObjectiveSense::kMinimize) {
    EXPECT_LE(c.best_bound, c.objective + 1e-9 * std::max(1.0, std::abs(c.objective)));
  } else {
    EXPECT_GE(c.best_bound, c.objective - 1e-9 * std::max(1.0, std::abs(c.objective)));
  }
}

TEST(SolverStatus, NamesAreStable) {
  EXPECT_STREQ(status_name(SolveStatus::kOptimal), "optimal");
  EXPECT_STREQ(status_name(SolveStatus::kFeasible), "feasible");
  EXPECT_STREQ(status_name(SolveStatus::kInfeasible), "infeasible");
  EXPECT_STREQ(status_name(SolveStatus::kTimeLimitNoSolution), "time_limit");
  EXPECT_STREQ(status_name(SolveStatus::kUnbounded), "unbounded");
  EXPECT_STREQ(status_name(SolveStatus::kError), "error");
}

TEST(SolverBackendName, ParsesAndRejects) {
  for (SolverBackend b : kAllBackends) EXPECT_EQ(parse_backend(backend_name(b)), b);
  EXPECT_EQ(parse_backend("CBC"), SolverBackend::kCbc);
  EXPECT_STREQ(backend_name(SolverBackend::kGlpk), "glpk");
  EXPECT_THROW(parse_backend("gurobi"), std::invalid_argument);
  EXPECT_THROW(parse_backend(""), std::invalid_argument);
}

TEST(SolverModel, MergesDuplicateTermsAndRejectsBadInput) {
  MilpModel model("m");
  const int x = model.add_integer("x", 0, 5);
  const int row = model.add_less_equal("r", {{x, 1}, {x, 2}, {x, 0}}, 6);
  ASSERT_EQ(model.rows()[row].terms.size(), 1u);
  EXPECT_EQ(model.rows()[row].terms[0].coef, 3);
  EXPECT_THROW(model.add_less_equal("bad", {{7, 1}}, 1), std::invalid_argument);
  EXPECT_THROW(model.add_less_equal("bad", {{x, std::nan("")}}, 1), std::invalid_argument);
  EXPECT_THROW(model.add_integer("bad", std::nan(""), 1), std::invalid_argument);
  const int b = model.add_variable("b", VarType::kBinary, -3, 7);
  EXPECT_EQ(model.variables()[b].lower, 0);
  EXPECT_EQ(model.variables()[b].upper, 1);
}

TEST(SolverAgreement, RandomSmallMilpsAgreeAcrossBackends) {
  Rng rng(20240611);
  int optimal = 0;
  int infeasible = 0;
  for (int instance = 0; instance < 200; ++instance) {
    MilpModel model;
    switch (instance % 4) {
      case 0:
        model = random_knapsack(rng);
        break;
      case 1:
        model = random_assignment(rng);
        break;
      case 2:
        model = random_makespan(rng);
        break;
      default:
        model = random_general(rng);
        break;
    }
    SCOPED_TRACE(label("instance ", instance) + " (" + model.name() + ")");
    const SolveResult reference = solve(model, SolverBackend::kExhaustive);
    expect_certified(model, reference);
    ASSERT_TRUE(reference.certificate.status == SolveStatus::kOptimal ||
                reference.certificate.status == SolveStatus::kInfeasible)
        << status_name(reference.certificate.status) << " " << reference.certificate.message;
    (reference.has_solution() ? optimal : infeasible)++;
    for (SolverBackend b : kRealSolvers) {
      SCOPED_TRACE(backend_name(b));
      const SolveResult result = solve(model, b);
      EXPECT_EQ(result.certificate.status, reference.certificate.status)
          << status_name(result.certificate.status) << " " << result.certificate.message;
      EXPECT_EQ(result.certificate.backend, backend_name(b));
      expect_certified(model, result);
      if (result.has_solution() && reference.has_solution()) {
        EXPECT_TRUE(close(result.certificate.objective, reference.certificate.objective))
            << result.certificate.objective << " vs " << reference.certificate.objective;
        EXPECT_LE(result.certificate.gap, 1e-6);
      }
    }
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(optimal, 100);
  EXPECT_GT(infeasible, 5);
}

TEST(SolverInfeasible, ReportedByEveryBackend) {
  // Two binaries cannot sum to 3.
  MilpModel rows("infeasible_rows");
  const int x = rows.add_binary("x", 1);
  const int y = rows.add_binary("y", 1);
  rows.add_greater_equal("three", {{x, 1}, {y, 1}}, 3);

  // An integer variable with no integer in its bounds.
  MilpModel domain("infeasible_domain");
  domain.add_integer("z", 0.2, 0.8, 1);

  // An epigraph variable pushed above its upper bound.
  MilpModel epigraph("infeasible_epigraph");
  const int n = epigraph.add_integer("n", 2, 4);
  const int m = epigraph.add_continuous("m", 0, 5, 1);
  epigraph.add_greater_equal("time", {{m, 1}, {n, -3}}, 0);

  for (const MilpModel* model : {&rows, &domain, &epigraph}) {
    for (SolverBackend b : kAllBackends) {
      const SolveResult result = solve(*model, b);
      EXPECT_EQ(result.certificate.status, SolveStatus::kInfeasible)
          << model->name() << " on " << backend_name(b) << ": " << status_name(result.certificate.status)
          << " " << result.certificate.message;
      EXPECT_TRUE(result.values.empty());
      EXPECT_TRUE(std::isnan(result.certificate.objective));
    }
  }
}

TEST(SolverUnbounded, ReportedByCbcAndGlpk) {
  MilpModel mip("unbounded_mip");
  const int x = mip.add_integer("x", 0, kInfinity, 1);
  const int y = mip.add_integer("y", 0, 3, 1);
  mip.add_less_equal("r", {{y, 1}, {x, -1}}, 2);
  mip.set_sense(ObjectiveSense::kMaximize);

  MilpModel lp("unbounded_lp");
  const int a = lp.add_continuous("a", -kInfinity, kInfinity, 1);
  const int c = lp.add_continuous("c", 0, kInfinity, 0);
  lp.add_less_equal("r", {{a, 1}, {c, -1}}, 4);

  for (const MilpModel* model : {&mip, &lp}) {
    for (SolverBackend b : kRealSolvers) {
      EXPECT_EQ(solve(*model, b).certificate.status, SolveStatus::kUnbounded)
          << model->name() << " on " << backend_name(b);
    }
  }
  // Unbounded relaxation, but no integer point at all (2y - 2z = 1): that is
  // infeasible, not unbounded.
  MilpModel parity("unbounded_relaxation_infeasible");
  const int u = parity.add_integer("u", 0, kInfinity, -1);
  const int v = parity.add_integer("v", 0, 5);
  const int w = parity.add_integer("w", 0, 5);
  parity.add_equal("odd", {{v, 2}, {w, -2}}, 1);
  parity.add_less_equal("link", {{v, 1}, {u, -1}}, 3);
  for (SolverBackend b : kRealSolvers) {
    EXPECT_EQ(solve(parity, b).certificate.status, SolveStatus::kInfeasible) << backend_name(b);
  }
  // Enumeration needs finite integer domains: it refuses rather than guesses.
  EXPECT_EQ(solve(mip, SolverBackend::kExhaustive).certificate.status, SolveStatus::kError);
  // A single free epigraph variable it can decide.
  MilpModel free_var("free");
  free_var.add_continuous("f", -kInfinity, 3, 1);
  EXPECT_EQ(solve(free_var, SolverBackend::kExhaustive).certificate.status, SolveStatus::kUnbounded);
}

TEST(SolverInvalid, BadNumbersGiveErrorNotAbort) {
  MilpModel nan_objective("nan_objective");
  const int x = nan_objective.add_integer("x", 0, 3);
  nan_objective.set_objective_coefficient(x, std::nan(""));

  MilpModel bad_bound("bad_bound");
  bad_bound.add_continuous("x", kInfinity, kInfinity);

  MilpModel bad_row("bad_row");
  const int y = bad_row.add_integer("y", 0, 3, 1);
  bad_row.add_row("r", {{y, 1}}, kInfinity, kInfinity);

  for (const MilpModel* model : {&nan_objective, &bad_bound, &bad_row}) {
    for (SolverBackend b : kAllBackends) {
      const SolveResult result = solve(*model, b);
      EXPECT_EQ(result.certificate.status, SolveStatus::kError) << model->name();
      EXPECT_FALSE(result.certificate.message.empty());
    }
  }
  MilpModel ok("ok");
  ok.add_integer("x", 0, 1, 1);
  EXPECT_EQ(solve(ok, SolverBackend::kCbc, SolveOptions{0, 1e-6}).certificate.status, SolveStatus::kError);
  EXPECT_EQ(solve(ok, SolverBackend::kGlpk, SolveOptions{1, -1}).certificate.status, SolveStatus::kError);
}

TEST(SolverExhaustive, RefusesWhatItCannotEnumerate) {
  MilpModel big("big");
  for (int i = 0; i < 30; ++i) big.add_binary(label("b", i), 1);
  const SolveResult result = solve(big, SolverBackend::kExhaustive);
  EXPECT_EQ(result.certificate.status, SolveStatus::kError);
  EXPECT_EQ(solve(big, SolverBackend::kCbc).certificate.objective, 0);

  MilpModel coupled("coupled");
  const int a = coupled.add_continuous("a", 0, 4, -1);
  const int b = coupled.add_continuous("b", 0, 4, -1);
  coupled.add_less_equal("sum", {{a, 1}, {b, 1}}, 5);
  EXPECT_EQ(solve(coupled, SolverBackend::kExhaustive).certificate.status, SolveStatus::kError);
  for (SolverBackend s : kRealSolvers) {
    const SolveResult lp = solve(coupled, s);
    EXPECT_EQ(lp.certificate.status, SolveStatus::kOptimal);
    EXPECT_NEAR(lp.certificate.objective, -5, 1e-9);
  }
}

TEST(SolverLp, PureLpOnEveryBackend) {
  // max 3x + 2y, x + y <= 4, x + 3y <= 6, x <= 3: optimum x = 3, y = 1, 11.
  MilpModel lp("lp");
  const int x = lp.add_continuous("x", 0, 3, 3);
  const int y = lp.add_continuous("y", 0, kInfinity, 2);
  lp.add_less_equal("a", {{x, 1}, {y, 1}}, 4);
  lp.add_less_equal("b", {{x, 1}, {y, 3}}, 6);
  lp.set_sense(ObjectiveSense::kMaximize);
  for (SolverBackend b : kRealSolvers) {
    const SolveResult r = solve(lp, b);
    ASSERT_EQ(r.certificate.status, SolveStatus::kOptimal) << backend_name(b);
    EXPECT_NEAR(r.certificate.objective, 11, 1e-9);
    EXPECT_NEAR(r.values[x], 3, 1e-9);
    EXPECT_NEAR(r.values[y], 1, 1e-9);
    EXPECT_NEAR(r.certificate.gap, 0, 1e-9);
  }
  // One continuous variable per row: every backend, offset included.
  MilpModel simple("simple_lp");
  const int p = simple.add_continuous("p", 0, 10, 1);
  const int q = simple.add_continuous("q", -kInfinity, kInfinity, 1);
  simple.add_greater_equal("p_floor", {{p, 2}}, 3);
  simple.add_row("q_band", {{q, -4}}, -20, -9);
  simple.set_objective_offset(0.5);
  for (SolverBackend b : kAllBackends) {
    const SolveResult r = solve(simple, b);
    ASSERT_EQ(r.certificate.status, SolveStatus::kOptimal) << backend_name(b);
    EXPECT_NEAR(r.certificate.objective, 1.5 + 2.25 + 0.5, 1e-9) << backend_name(b);
  }
}

// min 2x + 3y, x + y >= 4, x <= 3: x = 3, y = 1; one more unit of demand
// costs a y (3), one more unit of x's room saves a y for an x (-1). The
// same LP maximising -2x - 3y has the duals negated.
TEST(SolverLp, RowDualsOfAnOptimalLpOnCbcAndGlpk) {
  for (ObjectiveSense sense : {ObjectiveSense::kMinimize, ObjectiveSense::kMaximize}) {
    const double s = sense == ObjectiveSense::kMinimize ? 1.0 : -1.0;
    MilpModel lp("duals");
    const int x = lp.add_continuous("x", 0, kInfinity, 2 * s);
    const int y = lp.add_continuous("y", 0, kInfinity, 3 * s);
    lp.add_greater_equal("demand", {{x, 1}, {y, 1}}, 4);
    lp.add_less_equal("room", {{x, 1}}, 3);
    lp.set_sense(sense);
    for (SolverBackend b : kRealSolvers) {
      const SolveResult r = solve(lp, b);
      ASSERT_EQ(r.certificate.status, SolveStatus::kOptimal) << backend_name(b);
      ASSERT_EQ(r.row_duals.size(), 2u) << backend_name(b);
      EXPECT_NEAR(r.row_duals[0], 3 * s, 1e-9) << backend_name(b);
      EXPECT_NEAR(r.row_duals[1], -1 * s, 1e-9) << backend_name(b);
    }
  }
  // A MIP reports none.
  MilpModel mip("mip");
  const int z = mip.add_integer("z", 0, 5, 1);
  mip.add_greater_equal("floor", {{z, 2}}, 3);
  for (SolverBackend b : kRealSolvers) EXPECT_TRUE(solve(mip, b).row_duals.empty()) << backend_name(b);
}

TEST(SolverTrivial, EmptyModelsAndNoRows) {
  MilpModel empty("empty");
  empty.set_objective_offset(2.5);
  MilpModel no_rows("no_rows");
  no_rows.add_integer("x", -2, 4, 1.5);
  no_rows.add_continuous("y", 1, 2, -1);
  for (SolverBackend b : kAllBackends) {
    const SolveResult e = solve(empty, b);
    EXPECT_EQ(e.certificate.status, SolveStatus::kOptimal);
    EXPECT_EQ(e.certificate.objective, 2.5);
    const SolveResult r = solve(no_rows, b);
    ASSERT_EQ(r.certificate.status, SolveStatus::kOptimal) << backend_name(b);
    EXPECT_NEAR(r.certificate.objective, -3 - 2, 1e-9);
  }
  MilpModel impossible("empty_infeasible");
  impossible.add_row("r", {}, 1, 2);
  EXPECT_EQ(solve(impossible, SolverBackend::kGlpk).certificate.status, SolveStatus::kInfeasible);
}

TEST(SolverThreads, ConcurrentSolvesAgreeWithSerialOnes) {
  std::vector<MilpModel> models;
  Rng rng(99);
  for (int i = 0; i < 24; ++i) models.push_back(i % 2 ? random_knapsack(rng) : random_makespan(rng));
  std::vector<double> serial;
  for (const MilpModel& m : models)
    serial.push_back(solve(m, SolverBackend::kExhaustive).certificate.objective);
  std::vector<std::vector<double>> parallel(3, std::vector<double>(models.size()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < models.size(); ++i) {
        parallel[t][i] = solve(models[i], kAllBackends[(t + i) % 3]).certificate.objective;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 3; ++t) {
    for (std::size_t i = 0; i < models.size(); ++i) EXPECT_TRUE(close(parallel[t][i], serial[i]));
  }
}

/// 60 items, 5 knapsack rows, weights uniform in [1000, 9999], capacity half
/// of each row's total: far beyond what plain branch and bound closes in a
/// fraction of a second (CBC and GLPK still have a gap of ~0.4 % after 2 s).
MilpModel hard_knapsack() {
  Rng rng(7);
  MilpModel model("hard_knapsack");
  const int items = 60;
  const int rows = 5;
  std::vector<std::vector<double>> w(rows, std::vector<double>(items));
  std::vector<int> x;
  for (int i = 0; i < items; ++i) x.push_back(model.add_binary(label("x", i)));
  for (int r = 0; r < rows; ++r) {
    std::vector<MilpTerm> terms;
    double total = 0;
    for (int i = 0; i < items; ++i) {
      w[r][i] = rng.uniform(1000, 9999);
      terms.push_back({x[i], w[r][i]});
      total += w[r][i];
    }
    model.add_less_equal(label("capacity", r), terms, total / 2);
  }
  for (int i = 0; i < items; ++i) {
    double value = 0;
    for (int r = 0; r < rows; ++r) value += w[r][i] / rows;
    model.set_objective_coefficient(x[i], value + rng.uniform(0, 99));
  }
  model.set_sense(ObjectiveSense::kMaximize);
  return model;
}

TEST(SolverTimeLimit, HardModelIsNeverCalledOptimal) {
  const MilpModel model = hard_knapsack();
  for (SolverBackend b : kRealSolvers) {
    const SolveResult r = solve(model, b, SolveOptions{0.05, 1e-6});
    const SolverCertificate& c = r.certificate;
    SCOPED_TRACE(backend_name(b));
    ASSERT_TRUE(c.status == SolveStatus::kFeasible || c.status == SolveStatus::kTimeLimitNoSolution)
        << status_name(c.status);
    EXPECT_LT(c.time_s, 5.0);
    if (c.status == SolveStatus::kFeasible) {
      EXPECT_GT(c.gap, 1e-6);
      EXPECT_GT(c.best_bound, c.objective);  // maximising: the bound is above
      EXPECT_TRUE(model.is_feasible(r.values));
    } else {
      EXPECT_TRUE(r.values.empty());
    }
  }
  // Enumeration of 2^60 assignments is refused, not attempted.
  EXPECT_EQ(solve(model, SolverBackend::kExhaustive).certificate.status, SolveStatus::kError);
}

TEST(SolverTimeLimit, ExhaustiveStopsOnTime) {
  // 4.8 million assignments, every one feasible: cannot finish in 1 ms.
  MilpModel model("slow");
  for (int i = 0; i < 22; ++i) model.add_binary(label("b", i), (i % 3) - 1.0);
  const SolveResult r = solve(model, SolverBackend::kExhaustive, SolveOptions{1e-3, 1e-6});
  EXPECT_EQ(r.certificate.status, SolveStatus::kFeasible);
  EXPECT_TRUE(std::isinf(r.certificate.gap));
  EXPECT_LT(r.certificate.time_s, 2.0);
}

}  // namespace
}  // namespace parplan

// GLPK backend: glp_simplex for pure LPs, glp_intopt (presolve on) otherwise.
// The model reaching here is validated (finite coefficients, no duplicate
// terms, consistent bounds, integer bounds integral), so no GLPK call can hit
// one of GLPK's fatal argument checks.
#include <glpk.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <mutex>

#include "solvers/backend_internal.h"

namespace parplan::detail {

namespace {

// GLPK keeps its environment in a global (or thread-local, depending on how
// the library was built): one GLPK solve at a time.
std::mutex& glpk_mutex() {
  static std::mutex mutex;
  return mutex;
}

int bound_type(double lower, double upper) {
  const bool has_lower = std::isfinite(lower);
  const bool has_upper = std::isfinite(upper);
  if (has_lower && has_upper) return lower == upper ? GLP_FX : GLP_DB;
  if (has_lower) return GLP_LO;
  if (has_upper) return GLP_UP;
  return GLP_FR;
}

double finite_or_zero(double x) { return std::isfinite(x) ? x : 0.0; }

int time_limit_ms(double seconds) {
  const double ms = std::ceil(seconds * 1000.0);
  if (ms >= static_cast<double>(INT_MAX)) return INT_MAX;
  return std::max(1, static_cast<int>(ms));
}

struct Problem {
  glp_prob* lp = glp_create_prob();
  ~Problem() { glp_delete_prob(lp); }
  Problem() = default;
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
};

void load(const PreparedModel& p, glp_prob* lp) {
  const int n = p.num_variables();
  // GLPK handles an empty row set awkwardly; a free empty row is harmless.
  const int m = std::max(1, p.num_rows());
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_rows(lp, m);
  glp_add_cols(lp, n);
  for (int j = 0; j < n; ++j) {
    const double lower = p.lower[j];
    const double upper = p.upper[j];
    glp_set_col_bnds(lp, j + 1, bound_type(lower, upper), finite_or_zero(lower), finite_or_zero(upper));
    glp_set_obj_coef(lp, j + 1, p.cost[j]);
    if (p.integer[j]) glp_set_col_kind(lp, j + 1, GLP_IV);
  }
  if (p.num_rows() == 0) glp_set_row_bnds(lp, 1, GLP_FR, 0, 0);
  std::vector<int> index;
  std::vector<double> value;
  for (int i = 0; i < p.num_rows(); ++i) {
    const MilpRow& row = p.row(i);
    glp_set_row_bnds(lp, i + 1, bound_type(row.lower, row.upper), finite_or_zero(row.lower),
                     finite_or_zero(row.upper));
    // GLPK arrays are 1-based; element 0 is ignored.
    index.assign(1, 0);
    value.assign(1, 0.0);
    for (const MilpTerm& t : row.terms) {
      index.push_back(t.var + 1);
      value.push_back(t.coef);
    }
    glp_set_mat_row(lp, i + 1, static_cast<int>(row.terms.size()), index.data(), value.data());
  }
}

BackendOutcome solve_lp(glp_prob* lp, int n, const SolveOptions& options) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = time_limit_ms(options.time_limit_s);
  const int ret = glp_simplex(lp, &parm);

  BackendOutcome out;
  auto take_values = [&] {
    out.values.resize(n);
    for (int j = 0; j < n; ++j) out.values[j] = glp_get_col_prim(lp, j + 1);
  };
  if (ret == 0) {
    switch (glp_get_status(lp)) {
      case GLP_OPT:
        out.status = SolveStatus::kOptimal;
        take_values();
        out.row_duals.resize(glp_get_num_rows(lp));
        for (int i = 0; i < static_cast<int>(out.row_duals.size()); ++i)
          out.row_duals[i] = glp_get_row_dual(lp, i + 1);
        out.bound_min = glp_get_obj_val(lp);
        return out;
      case GLP_NOFEAS:
      case GLP_INFEAS:
        out.status = SolveStatus::kInfeasible;
        return out;
      case GLP_UNBND:
        out.status = SolveStatus::kUnbounded;
        return out;
      default:
        break;
    }
  } else if (ret == GLP_ENOPFS) {
    out.status = SolveStatus::kInfeasible;
    return out;
  } else if (ret == GLP_ENODFS) {
    out.status = SolveStatus::kUnbounded;
    return out;
  } else if (ret == GLP_ETMLIM || ret == GLP_EITLIM) {
    if (glp_get_prim_stat(lp) == GLP_FEAS) {
      out.status = SolveStatus::kFeasible;
      take_values();
    } else {
      out.status = SolveStatus::kTimeLimitNoSolution;
    }
    return out;
  }
  out.status = SolveStatus::kError;
  out.message = "glp_simplex failed (code " + std::to_string(ret) + ")";
  return out;
}

struct TreeProgress {
  bool has_bound = false;
  double bound = -kInfinity;
};

void record_bound(glp_tree* tree, void* info) {
  auto* progress = static_cast<TreeProgress*>(info);
  const int node = glp_ios_best_node(tree);
  if (node != 0) {
    progress->bound = glp_ios_node_bound(tree, node);
    progress->has_bound = true;
  }
}

BackendOutcome solve_mip(glp_prob* lp, int n, const SolveOptions& options) {
  TreeProgress progress;
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = time_limit_ms(options.time_limit_s);
  parm.mip_gap = options.relative_gap;
  parm.cb_func = record_bound;
  parm.cb_info = &progress;
  const int ret = glp_intopt(lp, &parm);

  BackendOutcome out;
  const int status = glp_mip_status(lp);
  auto take_values = [&] {
    out.values.resize(n);
    for (int j = 0; j < n; ++j) out.values[j] = glp_mip_col_val(lp, j + 1);
  };
  const bool has_incumbent = status == GLP_OPT || status == GLP_FEAS;
  if (ret == 0 && status == GLP_OPT) {
    out.status = SolveStatus::kOptimal;
    take_values();
    out.bound_min = glp_mip_obj_val(lp);
  } else if (ret == 0 && status == GLP_NOFEAS) {
    out.status = SolveStatus::kInfeasible;
  } else if (ret == GLP_EMIPGAP && has_incumbent) {
    // Stopped because the relative gap reached mip_gap: optimal within it.
    out.status = SolveStatus::kOptimal;
    take_values();
    out.bound_min = progress.has_bound ? progress.bound : -kInfinity;
  } else if (ret == GLP_ENOPFS) {
    out.status = SolveStatus::kInfeasible;
  } else if (ret == GLP_ENODFS) {
    out.status = SolveStatus::kUnbounded;
  } else if ((ret == GLP_ETMLIM || ret == GLP_ESTOP) && has_incumbent) {
    out.status = SolveStatus::kFeasible;
    take_values();
    out.bound_min = progress.has_bound ? progress.bound : -kInfinity;
  } else if (ret == GLP_ETMLIM) {
    out.status = SolveStatus::kTimeLimitNoSolution;
    out.bound_min = progress.has_bound ? progress.bound : -kInfinity;
  } else {
    out.status = SolveStatus::kError;
    out.message =
        "glp_intopt failed (code " + std::to_string(ret) + ", status " + std::to_string(status) + ")";
  }
  return out;
}

}  // namespace

BackendOutcome solve_glpk(const PreparedModel& model, const SolveOptions& options) {
  std::lock_guard<std::mutex> lock(glpk_mutex());
  BackendOutcome outcome;
  {
    glp_term_out(GLP_OFF);
    Problem problem;
    load(model, problem.lp);
    outcome = model.pure_lp() ? solve_lp(problem.lp, model.num_variables(), options)
                              : solve_mip(problem.lp, model.num_variables(), options);
  }
  // GLPK keeps an environment per thread (Debian builds it thread-local);
  // free it, or every solving thread leaks it (LeakSanitizer). The next call
  // makes a new one.
  glp_free_env();
  return outcome;
}

}  // namespace parplan::detail

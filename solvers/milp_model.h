// MilpModel: a solver-neutral mixed-integer linear program (variables with
// bounds and integrality, sparse linear rows, a linear objective) and the
// options every backend understands. Build it once, solve it with any backend.
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace parplan {

/// Use for a missing bound: -kInfinity below, +kInfinity above.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class VarType { kContinuous, kInteger, kBinary };
enum class ObjectiveSense { kMinimize, kMaximize };

/// One non-zero of a row (or of the objective): coef * x[var].
struct MilpTerm {
  int var = 0;
  double coef = 0;
};

struct MilpVariable {
  std::string name;
  VarType type = VarType::kContinuous;
  double lower = 0;
  double upper = kInfinity;
  double objective = 0;
};

/// lower <= sum(terms) <= upper; an equality has lower == upper.
struct MilpRow {
  std::string name;
  std::vector<MilpTerm> terms;
  double lower = -kInfinity;
  double upper = kInfinity;
};

struct SolveOptions {
  /// Wall-clock limit of one solve.
  double time_limit_s = 10;
  /// Stop (and call it optimal) once |objective - best_bound| / |objective|
  /// is at most this.
  double relative_gap = 1e-6;
};

class MilpModel {
 public:
  explicit MilpModel(std::string name = "milp");

  /// Adds a variable and returns its index. A binary variable's bounds are
  /// clipped to [0, 1]. Throws std::invalid_argument on a NaN bound.
  int add_variable(std::string name, VarType type, double lower, double upper, double objective = 0);
  int add_continuous(std::string name, double lower, double upper, double objective = 0);
  int add_integer(std::string name, double lower, double upper, double objective = 0);
  int add_binary(std::string name, double objective = 0);

  /// Adds lower <= sum(terms) <= upper and returns the row index. Terms on the
  /// same variable are summed, zero terms dropped. Throws
  /// std::invalid_argument on an unknown variable or a NaN/infinite coefficient.
  int add_row(std::string name, std::vector<MilpTerm> terms, double lower, double upper);
  int add_less_equal(std::string name, std::vector<MilpTerm> terms, double upper);
  int add_greater_equal(std::string name, std::vector<MilpTerm> terms, double lower);
  int add_equal(std::string name, std::vector<MilpTerm> terms, double rhs);

  void set_objective_coefficient(int var, double coef);
  /// New bounds of a variable or a row (an LpSession solves the model again
  /// with them). Throws std::invalid_argument on an unknown index or a NaN.
  void set_variable_bounds(int var, double lower, double upper);
  void set_row_bounds(int row, double lower, double upper);
  void set_sense(ObjectiveSense sense) { sense_ = sense; }
  /// Constant added to the objective.
  void set_objective_offset(double offset) { offset_ = offset; }

  const std::string& name() const { return name_; }
  ObjectiveSense sense() const { return sense_; }
  double objective_offset() const { return offset_; }
  const std::vector<MilpVariable>& variables() const { return variables_; }
  const std::vector<MilpRow>& rows() const { return rows_; }
  int num_variables() const { return static_cast<int>(variables_.size()); }
  int num_rows() const { return static_cast<int>(rows_.size()); }
  /// True when no variable is integer or binary.
  bool is_pure_lp() const;

  /// Empty when every number is usable by a backend; otherwise one sentence
  /// naming the first problem (NaN, +inf lower bound, -inf upper bound, ...).
  std::string validate() const;

  /// Objective of `values` (one per variable), offset included.
  double objective_value(const std::vector<double>& values) const;
  double row_activity(int row, const std::vector<double>& values) const;
  /// Bounds, integrality and rows hold within `tolerance` (absolute, scaled by
  /// max(1, |bound|)).
  bool is_feasible(const std::vector<double>& values, double tolerance = 1e-6) const;

 private:
  std::string name_;
  std::vector<MilpVariable> variables_;
  std::vector<MilpRow> rows_;
  ObjectiveSense sense_ = ObjectiveSense::kMinimize;
  double offset_ = 0;
};

}  // namespace parplan

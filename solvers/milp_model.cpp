// MilpModel: building, validating and evaluating a solver-neutral MILP.
#include "solvers/milp_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace parplan {

namespace {

bool is_integral_type(VarType type) { return type != VarType::kContinuous; }

}  // namespace

MilpModel::MilpModel(std::string name) : name_(std::move(name)) {}

int MilpModel::add_variable(std::string name, VarType type, double lower, double upper, double objective) {
  if (std::isnan(lower) || std::isnan(upper)) {
    throw std::invalid_argument("MilpModel: variable '" + name + "' has a NaN bound");
  }
  if (type == VarType::kBinary) {
    lower = std::max(lower, 0.0);
    upper = std::min(upper, 1.0);
  }
  variables_.push_back(MilpVariable{std::move(name), type, lower, upper, objective});
  return num_variables() - 1;
}

int MilpModel::add_continuous(std::string name, double lower, double upper, double objective) {
  return add_variable(std::move(name), VarType::kContinuous, lower, upper, objective);
}

int MilpModel::add_integer(std::string name, double lower, double upper, double objective) {
  return add_variable(std::move(name), VarType::kInteger, lower, upper, objective);
}

int MilpModel::add_binary(std::string name, double objective) {
  return add_variable(std::move(name), VarType::kBinary, 0, 1, objective);
}

int MilpModel::add_row(std::string name, std::vector<MilpTerm> terms, double lower, double upper) {
  if (std::isnan(lower) || std::isnan(upper)) {
    throw std::invalid_argument("MilpModel: row '" + name + "' has a NaN bound");
  }
  for (const MilpTerm& term : terms) {
    if (term.var < 0 || term.var >= num_variables()) {
      throw std::invalid_argument("MilpModel: row '" + name + "' uses unknown variable " +
                                  std::to_string(term.var));
    }
    if (!std::isfinite(term.coef)) {
      throw std::invalid_argument("MilpModel: row '" + name + "' has a non-finite coefficient on variable '" +
                                  variables_[term.var].name + "'");
    }
  }
  // Merge duplicates (GLPK rejects them) and drop zeros.
  std::sort(terms.begin(), terms.end(), [](const MilpTerm& a, const MilpTerm& b) { return a.var < b.var; });
  std::vector<MilpTerm> merged;
  for (const MilpTerm& term : terms) {
    if (!merged.empty() && merged.back().var == term.var) {
      merged.back().coef += term.coef;
    } else {
      merged.push_back(term);
    }
  }
  std::erase_if(merged, [](const MilpTerm& t) { return t.coef == 0.0; });
  rows_.push_back(MilpRow{std::move(name), std::move(merged), lower, upper});
  return num_rows() - 1;
}

int MilpModel::add_less_equal(std::string name, std::vector<MilpTerm> terms, double upper) {
  return add_row(std::move(name), std::move(terms), -kInfinity, upper);
}

int MilpModel::add_greater_equal(std::string name, std::vector<MilpTerm> terms, double lower) {
  return add_row(std::move(name), std::move(terms), lower, kInfinity);
}

int MilpModel::add_equal(std::string name, std::vector<MilpTerm> terms, double rhs) {
  return add_row(std::move(name), std::move(terms), rhs, rhs);
}

void MilpModel::set_objective_coefficient(int var, double coef) {
  if (var < 0 || var >= num_variables()) {
    throw std::invalid_argument("MilpModel: objective uses unknown variable " + std::to_string(var));
  }
  variables_[var].objective = coef;
}

namespace {

/// Element `index` (a variable or a row, `what`) whose bounds a setter
/// changes, after the checks every setter makes.
template <class Element>
Element& bounds_target(std::vector<Element>& elements, int index, const char* what, double lower,
                       double upper) {
  if (index < 0 || index >= static_cast<int>(elements.size())) {
    throw std::invalid_argument(std::string("MilpModel: bounds of unknown ") + what + " " +
                                std::to_string(index));
  }
  if (std::isnan(lower) || std::isnan(upper)) {
    throw std::invalid_argument(std::string("MilpModel: NaN bound on ") + what + " '" + elements[index].name +
                                "'");
  }
  return elements[index];
}

}  // namespace

void MilpModel::set_variable_bounds(int var, double lower, double upper) {
  MilpVariable& v = bounds_target(variables_, var, "variable", lower, upper);
  v.lower = lower;
  v.upper = upper;
}

void MilpModel::set_row_bounds(int row, double lower, double upper) {
  MilpRow& r = bounds_target(rows_, row, "row", lower, upper);
  r.lower = lower;
  r.upper = upper;
}

bool MilpModel::is_pure_lp() const {
  return std::none_of(variables_.begin(), variables_.end(),
                      [](const MilpVariable& v) { return is_integral_type(v.type); });
}

std::string MilpModel::validate() const {
  if (!std::isfinite(offset_)) return "the objective offset is not finite";
  for (const MilpVariable& v : variables_) {
    if (!std::isfinite(v.objective)) {
      return "variable '" + v.name + "' has a non-finite objective coefficient";
    }
    if (std::isnan(v.lower) || std::isnan(v.upper) || v.lower == kInfinity || v.upper == -kInfinity) {
      return "variable '" + v.name + "' has an unusable bound";
    }
  }
  for (const MilpRow& r : rows_) {
    if (std::isnan(r.lower) || std::isnan(r.upper) || r.lower == kInfinity || r.upper == -kInfinity) {
      return "row '" + r.name + "' has an unusable bound";
    }
    for (const MilpTerm& t : r.terms) {
      if (t.var < 0 || t.var >= num_variables() || !std::isfinite(t.coef)) {
        return "row '" + r.name + "' has an unusable term";
      }
    }
  }
  return {};
}

double MilpModel::objective_value(const std::vector<double>& values) const {
  double sum = offset_;
  for (int j = 0; j < num_variables(); ++j) sum += variables_[j].objective * values.at(j);
  return sum;
}

double MilpModel::row_activity(int row, const std::vector<double>& values) const {
  double sum = 0;
  for (const MilpTerm& t : rows_.at(row).terms) sum += t.coef * values.at(t.var);
  return sum;
}

bool MilpModel::is_feasible(const std::vector<double>& values, double tolerance) const {
  if (static_cast<int>(values.size()) != num_variables()) return false;
  auto below = [tolerance](double x, double bound) {
    return x < bound - tolerance * std::max(1.0, std::abs(bound));
  };
  auto above = [tolerance](double x, double bound) {
    return x > bound + tolerance * std::max(1.0, std::abs(bound));
  };
  for (int j = 0; j < num_variables(); ++j) {
    const MilpVariable& v = variables_[j];
    const double x = values[j];
    if (!std::isfinite(x) || below(x, v.lower) || above(x, v.upper)) return false;
    if (is_integral_type(v.type) && std::abs(x - std::round(x)) > tolerance) return false;
  }
  for (int i = 0; i < num_rows(); ++i) {
    const double activity = row_activity(i, values);
    if (below(activity, rows_[i].lower) || above(activity, rows_[i].upper)) return false;
  }
  return true;
}

}  // namespace parplan

// The group-count LP bound of sequence scattering. Proof of validity: take
// any plan with M micro-batches; let x_ij = 1 when sequence i runs in a group
// of size p_j and N_j the number of size-p_j groups over all micro-batches.
//  - every micro-batch's sizes sum to at most G: sum_j p_j N_j <= M G, and
//    it holds at most G K tokens: M >= ceil(sum_i s_i / (G K));
//  - a size-p_j group holds at most p_j K tokens: p_j K N_j >= sum_i x_ij s_i;
//  - it holds at most t-1 sequences longer than p_j K / t (t = 2, 3, 4):
//    (t-1) N_j >= sum_i x_ij [s_i > p_j K / t];
//  - a micro-batch lasts at least fixed_ms plus its groups' GPU-milliseconds
//    over G, so the step lasts at least M d + sum_ij x_ij p_j w_ij / G, and at
//    least M d + the slowest sequence on its fastest size.
// Relaxing x, N and M to reals keeps every plan feasible, so the LP minimum
// of M d + T (T >= both work terms) is a lower bound. It sees what the plain
// bound does not: a sequence over half a group's memory keeps that group for
// itself, so its spare memory costs either micro-batches or extra
// all-to-all for the sequences that fill it.
// Every plan runs a given sequence at one of its sizes: with it pinned at
// size j (its GPU-ms, memory and crowding at j, T >= its time there) the LP
// bounds the plans that do so, and the least over j bounds them all.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "solvers/milp_model.h"
#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

/// Sequences with the same allowed sizes and the same crowding class at every
/// size: the LP sees them only through their count and tokens.
struct Bucket {
  std::vector<int> signature;
  double count = 0;
  double tokens = 0;
  double shortest = kInfinity;
  double longest = 0;
};

}  // namespace

/// The LP, built once and solved again as the pinned sequence's size and the
/// bounds on M change (warm-started on CBC: the pinned sizes and the whole
/// counts after them reuse the last basis). The pinned sequence, when there
/// is one, is a bucket of its own whose count is fixed at one size by its
/// column bounds; its time there bounds T from below.
class GroupLp {
 public:
  GroupLp(const Instance& in, SolverBackend backend, int pinned) : in_(in), pinned_(pinned) {
    session_ = std::make_unique<LpSession>(build(), backend);
  }

  /// The LP's optimum with M in [lower, upper] and the pinned sequence at
  /// size `size_index`, and M there (-inf when the LP did not finish).
  std::pair<double, double> solve(Clock::time_point deadline, double lower, double upper, int size_index) {
    session_->set_variable_bounds(m_, lower, upper);
    double slowest = slowest_others_;
    if (pinned_ >= 0) {
      for (int j = 0; j < in_.num_sizes; ++j) {
        if (pinned_count_[j] < 0) continue;
        const double at = j == size_index ? 1.0 : 0.0;
        session_->set_variable_bounds(pinned_count_[j], at, at);
      }
      slowest = std::max(slowest, in_.work(pinned_, size_index));
    }
    session_->set_row_bounds(slowest_row_, slowest, kInfinity);
    const std::optional<SolveResult> solved = solve_until(*session_, 1e-6, deadline);
    if (!solved) return {-kInfinity, 0};
    const SolveResult& result = *solved;
    // Only a finished LP is a bound; a simplex stopped early is not.
    if (result.certificate.status == SolveStatus::kInfeasible) return {kInfinity, 0};
    if (result.certificate.status != SolveStatus::kOptimal) return {-kInfinity, 0};
    return {result.certificate.objective * (1 - 1e-9), result.values[m_]};
  }

 private:
  MilpModel build() {
    const int n = in_.num_sequences();
    const ScatterCoefficients& c = *in_.coefficients;
    const double g = in_.gpus;
    // The a s^2 part of a sequence's GPU-milliseconds is the same at every
    // size, so it is a constant; the rest is (b + p c_p) per token.
    double quadratic_gpu_ms = 0;
    std::map<std::vector<int>, Bucket> by_signature;
    Bucket own;
    for (int i = 0; i < n; ++i) {
      const double s = in_.tokens[i];
      quadratic_gpu_ms += c.quadratic_ms * s * s;
      std::vector<int> signature(in_.num_sizes);
      for (int j = 0; j < in_.num_sizes; ++j) signature[j] = crowd_level(s, in_.capacity_tokens[j]);
      if (i != pinned_) slowest_others_ = std::max(slowest_others_, in_.fastest_ms[i]);
      Bucket& b = i == pinned_ ? own : by_signature[signature];
      b.signature = signature;
      b.count += 1;
      b.tokens += s;
      b.shortest = std::min(b.shortest, s);
      b.longest = std::max(b.longest, s);
    }
    MilpModel model("scatter_group_lp");
    m_ = model.add_continuous("M", 1, kInfinity, c.fixed_ms);
    const int t = model.add_continuous("T", 0, kInfinity, 1.0);
    std::vector<int> groups(in_.num_sizes);
    std::vector<MilpTerm> width{{m_, -g}};
    for (int j = 0; j < in_.num_sizes; ++j) {
      groups[j] = model.add_continuous("N" + std::to_string(j), 0, kInfinity);
      width.push_back({groups[j], static_cast<double>(in_.size[j])});
    }
    model.add_less_equal("width", width, 0);
    std::vector<MilpTerm> work{{t, -g}};
    std::vector<std::vector<MilpTerm>> memory(in_.num_sizes);
    std::vector<std::vector<std::vector<MilpTerm>>> crowd(in_.num_sizes,
                                                          std::vector<std::vector<MilpTerm>>(3));
    pinned_count_.assign(in_.num_sizes, -1);
    int index = 0;
    auto add_bucket = [&](const Bucket& b, bool pinned) {
      std::vector<MilpTerm> all_count, all_tokens;
      for (int j = 0; j < in_.num_sizes; ++j) {
        if (b.signature[j] < 0) continue;
        const std::string tag = std::to_string(index) + "_" + std::to_string(j);
        // x: sequences of the bucket at size j; y: their tokens.
        const int x = model.add_continuous("x" + tag, 0, b.count);
        const int y = model.add_continuous("y" + tag, 0, b.tokens);
        if (pinned) pinned_count_[j] = x;
        all_count.push_back({x, 1.0});
        all_tokens.push_back({y, 1.0});
        model.add_less_equal("short_" + tag, {{x, b.shortest}, {y, -1.0}}, 0);
        model.add_less_equal("long_" + tag, {{y, 1.0}, {x, -b.longest}}, 0);
        work.push_back({y, c.linear_ms + in_.size[j] * c.alltoall_ms_per_token[j]});
        memory[j].push_back({y, 1.0});
        // crowd[j][q]: the sequences longer than capacity / (q + 2).
        for (int q = 0; q < 3; ++q) {
          if (b.signature[j] >= 3 - q) crowd[j][q].push_back({x, 1.0});
        }
      }
      model.add_equal("count_" + std::to_string(index), all_count, b.count);
      model.add_equal("tokens_" + std::to_string(index), all_tokens, b.tokens);
      ++index;
    };
    for (const auto& [signature, b] : by_signature) add_bucket(b, false);
    if (pinned_ >= 0) add_bucket(own, true);
    model.add_less_equal("work", work, -quadratic_gpu_ms);
    slowest_row_ = model.add_greater_equal("slowest", {{t, 1.0}}, slowest_others_);
    for (int j = 0; j < in_.num_sizes; ++j) {
      const std::string tag = std::to_string(j);
      memory[j].push_back({groups[j], -in_.capacity_tokens[j]});
      model.add_less_equal("memory_" + tag, memory[j], 0);
      // At most q + 1 sequences longer than capacity / (q + 2) per group.
      for (int q = 0; q < 3; ++q) {
        if (crowd[j][q].empty()) continue;
        crowd[j][q].push_back({groups[j], -(q + 1.0)});
        model.add_less_equal("crowd_" + tag + "_" + std::to_string(q), crowd[j][q], 0);
      }
    }
    return model;
  }

  const Instance& in_;
  int pinned_ = -1;
  std::unique_ptr<LpSession> session_;
  int m_ = 0;
  int slowest_row_ = 0;
  double slowest_others_ = 0;
  std::vector<int> pinned_count_;  ///< the pinned sequence's count column per size (-1: none)
};

namespace {

double fewest_micro_batches(const Instance& in) {
  // A micro-batch holds at most G K tokens.
  double tokens = 0;
  for (double t : in.tokens) tokens += t;
  return std::max(1.0, std::ceil(tokens / (in.gpus * in.coefficients->token_capacity_per_gpu) - 1e-9));
}

/// The sequence whose size choice trades its own time against GPU-ms the
/// most (lower_bound_ms's enumeration), or -1 when none does.
int sequence_to_pin(const Instance& in) {
  double gpu_ms = 0;
  for (double e : in.cheapest_gpu_ms) gpu_ms += e;
  int pinned = -1;
  double best_gain = 1e-9 * gpu_ms / in.gpus;
  for (int i = 0; i < in.num_sequences(); ++i) {
    double least = kInfinity;
    for (int j = 0; j < in.num_sizes; ++j) {
      const double w = in.work(i, j);
      if (std::isfinite(w))
        least = std::min(least, std::max((gpu_ms - in.cheapest_gpu_ms[i] + in.size[j] * w) / in.gpus, w));
    }
    const double gain = least - std::max(gpu_ms / in.gpus, in.fastest_ms[i]);
    if (gain > best_gain) {
      best_gain = gain;
      pinned = i;
    }
  }
  return pinned;
}

}  // namespace

GroupLpBound group_lp_bound(const Instance& in, SolverBackend backend, Clock::time_point deadline) {
  GroupLpBound out;
  if (in.num_sequences() == 0) {
    out.bound_ms = 0;
    return out;
  }
  // Every plan runs the pinned sequence at one of its sizes, so the least of
  // the LPs with it pinned at each size is a bound.
  out.pinned_sequence = sequence_to_pin(in);
  const double fewest = fewest_micro_batches(in);
  out.value_ms.assign(out.pinned_sequence < 0 ? 1 : in.num_sizes, kInfinity);
  out.micro_batches.assign(out.value_ms.size(), 0);
  out.lp = std::make_shared<GroupLp>(in, backend, out.pinned_sequence);
  double least = kInfinity;
  for (size_t j = 0; j < out.value_ms.size(); ++j) {
    if (out.pinned_sequence >= 0 && !std::isfinite(in.work(out.pinned_sequence, static_cast<int>(j))))
      continue;
    std::tie(out.value_ms[j], out.micro_batches[j]) =
        out.lp->solve(deadline, fewest, kInfinity, static_cast<int>(j));
    // An infeasible pinned LP (+inf) only rules that size out; one that did
    // not finish (-inf) makes the minimum unproven.
    least = std::min(least, out.value_ms[j]);
    if (least == -kInfinity) break;
  }
  // An LP that reports no solution proves nothing here (a plan exists).
  out.bound_ms = std::isfinite(least) ? least : -kInfinity;
  return out;
}

double whole_micro_batch_bound_ms(const Instance& in, SolverBackend backend, Clock::time_point deadline,
                                  const GroupLpBound& relaxed) {
  if (!std::isfinite(relaxed.bound_ms)) return relaxed.bound_ms;
  const double fewest = fewest_micro_batches(in);
  // Every plan has a whole number of micro-batches and the LP's optimum is
  // convex in M, so the least of the LPs with M fixed at the whole numbers
  // either side of the relaxed optimum bounds the plans of that LP. The
  // sizes of the pinned sequence are refined cheapest first, and only while
  // one could still be the least.
  // The relaxed LPs' model, warm, or a new one.
  const std::shared_ptr<GroupLp> lp =
      relaxed.lp ? relaxed.lp : std::make_shared<GroupLp>(in, backend, relaxed.pinned_sequence);
  std::vector<size_t> order(relaxed.value_ms.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return relaxed.value_ms[a] < relaxed.value_ms[b]; });
  double least = kInfinity;
  for (size_t j : order) {
    const double value = relaxed.value_ms[j];
    if (!std::isfinite(value) || value >= least) break;
    const double m = relaxed.micro_batches[j];
    const double below = std::floor(m + 1e-7), above = std::ceil(m - 1e-7);
    double refined = below == above ? value : kInfinity;
    for (double whole : {below, above}) {
      if (below == above || whole < fewest) continue;
      const double fixed = lp->solve(deadline, whole, whole, static_cast<int>(j)).first;
      // A fixed-M LP that did not finish leaves the relaxed value.
      if (fixed == -kInfinity) {
        refined = value;
        break;
      }
      refined = std::min(refined, fixed);
    }
    least = std::min(least, std::max(value, refined));
  }
  return std::max(relaxed.bound_ms, std::min(least, kInfinity));
}

double group_lp_bound_ms(const Instance& in, SolverBackend backend, Clock::time_point deadline) {
  return group_lp_bound(in, backend, deadline).bound_ms;
}

}  // namespace parplan::scatter_detail

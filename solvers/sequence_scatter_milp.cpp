// The FlexSP MILP of one step over buckets of equal length: for every
// micro-batch, candidate groups of every allowed size (binary: open), integer
// counts of each bucket's sequences per group, the micro-batch time as the
// maximum of its groups' times; minimise the sum of micro-batch times.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "solvers/milp_model.h"
#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Milliseconds per integer variable the MILP needs to build its model and
// solve its root LP, measured on FlexSP batches (examples/scatter/
// flexsp-wikipedia-gbs512.txt, 2 600-12 300 integers) on the project's
// 2-core build machine: 1.5 us to build, 3-10 us for the root LP (dual
// simplex), so 10 us with a margin.
constexpr double kMsPerInteger = 0.01;

struct LengthBucket {
  double tokens = 0;
  std::vector<int> sequences;
};

std::vector<LengthBucket> buckets_of(const Instance& in) {
  std::map<double, std::vector<int>, std::greater<>> by_length;
  for (int i = 0; i < in.num_sequences(); ++i) by_length[in.tokens[i]].push_back(i);
  std::vector<LengthBucket> buckets;
  for (auto& [tokens, sequences] : by_length) buckets.push_back(LengthBucket{tokens, sequences});
  return buckets;
}

/// Groups of size j one micro-batch can usefully open.
int slots(const Instance& in, int j) {
  int fitting = 0;
  for (int i = 0; i < in.num_sequences(); ++i) fitting += in.tokens[i] <= in.capacity_tokens[j] ? 1 : 0;
  return std::min(in.gpus / in.size[j], fitting);
}

}  // namespace

long long milp_integer_count(const Instance& in, int micro_batches) {
  // The buckets' lengths alone (the model's buckets, without their map).
  std::vector<double> lengths = in.tokens;
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  long long per_micro_batch = 0;
  for (int j = 0; j < in.num_sizes; ++j) {
    const long long usable =
        std::upper_bound(lengths.begin(), lengths.end(), in.capacity_tokens[j]) - lengths.begin();
    per_micro_batch += static_cast<long long>(slots(in, j)) * (1 + usable);
  }
  return per_micro_batch * micro_batches;
}

MilpOutcome milp_path(const Instance& in, const std::vector<std::int64_t>& lengths,
                      const ScatterPlan& incumbent, double combinatorial_bound_ms, int micro_batches,
                      SolverBackend backend, Clock::time_point deadline) {
  MilpOutcome out;
  // A MILP that cannot get through its root LP before the deadline only
  // overruns it (CBC checks its clock between nodes): not started.
  const double left_ms = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
  const long long integers = milp_integer_count(in, micro_batches);
  if (left_ms < kMsPerInteger * static_cast<double>(integers)) {
    out.skipped =
        "its root LP (" + std::to_string(integers) + " integers) would not finish in the step's time left";
    return out;
  }
  const ScatterCoefficients& c = *in.coefficients;
  const std::vector<LengthBucket> buckets = buckets_of(in);
  const int nb = static_cast<int>(buckets.size());

  MilpModel model("sequence_scatter");
  struct Slot {
    int micro_batch, size_index, z;
    std::vector<int> y;  // per bucket, -1 where the bucket does not fit
  };
  std::vector<Slot> slot_list;
  std::vector<int> time_var(micro_batches);
  for (int m = 0; m < micro_batches; ++m) {
    time_var[m] = model.add_continuous("T" + std::to_string(m), 0, kInfinity, 1.0);
  }
  for (int m = 0; m < micro_batches; ++m) {
    for (int j = 0; j < in.num_sizes; ++j) {
      for (int k = 0; k < slots(in, j); ++k) {
        const std::string tag =
            std::to_string(m) + "_" + std::to_string(in.size[j]) + "_" + std::to_string(k);
        Slot s{m, j, model.add_binary("open_" + tag), std::vector<int>(nb, -1)};
        for (int b = 0; b < nb; ++b) {
          if (buckets[b].tokens > in.capacity_tokens[j]) continue;
          const double count = static_cast<double>(buckets[b].sequences.size());
          s.y[b] = model.add_integer("n_" + std::to_string(b) + "_" + tag, 0, count);
        }
        slot_list.push_back(std::move(s));
      }
    }
  }
  std::vector<std::vector<MilpTerm>> assign(nb);
  std::vector<std::vector<MilpTerm>> width(micro_batches);
  for (size_t si = 0; si < slot_list.size(); ++si) {
    const Slot& s = slot_list[si];
    std::vector<MilpTerm> memory{{s.z, -in.capacity_tokens[s.size_index]}};
    std::vector<MilpTerm> time{{s.z, c.fixed_ms}, {time_var[s.micro_batch], -1.0}};
    for (int b = 0; b < nb; ++b) {
      if (s.y[b] < 0) continue;
      const int i = buckets[b].sequences.front();
      assign[b].push_back({s.y[b], 1.0});
      memory.push_back({s.y[b], buckets[b].tokens});
      time.push_back({s.y[b], in.work(i, s.size_index)});
    }
    // The memory row also forces the group open when it holds a sequence.
    model.add_less_equal("memory_" + std::to_string(si), memory, 0);
    model.add_less_equal("time_" + std::to_string(si), time, 0);
    width[s.micro_batch].push_back({s.z, static_cast<double>(in.size[s.size_index])});
    // Symmetry: groups of one size open in order.
    if (si > 0 && slot_list[si - 1].micro_batch == s.micro_batch &&
        slot_list[si - 1].size_index == s.size_index) {
      model.add_less_equal("order_" + std::to_string(si), {{s.z, 1.0}, {slot_list[si - 1].z, -1.0}}, 0);
    }
  }
  for (int b = 0; b < nb; ++b) {
    model.add_equal("assign_" + std::to_string(b), assign[b],
                    static_cast<double>(buckets[b].sequences.size()));
  }
  // Valid cuts that tighten the LP relaxation: a micro-batch lasts at least
  // its groups' GPU-milliseconds over G (its groups' times, weighted by
  // their share of the G GPUs, average to at most its time), and at least
  // the average time of a bucket's sequences it holds.
  std::vector<std::vector<MilpTerm>> fluid(micro_batches);
  std::vector<std::vector<std::vector<MilpTerm>>> holds(micro_batches,
                                                        std::vector<std::vector<MilpTerm>>(nb));
  for (const Slot& s : slot_list) {
    const double p = in.size[s.size_index];
    fluid[s.micro_batch].push_back({s.z, p * c.fixed_ms});
    for (int b = 0; b < nb; ++b) {
      if (s.y[b] < 0) continue;
      const double w = in.work(buckets[b].sequences.front(), s.size_index);
      fluid[s.micro_batch].push_back({s.y[b], p * w});
      holds[s.micro_batch][b].push_back(
          {s.y[b], (c.fixed_ms + w) / static_cast<double>(buckets[b].sequences.size())});
    }
  }
  for (int m = 0; m < micro_batches; ++m) {
    fluid[m].push_back({time_var[m], -static_cast<double>(in.gpus)});
    model.add_less_equal("fluid_" + std::to_string(m), fluid[m], 0);
    for (int b = 0; b < nb; ++b) {
      if (holds[m][b].empty()) continue;
      holds[m][b].push_back({time_var[m], -1.0});
      model.add_less_equal("holds_" + std::to_string(m) + "_" + std::to_string(b), holds[m][b], 0);
    }
  }
  std::vector<MilpTerm> total;
  for (int m = 0; m < micro_batches; ++m) {
    model.add_less_equal("width_" + std::to_string(m), width[m], in.gpus);
    if (m + 1 < micro_batches) {
      // Symmetry: micro-batches by decreasing time.
      model.add_less_equal("mb_order_" + std::to_string(m), {{time_var[m + 1], 1.0}, {time_var[m], -1.0}}, 0);
    }
    total.push_back({time_var[m], 1.0});
  }
  // Warm start as a cutoff (the incumbent stays feasible) and the proven
  // combinatorial bound as a valid cut.
  const bool has_incumbent = !incumbent.empty() && std::isfinite(incumbent.time_ms);
  if (has_incumbent) model.add_less_equal("cutoff", total, incumbent.time_ms * (1 + 1e-7) + 1e-6);
  if (std::isfinite(combinatorial_bound_ms) && combinatorial_bound_ms > 0) {
    model.add_greater_equal("bound", total, combinatorial_bound_ms * (1 - 1e-9));
  }

  const std::optional<SolveResult> solved = solve_until(model, backend, 1e-6, deadline);
  if (!solved) {
    out.skipped = "step time limit reached";
    return out;
  }
  const SolveResult& result = *solved;
  out.ran = true;
  out.certificate = result.certificate;

  double restricted_bound = -kInfinity;
  if (result.certificate.status == SolveStatus::kInfeasible && has_incumbent) {
    // No plan with at most `micro_batches` micro-batches beats the cutoff.
    restricted_bound = incumbent.time_ms;
  } else if (std::isfinite(result.certificate.best_bound)) {
    restricted_bound = result.certificate.best_bound;
  }
  if (result.has_solution()) {
    ScatterPlan plan;
    plan.micro_batches.resize(micro_batches);
    std::vector<size_t> next(nb, 0);
    for (const Slot& s : slot_list) {
      ScatterGroup group{in.size[s.size_index], 0, {}, 0, 0};
      for (int b = 0; b < nb; ++b) {
        if (s.y[b] < 0) continue;
        const int count = static_cast<int>(std::lround(result.values[s.y[b]]));
        for (int t = 0; t < count && next[b] < buckets[b].sequences.size(); ++t) {
          group.sequences.push_back(buckets[b].sequences[next[b]++]);
        }
      }
      if (!group.sequences.empty()) plan.micro_batches[s.micro_batch].groups.push_back(std::move(group));
    }
    finalize_scatter_plan(plan, lengths, c);
    out.plan = std::move(plan);
  }
  // Plans with more micro-batches than the model holds pay fixed_ms more
  // often: bound them separately.
  double bound = restricted_bound;
  if (micro_batches < in.num_sequences()) {
    double gpu_ms = 0;
    for (double e : in.cheapest_gpu_ms) gpu_ms += e;
    bound = std::min(bound, (micro_batches + 1) * c.fixed_ms + gpu_ms / in.gpus);
  }
  out.bound_ms = bound;
  return out;
}

}  // namespace parplan::scatter_detail

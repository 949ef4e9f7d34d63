// Sequence scattering: the instance, the proven bound, plan bookkeeping and
// checks, and the per-step driver (static baseline, fast path, MILP).
#include "solvers/sequence_scatter.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>

#include "solvers/sequence_scatter_internal.h"

namespace parplan {

namespace scatter_detail {

Instance make_instance(const std::vector<std::int64_t>& lengths, int gpus, const ScatterCoefficients& c) {
  Instance in;
  in.coefficients = &c;
  in.gpus = gpus;
  in.num_sizes = static_cast<int>(c.group_sizes.size());
  in.size = c.group_sizes;
  for (int p : c.group_sizes) in.capacity_tokens.push_back(p * c.token_capacity_per_gpu);
  const int n = static_cast<int>(lengths.size());
  in.tokens.resize(n);
  in.work_ms.resize(static_cast<size_t>(n) * in.num_sizes);
  in.cheapest_gpu_ms.assign(n, kInfinity);
  in.fastest_ms.assign(n, kInfinity);
  for (int i = 0; i < n; ++i) {
    const double s = static_cast<double>(lengths[i]);
    in.tokens[i] = s;
    for (int j = 0; j < in.num_sizes; ++j) {
      const double w = s <= in.capacity_tokens[j] ? scatter_sequence_ms(c, j, s) : kInfinity;
      in.work_ms[static_cast<size_t>(i) * in.num_sizes + j] = w;
      in.cheapest_gpu_ms[i] = std::min(in.cheapest_gpu_ms[i], in.size[j] * w);
      in.fastest_ms[i] = std::min(in.fastest_ms[i], w);
    }
  }
  in.cheapest_sizes.resize(static_cast<size_t>(n) * in.num_sizes);
  for (int i = 0; i < n; ++i) {
    int* order = &in.cheapest_sizes[static_cast<size_t>(i) * in.num_sizes];
    std::iota(order, order + in.num_sizes, 0);
    std::stable_sort(order, order + in.num_sizes,
                     [&](int x, int y) { return in.size[x] * in.work(i, x) < in.size[y] * in.work(i, y); });
  }
  return in;
}

double lower_bound_ms(const Instance& in) {
  double tokens = 0;
  double gpu_ms = 0;
  double slowest = 0;
  for (int i = 0; i < in.num_sequences(); ++i) {
    tokens += in.tokens[i];
    gpu_ms += in.cheapest_gpu_ms[i];
    slowest = std::max(slowest, in.fastest_ms[i]);
  }
  if (in.num_sequences() == 0) return 0;
  // Every micro-batch lasts at least fixed_ms + (its GPU-ms) / G: its
  // groups' times weighted by their share of the G GPUs average to at most
  // its time. A micro-batch holds at most G K tokens.
  const double fewest =
      std::max(1.0, std::ceil(tokens / (in.gpus * in.coefficients->token_capacity_per_gpu) - 1e-9));
  // Any one sequence i runs at some size j: its micro-batch lasts at least
  // w_ij and its GPU-ms is p_j w_ij, not its cheapest. Minimising over j,
  // each term at that same j, is a bound for every i; the longest sequence
  // gains most when its fastest size is not its cheapest.
  double busy = std::max(gpu_ms / in.gpus, slowest);
  for (int i = 0; i < in.num_sequences(); ++i) {
    double least = kInfinity;
    for (int j = 0; j < in.num_sizes; ++j) {
      const double w = in.work(i, j);
      if (!std::isfinite(w)) continue;
      const double spent = gpu_ms - in.cheapest_gpu_ms[i] + in.size[j] * w;
      least = std::min(least, std::max(spent / in.gpus, w));
    }
    busy = std::max(busy, least);
  }
  return std::max(
      {fewest * in.coefficients->fixed_ms + busy, pinned_micro_batch_bound_ms(in), pinned_pair_bound_ms(in)});
}

}  // namespace scatter_detail

using namespace scatter_detail;

double scatter_capacity_tokens(const ScatterCoefficients& c) {
  if (c.group_sizes.empty()) return 0;
  return c.group_sizes.back() * c.token_capacity_per_gpu;
}

int first_unplaceable_sequence(const std::vector<std::int64_t>& lengths, const ScatterCoefficients& c) {
  const double capacity = scatter_capacity_tokens(c);
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (static_cast<double>(lengths[i]) > capacity) return static_cast<int>(i);
  }
  return -1;
}

double scatter_lower_bound_ms(const std::vector<std::int64_t>& lengths, int gpus,
                              const ScatterCoefficients& c) {
  return lower_bound_ms(make_instance(lengths, gpus, c));
}

void finalize_scatter_plan(ScatterPlan& plan, const std::vector<std::int64_t>& lengths,
                           const ScatterCoefficients& c) {
  std::vector<ScatterMicroBatch> kept;
  plan.time_ms = 0;
  for (ScatterMicroBatch& mb : plan.micro_batches) {
    std::vector<ScatterGroup> groups;
    for (ScatterGroup& g : mb.groups) {
      if (!g.sequences.empty()) groups.push_back(std::move(g));
    }
    if (groups.empty()) continue;
    // Largest first on consecutive ranks: every size divides the larger
    // ones, so each group starts at a multiple of its size.
    std::stable_sort(groups.begin(), groups.end(),
                     [](const ScatterGroup& a, const ScatterGroup& b) { return a.size > b.size; });
    mb.time_ms = 0;
    int rank = 0;
    for (ScatterGroup& g : groups) {
      const int j = static_cast<int>(std::find(c.group_sizes.begin(), c.group_sizes.end(), g.size) -
                                     c.group_sizes.begin());
      std::sort(g.sequences.begin(), g.sequences.end());
      g.first_rank = rank;
      rank += g.size;
      g.tokens = 0;
      g.time_ms = c.fixed_ms;
      for (int i : g.sequences) {
        const double s = static_cast<double>(lengths[i]);
        g.tokens += s;
        if (j < static_cast<int>(c.group_sizes.size())) g.time_ms += scatter_sequence_ms(c, j, s);
      }
      mb.time_ms = std::max(mb.time_ms, g.time_ms);
    }
    mb.groups = std::move(groups);
    plan.time_ms += mb.time_ms;
    kept.push_back(std::move(mb));
  }
  plan.micro_batches = std::move(kept);
  if (plan.micro_batches.empty()) plan.time_ms = lengths.empty() ? 0 : kInfinity;
}

std::string check_scatter_plan(const ScatterPlan& plan, const std::vector<std::int64_t>& lengths, int gpus,
                               const ScatterCoefficients& c) {
  std::ostringstream out;
  std::vector<int> seen(lengths.size(), 0);
  for (size_t m = 0; m < plan.micro_batches.size(); ++m) {
    std::vector<int> used(gpus, 0);
    for (const ScatterGroup& g : plan.micro_batches[m].groups) {
      if (std::find(c.group_sizes.begin(), c.group_sizes.end(), g.size) == c.group_sizes.end()) {
        out << "micro-batch " << m << ": group size " << g.size << " is not allowed";
        return out.str();
      }
      if (g.first_rank < 0 || g.first_rank % g.size != 0 || g.first_rank + g.size > gpus) {
        out << "micro-batch " << m << ": group of " << g.size << " at rank " << g.first_rank
            << " is not an aligned block";
        return out.str();
      }
      for (int r = g.first_rank; r < g.first_rank + g.size; ++r) {
        if (used[r]++) {
          out << "micro-batch " << m << ": rank " << r << " is in two groups";
          return out.str();
        }
      }
      double tokens = 0;
      for (int i : g.sequences) {
        if (i < 0 || i >= static_cast<int>(lengths.size())) {
          out << "micro-batch " << m << ": sequence index " << i << " out of range";
          return out.str();
        }
        ++seen[i];
        tokens += static_cast<double>(lengths[i]);
      }
      if (tokens / g.size > c.token_capacity_per_gpu * (1 + 1e-12)) {
        out << "micro-batch " << m << ": group at rank " << g.first_rank << " holds " << tokens / g.size
            << " tokens per GPU, more than " << c.token_capacity_per_gpu;
        return out.str();
      }
    }
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] != 1) {
      out << "sequence " << i << " is placed " << seen[i] << " times";
      return out.str();
    }
  }
  return "";
}

namespace {

// Steps with this many micro-batches or fewer also try the split path (on
// more, a common time cap loses little and the split path costs ~10 ms).
constexpr size_t kSplitMicroBatches = 4;
// Share of the step's budget the bound may take (waiting for the backend
// included) before the plan search.
constexpr double kEarlyBoundShare = 0.4;
// Rounds of re-batching by load and local search after the repacking.
constexpr int kRebatchRounds = 3;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Micro-batch count the MILP needs so that no plan with more can beat the
/// incumbent (capped by the sequence count and the integer budget).
int milp_micro_batches(const Instance& in, double incumbent_ms, int max_integers) {
  const int n = in.num_sequences();
  double gpu_ms = 0;
  for (double e : in.cheapest_gpu_ms) gpu_ms += e;
  int m = n;
  const double d = in.coefficients->fixed_ms;
  if (d > 0) {
    const double needed = std::floor((incumbent_ms - gpu_ms / in.gpus) / d);
    if (needed < n) m = std::max(1, static_cast<int>(needed));
  }
  // The count is linear in the micro-batches.
  const long long per_micro_batch = milp_integer_count(in, 1);
  if (per_micro_batch > 0)
    m = static_cast<int>(std::min<long long>(m, std::max<long long>(1, max_integers / per_micro_batch)));
  return m;
}

}  // namespace

ScatterStepResult solve_scatter_step(const std::vector<std::int64_t>& lengths, int gpus,
                                     const ScatterCoefficients& c, const ScatterOptions& options) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(options.step_time_limit_s));
  ScatterStepResult result;
  SolverCertificate& cert = result.certificate;
  cert.name = "sequence_scatter";
  cert.backend = "fast-path";
  if (!check_scatter_coefficients(c, gpus).empty() || lengths.empty()) {
    cert.status = SolveStatus::kError;
    cert.message = lengths.empty() ? "empty step" : check_scatter_coefficients(c, gpus);
    return result;
  }
  if (first_unplaceable_sequence(lengths, c) >= 0) {
    cert.status = SolveStatus::kInfeasible;
    cert.message = "a sequence is longer than the largest group can hold";
    return result;
  }
  const Instance in = make_instance(lengths, gpus, c);
  const double bound = lower_bound_ms(in);

  // Static baseline: one size for every group, same fast path; MILP-refined
  // on small steps.
  ScatterPlan best;
  for (size_t j = 0; j < c.group_sizes.size(); ++j) {
    ScatterCoefficients one = c;
    one.group_sizes = {c.group_sizes[j]};
    one.alltoall_ms_per_token = {c.alltoall_ms_per_token[j]};
    if (first_unplaceable_sequence(lengths, one) >= 0) continue;
    const Instance single = make_instance(lengths, gpus, one);
    ScatterPlan plan = fast_path(single, lengths, deadline);
    if (options.use_milp && single.num_sequences() <= 8 && Clock::now() < deadline) {
      const int m = milp_micro_batches(single, plan.time_ms, options.max_milp_integers);
      MilpOutcome milp =
          milp_path(single, lengths, plan, lower_bound_ms(single), m, options.backend, deadline);
      if (!milp.plan.empty() && milp.plan.time_ms < plan.time_ms) plan = std::move(milp.plan);
    }
    const bool better_static = std::isnan(result.static_time_ms) || plan.time_ms < result.static_time_ms;
    if (!plan.empty() && better_static) {
      result.static_size = c.group_sizes[j];
      result.static_time_ms = plan.time_ms;
      if (plan.time_ms < best.time_ms) best = plan;
    }
  }

  // Steps the memory allows in few micro-batches get the split path before
  // anything else: on such steps it usually wins (one micro-batch for the
  // longest sequence), and on a loaded machine the search below may reach
  // the deadline before it.
  double step_tokens = 0;
  for (double t : in.tokens) step_tokens += t;
  const bool split_early = step_tokens <= kSplitMicroBatches * gpus * c.token_capacity_per_gpu;
  if (split_early && Clock::now() < deadline) {
    ScatterPlan split = split_path(in, lengths, deadline, best.time_ms);
    if (split.time_ms < best.time_ms) best = std::move(split);
  }

  // The bound next: it does not depend on the plan, and the plan search
  // below uses whatever time is left.
  auto gap_of = [](double objective, double lower) {
    return std::max(0.0, objective - lower) / std::max(std::abs(objective), 1e-9);
  };
  // Another step's MILP may hold the backend: the bound waits for it at
  // most a share of the budget here, and is tried again after the search.
  double lp_bound = -kInfinity;
  GroupLpBound group_lp;
  const bool want_lp = options.use_milp && gap_of(best.time_ms, bound) > options.relative_gap;
  if (want_lp && Clock::now() < deadline) {
    const Clock::time_point now = Clock::now();
    const Clock::time_point early =
        now + std::chrono::duration_cast<Clock::duration>((deadline - now) * kEarlyBoundShare);
    group_lp = group_lp_bound(in, options.backend, early);
    lp_bound = group_lp.bound_ms;
  }

  // Adaptive: fast path, warm-started by the best static plan. Its plans
  // are not packed again micro-batch by micro-batch (the static baseline's
  // are): the local search after it evens the groups' loads as well, and
  // on five sets of long-tail steps (docs/scatter-bench.md) leaving it out
  // moved the mean gap by -0.17 to +0.02 points for 12 % less work.
  ScatterPlan fast = fast_path(in, lengths, deadline, /*tighten_each=*/false);
  if (fast.time_ms < best.time_ms) best = std::move(fast);
  if (!split_early && best.micro_batches.size() <= kSplitMicroBatches) {
    ScatterPlan split = split_path(in, lengths, deadline, best.time_ms);
    if (split.time_ms < best.time_ms) best = std::move(split);
  }
  // The slowest sequences packed apart: the common time cap fills their
  // micro-batches with short sequences that pay cross-node all-to-alls.
  // When it wins, only its plan gets the local search: searching from the
  // other start as well took the bench's mean gap from 2.91 to 2.83 %
  // (budget lifted) for 12 % more work. This path and the repacking below
  // run until the step's deadline, not a share of it: with a share, a step
  // that reached it a millisecond earlier or later got another plan
  // (Llama 3 8B on 64 H100, 512 long-tailed sequences: up to 15 % slower
  // from run to run at the default 50 ms, in about 25 ms).
  ScatterPlan apart = Clock::now() < deadline ? long_split_path(in, lengths, deadline) : ScatterPlan{};
  if (apart.time_ms < best.time_ms) {
    best = local_search(in, lengths, apart, deadline);
  } else {
    best = local_search(in, lengths, best, deadline);
  }
  if (want_lp && !std::isfinite(lp_bound) && gap_of(best.time_ms, bound) > options.relative_gap &&
      Clock::now() < deadline) {
    group_lp = group_lp_bound(in, options.backend, deadline);
    lp_bound = group_lp.bound_ms;
  }
  // Pairs of micro-batches packed again, then the local search from there
  // (repacking alone gained 0.1 % of the bench's mean gap, with the local
  // search after it 0.35 %); after the bound's second try: on a loaded
  // machine the bound comes first.
  if (Clock::now() < deadline) {
    // The repacking's micro-batches re-batched by load before the local
    // search (one local search for both).
    ScatterPlan repacked = rebatch_by_load(in, lengths, repack_search(in, lengths, best, deadline));
    if (repacked.time_ms < best.time_ms) best = local_search(in, lengths, repacked, deadline);
  }
  if (options.eject_searches > 0 && Clock::now() < deadline)
    best = eject_search(in, lengths, best, options.eject_searches, deadline);
  // Whole groups into micro-batches of like loads, then the local search
  // from there, while it gains.
  for (int round = 0; round < kRebatchRounds && Clock::now() < deadline; ++round) {
    const ScatterPlan rebatched = rebatch_by_load(in, lengths, best);
    if (!(rebatched.time_ms < best.time_ms)) break;
    best = local_search(in, lengths, rebatched, deadline);
  }
  // The LPs again with whole micro-batch counts, once the plan is found: a
  // stronger bound is worth less than a better plan when time runs short.
  bool whole_raised = false;
  if (options.whole_micro_batch_bound && std::isfinite(lp_bound) &&
      gap_of(best.time_ms, std::max(bound, lp_bound)) > options.relative_gap && Clock::now() < deadline) {
    const double whole = whole_micro_batch_bound_ms(in, options.backend, deadline, group_lp);
    whole_raised = whole > lp_bound;
    lp_bound = std::max(lp_bound, whole);
  }
  double proven = std::min(std::max(bound, lp_bound), best.time_ms);
  cert.message = lp_bound <= bound ? "bound: combinatorial"
                 : whole_raised    ? "bound: group-count LP, whole micro-batch counts"
                                   : "bound: group-count LP";
  if (options.use_milp && gap_of(best.time_ms, proven) > options.relative_gap) {
    const int m = milp_micro_batches(in, best.time_ms, options.max_milp_integers);
    const bool too_large = milp_integer_count(in, m) > options.max_milp_integers;
    // A MILP cut to fewer micro-batches than the memory needs holds no plan
    // and proves only what the memory bound already does.
    const int memory_fewest =
        static_cast<int>(std::ceil(step_tokens / (gpus * c.token_capacity_per_gpu) - 1e-9));
    MilpOutcome milp;
    if (too_large) {
      cert.message += "; MILP skipped (too large for the step budget)";
    } else if (Clock::now() >= deadline) {
      milp.skipped = "step time limit reached";
    } else if (m < memory_fewest) {
      milp.skipped = "the step budget holds " + std::to_string(m) +
                     " micro-batches in its model, the memory needs " + std::to_string(memory_fewest);
    } else {
      milp = milp_path(in, lengths, best, proven, m, options.backend, deadline);
    }
    if (milp.ran) {
      cert.backend = backend_name(options.backend);
      cert.message = cert.message + "; MILP " + std::string(status_name(milp.certificate.status));
      if (!milp.plan.empty() && milp.plan.time_ms < best.time_ms) best = std::move(milp.plan);
      proven = std::min(std::max(proven, milp.bound_ms), best.time_ms);
    } else if (!too_large) {
      cert.message += "; MILP skipped (" +
                      (milp.skipped.empty() ? std::string("step time limit reached") : milp.skipped) + ")";
    }
  }
  if (options.improve_time_s > 0 && gap_of(best.time_ms, proven) > options.relative_gap) {
    const Clock::time_point until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(options.improve_time_s));
    // Seeded by the step itself: the same step draws the same moves.
    std::uint64_t seed = lengths.size();
    for (std::int64_t s : lengths) seed = seed * 1000003u + static_cast<std::uint64_t>(s);
    const double before_ms = best.time_ms;
    best = perturb_search(in, lengths, best, seed, until);
    proven = std::min(proven, best.time_ms);
    if (best.time_ms < before_ms) cert.message += "; improved by ruin and recreate";
  }
  result.plan = std::move(best);
  cert.objective = result.plan.time_ms;
  cert.best_bound = proven;
  cert.gap = gap_of(result.plan.time_ms, proven);
  cert.status = cert.gap <= options.relative_gap ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  result.solve_ms = elapsed_ms(start);
  cert.time_s = result.solve_ms / 1000.0;
  return result;
}

}  // namespace parplan

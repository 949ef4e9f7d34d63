// The split path of sequence scattering for steps of few micro-batches: the
// longest sequence and the next longest that fit under its time form one
// micro-batch, the rest are packed into the others. A common time cap
// (the fast path) cannot find such plans, where one micro-batch is long
// and the others short.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// The first micro-batch may run this much over the longest sequence's time.
constexpr double kSlack = 0.02;

ScatterPlan join(ScatterPlan first, ScatterPlan rest, const std::vector<std::int64_t>& lengths,
                 const ScatterCoefficients& c) {
  for (ScatterMicroBatch& mb : rest.micro_batches) first.micro_batches.push_back(std::move(mb));
  finalize_scatter_plan(first, lengths, c);
  return first;
}

}  // namespace

ScatterPlan split_path(const Instance& in, const std::vector<std::int64_t>& lengths,
                       Clock::time_point deadline, double incumbent_ms) {
  const int n = in.num_sequences();
  const ScatterCoefficients& c = *in.coefficients;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return in.tokens[x] > in.tokens[y]; });
  const double memory_tokens = in.gpus * c.token_capacity_per_gpu;
  ScatterPlan best;
  const int longest = order.front();
  // Caps: the longest sequence's time at each size, and the first micro-
  // batch's time the pinned-pair bound's least arrangement suggests (two
  // long sequences together, the slower setting the time).
  std::vector<double> caps;
  for (int j = 0; j < in.num_sizes; ++j)
    if (std::isfinite(in.work(longest, j))) caps.push_back(in.work(longest, j));
  double suggested = 0;
  pinned_pair_bound_ms(in, &suggested);
  if (suggested > 0 &&
      std::none_of(caps.begin(), caps.end(), [&](double w) { return std::abs(w - suggested) <= kSlack * w; }))
    caps.push_back(suggested);
  std::vector<int> prefixes;
  for (double w_cap : caps) {
    if (n < 2 || Clock::now() >= deadline) break;
    const double cap_ms = c.fixed_ms + w_cap * (1 + kSlack);
    // Largest prefix of the longest sequences that one micro-batch runs
    // under cap_ms (bisection; the longest alone always fits).
    // Each try packs once at the cap (packs_under); only the prefix found
    // is packed at its least cap, which pack_items bisects: bisecting every
    // try was most of a step's time on steps of two micro-batches.
    int lo = 1;
    int hi = n - 1;
    while (lo < hi && Clock::now() < deadline) {
      const int mid = (lo + hi + 1) / 2;
      const std::vector<int> items(order.begin(), order.begin() + mid);
      double tokens = 0;
      for (int i : items) tokens += in.tokens[i];
      if (tokens <= memory_tokens && packs_under(in, items, cap_ms - c.fixed_ms, 1))
        lo = mid;
      else
        hi = mid - 1;
    }
    // Caps that admit the same prefix give the same plan.
    if (std::find(prefixes.begin(), prefixes.end(), lo) != prefixes.end()) continue;
    prefixes.push_back(lo);
    const ScatterPlan first = pack_items(in, lengths, std::vector<int>(order.begin(), order.begin() + lo), 1);
    if (first.empty()) continue;
    const std::vector<int> rest(order.begin() + lo, order.end());
    double rest_tokens = 0;
    for (int i : rest) rest_tokens += in.tokens[i];
    const int fewest = std::max(1, static_cast<int>(std::ceil(rest_tokens / memory_tokens - 1e-9)));
    double rest_gpu_ms = 0, rest_fastest_ms = 0;
    for (int i : rest) {
      rest_gpu_ms += in.cheapest_gpu_ms[i];
      rest_fastest_ms = std::max(rest_fastest_ms, in.fastest_ms[i]);
    }
    for (int m = fewest; m <= fewest + 1 && Clock::now() < deadline; ++m) {
      // The rest's m micro-batches last at least m fixed costs plus the
      // GPU-ms over the GPUs, and plus its slowest sequence: a split that
      // cannot beat the best plan known is not packed.
      const double lower_ms =
          first.time_ms + m * c.fixed_ms + std::max(rest_fastest_ms, rest_gpu_ms / in.gpus);
      if (lower_ms >= std::min(best.time_ms, incumbent_ms)) continue;
      ScatterPlan others = pack_items(in, lengths, rest, m);
      if (others.empty()) continue;
      ScatterPlan plan = join(first, std::move(others), lengths, c);
      if (plan.time_ms < best.time_ms) best = std::move(plan);
    }
  }
  return best;
}

}  // namespace parplan::scatter_detail

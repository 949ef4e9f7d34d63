// Ruin and recreate over micro-batches: the sequences of two micro-batches
// are taken out and packed again by the constructive path (into one
// micro-batch when their tokens fit, else two); the new micro-batches
// replace the old ones when they are faster together. The local search moves
// one sequence or swaps two at a time, so it stops where two micro-batches
// would need several sequences exchanged at once; packing their union again
// gets past that, and the local search run after it (in the driver) goes on
// from the new plan. On the bench, the repacked pairs gain 0.75 % of the step
// time when all of them are tried, and the local search after the first 40
// about as much again as those 40 did.
#include <algorithm>
#include <set>
#include <utility>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Pairs repacked per call. On the bench's 24 steps (mean gap to the bound,
// local search after): 30 pairs 3.82 %, 40 pairs 3.76 %, 50 pairs 3.72 %,
// 80 pairs 3.62 %, all of them (about 200 per step, 60 ms) 3.34 %, none
// 4.15 %; a pair costs about 0.12 ms, and 40 keep the bench's median step
// under 20 ms.
constexpr int kMaxPairs = 40;
// One insertion order of pack_items (each sequence into an open or new group
// of its cheapest size first): per pair tried it gained more than both
// orders (3.62 against 3.68 % mean gap for the same packing work).
constexpr int kOrders = 1;
// A replacement must shorten the pair by more than this fraction of the step
// time (rounding noise otherwise cycles).
constexpr double kMinGain = 1e-9;

struct Pair {
  int a = 0;
  int b = 0;
  double waste_ms = 0;
};

}  // namespace

ScatterPlan repack_search(const Instance& in, const std::vector<std::int64_t>& lengths,
                          const ScatterPlan& plan, Clock::time_point deadline) {
  if (plan.micro_batches.size() < 2) return plan;
  const ScatterCoefficients& c = *in.coefficients;
  const double memory_tokens = in.gpus * c.token_capacity_per_gpu;
  // The micro-batches, each with an id that changes when it is replaced: a
  // pair that did not gain is not tried again (the packing is deterministic).
  std::vector<ScatterMicroBatch> mbs = plan.micro_batches;
  std::vector<int> id(mbs.size());
  for (size_t m = 0; m < mbs.size(); ++m) id[m] = static_cast<int>(m);
  int next_id = static_cast<int>(mbs.size());
  std::set<std::pair<int, int>> tried;
  double step_ms = plan.time_ms;
  int pairs_left = kMaxPairs;
  bool improved = true;
  while (improved && pairs_left > 0 && Clock::now() < deadline) {
    improved = false;
    const int count = static_cast<int>(mbs.size());
    // Waste of a micro-batch: its time over its fluid bound (fixed_ms plus
    // its sequences' cheapest GPU-ms over G); the pair cannot gain more than
    // its waste. Pairs with most waste first.
    std::vector<double> waste(count, 0);
    std::vector<double> tokens(count, 0);
    for (int m = 0; m < count; ++m) {
      double gpu_ms = 0;
      for (const ScatterGroup& g : mbs[m].groups) {
        for (int i : g.sequences) {
          gpu_ms += in.cheapest_gpu_ms[i];
          tokens[m] += in.tokens[i];
        }
      }
      waste[m] = mbs[m].time_ms - c.fixed_ms - gpu_ms / in.gpus;
    }
    std::vector<Pair> pairs;
    for (int a = 0; a < count; ++a) {
      for (int b = a + 1; b < count; ++b) {
        if (!tried.count({id[a], id[b]})) pairs.push_back(Pair{a, b, waste[a] + waste[b]});
      }
    }
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const Pair& x, const Pair& y) { return x.waste_ms > y.waste_ms; });
    // Pairs of micro-batches not yet replaced in this round; the replaced
    // ones pair again in the next.
    std::vector<char> changed(count, 0);
    std::vector<ScatterMicroBatch> added;
    for (const Pair& pair : pairs) {
      if (pairs_left <= 0 || Clock::now() >= deadline) break;
      if (changed[pair.a] || changed[pair.b]) continue;
      --pairs_left;
      tried.insert({id[pair.a], id[pair.b]});
      std::vector<int> items;
      for (int m : {pair.a, pair.b}) {
        for (const ScatterGroup& g : mbs[m].groups)
          items.insert(items.end(), g.sequences.begin(), g.sequences.end());
      }
      const double old_ms = mbs[pair.a].time_ms + mbs[pair.b].time_ms;
      ScatterPlan best;
      if (tokens[pair.a] + tokens[pair.b] <= memory_tokens) best = pack_items(in, lengths, items, 1, kOrders);
      ScatterPlan two = pack_items(in, lengths, items, 2, kOrders);
      if (two.time_ms < best.time_ms) best = std::move(two);
      if (!(best.time_ms < old_ms - kMinGain * step_ms)) continue;
      changed[pair.a] = changed[pair.b] = 1;
      step_ms -= old_ms - best.time_ms;
      for (ScatterMicroBatch& mb : best.micro_batches) added.push_back(std::move(mb));
      improved = true;
    }
    std::vector<ScatterMicroBatch> kept;
    std::vector<int> kept_id;
    for (int m = 0; m < count; ++m) {
      if (changed[m]) continue;
      kept.push_back(std::move(mbs[m]));
      kept_id.push_back(id[m]);
    }
    for (ScatterMicroBatch& mb : added) {
      kept.push_back(std::move(mb));
      kept_id.push_back(next_id++);
    }
    mbs = std::move(kept);
    id = std::move(kept_id);
  }
  ScatterPlan out;
  out.micro_batches = std::move(mbs);
  finalize_scatter_plan(out, lengths, c);
  return out.time_ms < plan.time_ms ? out : plan;
}

}  // namespace parplan::scatter_detail

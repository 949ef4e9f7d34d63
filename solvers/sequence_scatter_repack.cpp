// Ruin and recreate over micro-batches: the sequences of two micro-batches
// are taken out and packed again by the constructive path (into one
// micro-batch when their tokens fit, else two), and those of three whose
// tokens fit in two into two; the new micro-batches replace the old ones
// when they are faster together. The local search moves one sequence or
// swaps two at a time, so it stops where micro-batches would need several
// sequences exchanged at once, or where a micro-batch could be dissolved
// only by moving all of its sequences; packing their union again gets past
// that, and the local search run after it (in the driver) goes on from the
// new plan. On the bench's 24 steps, at a similar share of the budget,
// repacking alone took the mean gap to the bound from 4.15 to 4.06 %, with
// the local search after it to 3.80 %.
#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Pairs repacked per call. On the bench's 24 steps (mean gap to the bound,
// local search after, pairs only): none 4.15 %, 30 pairs 3.82 %, 40 pairs
// 3.76 %, 50 pairs 3.72 %, 80 pairs 3.62 %; all of them (about 200 per step
// with both insertion orders, 50 ms) took the median gap from 4.14 to
// 3.34 %. A pair costs about 0.12 ms; 40 keep the bench's median step under
// 20 ms on an idle machine.
constexpr int kMaxPairs = 40;
// One insertion order of pack_items (each sequence into an open or new group
// of its cheapest size first): per pair tried it gained more than both
// orders (3.62 against 3.68 % mean gap for the same packing work).
constexpr int kOrders = 1;

// Triples of micro-batches whose tokens fit in two are packed into two
// (saving one fixed_ms) before any pair, at most this many per call, with
// both insertion orders. They are rare (on the bench none fit on 17 of 24
// steps, at most 10 on the others) and gained on 3 steps.
constexpr int kMaxTriples = 12;
constexpr int kTripleOrders = 3;

/// Two or three micro-batches (c = -1 for two) to pack again.
struct Candidate {
  int a = 0;
  int b = 0;
  int c = -1;
  double waste_ms = 0;
};

/// Micro-batches made of one group of all G GPUs: such a micro-batch lasts
/// fixed_ms plus the sum of its sequences' times at G, so packing their
/// sequences into fewer such micro-batches (first fit, longest first, G K
/// tokens each) saves fixed_ms per micro-batch and changes nothing else.
/// Pairs and triples miss it when the packing is tight: on a reduced bench
/// step (docs/scatter-exact.md, B's step 1) four 64-GPU micro-batches of
/// 197K to 336K tokens fit in three, but only as 197K + 166K,
/// 169K + 160K + 54K and 122K + 118K + 116K. Returns whether it merged.
bool merge_whole_machine_groups(const Instance& in, std::vector<ScatterMicroBatch>& mbs) {
  const int whole = static_cast<int>(std::find(in.size.begin(), in.size.end(), in.gpus) - in.size.begin());
  if (whole >= in.num_sizes) return false;
  std::vector<int> items;
  std::vector<size_t> merged;
  for (size_t m = 0; m < mbs.size(); ++m) {
    if (mbs[m].groups.size() != 1 || mbs[m].groups[0].size != in.gpus) continue;
    merged.push_back(m);
    items.insert(items.end(), mbs[m].groups[0].sequences.begin(), mbs[m].groups[0].sequences.end());
  }
  if (merged.size() < 2) return false;
  std::stable_sort(items.begin(), items.end(), [&](int x, int y) { return in.tokens[x] > in.tokens[y]; });
  std::vector<std::vector<int>> bins;
  std::vector<double> room;
  for (int i : items) {
    size_t b = 0;
    while (b < bins.size() && in.tokens[i] > room[b]) ++b;
    if (b == bins.size()) {
      bins.emplace_back();
      room.push_back(in.capacity_tokens[whole]);
    }
    bins[b].push_back(i);
    room[b] -= in.tokens[i];
  }
  if (bins.size() >= merged.size()) return false;
  std::vector<ScatterMicroBatch> kept;
  for (size_t m = 0; m < mbs.size(); ++m) {
    if (std::find(merged.begin(), merged.end(), m) == merged.end()) kept.push_back(std::move(mbs[m]));
  }
  for (std::vector<int>& bin : bins) {
    ScatterMicroBatch mb;
    mb.groups.push_back(ScatterGroup{in.gpus, 0, std::move(bin), 0, 0});
    kept.push_back(std::move(mb));
  }
  mbs = std::move(kept);
  return true;
}

}  // namespace

ScatterPlan repack_search(const Instance& in, const std::vector<std::int64_t>& lengths,
                          const ScatterPlan& plan, Clock::time_point deadline) {
  if (plan.micro_batches.size() < 2) return plan;
  const ScatterCoefficients& c = *in.coefficients;
  const double memory_tokens = in.gpus * c.token_capacity_per_gpu;
  // The micro-batches, each with an id that changes when it is replaced: a
  // pair that did not gain is not tried again (the packing is deterministic).
  std::vector<ScatterMicroBatch> mbs = plan.micro_batches;
  if (merge_whole_machine_groups(in, mbs)) {
    // Times of the new micro-batches, for the waste and the gain below.
    ScatterPlan merged;
    merged.micro_batches = std::move(mbs);
    finalize_scatter_plan(merged, lengths, c);
    mbs = std::move(merged.micro_batches);
  }
  std::vector<int> id(mbs.size());
  for (size_t m = 0; m < mbs.size(); ++m) id[m] = static_cast<int>(m);
  int next_id = static_cast<int>(mbs.size());
  std::set<std::array<int, 3>> tried;
  double step_ms = 0;
  for (const ScatterMicroBatch& mb : mbs) step_ms += mb.time_ms;
  int pairs_left = kMaxPairs;
  int triples_left = kMaxTriples;
  bool improved = true;
  while (improved && pairs_left > 0 && Clock::now() < deadline) {
    improved = false;
    const int count = static_cast<int>(mbs.size());
    // Waste of a micro-batch: its time over its fluid bound (fixed_ms plus
    // its sequences' cheapest GPU-ms over G); two micro-batches packed into
    // two cannot gain more than their waste. Most waste first.
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
    auto key = [&](const Candidate& x) {
      return std::array<int, 3>{id[x.a], id[x.b], x.c < 0 ? -1 : id[x.c]};
    };
    std::vector<Candidate> pairs;
    std::vector<Candidate> triples;
    for (int a = 0; a < count; ++a) {
      for (int b = a + 1; b < count; ++b) {
        const Candidate pair{a, b, -1, waste[a] + waste[b]};
        if (!tried.count(key(pair))) pairs.push_back(pair);
        for (int t = b + 1; t < count && triples_left > 0; ++t) {
          const Candidate triple{a, b, t, waste[a] + waste[b] + waste[t]};
          if (tokens[a] + tokens[b] + tokens[t] <= 2 * memory_tokens && !tried.count(key(triple)))
            triples.push_back(triple);
        }
      }
    }
    auto by_waste = [](const Candidate& x, const Candidate& y) { return x.waste_ms > y.waste_ms; };
    std::stable_sort(pairs.begin(), pairs.end(), by_waste);
    std::stable_sort(triples.begin(), triples.end(), by_waste);
    std::vector<Candidate> candidates = std::move(triples);  // triples first
    candidates.insert(candidates.end(), pairs.begin(), pairs.end());
    // Candidates of micro-batches not yet replaced in this round; the
    // replaced ones are paired again in the next.
    std::vector<char> changed(count, 0);
    std::vector<ScatterMicroBatch> added;
    for (const Candidate& cand : candidates) {
      if (pairs_left <= 0 || Clock::now() >= deadline) break;
      const bool triple = cand.c >= 0;
      if (changed[cand.a] || changed[cand.b] || (triple && changed[cand.c])) continue;
      if (triple && triples_left <= 0) continue;
      --(triple ? triples_left : pairs_left);
      tried.insert(key(cand));
      std::vector<int> items;
      double old_ms = 0;
      for (int m : {cand.a, cand.b, cand.c}) {
        if (m < 0) continue;
        old_ms += mbs[m].time_ms;
        for (const ScatterGroup& g : mbs[m].groups)
          items.insert(items.end(), g.sequences.begin(), g.sequences.end());
      }
      ScatterPlan best;
      if (triple) {
        best = pack_items(in, lengths, items, 2, kTripleOrders);
      } else {
        if (tokens[cand.a] + tokens[cand.b] <= memory_tokens)
          best = pack_items(in, lengths, items, 1, kOrders);
        // Both old micro-batches ran under the slower one's load.
        const double old_cap_ms =
            std::max(mbs[cand.a].time_ms, mbs[cand.b].time_ms) - in.coefficients->fixed_ms;
        ScatterPlan two = pack_items(in, lengths, items, 2, kOrders, old_cap_ms);
        if (two.time_ms < best.time_ms) best = std::move(two);
      }
      if (!(best.time_ms < old_ms - kMinStepGain * step_ms)) continue;
      for (int m : {cand.a, cand.b, cand.c}) {
        if (m >= 0) changed[m] = 1;
      }
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

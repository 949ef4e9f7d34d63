// The long-split path of sequence scattering: the slowest sequences are
// packed on their own into a few micro-batches and the rest into the
// others. The fast path's common time cap fills the micro-batches of the
// long sequences (64- and 32-GPU groups) up to the cap with short sequences
// that then pay the cross-node all-to-all; packed apart, the long ones share
// their micro-batches with each other and the short ones stay on small
// groups. The slow ones are split into micro-batches by the partition with
// the least sum of times (a micro-batch lasts as long as its slowest group,
// so micro-batches of like sequences waste least), not under one common cap.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Counts of slowest sequences set apart. With the least-sum partition, on
// the bench's 24 steps (mean gap to the bound, budget lifted; the common cap
// over 1 to 4 micro-batches with {4, 10}: 3.43 %): {4, 10} 3.10 %, {12}
// 3.08 %, {6, 12} 2.98 %, {4, 12} 3.04 %, {8, 12} and {4, 8, 12} 2.83 %,
// {8, 12, 16} 2.66 % (16: a subset program too slow for the step's budget);
// on the same steps without the sequences over 64K tokens {8, 12} was
// 2.78 % and {4, 8, 12} 2.66 %, on examples/scatter/long-tail-steps.txt
// both 2.44 % (all measured with the local search run from both starts,
// sequence_scatter.cpp). {8, 12} is as good on most for less work.
constexpr int kLongCounts[] = {4, 8, 12};
// The slow ones are also packed under a common cap into 1 to this many
// micro-batches.
constexpr int kMostLongMicroBatches = 4;
// The rest is packed in one insertion order of pack_items (into any open
// group before a new one): on the bench's 24 steps (with FlexSP's 28 GB
// coefficients and its A100 ones, and without their sequences over 64K or
// over 24K tokens) and the 4 of examples/scatter/long-tail-steps.txt, the
// other order never changed a plan, for 8 % of the step's work
// (instructions, with the budget lifted).
constexpr int kRestOrders = 2;
// Slow sets of at most this many sequences are split into micro-batches by
// their least-sum partition (partition_apart): 3^n steps of the dynamic
// program.
constexpr int kMaxPartitioned = 12;
// Precision of the caps that price the partition's parts (relative): only
// the parts chosen are packed again, at pack_items's precision.
constexpr double kPartCapPrecision = 1e-2;
// pack_items's insertion order the parts are priced and packed in (open
// groups first).
constexpr int kPartOrders = 2;

/// The partition of `slow` into micro-batches of their own with the least
/// sum of times, each part priced as its sequences packed alone into one
/// micro-batch (fixed_ms plus its least cap, one_micro_batch_caps_ms): a
/// dynamic program over the subsets, each part the one holding the lowest
/// sequence left. pack_items's common cap balances the micro-batches of the
/// slow ones, where the least sum gives them unlike durations, each
/// micro-batch's sequences alike: on bench step 14 (budget lifted) the
/// solver's plan went from 44 827 to 43 630 ms (10 s of ruin and recreate
/// after the old plan: 43 450), the 197K sequence beside the 108K on 64
/// GPUs, the 155K, 105K and 86K on two groups of 32 in the next
/// micro-batch. Empty plan when no partition packs or the deadline passes.
ScatterPlan partition_apart(const Instance& in, const std::vector<std::int64_t>& lengths,
                            const std::vector<int>& slow, Clock::time_point deadline) {
  const ScatterCoefficients& c = *in.coefficients;
  const int count = static_cast<int>(slow.size());
  const std::uint32_t all = (std::uint32_t{1} << count) - 1;
  // Parts over one micro-batch's memory cannot pack: left out unpriced.
  const double memory_tokens = in.gpus * c.token_capacity_per_gpu;
  std::vector<double> tokens(all + 1, 0);
  std::vector<std::uint32_t> fitting;
  for (std::uint32_t mask = 1; mask <= all; ++mask) {
    const int low = std::countr_zero(mask);
    tokens[mask] = tokens[mask & (mask - 1)] + in.tokens[slow[low]];
    if (tokens[mask] <= memory_tokens) fitting.push_back(mask);
  }
  const std::vector<double> caps = one_micro_batch_caps_ms(in, slow, fitting, kPartCapPrecision, deadline);
  if (caps.size() != fitting.size()) return {};
  std::vector<double> part_ms(all + 1, kInfinity);
  for (size_t k = 0; k < fitting.size(); ++k) part_ms[fitting[k]] = c.fixed_ms + caps[k];
  const std::vector<std::uint32_t> parts = least_sum_partition(part_ms, count);
  if (parts.empty()) return {};
  ScatterPlan plan;
  for (const std::uint32_t part_mask : parts) {
    std::vector<int> items;
    for (int k = 0; k < count; ++k) {
      if (part_mask >> k & 1) items.push_back(slow[k]);
    }
    ScatterPlan part = pack_items(in, lengths, items, 1, kPartOrders);
    if (part.empty()) return {};
    plan.micro_batches.push_back(std::move(part.micro_batches.front()));
  }
  finalize_scatter_plan(plan, lengths, c);
  return plan;
}

}  // namespace

std::vector<std::uint32_t> least_sum_partition(const std::vector<double>& part_ms, int count,
                                               double* sum_ms) {
  const std::uint32_t all = (std::uint32_t{1} << count) - 1;
  std::vector<double> least(all + 1, kInfinity);
  std::vector<std::uint32_t> first_part(all + 1, 0);
  least[0] = 0;
  for (std::uint32_t mask = 1; mask <= all; ++mask) {
    const std::uint32_t low = mask & (~mask + 1);
    const std::uint32_t rest = mask ^ low;
    // Each part holding the lowest element: low with a subset of the rest.
    for (std::uint32_t sub = rest;; sub = (sub - 1) & rest) {
      const std::uint32_t part = sub | low;
      const double v = part_ms[part] + least[mask ^ part];
      if (v < least[mask]) {
        least[mask] = v;
        first_part[mask] = part;
      }
      if (sub == 0) break;
    }
  }
  if (sum_ms) *sum_ms = least[all];
  std::vector<std::uint32_t> parts;
  if (!std::isfinite(least[all])) return parts;
  for (std::uint32_t mask = all; mask != 0; mask ^= first_part[mask]) parts.push_back(first_part[mask]);
  return parts;
}

ScatterPlan long_split_path(const Instance& in, const std::vector<std::int64_t>& lengths,
                            Clock::time_point deadline) {
  const int n = in.num_sequences();
  const ScatterCoefficients& c = *in.coefficients;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return in.fastest_ms[x] > in.fastest_ms[y]; });
  const double memory_tokens = in.gpus * c.token_capacity_per_gpu;
  ScatterPlan best;
  for (int count : kLongCounts) {
    if (count >= n) break;
    const std::vector<int> slow(order.begin(), order.begin() + count);
    const std::vector<int> rest(order.begin() + count, order.end());
    double rest_tokens = 0;
    for (int i : rest) rest_tokens += in.tokens[i];
    const int fewest = std::max(1, static_cast<int>(std::ceil(rest_tokens / memory_tokens - 1e-9)));
    // The rest's packing does not depend on how the slow ones are packed.
    std::vector<ScatterPlan> others;
    if (Clock::now() < deadline) others.push_back(pack_items(in, lengths, rest, fewest, kRestOrders));
    // The slow ones under a common cap into 1 to kMostLongMicroBatches
    // micro-batches, and by their least-sum partition. (The common cap was
    // kept on one of FlexSP's batches, examples/scatter/flexsp-wikipedia-
    // gbs512-24.txt step 9, where the partition's three micro-batches ended
    // 1.9 % slower than its two.)
    std::vector<ScatterPlan> firsts;
    for (int m = 1; m <= std::min(count, kMostLongMicroBatches) && Clock::now() < deadline; ++m)
      firsts.push_back(pack_items(in, lengths, slow, m));
    if (count <= kMaxPartitioned && Clock::now() < deadline)
      firsts.push_back(partition_apart(in, lengths, slow, deadline));
    for (const ScatterPlan& first : firsts) {
      if (first.empty()) continue;
      for (const ScatterPlan& other : others) {
        if (other.empty() || first.time_ms + other.time_ms >= best.time_ms) continue;
        ScatterPlan plan = first;
        for (const ScatterMicroBatch& mb : other.micro_batches) plan.micro_batches.push_back(mb);
        finalize_scatter_plan(plan, lengths, c);
        best = std::move(plan);
      }
    }
  }
  return best;
}

}  // namespace parplan::scatter_detail

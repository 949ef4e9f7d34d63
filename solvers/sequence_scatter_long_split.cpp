// The long-split path of sequence scattering: the slowest sequences are
// packed on their own into a few micro-batches and the rest into the
// others. The fast path's common time cap fills the micro-batches of the
// long sequences (64- and 32-GPU groups) up to the cap with short sequences
// that then pay the cross-node all-to-all; packed apart, the long ones share
// their micro-batches with each other and the short ones stay on small
// groups (searching more widely, 0.8 to 2.9 % faster plans on bench steps 0-3).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Counts of slowest sequences set apart, and the most micro-batches they
// get. On the bench's 24 steps, trying 2 to 16 sequences in 1 to 4
// micro-batches with the rest in the fewest micro-batches or one more, the
// winners were 3 to 16 sequences in 1 to 4 micro-batches, the rest always in
// the fewest. Packing the rest costs most; of the sets tried ({6}, {3, 8},
// {4, 10}, {6, 10}, {3, 6, 10}), {4, 10} gained as much as any for the
// least time.
constexpr int kLongCounts[] = {4, 10};
constexpr int kMostLongMicroBatches = 4;
// The rest is packed in one insertion order of pack_items (into any open
// group before a new one): on the bench's 24 steps (with FlexSP's 28 GB
// coefficients and its A100 ones, and without their sequences over 64K or
// over 24K tokens) and the 4 of examples/scatter/long-tail-steps.txt, the
// other order never changed a plan, for 8 % of the step's work
// (instructions, with the budget lifted).
constexpr int kRestOrders = 2;

}  // namespace

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
    for (int m = 1; m <= std::min(count, kMostLongMicroBatches) && Clock::now() < deadline; ++m) {
      const ScatterPlan first = pack_items(in, lengths, slow, m);
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

// Re-batching by load: the plan's groups, kept as they are, sorted by load
// (slowest first) and laid first-fit into micro-batches of G GPUs. A
// micro-batch lasts as long as its slowest group, so groups of like loads
// belong together: for groups of one width, consecutive runs of the sorted
// order minimise the sum of the micro-batches' times. The local search and
// the repacking move sequences, never whole groups between micro-batches, so
// a plan they leave can hold a fast group beside a slow one while a
// micro-batch of fast groups waits elsewhere. On the bench's 24 steps,
// applied to the repacking's result and then while it gains after the local
// search: median gap 3.49 -> 3.29 %, mean 3.51 -> 3.41 %, for about 5 % more
// work per step (the local searches it starts). Applied before the
// repacking as well it lost (mean 3.50 %): the repacking's pairs then start
// from micro-batches of like loads and find less to gain.
#include <algorithm>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

ScatterPlan rebatch_by_load(const Instance& in, const std::vector<std::int64_t>& lengths,
                            const ScatterPlan& plan) {
  std::vector<const ScatterGroup*> groups;
  for (const ScatterMicroBatch& mb : plan.micro_batches)
    for (const ScatterGroup& g : mb.groups) groups.push_back(&g);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const ScatterGroup* a, const ScatterGroup* b) { return a->time_ms > b->time_ms; });
  // Sizes divide each other and G: any set of them summing to at most G lies
  // on aligned rank blocks (finalize_scatter_plan places the largest first).
  ScatterPlan out;
  std::vector<int> used_gpus;
  for (const ScatterGroup* g : groups) {
    size_t m = 0;
    while (m < used_gpus.size() && used_gpus[m] + g->size > in.gpus) ++m;
    if (m == used_gpus.size()) {
      used_gpus.push_back(0);
      out.micro_batches.emplace_back();
    }
    used_gpus[m] += g->size;
    out.micro_batches[m].groups.push_back(*g);
  }
  finalize_scatter_plan(out, lengths, *in.coefficients);
  return out.time_ms < plan.time_ms ? out : plan;
}

}  // namespace parplan::scatter_detail

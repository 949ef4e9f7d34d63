// One long sequence into a larger group of another micro-batch, short
// sequences of that group out into the place it left: a swap of one for
// several that the local search (one move or one-for-one swap at a time)
// cannot make, as a move would overflow the larger group's memory first. On
// a reduced bench step (docs/scatter-exact.md, A's step 0) the optimum runs
// the two longest sequences (49K and 41K tokens) together on 16 GPUs and
// the short ones on two groups of 8, where the solver ran the 41K one alone
// on 8 GPUs and the short ones beside the 49K one. The swap alone is slower
// there (the other micro-batch must be reorganised too), so a swap within
// a few % of gaining goes through the local search and is kept when the
// result is faster; each costs a local search, hence the cap. Off by
// default (ScatterOptions::eject_searches).
#include <algorithm>
#include <cmath>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// Longest sequences tried as the one moved, per pass.
constexpr int kMovedSequences = 16;
// Passes (each applies the first gain found, then starts again).
constexpr int kPasses = 8;
// A swap slower on its own by at most this share of its two micro-batches
// goes through the local search (on the reduced steps of
// docs/scatter-exact.md, 0 changed no plan).
constexpr double kSlack = 0.05;

int size_index(const Instance& in, int size) {
  return static_cast<int>(std::find(in.size.begin(), in.size.end(), size) - in.size.begin());
}

double group_ms(const Instance& in, const ScatterGroup& g) {
  const int j = size_index(in, g.size);
  double t = in.coefficients->fixed_ms;
  for (int i : g.sequences) t += in.work(i, j);
  return t;
}

double group_tokens(const Instance& in, const ScatterGroup& g) {
  double t = 0;
  for (int i : g.sequences) t += in.tokens[i];
  return t;
}

double micro_batch_ms(const Instance& in, const ScatterMicroBatch& mb) {
  double t = 0;
  for (const ScatterGroup& g : mb.groups) t = std::max(t, group_ms(in, g));
  return t;
}

}  // namespace

ScatterPlan eject_search(const Instance& in, const std::vector<std::int64_t>& lengths,
                         const ScatterPlan& plan, int searches, Clock::time_point deadline) {
  ScatterPlan cur = plan;
  const double step_ms = plan.time_ms;
  bool any = false;
  int searches_left = searches;
  for (int pass = 0; pass < kPasses && Clock::now() < deadline; ++pass) {
    // Where each sequence is: (micro-batch, group).
    std::vector<std::pair<int, int>> where(in.num_sequences(), {-1, -1});
    for (size_t m = 0; m < cur.micro_batches.size(); ++m) {
      for (size_t g = 0; g < cur.micro_batches[m].groups.size(); ++g) {
        for (int i : cur.micro_batches[m].groups[g].sequences)
          where[i] = {static_cast<int>(m), static_cast<int>(g)};
      }
    }
    std::vector<int> longest(in.num_sequences());
    for (int i = 0; i < in.num_sequences(); ++i) longest[i] = i;
    const int tried = std::min(in.num_sequences(), kMovedSequences);
    std::partial_sort(longest.begin(), longest.begin() + tried, longest.end(),
                      [&](int x, int y) { return in.tokens[x] > in.tokens[y]; });
    bool improved = false;
    for (int t = 0; t < tried && Clock::now() < deadline; ++t) {
      const int x = longest[t];
      const auto [mx, gx] = where[x];
      const ScatterGroup& from = cur.micro_batches[mx].groups[gx];
      for (size_t ma = 0; ma < cur.micro_batches.size(); ++ma) {
        if (static_cast<int>(ma) == mx) continue;
        bool done = false;
        for (size_t ga = 0; ga < cur.micro_batches[ma].groups.size() && !done; ++ga) {
          const ScatterGroup& to = cur.micro_batches[ma].groups[ga];
          const int j_to = size_index(in, to.size);
          if (to.size <= from.size || !std::isfinite(in.work(x, j_to))) continue;
          // Tokens the larger group must give up, and the room x leaves.
          const double need = group_tokens(in, to) + in.tokens[x] - in.capacity_tokens[j_to];
          if (need <= 0) continue;  // a plain move: the local search's
          double room = in.capacity_tokens[size_index(in, from.size)] - group_tokens(in, from) + in.tokens[x];
          // Out of the larger group, longest first among those that fit the
          // room, until enough tokens have left.
          std::vector<int> others = to.sequences;
          std::sort(others.begin(), others.end(), [&](int a, int b) { return in.tokens[a] > in.tokens[b]; });
          std::vector<int> out, stay;
          double freed = 0;
          for (int i : others) {
            if (freed < need && in.tokens[i] <= room) {
              out.push_back(i);
              freed += in.tokens[i];
              room -= in.tokens[i];
            } else {
              stay.push_back(i);
            }
          }
          if (freed < need) continue;
          ScatterMicroBatch new_a = cur.micro_batches[ma];
          ScatterMicroBatch new_x = cur.micro_batches[mx];
          stay.push_back(x);
          new_a.groups[ga].sequences = stay;
          std::vector<int>& rest = new_x.groups[gx].sequences;
          rest.erase(std::find(rest.begin(), rest.end(), x));
          rest.insert(rest.end(), out.begin(), out.end());
          const double before = cur.micro_batches[ma].time_ms + cur.micro_batches[mx].time_ms;
          const double after = micro_batch_ms(in, new_a) + micro_batch_ms(in, new_x);
          if (!(after < before * (1 + kSlack))) continue;
          if (searches_left-- <= 0) return any && cur.time_ms < plan.time_ms ? cur : plan;
          ScatterPlan trial = cur;
          trial.micro_batches[ma] = std::move(new_a);
          trial.micro_batches[mx] = std::move(new_x);
          finalize_scatter_plan(trial, lengths, *in.coefficients);
          trial = local_search(in, lengths, trial, deadline);
          if (!(trial.time_ms < cur.time_ms - kMinStepGain * step_ms)) continue;
          cur = std::move(trial);
          improved = any = true;
          done = true;
        }
        if (done) break;
      }
      if (improved) break;  // positions changed: recompute them
    }
    if (!improved) break;
  }
  return any && cur.time_ms < plan.time_ms ? cur : plan;
}

}  // namespace parplan::scatter_detail

// The SkipPipe simulator's checkpoint (simulate up to one micro-batch's first
// task once, then resume per candidate path) gives what a run from scratch
// gives, on random networks, paths, releases and cutoffs.
#include <gtest/gtest.h>

#include <random>

#include "cost/skip_pipeline_sim.h"

namespace parplan {
namespace {

TEST(SkipSimCheckpoint, ResumedScoreEqualsAFullRun) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.1, 2);
  SkipSimulator fresh, resumed;
  int compared = 0, cut = 0;
  for (int trial = 0; trial < 150; ++trial) {
    SkipNetwork net;
    net.nodes = 7;
    net.memory = 1 + trial % 3;
    net.backward_factor = 1.5;
    net.loss_factor = 0.25;
    net.task_overhead_s = 0.13 * (trial % 2);
    net.first_forward_overhead_s = trial % 3 == 0 ? 0.09 : -1;
    for (int i = 0; i < net.nodes; ++i) net.forward_s.push_back(u(rng));
    for (int i = 0; i < net.nodes * net.nodes; ++i) net.transfer_s.push_back(u(rng));
    const int path_nodes = 2 + trial % 4;
    auto random_path = [&](int source) {
      std::vector<int> others;
      for (int n = 0; n < net.nodes; ++n)
        if (n != source) others.push_back(n);
      std::shuffle(others.begin(), others.end(), rng);
      std::vector<int> path{source};
      path.insert(path.end(), others.begin(), others.begin() + path_nodes - 1);
      return path;
    };
    std::vector<SkipMicroBatch> mbs;
    for (int m = 0; m < 9; ++m) {
      const int source = m % 3;
      mbs.push_back({source, random_path(source), trial % 2 ? 0.0 : 3 * u(rng)});
    }
    const int m = static_cast<int>(rng() % mbs.size());
    resumed.checkpoint(net, mbs, m);
    for (int variant = 0; variant < 4; ++variant) {
      mbs[m].path = random_path(mbs[m].source);
      const SkipSimScore full = fresh.score(net, mbs);
      const double cutoff_s =
          variant == 3 && !full.deadlock ? 0.8 * full.makespan_s : std::numeric_limits<double>::infinity();
      const SkipSimScore a = fresh.score(net, mbs, cutoff_s);
      const SkipSimScore b = resumed.score_from_checkpoint(net, mbs, cutoff_s);
      ASSERT_EQ(a.deadlock, b.deadlock) << trial;
      ASSERT_EQ(a.cut, b.cut) << trial;
      if (a.cut) {
        EXPECT_GT(b.makespan_s, cutoff_s) << trial;
        ++cut;
        continue;
      }
      if (a.deadlock) continue;
      EXPECT_EQ(a.makespan_s, b.makespan_s) << trial;
      EXPECT_EQ(a.sum_finish_s, b.sum_finish_s) << trial;
      ++compared;
    }
  }
  // The instances exercise both outcomes.
  EXPECT_GT(compared, 200);
  EXPECT_GT(cut, 50);
}

}  // namespace
}  // namespace parplan

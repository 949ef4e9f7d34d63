// skip-paths on large networks and many micro-batches: counting paths for
// the exhaustive check stored every one (23 GB and rising on 1024 nodes),
// and past the deadline each hurried micro-batch was checked for deadlock
// by simulating all before it (minutes for thousands).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "solvers/skip_candidates.h"
#include "solvers/skip_path_search.h"

namespace parplan {
namespace skip_paths_scale {

SkipNetwork uniform_network(int nodes) {
  SkipNetwork net;
  net.nodes = nodes;
  net.memory = 2;
  net.forward_s.assign(nodes, 1.0);
  net.transfer_s.assign(static_cast<std::size_t>(nodes) * nodes, 0.1);
  for (int i = 0; i < nodes; ++i) net.transfer_s[static_cast<std::size_t>(i) * nodes + i] = 0;
  return net;
}

std::vector<std::vector<int>> blocks(const std::vector<int>& sizes) {
  std::vector<std::vector<int>> partition;
  int next = 0;
  for (int size : sizes) {
    partition.emplace_back();
    for (int i = 0; i < size; ++i) partition.back().push_back(next++);
  }
  return partition;
}

TEST(SkipPathsScale, PathsAreCountedUpToTheLimitWithoutStoringThem) {
  // Full pipeline: one node per later stage, so 3 x 4 x 5 paths.
  const SkipNetwork small = uniform_network(13);
  EXPECT_EQ(skip_candidate_count(small, blocks({1, 3, 4, 5}), 0, 4, true, 1000), 3 * 4 * 5);
  EXPECT_EQ(skip_candidate_count(small, blocks({1, 3, 4, 5}), 0, 4, true, 7), 7);
  // 1024 nodes: 127^8 full-pipeline paths; the count stops at its limit.
  const SkipNetwork big = uniform_network(1024);
  EXPECT_EQ(
      skip_candidate_count(big, blocks({8, 127, 127, 127, 127, 127, 127, 127, 127}), 0, 9, true, 100000),
      100000);
}

TEST(SkipPathsScale, PastTheDeadlineEveryPathIsSwapFreeAndTheScheduleRuns) {
  const SkipNetwork net = uniform_network(12);
  PathSearchInput in;
  in.network = &net;
  in.partition = blocks({3, 3, 3, 3});
  in.micro_batches_per_source = 200;
  in.path_length = 3;
  in.capacity.assign(4, 1 << 20);
  for (int src : in.partition[0])
    in.candidates.push_back(skip_candidates(net, in.partition, src, in.path_length, false, 24));
  PathSearchEffort effort;
  effort.deadline_s = -std::numeric_limits<double>::infinity();  // hurried from the first
  SkipSimulator sim;
  const SkipSchedule s = search_paths(in, effort, sim);
  EXPECT_TRUE(s.time_limited);
  ASSERT_EQ(s.micro_batches.size(), 600u);
  for (const SkipMicroBatch& mb : s.micro_batches)
    for (std::size_t i = 1; i < mb.path.size(); ++i) EXPECT_GT(mb.path[i] / 3, mb.path[i - 1] / 3);
  const SkipSimResult replay = sim.run(net, s.micro_batches);
  EXPECT_FALSE(replay.deadlock);
  EXPECT_TRUE(std::isfinite(s.makespan_s));
  EXPECT_DOUBLE_EQ(replay.makespan_s, s.makespan_s);
}

}  // namespace skip_paths_scale
}  // namespace parplan

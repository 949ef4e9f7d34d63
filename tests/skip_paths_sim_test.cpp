// The SkipPipe event simulation against schedules worked out by hand, and its
// invariants (memory, one task per node at a time) on random paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

#include "cost/skip_pipeline_sim.h"
#include "solvers/skip_paths.h"

namespace parplan {
namespace {

// Two nodes, node 0 = stage 0, node 1 = stage 1; forward 1 s, backward 2 s,
// loss 0.5 s, 0.5 s per transfer either way, no task overhead.
SkipNetwork two_stage_network(int memory) {
  SkipNetwork net;
  net.nodes = 2;
  net.forward_s = {1, 1};
  net.transfer_s = {0, 0.5, 0.5, 0};
  net.backward_factor = 2;
  net.loss_factor = 0.5;
  net.memory = memory;
  return net;
}

TEST(SkipPathsSim, TwoStageFullPipelineMatchesHandSchedule) {
  // By hand, memory 2: node 0 F0 [0,1] F1 [1,2]; node 1 F0 [1.5,2.5] F1
  // [2.5,3.5]; node 0 L0 [3,3.5] L1 [4,4.5]; node 1 B0 [4,6] B1 [6,8];
  // node 0 B0 [6.5,8.5] B1 [8.5,10.5].
  const SkipNetwork net = two_stage_network(2);
  const std::vector<SkipMicroBatch> mbs{{0, {0, 1}, 0}, {0, {0, 1}, 0}};
  SkipSimulator sim;
  std::vector<SkipTask> trace;
  const SkipSimResult r = sim.run(net, mbs, &trace);
  EXPECT_DOUBLE_EQ(r.makespan_s, 10.5);
  ASSERT_EQ(trace.size(), 10u);
  const double expected[][3] = {{0, 0, 1},   {0, 1, 2}, {1, 1.5, 2.5}, {1, 2.5, 3.5}, {0, 3, 3.5},
                                {0, 4, 4.5}, {1, 4, 6}, {1, 6, 8},     {0, 6.5, 8.5}, {0, 8.5, 10.5}};
  std::vector<std::array<double, 3>> got;
  for (const SkipTask& t : trace) got.push_back({static_cast<double>(t.node), t.start_s, t.end_s});
  std::sort(got.begin(), got.end(),
            [](const auto& a, const auto& b) { return a[1] < b[1] || (a[1] == b[1] && a[0] < b[0]); });
  for (int i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(got[i][0], expected[i][0]) << i;
    EXPECT_DOUBLE_EQ(got[i][1], expected[i][1]) << i;
    EXPECT_DOUBLE_EQ(got[i][2], expected[i][2]) << i;
  }
}

TEST(SkipPathsSim, MemoryOneMakesTheSecondMicroBatchWaitForTheFirstBackward) {
  // mb 1 may start its forward only when mb 0's backward on node 0 ends at
  // 8.5: F [8.5,9.5], F [10,11], L [11.5,12], B [12.5,14.5], B [15,17].
  const SkipNetwork net = two_stage_network(1);
  SkipSimulator sim;
  const SkipSimResult r = sim.run(net, std::vector<SkipMicroBatch>{{0, {0, 1}, 0}, {0, {0, 1}, 0}});
  EXPECT_DOUBLE_EQ(r.makespan_s, 17);
  EXPECT_EQ(r.peak_memory[0], 1);
  EXPECT_EQ(r.peak_memory[1], 1);
}

TEST(SkipPathsSim, TaskOverheadDelaysTheNextTaskOnTheSameNode) {
  SkipNetwork net = two_stage_network(2);
  net.task_overhead_s = 0.25;
  SkipSimulator sim;
  // One micro-batch meets no overhead on its own chain: 1+.5+1+.5+.5+.5+2+.5+2 = 8.5.
  EXPECT_DOUBLE_EQ(sim.run(net, std::vector<SkipMicroBatch>{{0, {0, 1}, 0}}).makespan_s, 8.5);
  // A release time shifts everything.
  EXPECT_DOUBLE_EQ(sim.run(net, std::vector<SkipMicroBatch>{{0, {0, 1}, 3}}).makespan_s, 11.5);
}

std::vector<SkipTask> node_tasks(const std::vector<SkipTask>& trace, int node) {
  std::vector<SkipTask> out;
  for (const SkipTask& t : trace)
    if (t.node == node) out.push_back(t);
  std::sort(out.begin(), out.end(),
            [](const SkipTask& a, const SkipTask& b) { return a.start_s < b.start_s; });
  return out;
}

TEST(SkipPathsSim, FirstForwardOverheadFollowsOnlyTheFirstForward) {
  // com_sym.py idles 0.09 s after an injected micro-batch's first forward and
  // 0.13 s after any other task; here 0.1 s and 0.25 s. Node 0: F0 [0,1],
  // F1 [1.1,2.1]; node 1: F0 [1.5,2.5], F1 [2.75,3.75] (0.25 s after F0).
  SkipNetwork net = two_stage_network(2);
  net.task_overhead_s = 0.25;
  net.first_forward_overhead_s = 0.1;
  SkipSimulator sim;
  std::vector<SkipTask> trace;
  sim.run(net, std::vector<SkipMicroBatch>{{0, {0, 1}, 0}, {0, {0, 1}, 0}}, &trace);
  const auto n0 = node_tasks(trace, 0), n1 = node_tasks(trace, 1);
  EXPECT_DOUBLE_EQ(n0[1].start_s, 1.1);
  EXPECT_DOUBLE_EQ(n1[1].start_s, 2.75);
}

TEST(SkipPathsSim, AnInjectedMicroBatchYieldsToAWaitingLoss) {
  // com_sym.py gives injected micro-batches tm_receive = 10000, so once both
  // wait for a busy node the returning task goes first. Loss 2 s, memory 3:
  // node 0 F0 [0,1], F1 [1,2]; node 1 F0 [1.5,2.5], F1 [2.5,3.5]; node 0
  // L0 [3,5] while mb 2 (released 3.2) and L1 (arrived 4) wait: L1 [5,7],
  // then F2 [7,8], though mb 2 arrived first.
  SkipNetwork net = two_stage_network(3);
  net.loss_factor = 2;
  SkipSimulator sim;
  std::vector<SkipTask> trace;
  sim.run(net, std::vector<SkipMicroBatch>{{0, {0, 1}, 0}, {0, {0, 1}, 0}, {0, {0, 1}, 3.2}}, &trace);
  const auto n0 = node_tasks(trace, 0);
  ASSERT_GE(n0.size(), 5u);
  EXPECT_EQ(n0[2].micro_batch, 0);
  EXPECT_EQ(n0[2].kind, SkipTaskKind::kLoss);
  EXPECT_EQ(n0[3].micro_batch, 1);
  EXPECT_EQ(n0[3].kind, SkipTaskKind::kLoss);
  EXPECT_DOUBLE_EQ(n0[3].start_s, 5);
  EXPECT_EQ(n0[4].micro_batch, 2);
  EXPECT_EQ(n0[4].kind, SkipTaskKind::kForward);
  EXPECT_DOUBLE_EQ(n0[4].start_s, 7);
}

TEST(SkipPathsSim, BlockedInjectedMicroBatchesGoInTheOrderOfTheirPollingPhase) {
  // Memory 1 on node 0. mb 0 (released 0) holds the slot until its backward
  // on node 0 ends at 8.5. mb 1 (released 1.06) and mb 2 (released 2.03)
  // wait; com_sym.py raises their ready times 0.1 s per pass, so in every
  // later second they read u + 0.06 and u + 0.03: mb 2 sorts first and goes
  // first when the slot frees, though it was released later.
  const SkipNetwork net = two_stage_network(1);
  SkipSimulator sim;
  std::vector<SkipTask> trace;
  sim.run(net, std::vector<SkipMicroBatch>{{0, {0, 1}, 0}, {0, {0, 1}, 1.06}, {0, {0, 1}, 2.03}}, &trace);
  const auto n0 = node_tasks(trace, 0);
  ASSERT_GE(n0.size(), 4u);
  EXPECT_EQ(n0[3].micro_batch, 2);
  EXPECT_DOUBLE_EQ(n0[3].start_s, 8.5);
}

TEST(SkipPathsSim, RandomPathsNeverExceedMemoryNorOverlapOnANode) {
  std::mt19937 rng(7);
  SkipSimulator sim;
  for (int trial = 0; trial < 200; ++trial) {
    SkipNetwork net;
    net.nodes = 6;
    net.memory = 1 + trial % 3;
    net.backward_factor = 1.5;
    net.loss_factor = 0.25;
    net.task_overhead_s = 0.1 * (trial % 2);
    std::uniform_real_distribution<double> u(0.1, 2);
    for (int i = 0; i < net.nodes; ++i) net.forward_s.push_back(u(rng));
    for (int i = 0; i < net.nodes * net.nodes; ++i) net.transfer_s.push_back(u(rng));
    std::vector<SkipMicroBatch> mbs;
    for (int m = 0; m < 8; ++m) {
      std::vector<int> nodes{0, 1, 2, 3, 4, 5};
      std::shuffle(nodes.begin(), nodes.end(), rng);
      nodes.resize(2 + m % 4);
      mbs.push_back({nodes[0], nodes, 0});
    }
    std::vector<SkipTask> trace;
    const SkipSimResult r = sim.run(net, mbs, &trace);
    if (r.deadlock) continue;
    for (int n = 0; n < net.nodes; ++n) EXPECT_LE(r.peak_memory[n], net.memory);
    // Replay the trace: memory held per node, and no two tasks of a node overlap.
    std::vector<int> held(net.nodes, 0);
    std::vector<double> last_end(net.nodes, -1);
    std::vector<SkipTask> by_start = trace;
    std::stable_sort(by_start.begin(), by_start.end(),
                     [](const SkipTask& a, const SkipTask& b) { return a.start_s < b.start_s; });
    for (const SkipTask& t : by_start) {
      EXPECT_GE(t.start_s, last_end[t.node] + net.task_overhead_s - 1e-9);
      last_end[t.node] = t.end_s;
      if (t.kind == SkipTaskKind::kForward) {
        EXPECT_LE(++held[t.node], net.memory);
      }
      if (t.kind == SkipTaskKind::kBackward) --held[t.node];
    }
    EXPECT_EQ(trace.size(), [&] {
      std::size_t n = 0;
      for (const auto& mb : mbs) n += 2 * mb.path.size() + 1;
      return n;
    }());
  }
}

TEST(SkipPathsSim, FullPipelineBaselineOfTheSolverMatchesTheHandSchedule) {
  SkipProblem p;
  p.network = two_stage_network(2);
  p.stage_sizes = {1, 1};
  p.path_length = 2;
  p.micro_batches_per_source = 2;
  const SkipSolveResult r = solve_skip_paths(p, SkipSolveOptions{});
  EXPECT_DOUBLE_EQ(r.full_pipeline.makespan_s, 10.5);
  // Two stages: skipping nothing is the only path, so the schedules agree, and
  // 10.5 is optimal: the second backward on node 0 follows a full idle round
  // trip of 8.5 s and the first backward (2 s).
  EXPECT_DOUBLE_EQ(r.schedule.makespan_s, 10.5);
  EXPECT_DOUBLE_EQ(r.lower_bound_s, 8.5);
}

}  // namespace
}  // namespace parplan

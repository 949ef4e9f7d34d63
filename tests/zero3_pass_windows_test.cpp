// ZeRO-3 / FSDP traffic hides inside the pass that issues it: the forward's
// weight gathers (prefetched one unit ahead) only behind the forward, the
// backward's gathers and reduce-scatters only behind the backward
// (cost/data_parallel_cost.cpp). A long backward cannot hide a forward
// gather that outlasts the forward.
#include <gtest/gtest.h>

#include "cost/step_internal.h"
#include "src/io/cluster_loader.h"

namespace parplan {
namespace zero3_pass_windows_test {

// The exposed data-parallel time of one micro-batch of a ZeRO-3 stage of
// 1e9 parameters over 64 ranks of eight DGX H100 nodes, behind `forward_s`
// of forward and `backward_s` of backward compute.
double exposed_s(double forward_s, double backward_s) {
  static const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  ParallelConfig c;
  c.dp = 64;
  c.zero = 3;
  c.gbs = 64;
  detail::StageTime window;
  window.forward_s = forward_s;
  window.backward_last_s = backward_s;
  window.compute_s = forward_s + backward_s;
  return detail::dp_cost(cluster, job, c, 1e9, window, 1, 0, nullptr).exposed_s;
}

double hidden_share() {
  const double s = load_cluster("dgx-h100").device.overlap_compute_slowdown;
  return s / (1 + s);
}

TEST(Zero3PassWindows, EveryByteHiddenWhenBothPassesOutlastTheirTraffic) {
  // Hidden traffic costs only the compute it slows (cost/overlap.h).
  EXPECT_NEAR(exposed_s(100, 200), exposed_s(0, 0) * hidden_share(), 1e-12);
}

TEST(Zero3PassWindows, ALongPassDoesNotHideTheOtherPassesTraffic) {
  const double all = exposed_s(0, 0);
  const double hidden = all * hidden_share();
  // A backward of 1000 s leaves the forward's gathers (a quarter of the
  // bytes: 2 of 2 + 2 + 4 per parameter) exposed; a forward of 1000 s the
  // backward's gathers and reduce-scatters.
  const double forward_only_hidden = exposed_s(1000, 0);
  const double backward_only_hidden = exposed_s(0, 1000);
  EXPECT_GT(backward_only_hidden, hidden + 0.5 * (all - hidden) * 0.25);
  EXPECT_GT(forward_only_hidden, hidden + 0.5 * (all - hidden) * 0.75);
  EXPECT_GT(forward_only_hidden, backward_only_hidden);
  // Each pass's traffic, exposed or hidden, adds up to the whole: the
  // exposure with one pass open plus the other's equals none open plus all
  // hidden.
  EXPECT_NEAR(forward_only_hidden + backward_only_hidden, all + hidden, 1e-12 + 1e-9 * all);
}

}  // namespace zero3_pass_windows_test
}  // namespace parplan

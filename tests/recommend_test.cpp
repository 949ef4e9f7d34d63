// The recommended plan: within min(error band, 2 %) of the optimum, it
// prefers exact collectives, then free memory, then fewer node-crossing
// groups; outside the band the optimum stands.
#include "src/plan/recommend.h"

#include <gtest/gtest.h>

#include "src/io/cluster_loader.h"

namespace parplan {
namespace {

RankedConfig ranked(double step_s, double peak_fraction, bool lossy = false, int tp = 8) {
  RankedConfig r;
  r.config.tp = tp;
  r.config.dp = 8;
  r.config.qwz = lossy;
  r.cost.time.step_s = step_s;
  r.cost.memory.capacity_bytes = 80e9;
  r.cost.memory.peak_bytes = peak_fraction * 80e9;
  return r;
}

TEST(Recommend, PrefersExactCollectivesAndHeadroomWithinTheBand) {
  ClusterSpec cluster = load_cluster("dgx-h100");
  cluster.calibration = ProfileCalibration{};  // uncalibrated: the 2 % band
  const std::vector<RankedConfig> plans = {ranked(1.000, 0.99, true), ranked(1.010, 0.95),
                                           ranked(1.015, 0.80), ranked(1.030, 0.50)};
  const Recommendation r = recommend_plan(cluster, plans);
  EXPECT_DOUBLE_EQ(r.band, kMaxRecommendBand);
  EXPECT_EQ(r.index, 2);  // 1.03 s is outside 2 %; 0.80 leaves the most free
  EXPECT_NE(r.reason.find("exact collectives"), std::string::npos) << r.reason;
}

TEST(Recommend, TheCalibratedErrorNarrowsTheBand) {
  ClusterSpec cluster = load_cluster("dgx-h100");
  cluster.calibration.mean_step_error = 0.005;
  const std::vector<RankedConfig> plans = {ranked(1.000, 0.97), ranked(1.010, 0.50)};
  const Recommendation r = recommend_plan(cluster, plans);
  EXPECT_DOUBLE_EQ(r.band, 0.005);
  EXPECT_EQ(r.index, 0);
  EXPECT_TRUE(r.reason.empty());
}

TEST(Recommend, FewerGroupsCrossingNodesBreakEqualHeadroom) {
  ClusterSpec cluster = load_cluster("dgx-h100");
  cluster.calibration = ProfileCalibration{};
  // dp 8 after tp 8 crosses nodes; tp 1 keeps dp 8 inside a node.
  EXPECT_EQ(groups_crossing_nodes(cluster, ranked(1, 0.5, false, 8).config), 1);
  EXPECT_EQ(groups_crossing_nodes(cluster, ranked(1, 0.5, false, 1).config), 0);
  const std::vector<RankedConfig> plans = {ranked(1.000, 0.905, false, 8), ranked(1.005, 0.902, false, 1)};
  EXPECT_EQ(recommend_plan(cluster, plans).index, 1);
}

}  // namespace
}  // namespace parplan

// Property: better hardware never makes the best plan slower. On random jobs
// (seeded) over every shipped profile, raising one tier's bandwidth, lowering
// its latency or adding HBM leaves the optimum's predicted step time equal
// or lower; and Holmes' three network set-ups order as their links do
// (all InfiniBand <= mixed InfiniBand/RoCE <= all Ethernet).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "tests/property_support.h"
#include "tests/sanitized_trials.h"

namespace parplan {
namespace {

using property::optimum_s;
using property::random_jobs;

std::string describe(const property::RandomJob& r) {
  std::ostringstream out;
  out << r.model << " on " << r.job.gpus << " GPUs, gbs " << r.job.gbs << ", seq " << r.job.seq;
  return out.str();
}

// Equal up to rounding: the same plan re-costed may differ in the last bits.
bool not_slower(double better_s, double base_s) { return better_s <= base_s * (1 + 1e-9); }

/// Every network link of the cluster, as pointers a perturbation can change.
std::vector<NetworkTier*> links(ClusterSpec& cluster) {
  std::vector<NetworkTier*> out;
  for (NetworkTier& tier : cluster.tiers) out.push_back(&tier);
  for (NodeGroup& group : cluster.groups) out.push_back(&group.fabric);
  if (cluster.heterogeneous()) out.push_back(&cluster.inter_group);
  return out;
}

constexpr int kJobsPerProfile = 3;

TEST(PropertyMonotonic, BetterLinksOrMoreMemoryNeverSlowTheOptimum) {
  unsigned seed = 20261123;
  for (const std::string& profile : catalog_names("hardware-profiles")) {
    const ClusterSpec cluster = load_cluster(profile);
    for (const property::RandomJob& r : random_jobs(cluster, kJobsPerProfile / test::kTrialStride, seed++)) {
      const ModelSpec model = load_model(r.model);
      const double base_s = optimum_s(model, cluster, r.job);
      const std::string what = profile + ": " + describe(r);
      ClusterSpec more_hbm = cluster;
      more_hbm.device.hbm_bytes *= 1.5;
      if (more_hbm.device.hbm_usable_bytes > 0) more_hbm.device.hbm_usable_bytes *= 1.5;
      EXPECT_TRUE(not_slower(optimum_s(model, more_hbm, r.job), base_s)) << what << ": 1.5x HBM";
      if (!std::isfinite(base_s)) continue;  // no plan: faster links cannot make it fit
      ClusterSpec probe = cluster;
      const std::size_t link_count = links(probe).size();
      for (std::size_t i = 0; i < link_count; ++i) {
        ClusterSpec faster = cluster;
        NetworkTier& link = *links(faster)[i];
        link.bandwidth_bytes_per_s *= 2;
        EXPECT_TRUE(not_slower(optimum_s(model, faster, r.job), base_s))
            << what << ": 2x bandwidth on " << link.name;
        ClusterSpec quicker = cluster;
        NetworkTier& hop = *links(quicker)[i];
        hop.latency_s /= 2;
        EXPECT_TRUE(not_slower(optimum_s(model, quicker, r.job), base_s))
            << what << ": half the latency on " << hop.name;
      }
    }
  }
}

TEST(PropertyMonotonic, HolmesInfiniBandNotSlowerThanMixedNotSlowerThanEthernet) {
  const ClusterSpec ib = load_cluster("holmes-ib");
  const ClusterSpec mixed = load_cluster("holmes-mixed");
  const ClusterSpec ethernet = load_cluster("holmes-ethernet");
  std::vector<property::RandomJob> jobs = random_jobs(mixed, 12, 7);
  // The whole cluster: the case where the mixed set-up must span both groups.
  property::RandomJob full;
  full.model = "gpt-7.5b";
  full.job.gpus = 64;
  full.job.gbs = 512;
  full.job.seq = 2048;
  jobs.push_back(full);
  for (const property::RandomJob& r : jobs) {
    const ModelSpec model = load_model(r.model);
    const double ib_s = optimum_s(model, ib, r.job);
    const double mixed_s = optimum_s(model, mixed, r.job);
    const double ethernet_s = optimum_s(model, ethernet, r.job);
    EXPECT_TRUE(not_slower(ib_s, mixed_s))
        << describe(r) << ": ib " << ib_s << " s, mixed " << mixed_s << " s";
    EXPECT_TRUE(not_slower(mixed_s, ethernet_s))
        << describe(r) << ": mixed " << mixed_s << " s, ethernet " << ethernet_s << " s";
  }
}

}  // namespace
}  // namespace parplan

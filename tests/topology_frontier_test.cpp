// ZeRO++ and hierarchical (low-bandwidth) partitioning on Frontier: the
// formulas of formulas.md ("ZeRO++") and the ordering and speed-up the
// Frontier paper reports (Xu et al. 2025: 1.71x TFLOP/s per GCD over ZeRO++
// for a 20B GPT on up to 384 GCDs).
#include <gtest/gtest.h>

#include "cost/parameters.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/plan/planner.h"
#include "src/search/search.h"
#include "tests/model_on_cluster.h"

namespace parplan {
namespace {

// The 20B GPT (NeoX-20B shape) on 48 Frontier nodes, pure sharded data
// parallelism, one 1024-token sequence per GCD per step: the low-tokens-per-GCD
// regime ZeRO++ and the Frontier paper target.
struct Frontier20b : test::ModelOnCluster {
  // The shipped (calibrated) profile: its fitted GEMM ceiling and per-layer
  // overhead come from dense runs; what it can claim for this paper is below
  // (the ratio it misses is in docs/calibrate.md). `config` is the plain
  // ZeRO-3 split the partitioned ones start from.
  Frontier20b() : ModelOnCluster("gpt-20b", "frontier", 384, 384, 1024) {
    config.tp = config.pp = config.cp = 1;
    config.dp = 384;
    config.mbs = 1;
    config.gbs = job.gbs;
    config.zero = 3;
    config.flash_attention = cluster.default_flash_attention;
  }
  ParallelConfig zeropp() const {
    ParallelConfig c = config;
    apply_zeropp(cluster, c);
    return c;
  }
  ParallelConfig hierarchical() const {
    ParallelConfig c = config;
    EXPECT_TRUE(apply_best_hierarchical_partition(model, cluster, job, c));
    return c;
  }
  double outer_bytes(const CostReport& cost) const { return cost.dp_traffic.bytes[cluster.tiers.size() - 1]; }
};

TEST(TopologyFrontier, ZeroPlusPlusIsHpzOverANodeWithQuantizedCollectives) {
  const Frontier20b f;
  const ParallelConfig c = f.zeropp();
  EXPECT_EQ(c.zero, 3);
  EXPECT_EQ(c.hpz_ranks, 8);  // the 8 GCDs of a node
  EXPECT_TRUE(c.qwz && c.qgz && c.zeropp());
  EXPECT_EQ(config_problem(f.model, f.job, c), nullptr);
}

TEST(TopologyFrontier, HpzCostsMOverKMoreMemory) {
  // formulas.md: hpZ keeps a secondary shard of the weights inside k devices,
  // M/k more memory per device (M = 16-bit model bytes).
  const Frontier20b f;
  ParallelConfig flat = f.config;
  ParallelConfig hpz = f.config;
  hpz.hpz_ranks = 8;
  const double m_bytes = 2.0 * total_params(f.model, f.job.seq);
  const MemoryBreakdown a = estimate_memory(f.model, f.cluster, f.job, flat);
  const MemoryBreakdown b = estimate_memory(f.model, f.cluster, f.job, hpz);
  EXPECT_NEAR(b.params_bytes - a.params_bytes, m_bytes / 8, 1e-6 * m_bytes);
  EXPECT_NEAR(b.params_secondary_bytes, m_bytes / 8, 1e-6 * m_bytes);
}

TEST(TopologyFrontier, CrossNodeVolumeIs3MForZero3And075MForZeroPlusPlus) {
  // formulas.md, ZeRO++ table: per micro-batch, ZeRO-3 moves 3M across nodes
  // (fwd gather, bwd gather, gradient reduce), ZeRO++ 0.75M (0.5M int8
  // gather, 0 with hpZ, 0.25M int4 gradients): a ratio of 4.
  const Frontier20b f;
  const CostReport zero3 = estimate_cost(f.model, f.cluster, f.job, f.config);
  const CostReport zpp = estimate_cost(f.model, f.cluster, f.job, f.zeropp());
  ASSERT_GT(f.outer_bytes(zpp), 0);
  EXPECT_NEAR(f.outer_bytes(zero3) / f.outer_bytes(zpp), 3.0 / 0.75, 1e-9);
  // And per GCD: 3M (47/48) / 8 for ZeRO-3's hierarchical collectives.
  const double m_bytes = 2.0 * total_params(f.model, f.job.seq);
  EXPECT_NEAR(f.outer_bytes(zero3), 3.0 * m_bytes * (47.0 / 48.0) / 8.0, 1e-6 * m_bytes);
}

TEST(TopologyFrontier, HierarchicalKeepsPerMicroBatchTrafficInsideTheNode) {
  const Frontier20b f;
  const ParallelConfig h = f.hierarchical();
  ASSERT_TRUE(h.hierarchical_partition);
  const CostReport hc = estimate_cost(f.model, f.cluster, f.job, h);
  const CostReport zpp = estimate_cost(f.model, f.cluster, f.job, f.zeropp());
  EXPECT_LT(f.outer_bytes(hc), f.outer_bytes(zpp));
  EXPECT_TRUE(hc.memory.fits);
  // The partitions held closer to the GCD cost memory (the paper's model-size limit).
  EXPECT_GT(hc.memory.params_bytes + hc.memory.optimizer_bytes,
            zpp.memory.params_bytes + zpp.memory.optimizer_bytes);
}

// What the calibrated profile can claim of Xu et al. 2025: the order of the
// three schemes, and that hierarchical partitioning leaves less exposed
// data-parallel time than ZeRO++, which leaves less than ZeRO-3. It does NOT
// reproduce the paper's 1.71x over ZeRO++ on 384 GCDs: with the fitted
// per-layer overhead, compute dominates ZeRO++'s exposed traffic and the
// predicted ratio is about 1.06 (docs/calibrate.md, "Known misses").
TEST(TopologyFrontier, TflopsRiseFromZero3ToZeroPlusPlusToHierarchical) {
  const Frontier20b f;
  const CostReport zero3 = estimate_cost(f.model, f.cluster, f.job, f.config);
  const CostReport zpp = estimate_cost(f.model, f.cluster, f.job, f.zeropp());
  const CostReport hier = estimate_cost(f.model, f.cluster, f.job, f.hierarchical());
  EXPECT_LT(zero3.throughput.model_tflops_per_gpu, zpp.throughput.model_tflops_per_gpu);
  EXPECT_LT(zpp.throughput.model_tflops_per_gpu, hier.throughput.model_tflops_per_gpu);
  EXPECT_GT(zero3.time.dp_comm_s, zpp.time.dp_comm_s);
  EXPECT_GT(zpp.time.dp_comm_s, hier.time.dp_comm_s);
  // The same compute in all three: the schemes differ only in traffic.
  EXPECT_DOUBLE_EQ(zero3.time.compute_s, hier.time.compute_s);
}

TEST(TopologyFrontier, PlannerPicksHierarchicalPartitioningForPureShardedDataParallelism) {
  Frontier20b f;
  f.job.pins.tp = 1;
  f.job.pins.pp = 1;
  // The scheme is unreleased and quantizes: only when both are allowed.
  PlannerOptions allowed;
  allowed.allow_unreleased = allowed.allow_lossy_comm = true;
  const PlannerResult result = plan_job(f.model, f.cluster, f.job, allowed);
  ASSERT_FALSE(result.ranked.empty());
  const ParallelConfig& best = result.ranked.front().config;
  EXPECT_TRUE(best.hierarchical_partition);
  // By default the planner keeps to released schemes and exact collectives.
  const PlannerResult released = plan_job(f.model, f.cluster, f.job, PlannerOptions{});
  ASSERT_FALSE(released.ranked.empty());
  EXPECT_FALSE(released.ranked.front().config.hierarchical_partition);
  EXPECT_FALSE(released.ranked.front().config.qwz || released.ranked.front().config.qgz);
  EXPECT_EQ(best.zero, 3);
  // The plan says why: a note naming the speed-up over ZeRO++.
  ASSERT_FALSE(result.notes.empty());
  EXPECT_NE(result.notes.front().find("over ZeRO++"), std::string::npos);
}

TEST(TopologyFrontier, PinningZeroPlusPlusOrHierarchicalIsHonoured) {
  Frontier20b f;
  f.job.pins.tp = 1;
  f.job.pins.pp = 1;
  f.job.pins.zeropp = true;
  SearchResult zpp = search_configs(f.model, f.cluster, f.job, SearchOptions{});
  ASSERT_FALSE(zpp.best.empty());
  for (const auto& r : zpp.best) EXPECT_TRUE(r.config.zeropp());
  f.job.pins.zeropp.reset();
  f.job.pins.hierarchical_partition = false;
  SearchResult no_hier = search_configs(f.model, f.cluster, f.job, SearchOptions{});
  for (const auto& r : no_hier.best) EXPECT_FALSE(r.config.hierarchical_partition);
}

TEST(TopologyFrontier, PlacementLevelsMapToPackageNodeAndJob) {
  const Frontier20b f;
  EXPECT_EQ(partition_ranks(f.cluster, f.config, PartitionLevel::kPackage), 2);
  EXPECT_EQ(partition_ranks(f.cluster, f.config, PartitionLevel::kNode), 8);
  EXPECT_EQ(partition_ranks(f.cluster, f.config, PartitionLevel::kJob), 384);
  ParallelConfig bad = f.config;
  bad.hierarchical_partition = true;
  bad.partition = {PartitionLevel::kPackage, PartitionLevel::kNode, PartitionLevel::kNode,
                   PartitionLevel::kJob};
  EXPECT_NE(config_problem(f.model, f.job, bad), nullptr);  // secondary outside the primary
}

}  // namespace
}  // namespace parplan

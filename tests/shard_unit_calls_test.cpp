// ZeRO-3's collective calls per engine: DeepSpeed one per bucket
// (stage3_prefetch_bucket_size 5e7, reduce_bucket_size 5e8 elements), FSDP
// (torchtitan's FSDP2, Megatron FSDP) one per unit: each layer, the
// embedding, the norm + output. On ring collectives every call walks the
// ring, (n - 1) step latencies (cost/collectives.h).
#include <gtest/gtest.h>

#include <cmath>

#include "cost/collectives.h"
#include "cost/parameters.h"
#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

// Pure data parallelism over `gpus` ranks, ZeRO-3, one sequence per rank
// (one micro-batch), nothing overlapped: the calls add up as they are.
struct DataParallelCase {
  JobSpec job;
  ParallelConfig c;
};
DataParallelCase data_parallel_case(int gpus, int seq) {
  DataParallelCase d;
  d.job.gpus = gpus, d.job.gbs = gpus, d.job.seq = seq;
  d.c.tp = 1, d.c.pp = 1, d.c.dp = gpus, d.c.mbs = 1, d.c.gbs = gpus, d.c.zero = 3;
  d.c.overlap_grad_reduce = false;
  return d;
}

TEST(ShardUnitCalls, EachCallPaysTheRingLatency) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec frontier = load_cluster("frontier");
  ASSERT_TRUE(frontier.ring_collectives);
  auto [job, c] = data_parallel_case(1024, 2048);
  ASSERT_EQ(config_problem(model, job, c), nullptr);
  const double buckets_s = estimate_cost(model, frontier, job, c).time.dp_comm_s;
  job.shard_unit = ShardUnit::kLayer;
  const double units_s = estimate_cost(model, frontier, job, c).time.dp_comm_s;
  // One micro-batch: a forward gather, a backward gather and a reduction.
  const double params = total_params(model, job.seq);
  const double bucket_calls = 2.0 * std::ceil(params / 5e7) + std::ceil(params / 5e8);
  const double unit_calls = 3.0 * (model.layers + 2);
  const double latency_s = ring_latency_s(frontier, group_span_at(frontier, 1024, 1, 0));
  EXPECT_NEAR(units_s - buckets_s, (unit_calls - bucket_calls) * latency_s, 1e-9);
  // Without ring collectives the count does not matter.
  ClusterSpec h100 = load_cluster("dgx-h100");
  h100.ring_collectives = false;
  job.shard_unit = ShardUnit::kBuckets;
  const double h100_buckets_s = estimate_cost(model, h100, job, c).time.dp_comm_s;
  job.shard_unit = ShardUnit::kLayer;
  EXPECT_DOUBLE_EQ(estimate_cost(model, h100, job, c).time.dp_comm_s, h100_buckets_s);
}

// FSDP's ZeRO-2 (FSDP2 reshard_after_forward False, FSDP1 SHARD_GRAD_OP)
// issues its collectives per unit too: it is ZeRO-3 without the backward's
// gather (the same reduction, with 16-bit gradients on both), and it
// reshards after each backward that reduces, so every micro-batch gathers
// again (torchtitan: a reduction per micro-batch without a pipeline).
TEST(ShardUnitCalls, FsdpZero2IsZero3WithoutTheBackwardGather) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec frontier = load_cluster("frontier");
  auto [job, c] = data_parallel_case(1024, 2048);
  job.shard_unit = ShardUnit::kLayer;
  job.grad_reduce = GradReduceDtype::kBf16;
  job.grad_sync = GradSyncSchedule::kEveryMicroBatch;
  ASSERT_EQ(config_problem(model, job, c), nullptr);
  const double zero3_s = estimate_cost(model, frontier, job, c).time.dp_comm_s;
  c.zero = 2;
  ASSERT_EQ(config_problem(model, job, c), nullptr);
  const double zero2_s = estimate_cost(model, frontier, job, c).time.dp_comm_s;
  const double params = total_params(model, job.seq);
  const double backward_gather_s = bucketed_all_gather_s(frontier, group_span_at(frontier, 1024, 1, 0),
                                                         2.0 * params, model.layers + 2, nullptr, 1);
  // (within 1e-5: the stage's parameter count differs from the model's
  // total by a few thousand, where one call's ring latency is 1e-2 of it)
  EXPECT_NEAR(zero3_s - zero2_s, backward_gather_s, 1e-5 * zero3_s);
  // Four micro-batches: four gathers and four reductions.
  job.gbs = 4096;
  c.gbs = 4096;
  ASSERT_EQ(config_problem(model, job, c), nullptr);
  EXPECT_NEAR(estimate_cost(model, frontier, job, c).time.dp_comm_s, 4.0 * zero2_s, 1e-9 * zero2_s);
}

// FSDP cannot hide the first unit's gather ("The 1st all-gather will not be
// able to overlap with anything", PyTorch's FSDP notes) nor the last unit's
// reduction, which the end of the backward waits for; on the first stage
// that unit is the embedding. The rest overlaps the micro-batch's compute.
TEST(ShardUnitCalls, FsdpExposesTheEmbeddingUnitsExchanges) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec h100 = load_cluster("dgx-h100");
  auto [job, c] = data_parallel_case(128, 8192);
  job.shard_unit = ShardUnit::kLayer;
  ASSERT_EQ(config_problem(model, job, c), nullptr);
  const double all_s = estimate_cost(model, h100, job, c).time.dp_comm_s;
  c.overlap_grad_reduce = true;
  const auto overlapped = estimate_cost(model, h100, job, c);
  // 16-bit weights gathered, 16-bit gradients reduced: one call each.
  const double embedding_bytes = 2.0 * embedding_params(model, job.seq);
  const GroupSpan span = group_span_at(h100, 128, 1, 0);
  const double edge_s = 2.0 * bucketed_all_gather_s(h100, span, embedding_bytes, 1, nullptr, 1);
  const double s = h100.device.overlap_compute_slowdown;
  ASSERT_LT(all_s - edge_s, overlapped.time.compute_s);  // the rest fits in the compute
  EXPECT_NEAR(overlapped.time.dp_comm_s, edge_s + (all_s - edge_s) * s / (1.0 + s), 1e-9 * all_s);
}

TEST(ShardUnitCalls, AreTheEnginesRecipe) {
  EXPECT_EQ(engine_recipe_defaults(parse_engine_selection("torchtitan")).shard_unit, ShardUnit::kLayer);
  EXPECT_EQ(engine_recipe_defaults(parse_engine_selection("megatron")).shard_unit, ShardUnit::kLayer);
  EXPECT_EQ(engine_recipe_defaults(parse_engine_selection("deepspeed")).shard_unit, ShardUnit::kBuckets);
  EXPECT_EQ(engine_recipe_defaults(parse_engine_selection("any")).shard_unit, ShardUnit::kBuckets);
}

}  // namespace
}  // namespace parplan

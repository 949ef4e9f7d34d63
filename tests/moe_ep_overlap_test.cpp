// Megatron's overlapped expert all-to-all (--overlap-moe-expert-parallel-comm):
// one micro-batch's forward beside another's backward in four phases
// (TransformerLayerSchedulePlan.run, model_chunk_schedule_plan.py), each
// exchange beside one compute part, and the passes the schedule runs alone
// (schedules.py get_pp_rank_microbatches: one extra warm-up forward under the
// overlap; combined_1f1b_schedule_for_no_pipelining).
#include <gtest/gtest.h>

#include "cost/moe_dispatch.h"
#include "cost/overlap.h"
#include "src/io/cluster_loader.h"
#include "tests/model_on_cluster.h"
#include "tests/moe_test_models.h"

namespace parplan {
namespace {

struct EpOverlapSetup : test::ModelOnCluster {
  EpOverlapSetup() : ModelOnCluster(moe_test::small_experts(), "dgx-h100", 0, 0, 4096) {
    job.moe_imbalance = 1.0;
    job.precision = Precision::kBf16;
    config.ep = 32;  // four nodes of eight: a flat all-to-all over InfiniBand
    config.dp = 32;
    config.gbs = 1024;
  }
  EpLayerComm comm(bool overlap, const MoeLayerCompute& compute) {
    config.ep_overlap = overlap;
    return moe_layer_comm(model, cluster, job, config, compute, 0);
  }
};

// With every exchange shorter than its partner each costs only the
// slowdown of the compute beside it (cost/overlap.h), the same in
// whichever phase it runs.
TEST(EpOverlapPhases, ExchangesWithinTheirPartnersCostOnlyTheSlowdown) {
  EpOverlapSetup s;
  const EpLayerComm alone = s.comm(false, {});
  ASSERT_GT(alone.forward_s, 0);
  MoeLayerCompute compute;
  compute.attention_forward_s = compute.attention_backward_s = 10.0 * alone.forward_s;
  compute.experts_forward_s = compute.experts_backward_s = 10.0 * alone.forward_s;
  const EpLayerComm paired = s.comm(true, compute);
  const double sl = s.cluster.device.overlap_compute_slowdown;
  EXPECT_NEAR(paired.forward_s, alone.forward_s * sl / (1.0 + sl), 1e-12);
  EXPECT_NEAR(paired.backward_s, alone.backward_s * sl / (1.0 + sl), 1e-12);
}

// A phase lasts as long as the longer of its two parts: compute idle in
// another phase cannot hide an exchange. The forward dispatch runs beside
// the expert backward only; with that backward near zero the dispatch is
// exposed whole, however long the attention backward.
TEST(EpOverlapPhases, AnExchangeLongerThanItsPartnerIsExposedByTheDifference) {
  EpOverlapSetup s;
  const EpLayerComm alone = s.comm(false, {});
  MoeLayerCompute compute;
  compute.attention_forward_s = compute.attention_backward_s = 100.0 * alone.forward_s;
  compute.experts_forward_s = compute.experts_backward_s = 0.0;
  const EpLayerComm paired = s.comm(true, compute);
  // Half the forward traffic (the 16-bit dispatch, as the combine) has no
  // compute beside it; the combine hides behind the attention backward.
  const double sl = s.cluster.device.overlap_compute_slowdown;
  EXPECT_NEAR(paired.forward_s, alone.forward_s / 2.0 + alone.forward_s / 2.0 * sl / (1.0 + sl), 1e-12);
  // The old whole-layer pairing would have hidden all of it.
  EXPECT_GT(paired.forward_s, exposed_after_overlap_s(alone.forward_s, 200.0 * alone.forward_s, sl));
}

// Passes without a partner expose their exchanges whole; the share blends.
TEST(EpOverlapPhases, UnpairedPassesPayTheWholeExchange) {
  EpOverlapSetup s;
  const EpLayerComm alone = s.comm(false, {});
  MoeLayerCompute compute;
  compute.attention_forward_s = compute.attention_backward_s = 10.0 * alone.forward_s;
  compute.experts_forward_s = compute.experts_backward_s = 10.0 * alone.forward_s;
  compute.unpaired_share = 1.0;
  EXPECT_DOUBLE_EQ(s.comm(true, compute).forward_s, alone.forward_s);
  compute.unpaired_share = 0.0;
  const double paired = s.comm(true, compute).forward_s;
  compute.unpaired_share = 0.25;
  EXPECT_NEAR(s.comm(true, compute).forward_s, 0.25 * alone.forward_s + 0.75 * paired, 1e-12);
}

// Megatron's warm-up count under the overlap: 2 (pp - rank - 1) +
// (vp - 1) pp + 1 of the stage's m vp passes; without a pipeline one
// forward (the first) and one backward (the last) of m.
TEST(EpOverlapPhases, UnpairedShareIsMegatronsWarmUp) {
  ParallelConfig c;
  c.gbs = 2048;
  c.dp = 16;
  c.mbs = 1;  // m = 128
  EXPECT_DOUBLE_EQ(ep_overlap_unpaired_share(c, 0), 1.0 / 128);
  c.pp = 8;
  c.vp = 4;
  EXPECT_DOUBLE_EQ(ep_overlap_unpaired_share(c, 0), (14.0 + 24.0 + 1.0) / 512.0);
  EXPECT_DOUBLE_EQ(ep_overlap_unpaired_share(c, 7), (0.0 + 24.0 + 1.0) / 512.0);
  // More micro-batches never leave a larger share alone.
  double previous = 1.0;
  for (int gbs : {64, 128, 256, 1024, 4096}) {
    c.gbs = gbs;
    const double share = ep_overlap_unpaired_share(c, 0);
    EXPECT_LE(share, previous);
    EXPECT_LE(share, 1.0);
    previous = share;
  }
}

}  // namespace
}  // namespace parplan

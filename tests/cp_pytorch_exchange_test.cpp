// PyTorch's context_parallel exchange as torchtitan runs it, eager and
// compiled (cost/pytorch_cp_exchange.h). The expected values are counted
// from the loops of _templated_ring_attention and its backward: one K/V
// all-gather per pass, cp dK/dV sends in the backward; eager each waited on
// at first use, compiled (functional collectives under tracing) waited on
// as soon as issued.
#include <gtest/gtest.h>

#include "cost/pytorch_cp_exchange.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cp_test_plans.h"

namespace parplan {
namespace {

TEST(PyTorchCpExchange, NothingWithoutContextParallelism) {
  for (bool traced : {false, true}) {
    const PytorchCpExposedSeconds t = pytorch_cp_exposed_s(1, 1.0, 1.0, 1.0, 1.0, 0.1, traced);
    EXPECT_EQ(t.forward_s, 0.0);
    EXPECT_EQ(t.backward_s, 0.0);
  }
}

// cp = 4, compiled: the forward waits out its one gather; the backward its
// gather and all four dK/dV sends (steps 0..3 each send), whatever the
// blocks take.
TEST(PyTorchCpExchange, CompiledWaitsOnEveryCollective) {
  const double gather_s = 3.0, hop_s = 0.5;
  const PytorchCpExposedSeconds t = pytorch_cp_exposed_s(4, gather_s, hop_s, 100.0, 250.0, 0.1, true);
  EXPECT_DOUBLE_EQ(t.forward_s, 3.0);
  EXPECT_DOUBLE_EQ(t.backward_s, 3.0 + 4 * 0.5);
}

// cp = 4, eager, no compute slowdown: blocks far longer than the transfers
// hide the gather and the first three sends; the fourth is waited on after
// the loop, behind nothing.
TEST(PyTorchCpExchange, EagerHidesAllButTheLastSend) {
  const PytorchCpExposedSeconds t = pytorch_cp_exposed_s(4, 3.0, 0.5, 100.0, 250.0, 0.0, false);
  EXPECT_DOUBLE_EQ(t.forward_s, 0.0);
  EXPECT_DOUBLE_EQ(t.backward_s, 0.5);
  // A gather longer than the first block shows its excess.
  const PytorchCpExposedSeconds slow = pytorch_cp_exposed_s(4, 130.0, 0.5, 100.0, 250.0, 0.0, false);
  EXPECT_DOUBLE_EQ(slow.forward_s, 30.0);
}

// Waiting at once never hides more than waiting at first use.
TEST(PyTorchCpExchange, CompiledNeverExposesLessThanEager) {
  for (int cp : {2, 4, 8, 16})
    for (double gather_s : {0.001, 0.1, 10.0})
      for (double hop_s : {0.0005, 0.05, 5.0})
        for (double slowdown : {0.0, 0.15}) {
          const auto eager = pytorch_cp_exposed_s(cp, gather_s, hop_s, 1.0, 2.5, slowdown, false);
          const auto traced = pytorch_cp_exposed_s(cp, gather_s, hop_s, 1.0, 2.5, slowdown, true);
          EXPECT_GE(traced.forward_s, eager.forward_s);
          EXPECT_GE(traced.backward_s, eager.backward_s);
        }
}

// Through the cost model: torchtitan's CP compiled (fused_elementwise, its
// torch.compile flag) exposes more CP time than the same plan eager, with
// the cp ring across nodes; the Megatron/TE ring is the same either way.
TEST(PyTorchCpExchange, CompiledTorchtitanExposesMoreCpTime) {
  cp_test::CpPlan p = cp_test::llama3_8b_cp8_over_ethernet();
  const ModelSpec& model = p.model;
  const ClusterSpec& cluster = p.cluster;
  JobSpec& job = p.job;
  const ParallelConfig& c = p.config;
  job.cp_exchange = ContextParallelExchange::kAllGatherKv;
  job.fused_elementwise = false;
  const double eager_s = estimate_cost(model, cluster, job, c).time.cp_comm_s;
  job.fused_elementwise = true;
  const double compiled_s = estimate_cost(model, cluster, job, c).time.cp_comm_s;
  EXPECT_GT(compiled_s, eager_s);
  job.cp_exchange = ContextParallelExchange::kRingOverlapped;
  const double ring_fused_s = estimate_cost(model, cluster, job, c).time.cp_comm_s;
  job.fused_elementwise = false;
  EXPECT_DOUBLE_EQ(estimate_cost(model, cluster, job, c).time.cp_comm_s, ring_fused_s);
}

}  // namespace
}  // namespace parplan

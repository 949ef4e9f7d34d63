// MoE cost model against published counts and closed forms: parameter
// counts of Mixtral 8x7B and DeepSeek-V3, MoE and MLA FLOPs, the token
// dispatch volume, and the expert-parallel rules at the command line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "cost/flops.h"
#include "cost/mla.h"
#include "cost/moe.h"
#include "cost/moe_dispatch.h"
#include "cost/parameters.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

void expect_within(double value, double published, double tolerance) {
  EXPECT_LE(std::abs(value / published - 1.0), tolerance) << value << " vs published " << published;
}

// Mistral AI, "Mixtral of Experts" (Jiang et al. 2024, sec. 2): 46.7B total
// parameters, 12.9B active per token.
TEST(MoeParameters, Mixtral8x7bTotalAndActive) {
  const ModelSpec m = load_model("mixtral-8x7b");
  expect_within(total_params(m, 4096), 46.7e9, 0.015);
  expect_within(active_params(m, 4096), 12.9e9, 0.015);
}

// DeepSeek-AI 2024, DeepSeek-V3 Technical Report (abstract and sec. 4.2):
// 671B total and 37B activated in the main model; the released checkpoint
// has 685B, the 14B multi-token-prediction module included (its weights plus
// copies of the embedding and the output head).
TEST(MoeParameters, DeepSeekV3MainModelAndMtpApart) {
  const ModelSpec m = load_model("deepseek-v3");
  expect_within(total_params(m, 4096), 671e9, 0.015);
  expect_within(active_params(m, 4096), 37e9, 0.015);
  const double head_and_embedding_copies = 2.0 * m.vocab * static_cast<double>(m.hidden);
  expect_within(total_params(m, 4096) + mtp_params(m) + head_and_embedding_copies, 685e9, 0.015);
  expect_within(mtp_params(m) + head_and_embedding_copies, 14e9, 0.05);
}

// Megatron-LM num_floating_point_operations (training.py): an MoE layer's
// FFN costs top-k routed experts plus the shared ones, 2 FLOPs per weight per
// token, and the router 2 h E per token.
TEST(MoeFlops, MoeLayerIsTopKPlusSharedExpertsPlusRouter) {
  const ModelSpec m = load_model("deepseek-v3");
  const double tokens = 4096;
  const double h = m.hidden;
  const double expert = 3.0 * h * m.expert_ffn_hidden;  // SwiGLU: three matrices
  const LayerFlops moe = layer_forward_flops(m, tokens, 4096, true);
  const LayerFlops dense = layer_forward_flops(m, tokens, 4096, false);
  const double ffn = 2.0 * tokens * (m.top_k + m.shared_experts) * expert;
  EXPECT_NEAR(moe.linear_flops - dense.linear_flops,
              ffn + router_forward_flops(m, tokens) - 2.0 * tokens * 3.0 * h * m.ffn_hidden,
              1e-6 * moe.linear_flops);
  EXPECT_DOUBLE_EQ(router_forward_flops(m, tokens), 2.0 * tokens * h * m.experts);
}

// DeepSeek-V2 report sec. 2.1: MLA's projections are W_DQ (h x d_c'),
// W_UQ/W_QR (d_c' x n_h (d_h + d_h^R)), W_DKV and W_KR (h x (d_c + d_h^R)),
// W_UK/W_UV (d_c x n_h (d_h + d_v)) and W_O (n_h d_v x h).
TEST(MoeFlops, MlaProjectionsFromTheLowRankShapes) {
  const ModelSpec m = load_model("deepseek-v3");
  const double t = 1000;
  const double per_token = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * (512 + 64) +
                           512.0 * 128 * (128 + 128) + 128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(mla_projection_flops(m, t), 2.0 * t * per_token);
}

// The all-to-all of Megatron's alltoall dispatcher: each rank sends its
// tokens' top-k copies of h elements, (ep - 1) / ep of them to other ranks.
TEST(MoeDispatch, VolumeIsTokensTimesTopKTimesHidden) {
  const ModelSpec m = load_model("mixtral-8x7b");
  EXPECT_DOUBLE_EQ(dispatch_bytes(m, 4096, 2.0, 8), 4096.0 * 2 * 4096 * 2.0 * 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(dispatch_bytes(m, 4096, 2.0, 1), 0.0);
}

TEST(MoeDispatch, FlatTimeCrossesEachTierWithItsShare) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const ClusterSpec c = load_cluster("dgx-h100");
  const GroupSpan span = group_span(c, 32, 1);  // 4 nodes of 8
  DispatchShape shape;
  shape.tokens = 4096;
  const double held = 4096.0 * 2 * 4096 * 2.0;
  const double expected = held * 7.0 / 32.0 / c.tiers[0].effective_bytes_per_s() + 7 * c.tiers[0].latency_s +
                          held * 24.0 / 32.0 / c.tiers[1].effective_bytes_per_s() + 3 * c.tiers[1].latency_s;
  EXPECT_NEAR(dispatch_s(c, span, m, shape), expected, 1e-12);
}

// Node-limited routing (DeepSeek-V3 sec. 2.1.2): at most M = 4 nodes per
// token; without the limit top-8 over 8 nodes reaches 8 (1 - (7/8)^8) = 5.25.
TEST(MoeDispatch, NodeLimitedRoutingCapsTheNodesPerToken) {
  EXPECT_NEAR(expected_destination_nodes(8, 8, 0), 8.0 * (1.0 - std::pow(7.0 / 8.0, 8)), 1e-12);
  EXPECT_DOUBLE_EQ(expected_destination_nodes(8, 8, 4), 4.0);
  EXPECT_DOUBLE_EQ(expected_destination_nodes(1, 8, 4), 1.0);
  // Hierarchical dispatch with node-limited routing sends fewer bytes over
  // the network than the flat all-to-all, so it is faster across nodes.
  const ModelSpec m = load_model("deepseek-v3");
  const ClusterSpec c = load_cluster("dgx-h800");
  const GroupSpan span = group_span(c, 64, 1);
  DispatchShape flat;
  flat.tokens = 4096;
  DispatchShape hier = flat;
  hier.hierarchical = true;
  EXPECT_LT(dispatch_s(c, span, m, hier), dispatch_s(c, span, m, flat));
}

// The busiest rank sets the pace: the routed experts' time grows with the
// load factor, and a rank holding all experts (ep 1) sees no imbalance.
TEST(MoeImbalance, BusiestRankSetsThePace) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const ClusterSpec c = load_cluster("dgx-h100");
  MoeShape shape;
  shape.tokens = 4096;
  shape.ep = 8;
  const double peak = c.device.peak_bf16_flops_per_s;
  const double balanced = moe_block_times(m, c.device, peak, shape).routed_forward_s;
  shape.load_factor = 1.5;
  EXPECT_GT(moe_block_times(m, c.device, peak, shape).routed_forward_s, 1.4 * balanced);
  EXPECT_DOUBLE_EQ(default_moe_imbalance(m, 1), 1.0);
  EXPECT_DOUBLE_EQ(default_moe_imbalance(m, 8), 1.0 + kAuxLossMaxVio);
  const ModelSpec ds = load_model("deepseek-v3");
  EXPECT_DOUBLE_EQ(default_moe_imbalance(ds, 64), 1.0 + kLossFreeMaxVio / 2.0);  // 4 experts per rank
}

// Expert weights, gradients and optimizer states shard over ep (and the
// distributed optimizer over edp): ep 8 holds an eighth of the experts.
TEST(MoeMemory, ExpertStatesShardOverEp) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const ClusterSpec c = load_cluster("dgx-h100");
  JobSpec job;
  job.gpus = 64;
  job.gbs = 256;
  job.seq = 4096;
  ParallelConfig one;
  one.dp = 64;
  one.gbs = 256;
  ParallelConfig eight = one;
  eight.ep = 8;
  const double experts_bf16 = 2.0 * moe_layer_count(m) * routed_expert_params(m);
  const double saved =
      estimate_memory(m, c, job, one).params_bytes - estimate_memory(m, c, job, eight).params_bytes;
  EXPECT_NEAR(saved, experts_bf16 * (1.0 - 1.0 / 8.0), 1e-6 * experts_bf16);
}

// ---------------------------------------------------------------- rules ----

using test::run_cli;

TEST(MoeRules, EpMustDivideTheExperts) {
  const auto run = run_cli(
      "estimate --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 "
      "--tp 1 --pp 1 --ep 3");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("ep 3 must divide the model's 8 experts"), std::string::npos) << run.err;
  EXPECT_EQ(test::line_count(run.err), 1);
}

TEST(MoeRules, ExpertGridMustFoldIntoTheStage) {
  const auto run = run_cli(
      "estimate --model deepseek-v3 --cluster dgx-h800 --gpus 64 --gbs 64 --seq 4096 "
      "--tp 1 --pp 1 --ep 128");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("MoE parallel folding"), std::string::npos) << run.err;
}

TEST(MoeRules, EpNeedsAnMoeModel) {
  const auto run = run_cli("plan --model llama3-8b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 4096 --ep 2");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("mixture-of-experts"), std::string::npos) << run.err;
}

TEST(MoeRules, PlanEpPinMustDivideTheExperts) {
  const auto run =
      run_cli("plan --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --ep 3");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("ep 3 must divide the model's 8 experts"), std::string::npos) << run.err;
}

TEST(MoeRules, JobFileExpertSizesPinThePlan) {
  const std::string path = ::testing::TempDir() + "parplan_moe_job_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream job(path);
    job << "model: mixtral-8x7b\ncluster: dgx-h100\ngpus: 64\ngbs: 256\nseq: 4096\nconfig: {ep: 8, etp: 1}\n";
  }
  const auto run = run_cli("plan --job " + path + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"ep\": 8"), std::string::npos) << run.out.substr(0, 300);
  std::remove(path.c_str());
}

TEST(MoeRules, ExpertAndTensorParallelNeedSequenceParallel) {
  ParallelConfig c;
  c.tp = 2;
  c.dp = 32;
  c.ep = 8;
  c.gbs = 256;
  JobSpec job;
  job.gpus = 64;
  job.gbs = 256;
  job.seq = 4096;
  const char* problem = config_problem(load_model("mixtral-8x7b"), job, c);
  ASSERT_NE(problem, nullptr);
  EXPECT_NE(std::string(problem).find("sequence parallelism"), std::string::npos);
  c.sp = true;
  EXPECT_EQ(config_problem(load_model("mixtral-8x7b"), job, c), nullptr);
}

}  // namespace
}  // namespace parplan

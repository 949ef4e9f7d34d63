// Megatron-DeepSpeed's GPTModelPipe hands its layers to DeepSpeed's
// PipelineModule with partition_method "type:transformer": layers that do
// not divide over pp run as partition_balanced splits them, with no flag.
// The split parplan costs equals that algorithm as DeepSpeed v0.17.0 writes
// it (deepspeed/runtime/utils.py:583-622: a dynamic program minimising the
// heaviest part less the lightest, `>=` letting later boundaries win ties),
// run here over the pipe's items (megatron/model/gpt_model.py GPTModelPipe:
// the fp16 cast and the embedding before the layers; the final norm, the
// head and the fp32 cast after, and the MoE loss for MoE models), the
// layers weighing 1 and the rest 0; and the splits DeepSpeed's own Python
// gives for some published shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace megatron_deepspeed_split_test {

std::vector<int> partition_balanced(const std::vector<double>& weights, int m) {
  const int n = static_cast<int>(weights.size());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> dp_max(n + 1, std::vector<double>(m + 1, inf));
  std::vector<std::vector<double>> dp_min = dp_max, dp_cost = dp_max;
  std::vector<std::vector<int>> position(n + 1, std::vector<int>(m + 1, 0));
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[i];
  dp_max[0][0] = 0;
  dp_cost[0][0] = 0;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= std::min(i, m); ++j)
      for (int k = 0; k < i; ++k) {
        const double max_sum = std::max(dp_max[k][j - 1], prefix[i] - prefix[k]);
        const double min_sum = std::min(dp_min[k][j - 1], prefix[i] - prefix[k]);
        const double cost = max_sum - min_sum;
        if (dp_cost[i][j] >= cost) {
          dp_cost[i][j] = cost;
          dp_max[i][j] = max_sum;
          dp_min[i][j] = min_sum;
          position[i][j] = k;
        }
      }
  std::vector<int> parts = {n};
  for (int i = m; i >= 1; --i) parts.push_back(position[parts.back()][i]);
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<int> layers_per_stage(int layers, int pp, int before, int after) {
  std::vector<double> weights(before, 0.0);
  weights.insert(weights.end(), layers, 1.0);
  weights.insert(weights.end(), after, 0.0);
  const std::vector<int> parts = partition_balanced(weights, pp);
  std::vector<int> counts;
  for (int p = 0; p < pp; ++p) {
    double sum = 0;
    for (int i = parts[p]; i < parts[p + 1]; ++i) sum += weights[i];
    counts.push_back(static_cast<int>(sum));
  }
  return counts;
}

std::vector<int> split_of(ModelSpec model, int layers, int pp) {
  model.layers = layers;
  ParallelConfig c;
  c.pp = pp, c.vp = 1;
  if (!apply_megatron_deepspeed_split(model, c)) return {};
  EXPECT_TRUE(is_megatron_deepspeed_split(model, c));
  return std::vector<int>(c.stage_split.begin(), c.stage_split.begin() + pp);
}

TEST(MegatronDeepSpeedSplit, EqualsDeepSpeedsPartitionBalanced) {
  const ModelSpec model = load_model("llama3-8b");
  int compared = 0;
  for (int layers = 2; layers <= 72; ++layers)
    for (int pp = 2; pp <= std::min(layers, ParallelConfig::kMaxSplitStages); ++pp) {
      if (layers % pp == 0) continue;
      const std::vector<int> dense = layers_per_stage(layers, pp, 2, 3);
      ASSERT_EQ(split_of(model, layers, pp), dense) << layers << " over " << pp;
      // An MoE pipe has one item more after the layers: the same split.
      ASSERT_EQ(layers_per_stage(layers, pp, 2, 4), dense) << layers << " over " << pp;
      ++compared;
    }
  EXPECT_GT(compared, 1000);
}

// DeepSpeed v0.17.0's partition_balanced run in Python on GPTModelPipe's
// items for published layer counts: BLOOM (70), Llama 3 405B (126),
// DeepSeek-V3 (61), Mixtral (32), GPT-3 2.7B (32), Qwen3-235B (94).
TEST(MegatronDeepSpeedSplit, PublishedShapes) {
  const ModelSpec model = load_model("llama3-8b");
  const std::vector<int> six_five = {6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5};
  EXPECT_EQ(split_of(model, 70, 12), six_five);
  std::vector<int> eights(14, 8);
  eights.insert(eights.end(), {7, 7});
  EXPECT_EQ(split_of(model, 126, 16), eights);
  EXPECT_EQ(split_of(model, 61, 8), (std::vector<int>{8, 8, 8, 8, 8, 7, 7, 7}));
  EXPECT_EQ(split_of(model, 32, 5), (std::vector<int>{7, 7, 6, 6, 6}));
  EXPECT_EQ(split_of(model, 32, 7), (std::vector<int>{5, 5, 5, 5, 4, 4, 4}));
  EXPECT_EQ(split_of(model, 94, 8), (std::vector<int>{12, 12, 12, 12, 12, 12, 11, 11}));
  EXPECT_EQ(split_of(model, 9, 4), (std::vector<int>{3, 2, 2, 2}));
  EXPECT_EQ(split_of(model, 80, 3), (std::vector<int>{27, 27, 26}));
  EXPECT_TRUE(split_of(model, 70, 33).empty());  // more stages than a split holds
}

// BLOOM's 70 layers over 12 stages (its own run named the embeddings as
// items too; GPTModelPipe's default does not): 10 stages of 6, then 2 of 5.
TEST(MegatronDeepSpeedSplit, SeventyLayersOverTwelveStagesPlanAndEmit) {
  const std::string model = test::write_temp(
      "seventy.yaml",
      "name: gpt-70-layers\nsource: a test model\nlayers: 70\nhidden: 4096\nffn_hidden: 16384\n"
      "heads: 32\nvocab: 50304\nmax_positions: 2048\n");
  const auto json =
      test::cli_json("estimate --model " + model +
                     " --cluster dgx-a100 --gpus 96 --gbs 192 --seq 2048 --engine megatron-deepspeed "
                     "--tp 8 --pp 12 --mbs 1 --zero 1 --format json");
  ASSERT_TRUE(json.contains("config"));
  const std::vector<int> stages = json["config"]["stage_layers"].get<std::vector<int>>();
  EXPECT_EQ(stages, (std::vector<int>{6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5}));
  const std::string out = ::testing::TempDir() + "parplan_mds_split_" + std::to_string(::getpid());
  const test::CliRun emitted = test::run_cli("plan --model " + model +
                                             " --cluster dgx-a100 --gpus 96 --gbs 192 --seq 2048 --pp 12 "
                                             "--emit megatron-deepspeed --out " +
                                             out);
  EXPECT_EQ(emitted.exit_code, 0) << emitted.err;
  EXPECT_NE(emitted.out.find("6/6/6/6/6/6/6/6/6/6/5/5"), std::string::npos) << emitted.out;
  // sweep lists every rank's layers too (JSON list, CSV a/b/c): pp of them,
  // summing to the model's layers.
  const nlohmann::json swept = test::cli_json("sweep --models " + model +
                                              " --cluster dgx-a100 --gpus 96,192 --gbs 192 --seq 2048 "
                                              "--engine megatron-deepspeed --format json");
  ASSERT_TRUE(swept.contains("points")) << swept.dump();
  for (const auto& point : swept["points"]) {
    if (!point["feasible"].get<bool>()) continue;
    const std::vector<int> layers = point["stage_layers"].get<std::vector<int>>();
    EXPECT_EQ(static_cast<int>(layers.size()), point["pp"].get<int>());
    int sum = 0;
    for (int l : layers) sum += l;
    EXPECT_EQ(sum, 70);
  }
}

}  // namespace megatron_deepspeed_split_test
}  // namespace parplan

namespace parplan {
namespace megatron_deepspeed_moe_pipe_test {

// Megatron-DeepSpeed sends an MoE pipe's stage boundaries whole from every
// tp rank (pipe_partitioned off, as GPTModelPipe requires): more pipeline
// traffic than the b s h / t a partitioned or sequence-parallel boundary
// moves; a dense pipe, or one with sequence parallelism, is unchanged.
TEST(MegatronDeepSpeedMoePipe, BoundariesAreSentWhole) {
  const ModelSpec moe = load_model("mixtral-8x7b");
  const ModelSpec dense = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  job.gpus = 64, job.gbs = 256, job.seq = 4096;
  apply_engine_recipe("megatron-deepspeed", job);
  ASSERT_TRUE(job.moe_pipe_unpartitioned);
  JobSpec split = job;
  split.moe_pipe_unpartitioned = false;
  ParallelConfig c;
  c.tp = 2, c.pp = 4, c.dp = 8, c.ep = 8, c.mbs = 1, c.gbs = 256, c.zero = 1;
  const double whole_s = estimate_cost(moe, cluster, job, c).time.pp_comm_s;
  EXPECT_GT(whole_s, estimate_cost(moe, cluster, split, c).time.pp_comm_s);
  c.sp = true;
  EXPECT_EQ(estimate_cost(moe, cluster, job, c).time.pp_comm_s,
            estimate_cost(moe, cluster, split, c).time.pp_comm_s);
  c.sp = false, c.ep = 1;
  EXPECT_EQ(estimate_cost(dense, cluster, job, c).time.pp_comm_s,
            estimate_cost(dense, cluster, split, c).time.pp_comm_s);
}

}  // namespace megatron_deepspeed_moe_pipe_test
}  // namespace parplan

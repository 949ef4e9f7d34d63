// Megatron-DeepSpeed's GPTModelPipe hands its layers to DeepSpeed's
// PipelineModule with partition_method "type:transformer": layers that do
// not divide over pp run as partition_balanced splits them, with no flag.
// The split parplan costs equals that algorithm, run here as DeepSpeed
// writes it (binary search for the least bottleneck, then the greedy probe;
// deepspeed/runtime/utils.py @ v0.17.0) over the pipe's items: the
// embedding and its helpers before the layers, the norm and head after,
// weight 0, the transformer layers weight 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace megatron_deepspeed_split_test {

// _lprobe: parts[p] is the first item index of part p.
bool lprobe(const std::vector<double>& prefix, int parts_n, double bottleneck, std::vector<int>& parts) {
  const int items = static_cast<int>(prefix.size());
  parts.assign(parts_n + 1, items);
  parts[0] = 0;
  double bsum = bottleneck;
  const int chunk = items / parts_n;
  int step = chunk;
  for (int p = 1; p < parts_n; ++p) {
    while (step < items && prefix[step] < bsum) step += chunk;
    const int lo = step - chunk, hi = std::min(step, items);
    parts[p] = static_cast<int>(std::lower_bound(prefix.begin() + lo, prefix.begin() + hi, bsum) - prefix.begin());
    if (parts[p] == items) return prefix.back() - prefix[parts[p - 1]] < bottleneck;
    bsum = prefix[parts[p] - 1] + bottleneck;
  }
  return bsum >= prefix.back();
}

std::vector<int> deepspeed_layers_per_stage(int layers, int pp, int before, int after) {
  std::vector<double> weights(before, 0.0);
  weights.insert(weights.end(), layers, 1.0);
  weights.insert(weights.end(), after, 0.0);
  std::vector<double> prefix(weights);
  for (std::size_t i = 1; i < prefix.size(); ++i) prefix[i] += prefix[i - 1];
  double lower = prefix.back() / pp, upper = prefix.back();
  const double eps = 1e-3;
  std::vector<int> parts;
  while (upper > lower + eps) {
    const double mid = lower + (upper - lower) / 2;
    if (lprobe(prefix, pp, mid, parts))
      upper = mid;
    else
      lower = mid + eps;
  }
  EXPECT_TRUE(lprobe(prefix, pp, upper, parts));
  std::vector<int> counts;
  for (int p = 0; p < pp; ++p) counts.push_back(static_cast<int>(prefix[parts[p + 1] - 1] - (parts[p] > 0 ? prefix[parts[p] - 1] : 0)));
  return counts;
}

TEST(MegatronDeepSpeedSplit, EqualsDeepSpeedsTypePartition) {
  ModelSpec model = load_model("llama3-8b");
  int compared = 0;
  for (int layers = 2; layers <= 130; ++layers) {
    for (int pp = 2; pp <= std::min(layers, ParallelConfig::kMaxSplitStages); ++pp) {
      if (layers % pp == 0) continue;
      model.layers = layers;
      ParallelConfig c;
      c.pp = pp, c.vp = 1;
      // GPTModelPipe: fp16 cast, embedding, transpose before; transpose,
      // final norm, head after.
      const std::vector<int> expected = deepspeed_layers_per_stage(layers, pp, 3, 3);
      const bool empty_stage = std::count(expected.begin(), expected.end(), 0) > 0;
      ASSERT_EQ(apply_megatron_deepspeed_split(model, c), !empty_stage) << layers << " over " << pp;
      if (empty_stage) continue;
      for (int s = 0; s < pp; ++s) ASSERT_EQ(c.stage_split[s], expected[s]) << layers << " over " << pp << ", stage " << s;
      EXPECT_TRUE(is_megatron_deepspeed_split(model, c));
      ++compared;
    }
  }
  EXPECT_GT(compared, 1000);
}

// BLOOM's 70 layers over 12 stages (its own run named the embeddings as
// items too; GPTModelPipe's default does not): 11 stages of 6, then 4.
TEST(MegatronDeepSpeedSplit, SeventyLayersOverTwelveStagesPlanAndEmit) {
  const std::string model = test::write_temp("seventy.yaml",
                                             "name: gpt-70-layers\nsource: a test model\nlayers: 70\nhidden: 4096\nffn_hidden: 16384\n"
                                             "heads: 32\nvocab: 50304\nmax_positions: 2048\n");
  const auto json = test::cli_json("estimate --model " + model +
                                   " --cluster dgx-a100 --gpus 96 --gbs 192 --seq 2048 --engine megatron-deepspeed "
                                   "--tp 8 --pp 12 --mbs 1 --zero 1 --format json");
  ASSERT_TRUE(json.contains("config"));
  const std::vector<int> stages = json["config"]["stage_layers"].get<std::vector<int>>();
  EXPECT_EQ(stages, (std::vector<int>{6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 4}));
  const std::string out = ::testing::TempDir() + "parplan_mds_split_" + std::to_string(::getpid());
  const test::CliRun emitted = test::run_cli("plan --model " + model +
                                             " --cluster dgx-a100 --gpus 96 --gbs 192 --seq 2048 --pp 12 "
                                             "--emit megatron-deepspeed --out " + out);
  EXPECT_EQ(emitted.exit_code, 0) << emitted.err;
  EXPECT_NE(emitted.out.find("6/6/6/6/6/6/6/6/6/6/6/4"), std::string::npos) << emitted.out;
}

}  // namespace megatron_deepspeed_split_test
}  // namespace parplan

// torchtitan's pipeline split: the first/last stage "less layers" parplan
// writes give, under torchtitan's own splitting rule, exactly the layers per
// stage the plan was costed with; splits with no such form are refused.
#include <gtest/gtest.h>

#include <vector>

#include "src/emit/emit.h"
#include "src/emit/emit_internal.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

// generate_llm_fqn_per_model_part (torchtitan/distributed/
// pipeline_parallel.py L262-L370 @ 1ce7f761): L + input_weight +
// output_weight effective layers spread evenly, the remainder on the
// earliest stages, the weights taken from the first and last stage.
std::vector<int> torchtitan_split(int layers, int stages, int input_weight, int output_weight) {
  const int effective = layers + input_weight + output_weight;
  const int per_stage = effective / stages, extra = effective % stages;
  std::vector<int> split;
  for (int s = 0; s < stages; ++s) {
    int n = per_stage + (s < extra ? 1 : 0);
    if (s == 0) n -= input_weight;
    if (s == stages - 1) n -= output_weight;
    split.push_back(n);
  }
  return split;
}

std::vector<int> planned_split(const ParallelConfig& c, int layers) {
  std::vector<int> split(static_cast<std::size_t>(c.pp), 0);
  const int first = c.first_stage_layers, last = c.last_stage_layers;
  const int open = c.pp - (first > 0) - (last > 0);
  const int middle = open > 0 ? (layers - first - last) / open : 0;
  for (int s = 0; s < c.pp; ++s) split[static_cast<std::size_t>(s)] = middle;
  if (first > 0) split.front() = first;
  if (last > 0) split.back() = last;
  return split;
}

TEST(TorchtitanSplit, LessLayersReproduceTheCostedSplit) {
  struct Case {
    int layers, pp, first, last;
  };
  // Llama 3 405B as Meta ran it (126 layers, pp 16, 7-layer first and last
  // stages), 70B and 8B shapes, one-sided and pp 2 splits.
  const Case cases[] = {{126, 16, 7, 7}, {80, 4, 20, 20}, {80, 6, 10, 10}, {80, 3, 26, 0},
                        {32, 2, 15, 0},  {32, 2, 0, 12},  {32, 4, 7, 7},   {126, 8, 0, 14}};
  for (const Case& k : cases) {
    ParallelConfig c;
    c.pp = k.pp;
    c.first_stage_layers = k.first;
    c.last_stage_layers = k.last;
    emit_detail::TorchtitanLessLayers less;
    ASSERT_TRUE(emit_detail::torchtitan_less_layers(c, k.layers, less))
        << k.layers << " layers, pp " << k.pp << ", first " << k.first << ", last " << k.last;
    EXPECT_GE(less.first, 0);
    EXPECT_GE(less.last, 0);
    EXPECT_EQ(torchtitan_split(k.layers, k.pp, less.first, less.last), planned_split(c, k.layers))
        << k.layers << " layers, pp " << k.pp << ", first " << k.first << ", last " << k.last;
  }
}

TEST(TorchtitanSplit, SplitsWithoutTheFormAreRefused) {
  emit_detail::TorchtitanLessLayers less;
  ParallelConfig larger_first;
  larger_first.pp = 4;
  larger_first.first_stage_layers = 29;  // 29 > (80 - 29) / 3 = 17
  EXPECT_FALSE(emit_detail::torchtitan_less_layers(larger_first, 80, less));
  ParallelConfig uneven_middle;
  uneven_middle.pp = 4;
  uneven_middle.first_stage_layers = 7;  // (32 - 7) / 3 is not whole
  EXPECT_FALSE(emit_detail::torchtitan_less_layers(uneven_middle, 32, less));
  ParallelConfig interleaved;
  interleaved.pp = 4;
  interleaved.vp = 2;
  interleaved.first_stage_layers = 7;
  interleaved.last_stage_layers = 7;
  EXPECT_FALSE(emit_detail::torchtitan_less_layers(interleaved, 32, less));
}

TEST(TorchtitanSplit, EngineRulesAcceptTheMetaSplitAndRefuseInterleavedOnes) {
  const ModelSpec model = load_model("llama3-405b");
  ParallelConfig c;
  c.tp = 8;
  c.sp = true;
  c.pp = 16;
  c.dp = 64;
  c.zero = 2;
  c.mbs = 1;
  c.gbs = 2048;
  c.first_stage_layers = 7;
  c.last_stage_layers = 7;
  JobSpec job;
  job.gpus = 8192;
  job.gbs = 2048;
  job.seq = 8192;
  ClusterSpec cluster;
  cluster.ranks_per_node = 8;
  const Plan plan{model, cluster, job, c, CostReport{}};
  EXPECT_TRUE(engine_rule_violations(plan, Engine::kTorchtitan).empty());
  Plan interleaved = plan;
  interleaved.config.vp = 2;
  EXPECT_FALSE(engine_rule_violations(interleaved, Engine::kTorchtitan).empty());
}

}  // namespace
}  // namespace parplan

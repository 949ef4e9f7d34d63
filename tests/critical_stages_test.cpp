// The stages the cost model looks at for a split that is not custom
// (detail::critical_stages) must include the most loaded one. With MoE
// layers only every third layer after two dense ones, a middle stage other
// than stage 1 may hold the most experts: the reported peak memory and step
// time must equal the largest over every stage, costed one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cost/step_internal.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"
#include "tests/model_on_cluster.h"

namespace parplan {
namespace {

// Mixtral 8x7B's shapes with 12 experts in every third layer after two
// dense layers (DeepSeek-style first_dense_layers, GShard-style frequency).
std::string sparse_moe_model() {
  std::string text = test::slurp(std::string(PARPLAN_SOURCE_DIR) + "/models/mixtral-8x7b.yaml");
  const auto set = [&](const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    if (at != std::string::npos) text.replace(at, from.size(), to);
  };
  set("name: mixtral-8x7b", "name: mixtral-sparse");
  set("experts: 8", "experts: 12");
  set("moe_layer_freq: 1", "moe_layer_freq: 3");
  set("first_dense_layers: 0", "first_dense_layers: 2");
  return test::write_temp("mixtral_sparse.yaml", text);
}

TEST(CriticalStages, PeakMemoryIsTheLargestOverEveryStage) {
  const ModelSpec model = load_model(sparse_moe_model());
  for (const int pp : {3, 4, 6, 8}) {
    for (const int ep : {1, 4}) {
      test::ModelOnCluster k(model, "dgx-h100", 8 * pp, 256, 4096);
      ParallelConfig& c = k.config;
      c.tp = 1, c.pp = pp, c.cp = 1, c.vp = 1, c.dp = 8;
      c.ep = ep, c.etp = 1;
      c.mbs = 1, c.gbs = 256, c.zero = 0, c.recompute = Recompute::kNone;
      double peak_bytes = 0;
      for (int stage = 0; stage < pp; ++stage)
        peak_bytes =
            std::max(peak_bytes, detail::stage_memory(model, k.cluster, k.job, c,
                                                      detail::stage_load(model, k.job, c, stage), stage)
                                     .peak_bytes);
      EXPECT_DOUBLE_EQ(estimate_memory(model, k.cluster, k.job, c).peak_bytes, peak_bytes)
          << "pp " << pp << " ep " << c.ep;
    }
  }
}

TEST(CriticalStages, DenseSplitsKeepThreeStages) {
  const ModelSpec model = load_model("llama3-8b");
  ParallelConfig c;
  c.pp = 5;  // 32 layers: 7 on stages 1 and 2, 6 on the rest
  const detail::CriticalStages critical = detail::critical_stages(model, c);
  EXPECT_FALSE(critical.all);
  EXPECT_EQ(critical.count, 3);  // 0, 4 and 1: stage 2 holds no more than 1, stage 3 less
}

}  // namespace
}  // namespace parplan

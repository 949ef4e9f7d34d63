// The search prunes a mesh shape with shape_lower_bound_s: no variant of the
// shape (ZeRO stage, recomputation) may run a step shorter than it, or the
// pruning could drop the optimum. DeepSpeed sums micro-batch gradients in
// passes whose cost falls with the ZeRO stage (its bf16 optimizer at ZeRO-0
// pays the most), the case a bound taken at ZeRO-0 alone got wrong.
#include <gtest/gtest.h>

#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/search/search.h"
#include "tests/tune_support.h"

namespace parplan {
namespace search_lower_bound_test {

ParallelConfig mesh(int tp, int pp, int dp, int gbs) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  c.dp = dp;
  c.mbs = 1;
  c.gbs = gbs;
  return c;
}

TEST(SearchLowerBound, NoVariantOfTheShapeIsFaster) {
  struct Case {
    const char* model;
    int gpus, gbs, seq;
    ParallelConfig shape;
    int zero_max;
  };
  const Case cases[] = {
      {"gpt3-175b", 512, 1024, 2048, mesh(1, 32, 16, 1024), 1},  // DeepSpeed's pipe engine: ZeRO <= 1
      {"llama3-70b", 64, 512, 8192, mesh(1, 1, 64, 512), 3},
      {"llama3-8b", 16, 128, 4096, mesh(2, 2, 4, 128), 1},
  };
  const ClusterSpec cluster = load_cluster("dgx-h100");
  for (const char* engine : {"deepspeed", "megatron-deepspeed", "megatron", "torchtitan"}) {
    for (const Case& c : cases) {
      const ModelSpec model = load_model(c.model);
      const JobSpec job = test::recipe_job(engine, c.gpus, c.gbs, c.seq);
      const double bound_s = shape_lower_bound_s(model, cluster, job, c.shape, c.zero_max);
      for (int zero = 0; zero <= c.zero_max; ++zero) {
        for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
          ParallelConfig config = c.shape;
          config.zero = zero;
          config.recompute = recompute;
          const double step_s = estimate_cost(model, cluster, job, config).time.step_s;
          EXPECT_LE(bound_s, step_s * (1 + 1e-12))
              << engine << " " << c.model << " zero " << zero << " recompute " << static_cast<int>(recompute);
        }
      }
    }
  }
}

}  // namespace search_lower_bound_test
}  // namespace parplan

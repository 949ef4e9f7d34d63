// MoE token dropping and the fp8 recipe in the launch files: Megatron-LM's
// command line carries the capacity factor, the padding and the recipe and
// passes Megatron's argument checks (restated in emit_fixtures); an engine
// that cannot express the dropping asked for refuses the plan; and padding
// to capacity never makes a balanced step faster (every expert then runs
// capacity rows, at least its fair share when the factor is >= 1).
#include <algorithm>

#include "cost/step_cost.h"
#include "emit_fixtures/emit_test_util.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan::emit_test {
namespace {

// Mixtral 8x7B (Jiang et al. 2024: 32 layers, 4096 hidden, 8 experts of
// 14336, top-2) on 64 H100: tp 2 with sp, ep 8, the distributed optimizer.
Plan mixtral_dropping(int ep) {
  Plan p = llama3_70b_on_64_h100();
  p.model = load_model("mixtral-8x7b");
  p.cluster = load_cluster("dgx-h100");
  set_mesh(p, 64, 2, 1, 1, 1);
  set_batch(p, 256, 1, 4096);
  p.config.ep = ep;
  p.config.etp = 1;
  p.config.recompute = Recompute::kSelective;
  p.job.capacity_factor = 1.25;
  p.job.pad_to_capacity = true;
  p.job.precision = Precision::kFp8;
  p.job.fp8_scaling = Fp8Scaling::kCurrent;
  p.cost = estimate_cost(p.model, p.cluster, p.job, p.config);
  return p;
}

ArgMap megatron_launch(const Plan& plan, const TempDir& dir, std::vector<std::string>* problems) {
  const auto [args, env] = megatron_torchrun_launch(plan, dir);
  *problems = megatron_check(args, plan.job.gpus, env);
  return args;
}

TEST(MoeTokenDropEmit, MegatronCarriesCapacityPaddingAndRecipe) {
  for (int ep : {8, 1}) {
    const Plan plan = mixtral_dropping(ep);
    ASSERT_EQ(joined(engine_rule_violations(plan, Engine::kMegatron)), "") << "ep " << ep;
    TempDir dir;
    std::vector<std::string> problems;
    const ArgMap args = megatron_launch(plan, dir, &problems);
    EXPECT_EQ(joined(problems), "") << "ep " << ep;
    EXPECT_EQ(args.value("--moe-expert-capacity-factor"), "1.25");
    EXPECT_TRUE(args.has("--moe-pad-expert-input-to-capacity"));
    // The drop-and-pad path is the alltoall dispatcher's, even at ep 1.
    EXPECT_EQ(args.value("--moe-token-dispatcher-type"), "alltoall") << "ep " << ep;
    EXPECT_EQ(args.value("--fp8-format"), "hybrid");
    EXPECT_EQ(args.value("--fp8-recipe"), "tensorwise");
  }
}

TEST(MoeTokenDropEmit, MegatronWritesOnlyWhatThePlanAsks) {
  Plan plan = mixtral_dropping(8);
  plan.job.pad_to_capacity = false;
  plan.job.fp8_scaling = Fp8Scaling::kDelayed;
  TempDir dir;
  std::vector<std::string> problems;
  ArgMap args = megatron_launch(plan, dir, &problems);
  EXPECT_EQ(joined(problems), "");
  EXPECT_EQ(args.value("--moe-expert-capacity-factor"), "1.25");
  EXPECT_FALSE(args.has("--moe-pad-expert-input-to-capacity"));
  EXPECT_EQ(args.value("--fp8-recipe"), "delayed");
  // Dropless bf16 at ep 1: no capacity, no recipe, Megatron's default dispatcher.
  plan = mixtral_dropping(1);
  plan.job.capacity_factor = 0;
  plan.job.pad_to_capacity = false;
  plan.job.precision = Precision::kBf16;
  TempDir dir2;
  args = megatron_launch(plan, dir2, &problems);
  EXPECT_EQ(joined(problems), "");
  EXPECT_FALSE(args.has("--moe-expert-capacity-factor"));
  EXPECT_FALSE(args.has("--moe-pad-expert-input-to-capacity"));
  EXPECT_FALSE(args.has("--fp8-recipe"));
  EXPECT_FALSE(args.has("--moe-token-dispatcher-type"));
}

// The restated checks catch what TransformerConfig refuses.
TEST(MoeTokenDropEmit, RestatedChecksRefuseBrokenDropping) {
  ArgMap a;
  a.flags["--num-experts"] = {"8"};
  a.flags["--moe-pad-expert-input-to-capacity"] = {};
  EXPECT_TRUE(contains(megatron_check(a, 8, {}), "moe_expert_capacity_factor must be set"));
  a.flags["--moe-expert-capacity-factor"] = {"1"};
  a.flags["--moe-token-dispatcher-type"] = {"flex"};
  EXPECT_TRUE(contains(megatron_check(a, 8, {}), "Flex token dispatcher"));
  a.flags["--moe-token-dispatcher-type"] = {"alltoall"};
  a.flags["--moe-router-load-balancing-type"] = {"sinkhorn"};
  EXPECT_TRUE(contains(megatron_check(a, 8, {}), "aux_loss or none"));
}

// Megatron's flex dispatcher (the hierarchical all-to-all) cannot pad
// (transformer_config.py:723-727 at core_r0.13.0): the rules refuse the plan
// and the capability table keeps the search away from it.
TEST(MoeTokenDropEmit, MegatronRefusesPaddingOnTheFlexDispatcher) {
  Plan plan = mixtral_dropping(8);
  plan.config.a2a_hierarchical = true;
  EXPECT_TRUE(contains(engine_rule_violations(plan, Engine::kMegatron), "flex token dispatcher"));
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kMegatron), plan.model, plan.job, plan.config),
            nullptr);
  plan.job.pad_to_capacity = false;
  EXPECT_EQ(joined(engine_rule_violations(plan, Engine::kMegatron)), "");
}

// DeepSpeed-MoE dispatches an experts x capacity tensor (sharded_moe.py:609
// at v0.17.0): Megatron-DeepSpeed runs padded dropping only; torchtitan's
// routing is dropless.
TEST(MoeTokenDropEmit, EnginesThatCannotExpressItRefuse) {
  Plan plan = mixtral_dropping(8);
  plan.job.precision = Precision::kBf16;
  const EngineCapabilities& mds = engine_capabilities(Engine::kMegatronDeepSpeed);
  const EngineCapabilities& titan = engine_capabilities(Engine::kTorchtitan);
  EXPECT_EQ(token_drop_problem(mds, plan.model, plan.job), nullptr);
  EXPECT_NE(token_drop_problem(titan, plan.model, plan.job), nullptr);
  EXPECT_TRUE(contains(engine_rule_violations(plan, Engine::kTorchtitan), "dropless"));
  plan.job.pad_to_capacity = false;
  EXPECT_NE(token_drop_problem(mds, plan.model, plan.job), nullptr);
  EXPECT_TRUE(contains(engine_rule_violations(plan, Engine::kMegatronDeepSpeed), "pads every expert"));
  EXPECT_EQ(token_drop_problem(engine_capabilities(Engine::kMegatron), plan.model, plan.job), nullptr);
  // `any` tags the plan with the engine that runs it.
  EngineSelection any;
  EXPECT_EQ(first_engine_running(any, plan.model, plan.job, plan.config),
            static_cast<int>(Engine::kMegatron));
  // Dropless routing is every engine's.
  plan.job.capacity_factor = 0;
  EXPECT_EQ(token_drop_problem(mds, plan.model, plan.job), nullptr);
  EXPECT_EQ(token_drop_problem(titan, plan.model, plan.job), nullptr);
}

// Balanced routing (imbalance 1): without padding each expert runs its fair
// share (a capacity factor >= 1 drops nothing; below 1 it drops down to
// capacity); padded, it runs capacity = factor x share rows. So padding
// never shortens the step, over ep, tp, pp,
// mbs and capacity factors (bf16, host launches unpriced: the two effects
// padding removes, fp8 split padding and the host wait, are off).
TEST(MoeTokenDropProperty, PaddingNeverMakesABalancedStepFaster) {
  const ModelSpec model = load_model("mixtral-8x7b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  int compared = 0;
  for (double factor : {0.5, 0.8, 1.0, 1.1, 1.25, 1.5, 2.0, 4.0}) {
    for (int ep : {1, 2, 4, 8}) {
      for (int tp : {1, 2, 4}) {
        for (int pp : {1, 2, 4}) {
          for (int mbs : {1, 2}) {
            JobSpec job;
            job.gpus = 64;
            job.gbs = 256;
            job.seq = 4096;
            job.moe_imbalance = 1.0;
            job.capacity_factor = factor;
            ParallelConfig c;
            c.tp = tp, c.pp = pp, c.ep = ep, c.etp = 1, c.sp = tp > 1, c.mbs = mbs, c.zero = 1;
            c.dp = job.gpus / (tp * pp);
            c.gbs = job.gbs;
            c.recompute = Recompute::kFull;
            if (config_problem(model, job, c) != nullptr) continue;
            const double unpadded = estimate_cost(model, cluster, job, c).time.step_s;
            job.pad_to_capacity = true;
            const double padded = estimate_cost(model, cluster, job, c).time.step_s;
            EXPECT_GE(padded, unpadded * (1 - 1e-12))
                << "factor " << factor << " ep " << ep << " tp " << tp << " pp " << pp << " mbs " << mbs;
            // A factor above 1 pads real rows: strictly slower.
            if (factor > 1.0) {
              EXPECT_GT(padded, unpadded) << "factor " << factor << " ep " << ep;
            }
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace parplan::emit_test
